#include "models/gradient.h"

#include <algorithm>
#include <queue>
#include <span>
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


// Rows without values (a timing-only run's): the union in the order rows first appear, a bit
// set for each row seen (cleared afterwards), in O(rows) with no merge.
SparseRows GradientSum::union_of_rows(size_t t) {
  SparseRows out;
  size_t rows = 0;
  for (const auto& part : parts_) rows += part[t].rows.size();
  if (scratch_.size() < rows) scratch_.resize(rows);
  size_t unique = 0;
  for (const auto& part : parts_) {
    for (int32_t row : part[t].rows) {  // without branches: whether a row is new is random
      const auto r = static_cast<uint32_t>(row);
      if (r / 64 >= seen_.size()) seen_.resize(r / 64 + 1, 0);
      const uint64_t word = seen_[r / 64], bit = uint64_t{1} << (r % 64);
      scratch_[unique] = row;
      unique += (word & bit) == 0;
      seen_[r / 64] = word | bit;
    }
  }
  out.rows.assign(scratch_.begin(), scratch_.begin() + static_cast<ptrdiff_t>(unique));
  for (const int32_t row : out.rows) seen_[static_cast<uint32_t>(row) / 64] = 0;
  out.values.resize(static_cast<Eigen::Index>(out.rows.size()), 0);
  return out;
}

// Each table's parts are summed as a pairwise merge, level by level, sums them (tree_sum).
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
    sum.tables[t] = tree_sum(t);
    sum.tables[t].values *= scale;
  }
  dense_ = Eigen::VectorXf();
  samples_ = 0;
  parts_.clear();
  return sum;
}

namespace {

// The sum of the rows of `present` (ascending part numbers, all within the tree node
// [first, first + 2^level)) as the pairwise merge forms it: the node's two halves summed when
// both hold the row, the one that does otherwise.
void tree_reduce(std::span<const uint32_t> present, uint32_t first, int level,
                 const std::vector<const float*>& values, Eigen::Index dim, float* out,
                 float* scratch) {
  while (present.size() > 1) {
    const uint32_t mid = first + (uint32_t{1} << (level - 1));
    const auto split = static_cast<size_t>(
        std::lower_bound(present.begin(), present.end(), mid) - present.begin());
    if (split == 0) {
      first = mid;
    } else if (split < present.size()) {
      tree_reduce(present.first(split), first, level - 1, values, dim, out, scratch + dim);
      tree_reduce(present.subspan(split), mid, level - 1, values, dim, scratch, scratch + dim);
      for (Eigen::Index k = 0; k < dim; ++k) out[k] = out[k] + scratch[k];
      return;
    }
    --level;
  }
  std::copy(values[present[0]], values[present[0]] + dim, out);
}

}  // namespace

// Every part's rows in one pass in row order (a heap over the parts), each row's values
// summed as the pairwise merge, level by level (parts 0+1, 2+3, ..., then the results alike),
// sums them: the same sums, to the bit, each value read once instead of copied at every level.
SparseRows GradientSum::tree_sum(size_t t) {
  const size_t m = parts_.size();
  if (m == 1) return std::move(parts_[0][t]);
  const Eigen::Index dim = parts_[0][t].values.cols();
  int levels = 0;
  while ((size_t{1} << levels) < m) ++levels;
  using Head = std::pair<int32_t, uint32_t>;  // a part's next row, the part
  std::priority_queue<Head, std::vector<Head>, std::greater<>> heads;
  std::vector<size_t> next(m, 0);
  size_t total = 0;
  for (uint32_t p = 0; p < m; ++p) {
    const auto& rows = parts_[p][t].rows;
    total += rows.size();
    if (!rows.empty()) heads.push({rows[0], p});
  }
  SparseRows out;
  out.rows.reserve(total);
  out.values.resize(static_cast<Eigen::Index>(total), dim);
  std::vector<uint32_t> present;
  std::vector<const float*> values(m, nullptr);
  std::vector<float> scratch(static_cast<size_t>(dim) * (levels + 1));
  Eigen::Index n = 0;
  while (!heads.empty()) {
    const int32_t row = heads.top().first;
    present.clear();
    while (!heads.empty() && heads.top().first == row) {  // ties in ascending part order
      const uint32_t p = heads.top().second;
      heads.pop();
      const SparseRows& part = parts_[p][t];
      values[p] = part.values.data() + static_cast<Eigen::Index>(next[p]) * dim;
      present.push_back(p);
      if (++next[p] < part.rows.size()) heads.push({part.rows[next[p]], p});
    }
    tree_reduce(present, 0, levels, values, dim, out.values.data() + n * dim, scratch.data());
    out.rows.push_back(row);
    ++n;
  }
  out.values.conservativeResize(n, Eigen::NoChange);
  return out;
}


}  // namespace gbasim
