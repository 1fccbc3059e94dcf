#include "models/gradient.h"

#include <algorithm>
#include <stdexcept>

namespace gbasim {

void Gradient::scale(float factor) {
  dense *= factor;
  for (auto& t : tables) t.values *= factor;
}

int64_t Gradient::bytes() const {
  int64_t total = 4 * dense.size();
  for (const auto& t : tables)
    total += static_cast<int64_t>(t.rows.size()) * (8 + 4 * t.values.cols());
  return total;
}

void GradientSum::add(Gradient gradient) {
  if (parts_.empty()) {
    dense_ = std::move(gradient.dense);
  } else {
    if (gradient.dense.size() != dense_.size() || gradient.tables.size() != parts_[0].size()) {
      throw std::invalid_argument("GradientSum::add: shape mismatch");
    }
    dense_ += gradient.dense;
  }
  samples_ += gradient.samples;
  parts_.push_back(std::move(gradient.tables));
}

Gradient GradientSum::take(float scale) {
  Gradient sum;
  sum.dense = std::move(dense_) * scale;
  sum.samples = samples_;
  const size_t tables = parts_.empty() ? 0 : parts_[0].size();
  sum.tables.resize(tables);
  std::vector<std::pair<int64_t, int64_t>> keyed;  // (row << 32 | part, index in part)
  for (size_t t = 0; t < tables; ++t) {
    keyed.clear();
    for (size_t p = 0; p < parts_.size(); ++p) {
      const auto& rows = parts_[p][t].rows;
      for (size_t i = 0; i < rows.size(); ++i) {
        keyed.emplace_back((int64_t{rows[i]} << 32) | static_cast<int64_t>(p),
                           static_cast<int64_t>(i));
      }
    }
    std::sort(keyed.begin(), keyed.end());
    SparseRows& out = sum.tables[t];
    const Eigen::Index dim = parts_[0][t].values.cols();
    out.values.resize(static_cast<Eigen::Index>(keyed.size()), dim);
    Eigen::Index n = -1;
    for (const auto& [key, index] : keyed) {
      const auto row = static_cast<int32_t>(key >> 32);
      const auto& source = parts_[key & 0xffffffff][t].values.row(index);
      if (n < 0 || out.rows.back() != row) {
        out.rows.push_back(row);
        out.values.row(++n) = source;
      } else {
        out.values.row(n) += source;
      }
    }
    out.values.conservativeResize(n + 1, dim);
    out.values *= scale;
  }
  dense_ = Eigen::VectorXf();
  samples_ = 0;
  parts_.clear();
  return sum;
}

}  // namespace gbasim
