#include "sim/messages.h"

namespace gbasim {

RowsByOwner rows_by_owner(const Gradient& g, const std::vector<int64_t>& dims, int owners) {
  // Integer counts over all tables, then into the doubles once: exact (as any sum of whole
  // numbers below 2^53), and O(rows + owners) rather than O(rows + tables x owners), which
  // matters for an all-to-all's thousands of owners.
  std::vector<int64_t> rows(owners, 0), values(owners, 0);
  const auto n = static_cast<uint64_t>(owners);
  for (size_t t = 0; t < g.tables.size(); ++t) {
    const std::vector<int32_t>& ids = g.tables[t].rows;
    const int64_t dim = dims[t];
    if (owners == 1) {
      rows[0] += static_cast<int64_t>(ids.size());
      values[0] += static_cast<int64_t>(ids.size()) * dim;
      continue;
    }
    auto hash = [t](int32_t row) { return static_cast<uint64_t>(row) * 0x9e3779b97f4a7c15ULL + t; };
    auto count = [&](uint64_t p) {
      ++rows[p];
      values[p] += dim;
    };
    if ((n & (n - 1)) == 0) {  // a power of two: the same remainder, without a division
      for (int32_t row : ids) count(hash(row) & (n - 1));
    } else {
      for (int32_t row : ids) count(hash(row) % n);
    }
  }
  RowsByOwner counts{std::vector<double>(owners), std::vector<double>(owners)};
  for (int p = 0; p < owners; ++p) {
    counts.rows[p] = static_cast<double>(rows[p]);
    counts.values[p] = static_cast<double>(values[p]);
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
