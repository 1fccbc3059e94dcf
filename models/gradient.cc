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

namespace {

// The union of two sorted row lists, summing the rows they share; rows of K values (K fixed
// at compile time for the common width, Eigen::Dynamic otherwise).
template <int K>
SparseRows merge_rows(const SparseRows& a, const SparseRows& b) {
  using In = Eigen::Map<const Eigen::Matrix<float, 1, K>>;
  using Out = Eigen::Map<Eigen::Matrix<float, 1, K>>;
  const Eigen::Index k = a.values.cols();
  SparseRows out;
  out.rows.resize(a.rows.size() + b.rows.size());
  out.values.resize(static_cast<Eigen::Index>(a.rows.size() + b.rows.size()), k);
  size_t i = 0, j = 0;
  Eigen::Index n = 0;
  while (i < a.rows.size() || j < b.rows.size()) {
    Out row(out.values.row(n).data(), k);
    if (j == b.rows.size() || (i < a.rows.size() && a.rows[i] < b.rows[j])) {
      row = In(a.values.row(i).data(), k);
      out.rows[n] = a.rows[i++];
    } else if (i == a.rows.size() || b.rows[j] < a.rows[i]) {
      row = In(b.values.row(j).data(), k);
      out.rows[n] = b.rows[j++];
    } else {
      row = In(a.values.row(i).data(), k) + In(b.values.row(j).data(), k);
      out.rows[n] = a.rows[i];
      ++i;
      ++j;
    }
    ++n;
  }
  out.rows.resize(n);
  out.values.conservativeResize(n, Eigen::NoChange);
  return out;
}

SparseRows merge(const SparseRows& a, const SparseRows& b) {
  return a.values.cols() == 16 ? merge_rows<16>(a, b) : merge_rows<Eigen::Dynamic>(a, b);
}

}  // namespace

std::vector<int32_t> FirstSeen::take() {
  std::vector<int32_t> ids(ids_.begin(), ids_.begin() + static_cast<ptrdiff_t>(count_));
  for (const int32_t id : ids) seen_[static_cast<uint32_t>(id) / 64] = 0;
  count_ = 0;
  return ids;
}

// Rows without values (a timing-only run's): the union in the order rows first appear, in
// O(rows) with no merge.
SparseRows GradientSum::union_of_rows(size_t t) {
  SparseRows out;
  for (const auto& part : parts_) {
    const std::vector<int32_t>& rows = part[t].rows;
    union_.add_each(rows.size(), [&](size_t k) { return rows[k]; });
  }
  out.rows = union_.take();
  out.values.resize(static_cast<Eigen::Index>(out.rows.size()), 0);
  return out;
}

// Each table's parts are merged pairwise, level by level (parts 0+1, 2+3, ..., then the
// results alike): O(rows log parts), in a fixed order.
Gradient GradientSum::take(float scale) {
  Gradient sum;
  sum.dense = std::move(dense_) * scale;
  sum.samples = samples_;
  const size_t tables = parts_.empty() ? 0 : parts_[0].size();
  sum.tables.resize(tables);
  for (size_t t = 0; t < tables; ++t) {
    if (std::all_of(parts_.begin(), parts_.end(), [&](const auto& p) { return p[t].values.cols() == 0; })) {
      sum.tables[t] = union_of_rows(t);
      continue;
    }
    std::vector<SparseRows> level;
    level.reserve(parts_.size());
    for (auto& part : parts_) level.push_back(std::move(part[t]));
    while (level.size() > 1) {
      std::vector<SparseRows> next;
      next.reserve((level.size() + 1) / 2);
      for (size_t i = 0; i + 1 < level.size(); i += 2)
        next.push_back(merge(level[i], level[i + 1]));
      if (level.size() % 2 == 1) next.push_back(std::move(level.back()));
      level = std::move(next);
    }
    sum.tables[t] = std::move(level[0]);
    sum.tables[t].values *= scale;
  }
  dense_ = Eigen::VectorXf();
  samples_ = 0;
  parts_.clear();
  return sum;
}

}  // namespace gbasim
