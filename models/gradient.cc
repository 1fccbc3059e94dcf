#include "models/gradient.h"

#include <algorithm>
#include <bit>
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

using Parts = std::vector<const SparseRows*>;  // one table's parts, in the order of adding

// One part's row `index`.
struct Entry {
  int32_t part, index;
};

// Where each row of a table's sum comes from: the union of the parts' rows, sorted, and for
// each of its rows the parts' rows that hold it, in the order of the parts.
struct SumPlan {
  std::vector<int32_t> rows;
  std::vector<int32_t> start;  // rows[r]'s entries are entries[start[r], start[r + 1])
  std::vector<Entry> entries;
  int span = 1, depth = 1;  // parts under the tree's root (a power of two), its levels
};

SumPlan plan_sum(const Parts& parts, FirstSeen& seen) {
  thread_local std::vector<int32_t> place;  // a row's place in the union, indexed by row
  SumPlan plan;
  size_t total = 0;
  for (const SparseRows* part : parts) {
    seen.add_each(part->rows.size(), [&](size_t i) { return part->rows[i]; });
    total += part->rows.size();
  }
  plan.rows = seen.take_sorted();
  const size_t u = plan.rows.size();
  if (!plan.rows.empty() && place.size() <= static_cast<size_t>(plan.rows.back()))
    place.resize(static_cast<size_t>(plan.rows.back()) + 1);
  for (size_t r = 0; r < u; ++r) place[plan.rows[r]] = static_cast<int32_t>(r);
  // A counting sort of the parts' rows by place.
  plan.start.assign(u + 1, 0);
  for (const SparseRows* part : parts)
    for (const int32_t row : part->rows) ++plan.start[place[row] + 1];
  for (size_t r = 0; r < u; ++r) plan.start[r + 1] += plan.start[r];
  plan.entries.resize(total);
  std::vector<int32_t> next(plan.start.begin(), plan.start.end() - 1);
  for (size_t p = 0; p < parts.size(); ++p) {
    const std::vector<int32_t>& rows = parts[p]->rows;
    for (size_t i = 0; i < rows.size(); ++i)
      plan.entries[next[place[rows[i]]]++] = {static_cast<int32_t>(p), static_cast<int32_t>(i)};
  }
  while (plan.span < static_cast<int>(parts.size())) {
    plan.span *= 2;
    ++plan.depth;
  }
  return plan;
}

// The sum of the rows `e[0..m)` over the balanced tree that merging the parts pairwise, level
// by level, builds: at level L, node j covers parts [j 2^L, (j + 1) 2^L), and a node is its
// left half plus its right half, or the one half that holds any of the rows. Written to
// `out`; `scratch` holds a row for each level below.
template <int K>
void tree_row(const Parts& parts, const Entry* e, int m, int lo, int span, Eigen::Index k,
              float* out, float* scratch) {
  using In = Eigen::Map<const Eigen::Matrix<float, 1, K>>;
  using Out = Eigen::Map<Eigen::Matrix<float, 1, K>>;
  while (m > 1) {
    const int half = span / 2, mid = lo + half;
    int left = 0;
    while (left < m && e[left].part < mid) ++left;
    if (left > 0 && left < m) {
      tree_row<K>(parts, e, left, lo, half, k, out, scratch + k);
      tree_row<K>(parts, e + left, m - left, mid, half, k, scratch, scratch + k);
      Out(out, k) = Out(out, k) + In(scratch, k);
      return;
    }
    if (left == 0) lo = mid;  // every row is in one half: that half's node is the sum
    span = half;
  }
  Out(out, k) = In(parts[e[0].part]->values.row(e[0].index).data(), k);
}

// Each row of the plan summed over the tree: every value read once, where merging the parts
// pairwise would copy it once a level; the same sums, to the bit.
template <int K>
SparseRows sum_by_plan(const SumPlan& plan, const Parts& parts, Eigen::Index k) {
  SparseRows out;
  out.rows = plan.rows;
  const auto u = static_cast<Eigen::Index>(plan.rows.size());
  out.values.resize(u, k);
  std::vector<float> scratch(static_cast<size_t>(plan.depth * k));
  for (Eigen::Index r = 0; r < u; ++r) {
    tree_row<K>(parts, plan.entries.data() + plan.start[r], plan.start[r + 1] - plan.start[r], 0,
                plan.span, k, out.values.row(r).data(), scratch.data());
  }
  return out;
}

SparseRows sum_by_plan(const SumPlan& plan, const Parts& parts, Eigen::Index k) {
  return k == 16  ? sum_by_plan<16>(plan, parts, k)
         : k == 1 ? sum_by_plan<1>(plan, parts, k)  // first-order weights
                  : sum_by_plan<Eigen::Dynamic>(plan, parts, k);
}

bool same_rows(const Parts& a, const Parts& b) {
  for (size_t p = 0; p < a.size(); ++p)
    if (a[p]->rows != b[p]->rows) return false;
  return true;
}

}  // namespace

std::vector<int32_t> FirstSeen::take() {
  std::vector<int32_t> ids(ids_.begin(), ids_.begin() + static_cast<ptrdiff_t>(count_));
  for (const int32_t id : ids) seen_[static_cast<uint32_t>(id) / 64] = 0;
  count_ = 0;
  return ids;
}

std::vector<int32_t> FirstSeen::take_sorted() {
  if (count_ == 0) return {};
  const auto [low, high] = std::minmax_element(ids_.begin(), ids_.begin() + static_cast<ptrdiff_t>(count_));
  const size_t first = static_cast<uint32_t>(*low) / 64, last = static_cast<uint32_t>(*high) / 64;
  size_t log = 1;
  while ((size_t{1} << log) < count_) ++log;
  if (last - first + 1 > 4 * count_ * log) {  // sparse: sorting costs less than the scan
    std::vector<int32_t> ids = take();
    std::sort(ids.begin(), ids.end());
    return ids;
  }
  std::vector<int32_t> ids;
  ids.reserve(count_);
  for (size_t w = first; w <= last; ++w) {
    for (uint64_t word = seen_[w]; word != 0; word &= word - 1)
      ids.push_back(static_cast<int32_t>(w * 64 + static_cast<size_t>(std::countr_zero(word))));
    seen_[w] = 0;
  }
  count_ = 0;
  return ids;
}

// Rows without values (a timing-only run's): the union in the order rows first appear, in
// O(rows) with no merge.
SparseRows GradientSum::union_of_rows(const Parts& parts) {
  SparseRows out;
  for (const SparseRows* part : parts) {
    const std::vector<int32_t>& rows = part->rows;
    union_.add_each(rows.size(), [&](size_t k) { return rows[k]; });
  }
  out.rows = union_.take();
  out.values.resize(static_cast<Eigen::Index>(out.rows.size()), 0);
  return out;
}

// Each table's parts are summed over a balanced tree of the order of adding (sum_by_plan):
// O(rows), in a fixed order. Tables whose parts hold the same rows (a field's embedding and
// its first-order weights) share one plan.
Gradient GradientSum::take(float scale) {
  Gradient sum;
  sum.dense = std::move(dense_) * scale;
  sum.samples = samples_;
  const size_t tables = parts_.empty() ? 0 : parts_[0].size();
  sum.tables.resize(tables);
  std::vector<Parts> parts(tables);
  std::vector<SumPlan> plans;
  std::vector<std::pair<size_t, size_t>> planned;  // (table, its plan)
  std::vector<size_t> united;  // tables summed as unions of rows
  for (size_t t = 0; t < tables; ++t) {
    for (const auto& part : parts_) parts[t].push_back(&part[t]);
    if (std::all_of(parts_.begin(), parts_.end(), [&](const auto& p) { return p[t].values.cols() == 0; })) {
      const auto same = std::find_if(united.begin(), united.end(),
                                     [&](size_t s) { return same_rows(parts[s], parts[t]); });
      sum.tables[t] = same == united.end() ? union_of_rows(parts[t]) : sum.tables[*same];
      united.push_back(t);
      continue;
    }
    size_t plan = plans.size();
    for (const auto& [s, its] : planned) {
      if (same_rows(parts[s], parts[t])) {
        plan = its;
        break;
      }
    }
    if (plan == plans.size()) plans.push_back(plan_sum(parts[t], union_));
    planned.emplace_back(t, plan);
    Eigen::Index k = 0;  // the width of the parts that have rows (an empty part may have none)
    for (const SparseRows* part : parts[t]) k = std::max(k, part->values.cols());
    sum.tables[t] = sum_by_plan(plans[plan], parts[t], k);
    sum.tables[t].values *= scale;
  }
  dense_ = Eigen::VectorXf();
  samples_ = 0;
  parts_.clear();
  return sum;
}

}  // namespace gbasim
