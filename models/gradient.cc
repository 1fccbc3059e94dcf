#include "models/gradient.h"

#include <stdexcept>

namespace gbasim {

void SparseRows::accumulate(const SparseRows& other) {
  if (other.rows.empty()) return;
  if (rows.empty()) {
    *this = other;
    return;
  }
  if (other.values.cols() != values.cols()) throw std::invalid_argument("SparseRows: dim mismatch");
  std::vector<int32_t> merged_rows;
  merged_rows.reserve(rows.size() + other.rows.size());
  RowMatrixXf merged(rows.size() + other.rows.size(), values.cols());
  size_t i = 0, j = 0;
  Eigen::Index out = 0;
  while (i < rows.size() || j < other.rows.size()) {
    if (j == other.rows.size() || (i < rows.size() && rows[i] < other.rows[j])) {
      merged.row(out) = values.row(i);
      merged_rows.push_back(rows[i++]);
    } else if (i == rows.size() || other.rows[j] < rows[i]) {
      merged.row(out) = other.values.row(j);
      merged_rows.push_back(other.rows[j++]);
    } else {
      merged.row(out) = values.row(i) + other.values.row(j);
      merged_rows.push_back(rows[i]);
      ++i;
      ++j;
    }
    ++out;
  }
  rows = std::move(merged_rows);
  values = merged.topRows(out);
}

void Gradient::scale(float factor) {
  dense *= factor;
  for (auto& t : tables) t.values *= factor;
}

void Gradient::accumulate(const Gradient& other) {
  if (samples == 0 && dense.size() == 0) {
    *this = other;
    return;
  }
  if (other.dense.size() != dense.size() || other.tables.size() != tables.size()) {
    throw std::invalid_argument("Gradient::accumulate: shape mismatch");
  }
  dense += other.dense;
  for (size_t t = 0; t < tables.size(); ++t) tables[t].accumulate(other.tables[t]);
  samples += other.samples;
}

int64_t Gradient::bytes() const {
  int64_t total = 4 * dense.size();
  for (const auto& t : tables)
    total += static_cast<int64_t>(t.rows.size()) * (8 + 4 * t.values.cols());
  return total;
}

Gradient Gradient::zeros_like(const Gradient& like) {
  Gradient g;
  g.dense = Eigen::VectorXf::Zero(like.dense.size());
  g.tables.resize(like.tables.size());
  for (size_t t = 0; t < like.tables.size(); ++t)
    g.tables[t].values.resize(0, like.tables[t].values.cols());
  return g;
}

}  // namespace gbasim
