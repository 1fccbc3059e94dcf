// What the simulated messages weigh, computed from the real batch: the dense values, and the
// rows each embedding table's gradient carries.
#pragma once

#include <cstdint>
#include <vector>

#include "models/gradient.h"

namespace gbasim {

// Bytes a batch's message carries, one share per parameter-server shard: the dense values
// are split evenly, each embedding row goes to the shard its (table, row) hashes to. Sizes
// come from the gradient's row lists and the tables' dimensions, so that a timing-only
// gradient (rows without values) weighs what a real one would.
std::vector<double> shard_bytes(const Gradient& g, int64_t dense_values,
                                const std::vector<int64_t>& dims, int shards,
                                double bytes_per_value, double bytes_per_row_id);

double total(const std::vector<double>& parts);

// Values an update of this gradient writes: the dense part and every row's columns.
int64_t updated_values(const Gradient& g, int64_t dense_values, const std::vector<int64_t>& dims);

}  // namespace gbasim
