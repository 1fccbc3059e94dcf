// The gradient every update rule moves: a dense part over all dense parameters and, per
// embedding table, the rows a batch touched.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <vector>

#include "models/dataset.h"

namespace gbasim {

// Gradient rows of one embedding table. `rows` is sorted and unique; values.row(i) belongs
// to table row rows[i].
struct SparseRows {
  std::vector<int32_t> rows;
  RowMatrixXf values;  // rows.size() x dim

  // Adds `other` in, taking the union of the rows and summing rows present in both.
  void accumulate(const SparseRows& other);
};

// The gradient of the mean loss over `samples` samples. Accumulating sums gradients (and
// samples); callers scale to the weighting they want.
struct Gradient {
  Eigen::VectorXf dense;
  std::vector<SparseRows> tables;
  int64_t samples = 0;

  void scale(float factor);
  void accumulate(const Gradient& other);
  // Bytes a push sends: 4 per dense value, and per sparse row an 8-byte row id plus
  // 4 bytes per value.
  int64_t bytes() const;
  // A gradient of zeros shaped like `like`, with no rows and no samples.
  static Gradient zeros_like(const Gradient& like);
};

}  // namespace gbasim
