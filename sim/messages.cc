#include "sim/messages.h"

namespace gbasim {

std::vector<double> shard_bytes(const Gradient& g, int64_t dense_values,
                                const std::vector<int64_t>& dims, int shards,
                                double bytes_per_value, double bytes_per_row_id) {
  std::vector<double> bytes(shards, bytes_per_value * static_cast<double>(dense_values) / shards);
  for (size_t t = 0; t < g.tables.size(); ++t) {
    const double row_bytes = bytes_per_value * static_cast<double>(dims[t]) + bytes_per_row_id;
    for (int32_t row : g.tables[t].rows) {
      bytes[(static_cast<uint64_t>(row) * 0x9e3779b97f4a7c15ULL + t) %
            static_cast<uint64_t>(shards)] += row_bytes;
    }
  }
  return bytes;
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
