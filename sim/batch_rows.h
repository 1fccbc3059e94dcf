// The rows a timing-only batch touches: each field's distinct ids, exactly, without a sort.
#pragma once

#include <cstdint>
#include <vector>

#include "models/gradient.h"

namespace gbasim {

// Each field's distinct ids of a batch in the order they first appear (sample by sample),
// as FirstSeen would give them field by field, in one pass over the batch: a sample's ids
// lie together in memory, and every field has its own range of one bit array (an id's bit
// is its field's offset plus the id), so each id is read once, in the order it is stored.
class BatchRows {
 public:
  // Fields of these cardinalities (ids of field f in [0, cardinalities[f])).
  explicit BatchRows(const std::vector<int64_t>& cardinalities);

  // tables[f].rows, for each field f, becomes field f's distinct ids among samples 0 to b - 1,
  // sample i's ids being sample(i)[0] to sample(i)[fields - 1], each in its field's range
  // (a Dataset's invariant, which its loaders establish), not checked again here.
  template <typename Sample>
  void take(int64_t b, Sample sample, std::vector<SparseRows>& tables) {
    const size_t fields = offset_.size();
    const auto stride = static_cast<size_t>(b);
    if (scratch_.size() < fields * stride) scratch_.resize(fields * stride);
    count_.assign(fields, 0);
    uint64_t* seen = seen_.data();
    const uint64_t* offset = offset_.data();
    uint32_t* count = count_.data();
    int32_t* out = scratch_.data();
    for (int64_t i = 0; i < b; ++i) {
      const int32_t* ids = sample(i);
      if (i + kAhead < b) {  // samples lie scattered over the data set: load ahead
        const char* next = reinterpret_cast<const char*>(sample(i + kAhead));
        __builtin_prefetch(next);
        __builtin_prefetch(next + fields * sizeof(int32_t) - 1);
      }
      int32_t* field_out = out;
      for (size_t f = 0; f < fields; ++f, field_out += stride) {
        const int32_t id = ids[f];
        const uint64_t bit_index = offset[f] + static_cast<uint32_t>(id);
        const uint64_t bit = uint64_t{1} << (bit_index % 64), word = seen[bit_index / 64];
        const uint32_t c = count[f];
        field_out[c] = id;
        count[f] = c + ((word & bit) == 0);
        seen[bit_index / 64] = word | bit;
      }
    }
    for (size_t f = 0; f < fields; ++f) {
      const int32_t* first = out + f * stride;
      for (uint32_t k = 0; k < count[f]; ++k) seen[(offset[f] + static_cast<uint32_t>(first[k])) / 64] = 0;
      tables[f].rows.assign(first, first + count[f]);
    }
  }

 private:
  std::vector<uint64_t> offset_;  // each field's first bit
  std::vector<uint64_t> seen_;
  std::vector<int32_t> scratch_;  // field f's distinct ids at [f x b, f x b + count_[f])
  std::vector<uint32_t> count_;
  static constexpr int64_t kAhead = 8;
};

}  // namespace gbasim
