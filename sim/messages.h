// What the simulated messages weigh, computed from the real batch: the dense values, and the
// rows each embedding table's gradient carries.
#pragma once

#include <cstdint>
#include <vector>

#include "models/gradient.h"

namespace gbasim {

// What the proxy's messages carry a value and a row id: 32-bit floats (its parameters,
// gradients and activations) and 64-bit ids (the hashed row ids a production pipeline sends).
// A workload may give its own (`workload.value_bytes`, `workload.id_bytes`).
constexpr double kValueBytes = 4.0;
constexpr double kRowIdBytes = 8.0;
// A request or a notice ("gradient pushed", an acknowledgement).
constexpr double kControlBytes = 64;

// A gradient's embedding rows by owner (a parameter-server shard, or a worker of an
// all-to-all): each row goes to the owner its (table, row) hashes to. Counted once a gradient,
// so that every message about the same rows (request, pull, push) reads the counts instead of
// hashing the rows again.
struct RowsByOwner {
  std::vector<double> rows;    // rows each owner holds
  std::vector<double> values;  // their values (each row its table's dimension)
};
RowsByOwner rows_by_owner(const Gradient& g, const std::vector<int64_t>& dims, int owners);

// Bytes a message about those rows carries to or from each owner: the dense values split
// evenly, and per row `bytes_per_value` a value plus `bytes_per_row_id`. Sizes come from the
// gradient's row lists and the tables' dimensions, so that a timing-only gradient (rows
// without values) weighs what a real one would.
std::vector<double> owner_bytes(const RowsByOwner& counts, int64_t dense_values,
                                double bytes_per_value, double bytes_per_row_id);
// The same, counting the rows first.
std::vector<double> shard_bytes(const Gradient& g, int64_t dense_values,
                                const std::vector<int64_t>& dims, int shards,
                                double bytes_per_value, double bytes_per_row_id);

double total(const std::vector<double>& parts);

// Values an update of this gradient writes: the dense part and every row's columns.
int64_t updated_values(const Gradient& g, int64_t dense_values, const std::vector<int64_t>& dims);

}  // namespace gbasim
