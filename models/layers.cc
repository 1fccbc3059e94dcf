#include "models/layers.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace gbasim {

// Eigen blocks a matrix product by the CPU's cache sizes, read at run time, and the blocking of
// the inner dimension (from the first-level data cache) sets the order in which each output's
// terms are summed: with a 32 KiB L1 (AMD's Zen, Intel's cores before Ice Lake) Eigen splits
// DeepFM's 429-term dot products into two blocks, with 48 KiB (Intel's since Ice Lake) it sums
// them in one, and every result differs in its last bits. So the products are blocked for a
// 48 KiB L1 on every machine (the other levels, which only tile the output, as read), before
// main(): the same spec and seed then give the same bits on every CPU of one instruction set
// and maker (docs/architecture.md).
constexpr std::ptrdiff_t kProductBlockingL1 = 48 * 1024;
const bool kProductBlockingPinned = [] {
  Eigen::setCpuCacheSizes(kProductBlockingL1, Eigen::l2CacheSize(), Eigen::l3CacheSize());
  return true;
}();

void linear_forward(const RowMatrixXf& x, ConstMatrixMap w, ConstVectorMap bias, RowMatrixXf& y) {
  y.resize(x.rows(), w.cols());
  y.noalias() = x * w;
  y.rowwise() += bias.transpose();
}

void linear_backward(const RowMatrixXf& x, ConstMatrixMap w, const RowMatrixXf& dy, MatrixMap dw,
                     VectorMap dbias, RowMatrixXf* dx) {
  dw.noalias() += x.transpose() * dy;
  dbias += dy.colwise().sum().transpose();
  if (dx != nullptr) {
    dx->resize(dy.rows(), w.rows());
    dx->noalias() = dy * w.transpose();
  }
}

void relu_forward(RowMatrixXf& x) { x = x.cwiseMax(0.0f); }

void relu_backward(const RowMatrixXf& y, RowMatrixXf& dy) {
  dy.array() *= (y.array() > 0.0f).cast<float>();
}

Mlp Mlp::build(const std::string& name, int in, const std::vector<int>& widths, bool relu_last,
               DenseLayout& layout) {
  Mlp mlp;
  mlp.relu_last = relu_last;
  for (int width : widths) {
    const std::string prefix = name + "." + std::to_string(mlp.layers.size());
    Layer layer{in, width, layout.add(prefix + ".weight", int64_t{in} * width),
                layout.add(prefix + ".bias", width)};
    mlp.layers.push_back(layer);
    in = width;
  }
  return mlp;
}

int64_t Mlp::multiply_adds() const {
  int64_t total = 0;
  for (const auto& l : layers) total += int64_t{l.in} * l.out;
  return total;
}

namespace {

ConstMatrixMap weight_of(const Mlp::Layer& l, const Eigen::VectorXf& params) {
  return ConstMatrixMap(params.data() + l.weight, l.in, l.out);
}

bool has_relu(const Mlp& mlp, size_t layer) {
  return layer + 1 < mlp.layers.size() || mlp.relu_last;
}

}  // namespace

void mlp_forward(const Mlp& mlp, const Eigen::VectorXf& params, MlpCache& cache) {
  cache.acts.resize(mlp.layers.size() + 1);
  for (size_t i = 0; i < mlp.layers.size(); ++i) {
    const auto& l = mlp.layers[i];
    linear_forward(cache.acts[i], weight_of(l, params),
                   ConstVectorMap(params.data() + l.bias, l.out), cache.acts[i + 1]);
    if (has_relu(mlp, i)) relu_forward(cache.acts[i + 1]);
  }
}

void mlp_backward(const Mlp& mlp, const Eigen::VectorXf& params, const MlpCache& cache,
                  RowMatrixXf& dy, Eigen::VectorXf& dparams, RowMatrixXf* dx) {
  RowMatrixXf d_in;
  for (size_t i = mlp.layers.size(); i-- > 0;) {
    const auto& l = mlp.layers[i];
    if (has_relu(mlp, i)) relu_backward(cache.acts[i + 1], dy);
    RowMatrixXf* target = i > 0 ? &d_in : dx;
    linear_backward(cache.acts[i], weight_of(l, params), dy,
                    MatrixMap(dparams.data() + l.weight, l.in, l.out),
                    VectorMap(dparams.data() + l.bias, l.out), target);
    if (i > 0) std::swap(dy, d_in);
  }
}

FieldGroups::FieldGroups(const RowMatrixXi& ids) {
  const Eigen::Index b = ids.rows(), num_fields = ids.cols();
  unique_ids.resize(num_fields);
  position.resize(num_fields);
  // Scratch kept between batches: the distinct ids by a bit per id (no sort of the batch),
  // and each distinct id's place among the sorted distinct ids, indexed by id.
  thread_local FirstSeen seen;
  thread_local std::vector<int32_t> place;
  for (Eigen::Index f = 0; f < num_fields; ++f) {
    seen.add_each(static_cast<size_t>(b), [&](size_t i) { return ids(static_cast<Eigen::Index>(i), f); });
    auto& unique = unique_ids[f];
    unique = seen.take_sorted();
    if (!unique.empty() && place.size() <= static_cast<size_t>(unique.back()))
      place.resize(static_cast<size_t>(unique.back()) + 1);
    for (size_t u = 0; u < unique.size(); ++u) place[unique[u]] = static_cast<int32_t>(u);
    auto& pos = position[f];
    pos.resize(b);
    for (Eigen::Index i = 0; i < b; ++i) pos[i] = place[ids(i, f)];
  }
}

namespace {

// The gather and the scatter, with the row width K fixed at compile time where it is the
// common one (K = Eigen::Dynamic otherwise): the same element-wise copies and sums.
template <int K>
void gather_rows(const RowMatrixXi& ids, const std::vector<RowMatrixXf>& tables, int first, int k,
                 RowMatrixXf& e) {
  using Row = Eigen::Map<const Eigen::Matrix<float, 1, K>>;
  using Out = Eigen::Map<Eigen::Matrix<float, 1, K>>;
  const Eigen::Index b = ids.rows(), num_fields = ids.cols();
  for (Eigen::Index i = 0; i < b; ++i)
    for (Eigen::Index f = 0; f < num_fields; ++f)
      Out(e.row(i).data() + f * k, k) = Row(tables[first + f].row(ids(i, f)).data(), k);
}

template <int K>
void scatter_rows(const std::vector<int32_t>& pos, const RowMatrixXf& de, Eigen::Index offset,
                  int k, RowMatrixXf& values) {
  using In = Eigen::Map<const Eigen::Matrix<float, 1, K>>;
  using Row = Eigen::Map<Eigen::Matrix<float, 1, K>>;
  for (Eigen::Index i = 0; i < de.rows(); ++i)
    Row(values.row(pos[i]).data(), k) += In(de.row(i).data() + offset, k);
}

}  // namespace

void embedding_forward(const RowMatrixXi& ids, const std::vector<RowMatrixXf>& tables, int first,
                       RowMatrixXf& e) {
  const Eigen::Index b = ids.rows(), num_fields = ids.cols();
  const int k = static_cast<int>(tables[first].cols());
  e.resize(b, num_fields * k);
  if (k == 16) return gather_rows<16>(ids, tables, first, k, e);
  gather_rows<Eigen::Dynamic>(ids, tables, first, k, e);
}

void embedding_backward(const FieldGroups& groups, const RowMatrixXf& de, int k, int first,
                        std::vector<SparseRows>& grads) {
  for (size_t f = 0; f < groups.unique_ids.size(); ++f) {
    SparseRows& g = grads[first + f];
    g.rows = groups.unique_ids[f];
    g.values.setZero(static_cast<Eigen::Index>(g.rows.size()), k);
    const Eigen::Index offset = static_cast<Eigen::Index>(f) * k;
    if (k == 16) {
      scatter_rows<16>(groups.position[f], de, offset, k, g.values);
    } else {
      scatter_rows<Eigen::Dynamic>(groups.position[f], de, offset, k, g.values);
    }
  }
}

void fm_forward(const RowMatrixXf& e, int num_fields, int k, Eigen::VectorXf& y, RowMatrixXf& sum) {
  const Eigen::Index b = e.rows();
  sum.setZero(b, k);
  for (int f = 0; f < num_fields; ++f) sum += e.middleCols(f * k, k);
  y = 0.5f * (sum.rowwise().squaredNorm() - e.rowwise().squaredNorm());
}

namespace {

template <int K>
void fm_backward_rows(const RowMatrixXf& e, int num_fields, int k, const RowMatrixXf& sum,
                      const Eigen::VectorXf& dy, RowMatrixXf& de) {
  using In = Eigen::Map<const Eigen::Array<float, 1, K>>;
  using Out = Eigen::Map<Eigen::Array<float, 1, K>>;
  for (Eigen::Index i = 0; i < e.rows(); ++i) {
    const In s(sum.row(i).data(), k);
    for (int f = 0; f < num_fields; ++f)
      Out(de.row(i).data() + f * k, k) += (s - In(e.row(i).data() + f * k, k)) * dy[i];
  }
}

}  // namespace

void fm_backward(const RowMatrixXf& e, int num_fields, int k, const RowMatrixXf& sum,
                 const Eigen::VectorXf& dy, RowMatrixXf& de) {
  if (k == 16) return fm_backward_rows<16>(e, num_fields, k, sum, dy, de);
  fm_backward_rows<Eigen::Dynamic>(e, num_fields, k, sum, dy, de);
}

void dot_interaction_forward(const RowMatrixXf& z, int n, int k, RowMatrixXf& p, int offset) {
  RowMatrixXf gram(n, n);
  for (Eigen::Index s = 0; s < z.rows(); ++s) {
    const ConstMatrixMap zs(z.row(s).data(), n, k);
    gram.noalias() = zs * zs.transpose();
    int col = offset;
    for (int i = 1; i < n; ++i)
      for (int j = 0; j < i; ++j) p(s, col++) = gram(i, j);
  }
}

void dot_interaction_backward(const RowMatrixXf& z, int n, int k, const RowMatrixXf& dp, int offset,
                              RowMatrixXf& dz) {
  // d(z_i . z_j) adds dp z_j to dz_i and dp z_i to dz_j: dz_s = (D + D^T) z_s with D the
  // strictly lower-triangular matrix of the dp values.
  RowMatrixXf d = RowMatrixXf::Zero(n, n);
  for (Eigen::Index s = 0; s < z.rows(); ++s) {
    int col = offset;
    for (int i = 1; i < n; ++i)
      for (int j = 0; j < i; ++j) d(i, j) = d(j, i) = dp(s, col++);
    const ConstMatrixMap zs(z.row(s).data(), n, k);
    MatrixMap dzs(dz.row(s).data(), n, k);
    dzs.noalias() += d * zs;
  }
}

double logistic_loss(const Eigen::VectorXf& logits, const Eigen::VectorXf& labels,
                     Eigen::VectorXf& dlogits) {
  const Eigen::Index b = logits.size();
  dlogits.resize(b);
  double total = 0.0;
  for (Eigen::Index i = 0; i < b; ++i) {
    const double z = logits[i];
    // log(1 + e^z) - y z, computed without overflow.
    total += std::max(z, 0.0) + std::log1p(std::exp(-std::abs(z))) - labels[i] * z;
    dlogits[i] =
        static_cast<float>((1.0 / (1.0 + std::exp(-z)) - labels[i]) / static_cast<double>(b));
  }
  return total / static_cast<double>(b);
}

}  // namespace gbasim
