#include "models/model.h"

#include <cmath>
#include <limits>

#include "base/enum_names.h"
#include "base/error.h"
#include "models/metrics.h"
#include "base/random.h"

namespace gbasim {

namespace {
constexpr EnumName<ModelKind> kModelKindNames[] = {{ModelKind::kLR, "lr"}, {ModelKind::kFM, "fm"}, {ModelKind::kDeepFM, "deepfm"}, {ModelKind::kWideDeep, "widedeep"}, {ModelKind::kDLRM, "dlrm"}};
}  // namespace

ModelKind parse_model_kind(const std::string& name) {
  return parse_enum(name, kModelKindNames);
}

std::string model_name(ModelKind kind) { return enum_name(kind, kModelKindNames); }

struct Model::Cache {
  RowMatrixXf e;       // b x F*k embeddings
  RowMatrixXf fm_sum;  // b x k
  Eigen::VectorXf fm_out;
  MlpCache deep, bottom, top;
  Eigen::VectorXf logits;
};

Model::Model(const ModelConfig& config, const std::vector<int64_t>& cardinalities, int num_dense)
    : config_(config),
      cardinalities_(cardinalities),
      num_fields_(static_cast<int>(cardinalities.size())),
      num_dense_(num_dense) {
  const ModelKind kind = config.kind;
  wide_ = kind == ModelKind::kLR || kind == ModelKind::kFM || kind == ModelKind::kDeepFM ||
          kind == ModelKind::kWideDeep;
  fm_ = kind == ModelKind::kFM || kind == ModelKind::kDeepFM;
  deep_ = kind == ModelKind::kDeepFM || kind == ModelKind::kWideDeep;
  dlrm_ = kind == ModelKind::kDLRM;
  if (config.embedding_dim < 1) throw InputError("model: 'embedding_dim' must be at least 1");
  for (int w : config.mlp)
    if (w < 1) throw InputError("model: every 'mlp' width must be at least 1");
  for (int w : config.bottom_mlp)
    if (w < 1) throw InputError("model: every 'bottom_mlp' width must be at least 1");

  const int k = config.embedding_dim;
  int tables = 0;
  if (wide_) {
    first_order_ = tables;
    tables += num_fields_;
  }
  if (fm_ || deep_ || dlrm_) embedding_ = tables;

  bias_ = layout_.add("bias", 1);
  if (wide_) dense_weight_ = layout_.add("dense_weight", num_dense_);
  std::vector<int> widths = config.mlp;
  widths.push_back(1);
  if (deep_) deep_mlp_ = Mlp::build("deep", num_fields_ * k + num_dense_, widths, false, layout_);
  if (dlrm_) {
    std::vector<int> bottom = config.bottom_mlp;
    bottom.push_back(k);
    bottom_mlp_ = Mlp::build("bottom", num_dense_, bottom, true, layout_);
    const int vectors = num_fields_ + 1;
    top_mlp_ = Mlp::build("top", k + vectors * (vectors - 1) / 2, widths, false, layout_);
  }
}

Parameters Model::init_parameters(uint64_t seed) const {
  Rng rng = make_rng(seed, kStreamInit);
  Parameters p;
  p.dense = Eigen::VectorXf::Zero(layout_.size);
  for (const Mlp* mlp : {&deep_mlp_, &bottom_mlp_, &top_mlp_}) {
    for (const auto& l : mlp->layers) {
      const float limit = std::sqrt(6.0f / static_cast<float>(l.in + l.out));
      std::uniform_real_distribution<float> uniform(-limit, limit);
      for (int64_t i = 0; i < int64_t{l.in} * l.out; ++i) p.dense[l.weight + i] = uniform(rng);
    }
  }
  if (wide_) {
    for (int f = 0; f < num_fields_; ++f)
      p.tables.push_back(RowMatrixXf::Zero(cardinalities_[f], 1));
  }
  if (embedding_ >= 0) {
    std::normal_distribution<float> normal(0.0f, 0.01f);
    for (int f = 0; f < num_fields_; ++f) {
      RowMatrixXf table(cardinalities_[f], config_.embedding_dim);
      for (float& v : table.reshaped()) v = normal(rng);
      p.tables.push_back(std::move(table));
    }
  }
  return p;
}

void Model::run_forward(const Parameters& params, const Batch& batch, Cache& c) const {
  const Eigen::Index b = batch.size();
  const int k = config_.embedding_dim;
  const Eigen::VectorXf& w = params.dense;
  c.logits.setConstant(b, w[bias_]);
  if (wide_) {
    for (Eigen::Index i = 0; i < b; ++i)
      for (int f = 0; f < num_fields_; ++f)
        c.logits[i] += params.tables[first_order_ + f](batch.ids(i, f), 0);
    c.logits.noalias() += batch.dense * ConstVectorMap(w.data() + dense_weight_, num_dense_);
  }
  if (embedding_ >= 0) embedding_forward(batch.ids, params.tables, embedding_, c.e);
  if (fm_) {
    fm_forward(c.e, num_fields_, k, c.fm_out, c.fm_sum);
    c.logits += c.fm_out;
  }
  if (deep_) {
    c.deep.acts.resize(1);
    RowMatrixXf& x = c.deep.acts[0];
    x.resize(b, c.e.cols() + num_dense_);
    x << c.e, batch.dense;
    mlp_forward(deep_mlp_, w, c.deep);
    c.logits += c.deep.acts.back().col(0);
  }
  if (dlrm_) {
    c.bottom.acts.resize(1);
    c.bottom.acts[0] = batch.dense;
    mlp_forward(bottom_mlp_, w, c.bottom);
    const RowMatrixXf& xb = c.bottom.acts.back();
    // The interaction sees [x_bottom, e_1 .. e_F] as F + 1 vectors of dimension k.
    const int vectors = num_fields_ + 1;
    RowMatrixXf z(b, vectors * k);
    z << xb, c.e;
    c.top.acts.resize(1);
    RowMatrixXf& top_in = c.top.acts[0];
    top_in.resize(b, k + vectors * (vectors - 1) / 2);
    top_in.leftCols(k) = xb;
    dot_interaction_forward(z, vectors, k, top_in, k);
    mlp_forward(top_mlp_, w, c.top);
    c.logits += c.top.acts.back().col(0);
  }
}

void Model::forward(const Parameters& params, const Batch& batch, Eigen::VectorXf& logits) const {
  Cache cache;
  run_forward(params, batch, cache);
  logits = std::move(cache.logits);
}

double Model::forward_backward(const Parameters& params, const Batch& batch, Gradient& grad) const {
  Cache c;
  run_forward(params, batch, c);
  Eigen::VectorXf dlogits;
  const double loss = logistic_loss(c.logits, batch.labels, dlogits);

  const Eigen::Index b = batch.size();
  const int k = config_.embedding_dim;
  const Eigen::VectorXf& w = params.dense;
  grad.samples = b;
  grad.dense.setZero(layout_.size);
  grad.tables.resize(params.tables.size());
  grad.dense[bias_] = dlogits.sum();

  const FieldGroups groups(batch.ids);
  if (wide_) {
    VectorMap(grad.dense.data() + dense_weight_, num_dense_).noalias() =
        batch.dense.transpose() * dlogits;
    const RowMatrixXf d_first = dlogits.replicate(1, num_fields_);
    embedding_backward(groups, d_first, 1, first_order_, grad.tables);
  }
  if (embedding_ < 0) return loss;

  RowMatrixXf de = RowMatrixXf::Zero(b, num_fields_ * k);
  if (fm_) fm_backward(c.e, num_fields_, k, c.fm_sum, dlogits, de);
  if (deep_) {
    RowMatrixXf dy = dlogits;
    RowMatrixXf dx;
    mlp_backward(deep_mlp_, w, c.deep, dy, grad.dense, &dx);
    de += dx.leftCols(num_fields_ * k);
  }
  if (dlrm_) {
    const int vectors = num_fields_ + 1;
    RowMatrixXf dy = dlogits;
    RowMatrixXf d_top;
    mlp_backward(top_mlp_, w, c.top, dy, grad.dense, &d_top);
    const RowMatrixXf& xb = c.bottom.acts.back();
    RowMatrixXf z(b, vectors * k);
    z << xb, c.e;
    RowMatrixXf dz = RowMatrixXf::Zero(b, vectors * k);
    dz.leftCols(k) = d_top.leftCols(k);
    dot_interaction_backward(z, vectors, k, d_top, k, dz);
    de += dz.rightCols(num_fields_ * k);
    RowMatrixXf d_bottom = dz.leftCols(k);
    mlp_backward(bottom_mlp_, w, c.bottom, d_bottom, grad.dense, nullptr);
  }
  embedding_backward(groups, de, k, embedding_, grad.tables);
  return loss;
}

double Model::flops_per_sample() const {
  const int k = config_.embedding_dim;
  double multiply_adds = 0.0;
  if (wide_) multiply_adds += num_fields_ + num_dense_;
  if (fm_) multiply_adds += 2.0 * num_fields_ * k;
  multiply_adds += static_cast<double>(deep_mlp_.multiply_adds() + bottom_mlp_.multiply_adds() +
                                       top_mlp_.multiply_adds());
  if (dlrm_) multiply_adds += 0.5 * (num_fields_ + 1) * num_fields_ * k;
  return 3.0 * 2.0 * multiply_adds;
}

std::vector<float> logits_of(const Model& model, const Parameters& params, const Dataset& data,
                             int64_t chunk) {
  std::vector<float> logits;
  logits.reserve(data.size());
  Eigen::VectorXf chunk_logits;
  for (int64_t begin = 0; begin < data.size(); begin += chunk) {
    model.forward(params, slice(data, begin, std::min(data.size(), begin + chunk)), chunk_logits);
    logits.insert(logits.end(), chunk_logits.begin(), chunk_logits.end());
  }
  return logits;
}

Evaluation evaluate(const Model& model, const Parameters& params, const Dataset& data) {
  const std::vector<float> logits = logits_of(model, params, data);
  std::vector<float> probs;
  for (float z : logits) {
    if (!std::isfinite(z)) {
      const double nan = std::numeric_limits<double>::quiet_NaN();
      return {nan, nan, true};
    }
  }
  probs.reserve(logits.size());
  for (float z : logits) probs.push_back(1.0f / (1.0f + std::exp(-z)));
  return {roc_auc(logits, data.labels), log_loss(probs, data.labels)};
}

}  // namespace gbasim
