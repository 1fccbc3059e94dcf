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

// One or two tables that hold the same rows (a field's embedding and its first-order
// weights), whose rows are summed over one walk of the tree: table a's K values a row and
// table b's L (L = 0: no table b). A node's partial sum is its k + l values in a row.
template <int K, int L>
struct Tables {
  const Parts* a;
  const Parts* b;
  Eigen::Index k, l;

  template <int N>
  using In = Eigen::Map<const Eigen::Matrix<float, 1, N>>;
  template <int N>
  using Out = Eigen::Map<Eigen::Matrix<float, 1, N>>;

  Eigen::Index width() const { return k + l; }
  void copy(const Entry& e, float* out_a, float* out_b) const {
    Out<K>(out_a, k) = In<K>((*a)[e.part]->values.row(e.index).data(), k);
    if constexpr (L != 0) Out<L>(out_b, l) = In<L>((*b)[e.part]->values.row(e.index).data(), l);
  }
  void add(float* out_a, float* out_b, const float* node) const {
    Out<K>(out_a, k) = Out<K>(out_a, k) + In<K>(node, k);
    if constexpr (L != 0) Out<L>(out_b, l) = Out<L>(out_b, l) + In<L>(node + k, l);
  }
  void scale(float* out_a, float* out_b, float factor) const {
    Out<K>(out_a, k) *= factor;
    if constexpr (L != 0) Out<L>(out_b, l) *= factor;
  }
};

// The sum of the rows `e[0..m)` over the balanced tree that merging the parts pairwise, level
// by level, builds: at level L, node j covers parts [j 2^L, (j + 1) 2^L), and a node is its
// left half plus its right half, or the one half that holds any of the rows. Written to
// `out_a` and `out_b`; `scratch` holds a node's values for each level below.
template <int K, int L>
void tree_row(const Tables<K, L>& t, const Entry* e, int m, int lo, int span, float* out_a,
              float* out_b, float* scratch) {
  while (m > 1) {
    const int half = span / 2, mid = lo + half;
    int left = 0;
    while (left < m && e[left].part < mid) ++left;
    if (left > 0 && left < m) {
      float* below = scratch + t.width();
      tree_row(t, e, left, lo, half, out_a, out_b, below);
      tree_row(t, e + left, m - left, mid, half, scratch, scratch + t.k, below);
      t.add(out_a, out_b, scratch);
      return;
    }
    if (left == 0) lo = mid;  // every row is in one half: that half's node is the sum
    span = half;
  }
  t.copy(e[0], out_a, out_b);
}

// Each row of the plan summed over the tree, times `scale`: every value read once, where
// merging the parts pairwise would copy it once a level; the same sums, to the bit.
template <int K, int L>
void sum_by_plan(const SumPlan& plan, const Tables<K, L>& t, float scale, SparseRows& out_a,
                 SparseRows& out_b) {
  const auto u = static_cast<Eigen::Index>(plan.rows.size());
  out_a.rows = plan.rows;
  out_a.values.resize(u, t.k);
  if constexpr (L != 0) {
    out_b.rows = plan.rows;
    out_b.values.resize(u, t.l);
  }
  std::vector<float> scratch(static_cast<size_t>(plan.depth * t.width()));
  for (Eigen::Index r = 0; r < u; ++r) {
    float* a = out_a.values.row(r).data();
    float* b = L != 0 ? out_b.values.row(r).data() : nullptr;
    tree_row(t, plan.entries.data() + plan.start[r], plan.start[r + 1] - plan.start[r], 0,
             plan.span, a, b, scratch.data());
    t.scale(a, b, scale);
  }
}

// The width of one table's parts that have rows (an empty part may have none).
Eigen::Index width_of(const Parts& parts) {
  Eigen::Index k = 0;
  for (const SparseRows* part : parts) k = std::max(k, part->values.cols());
  return k;
}

// Table a's sum and, where `b` is given, table b's (on the same rows), over one walk where
// either is of width 1 (first-order weights).
void sum_by_plan(const SumPlan& plan, const Parts& a, const Parts* b, float scale,
                 SparseRows& out_a, SparseRows* out_b) {
  const Eigen::Index k = width_of(a);
  if (b != nullptr && k == 1 && width_of(*b) != 1)
    return sum_by_plan(plan, *b, &a, scale, *out_b, &out_a);
  if (b != nullptr && width_of(*b) == 1) {
    if (k == 16)  // the default embedding dimension
      return sum_by_plan(plan, Tables<16, 1>{&a, b, k, 1}, scale, out_a, *out_b);
    return sum_by_plan(plan, Tables<Eigen::Dynamic, 1>{&a, b, k, 1}, scale, out_a, *out_b);
  }
  if (b != nullptr) sum_by_plan(plan, *b, nullptr, scale, *out_b, nullptr);
  SparseRows none;
  if (k == 16) return sum_by_plan(plan, Tables<16, 0>{&a, nullptr, k, 0}, scale, out_a, none);
  if (k == 1) return sum_by_plan(plan, Tables<1, 0>{&a, nullptr, k, 0}, scale, out_a, none);
  sum_by_plan(plan, Tables<Eigen::Dynamic, 0>{&a, nullptr, k, 0}, scale, out_a, none);
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
// its first-order weights) share one plan, and two of them one walk of its tree.
Gradient GradientSum::take(float scale) {
  Gradient sum;
  dense_ *= scale;
  sum.dense = std::move(dense_);
  sum.samples = samples_;
  const size_t tables = parts_.empty() ? 0 : parts_[0].size();
  sum.tables.resize(tables);
  std::vector<Parts> parts(tables);
  std::vector<SumPlan> plans;
  std::vector<std::vector<size_t>> groups;  // each plan's tables, in order
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
    size_t plan = 0;
    while (plan < groups.size() && !same_rows(parts[groups[plan][0]], parts[t])) ++plan;
    if (plan == plans.size()) {
      plans.push_back(plan_sum(parts[t], union_));
      groups.emplace_back();
    }
    groups[plan].push_back(t);
  }
  // A plan's tables two by two over one walk of its tree each.
  for (size_t p = 0; p < plans.size(); ++p) {
    const std::vector<size_t>& group = groups[p];
    for (size_t i = 0; i < group.size(); i += 2) {
      const bool pair = i + 1 < group.size();
      sum_by_plan(plans[p], parts[group[i]], pair ? &parts[group[i + 1]] : nullptr, scale,
                  sum.tables[group[i]], pair ? &sum.tables[group[i + 1]] : nullptr);
    }
  }
  dense_ = Eigen::VectorXf();
  samples_ = 0;
  parts_.clear();
  return sum;
}

}  // namespace gbasim
