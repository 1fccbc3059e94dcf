// The gradient every update rule moves: a dense part over all dense parameters and, per
// embedding table, the rows a batch touched.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "models/dataset.h"

namespace gbasim {

// Gradient rows of one embedding table. `rows` is sorted and unique; values.row(i) belongs
// to table row rows[i]. A timing-only gradient's rows carry no values (0 columns) and are
// unique but in the order they were first read, which its sums keep.
struct SparseRows {
  std::vector<int32_t> rows;
  RowMatrixXf values;  // rows.size() x dim
};

// The gradient of the mean loss over `samples` samples. GradientSum adds gradients up
// (taking the union of their rows); callers scale to the weighting they want.
struct Gradient {
  Eigen::VectorXf dense;
  std::vector<SparseRows> tables;
  int64_t samples = 0;

  void scale(float factor);
  // Bytes a push sends: 4 per dense value, and per sparse row an 8-byte row id plus
  // 4 bytes per value.
  int64_t bytes() const;
};

// Distinct ids in the order they are first added, without sorting: a bit for each id seen,
// set without a branch (whether an id is new is random), cleared when the ids are taken.
class FirstSeen {
 public:
  // Adds id(0), ..., id(n - 1), with room made for them. The loop keeps its pointers and
  // count in locals: a store to the 64-bit words could otherwise alias count_, reloaded and
  // stored again at every id.
  template <typename Id>
  void add_each(size_t n, Id id) {
    reserve(n);
    int32_t* out = ids_.data();
    uint64_t* seen = seen_.data();
    size_t words = seen_.size(), count = count_;
    for (size_t k = 0; k < n; ++k) {
      const auto i = static_cast<uint32_t>(id(k));
      if (i / 64 >= words) {
        seen_.resize(i / 64 + 1, 0);
        seen = seen_.data();
        words = seen_.size();
      }
      const uint64_t word = seen[i / 64], bit = uint64_t{1} << (i % 64);
      out[count] = static_cast<int32_t>(i);
      count += (word & bit) == 0;
      seen[i / 64] = word | bit;
    }
    count_ = count;
  }
  // The distinct ids added since the last take(), which forgets them.
  std::vector<int32_t> take();
  // The same, sorted: read off the bits in order where they are dense enough, else sorted.
  std::vector<int32_t> take_sorted();

 private:
  std::vector<uint64_t> seen_;
  std::vector<int32_t> ids_;
  size_t count_ = 0;

  // Room for `n` more ids before the next take().
  void reserve(size_t n) {
    if (ids_.size() < count_ + n) ids_.resize(count_ + n);
  }
};

// A running sum of many gradients: dense parts are added at once, sparse parts are kept and
// summed when the sum is taken, each row's values read once, so summing M gradients costs
// O(rows) instead of the O(M x rows) of merging them one by one into a growing buffer. Rows
// present in several parts are summed in a fixed order: the balanced tree over the order of
// adding that merging the parts pairwise, level by level, builds. Rows without values (a
// timing-only run's) are only united, in O(rows).
class GradientSum {
 public:
  void add(Gradient gradient);
  bool empty() const { return parts_.empty(); }
  // The sum, times `scale`; the accumulator is empty afterwards.
  Gradient take(float scale);

 private:
  Eigen::VectorXf dense_;
  int64_t samples_ = 0;
  std::vector<std::vector<SparseRows>> parts_;  // each added gradient's tables
  FirstSeen union_;  // union_of_rows's

  // The union of one table's parts' rows (rows without values).
  SparseRows union_of_rows(const std::vector<const SparseRows*>& parts);
};

}  // namespace gbasim
