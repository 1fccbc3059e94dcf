#include "sim/messages.h"

namespace gbasim {

RowsByOwner rows_by_owner(const Gradient& g, const std::vector<int64_t>& dims, int owners) {
  // Integer counts over all tables, then into the doubles once: exact (as any sum of whole
  // numbers below 2^53), and O(rows + owners) rather than O(rows + tables x owners), which
  // matters for an all-to-all's thousands of owners. With few owners, four sets of counters,
  // the k-th row of a table counted in set k % 4: consecutive rows of one owner would
  // otherwise each wait for the last one's increment (a store and a load of one counter).
  const auto n = static_cast<uint64_t>(owners);
  const uint64_t sets = n <= 64 ? 4 : 1;
  std::vector<int64_t> rows(sets * n, 0), values(sets * n, 0);
  for (size_t t = 0; t < g.tables.size(); ++t) {
    const std::vector<int32_t>& ids = g.tables[t].rows;
    const int64_t dim = dims[t];
    if (owners == 1) {
      rows[0] += static_cast<int64_t>(ids.size());
      values[0] += static_cast<int64_t>(ids.size()) * dim;
      continue;
    }
    auto count = [&](uint64_t p) {
      ++rows[p];
      values[p] += dim;
    };
    auto hash = [t](int32_t row) { return static_cast<uint64_t>(row) * 0x9e3779b97f4a7c15ULL + t; };
    auto count_all = [&]<uint64_t kSets>(auto owner_of) {
      size_t k = 0;
      for (; k + kSets <= ids.size(); k += kSets)
        for (uint64_t s = 0; s < kSets; ++s) count(s * n + owner_of(hash(ids[k + s])));
      for (; k < ids.size(); ++k) count(owner_of(hash(ids[k])));
    };
    const bool power_of_two = (n & (n - 1)) == 0;  // the same remainder, without a division
    auto mask = [n](uint64_t h) { return h & (n - 1); };
    auto modulo = [n](uint64_t h) { return h % n; };
    if (sets == 4) {
      power_of_two ? count_all.operator()<4>(mask) : count_all.operator()<4>(modulo);
    } else {
      power_of_two ? count_all.operator()<1>(mask) : count_all.operator()<1>(modulo);
    }
  }
  RowsByOwner counts{std::vector<double>(owners), std::vector<double>(owners)};
  for (uint64_t p = 0; p < n; ++p) {
    int64_t r = 0, v = 0;
    for (uint64_t s = 0; s < sets; ++s) {
      r += rows[s * n + p];
      v += values[s * n + p];
    }
    counts.rows[p] = static_cast<double>(r);
    counts.values[p] = static_cast<double>(v);
  }
  return counts;
}

std::vector<double> owner_bytes(const RowsByOwner& counts, int64_t dense_values,
                                double bytes_per_value, double bytes_per_row_id) {
  const auto owners = static_cast<double>(counts.rows.size());
  std::vector<double> bytes(counts.rows.size());
  for (size_t p = 0; p < bytes.size(); ++p) {
    bytes[p] = bytes_per_value * static_cast<double>(dense_values) / owners +
               (bytes_per_value * counts.values[p] + bytes_per_row_id * counts.rows[p]);
  }
  return bytes;
}

std::vector<double> shard_bytes(const Gradient& g, int64_t dense_values,
                                const std::vector<int64_t>& dims, int shards,
                                double bytes_per_value, double bytes_per_row_id) {
  return owner_bytes(rows_by_owner(g, dims, shards), dense_values, bytes_per_value,
                     bytes_per_row_id);
}

double total(const std::vector<double>& parts) {
  double sum = 0.0;
  for (double p : parts) sum += p;
  return sum;
}

int64_t updated_values(const Gradient& g, int64_t dense_values, const std::vector<int64_t>& dims) {
  int64_t n = dense_values;
  for (size_t t = 0; t < g.tables.size(); ++t)
    n += static_cast<int64_t>(g.tables[t].rows.size()) * dims[t];
  return n;
}

}  // namespace gbasim
