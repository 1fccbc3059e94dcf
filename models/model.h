// The CTR models: LR, FM, DeepFM, Wide&Deep and DLRM, as sums of logit components over
// shared embedding tables. A model holds its shapes; parameters live apart (Parameters) so
// that a parameter server, a worker's stale copy and a trainer can all use one model.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "models/dataset.h"
#include "models/gradient.h"
#include "models/layers.h"

namespace gbasim {

enum class ModelKind { kLR, kFM, kDeepFM, kWideDeep, kDLRM };

// "lr", "fm", "deepfm", "widedeep", "dlrm"; throws InputError for anything else.
ModelKind parse_model_kind(const std::string& name);
std::string model_name(ModelKind kind);

struct ModelConfig {
  ModelKind kind = ModelKind::kDeepFM;
  int embedding_dim = 16;
  std::vector<int> mlp = {128, 64};    // hidden widths of the deep part (DLRM: the top MLP)
  std::vector<int> bottom_mlp = {64};  // DLRM: hidden widths of the bottom MLP, which then
                                       // maps to embedding_dim
};

// Every trainable value: the flat dense vector and the embedding tables.
struct Parameters {
  Eigen::VectorXf dense;
  std::vector<RowMatrixXf> tables;
};

class Model {
 public:
  Model(const ModelConfig& config, const std::vector<int64_t>& cardinalities, int num_dense);

  // Embeddings N(0, 0.01^2), first-order weights and biases 0, MLP weights Glorot-uniform.
  Parameters init_parameters(uint64_t seed) const;
  // batch -> logits (b)
  void forward(const Parameters& params, const Batch& batch, Eigen::VectorXf& logits) const;
  // batch -> mean log-loss, and `grad` = its gradient (sparse rows only for touched ids)
  double forward_backward(const Parameters& params, const Batch& batch, Gradient& grad) const;

  const ModelConfig& config() const { return config_; }
  int64_t num_dense_parameters() const { return layout_.size; }
  // The named blocks of the dense vector ("bias", "dense_weight", "deep.0.weight", ...).
  const std::vector<DenseLayout::Block>& dense_blocks() const { return layout_.blocks; }
  // Floating-point operations per sample of forward plus backward, counting the MLPs'
  // and interactions' multiply-adds as 2 each and backward as twice forward.
  double flops_per_sample() const;

 private:
  struct Cache;
  void run_forward(const Parameters& params, const Batch& batch, Cache& cache) const;

  ModelConfig config_;
  std::vector<int64_t> cardinalities_;
  int num_fields_, num_dense_;
  bool wide_ = false, fm_ = false, deep_ = false, dlrm_ = false;
  DenseLayout layout_;
  int64_t bias_ = 0, dense_weight_ = 0;  // wide part: global bias, dense-feature weights
  int first_order_ = -1;                 // index of field 0's first-order (dim 1) table
  int embedding_ = -1;                   // index of field 0's embedding table
  Mlp deep_mlp_, bottom_mlp_, top_mlp_;
};

struct Evaluation {
  double auc = 0.0;
  double logloss = 0.0;
  bool diverged = false;  // some prediction is not a finite number (AUC and log-loss NaN)
};

// Samples a forward pass of evaluation takes at a time. A sample's logit depends on its batch
// only through the product kernels' handling of a batch's last few rows (its place modulo 8
// and the batch's size modulo 8), so chunks of any multiple of 8 that divides the 8,192 used
// before give the same bits (Model.LogitsDoNotDependOnTheirChunk); 256 samples keep a chunk's
// activations (256 x 429 floats for DeepFM) in cache, where 8,192 (14 MB) ran 2-2.7 times
// slower (bench/README.md, BM_EvaluationForward).
constexpr int64_t kEvaluationChunk = 256;

// The logits of every sample of `data` under `params`, `chunk` samples at a time.
std::vector<float> logits_of(const Model& model, const Parameters& params, const Dataset& data,
                             int64_t chunk = kEvaluationChunk);

// Test AUC and log-loss of `params` on `data`, in chunks of kEvaluationChunk.
Evaluation evaluate(const Model& model, const Parameters& params, const Dataset& data);

}  // namespace gbasim
