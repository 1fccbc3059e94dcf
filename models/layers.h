// The layers of the CTR models, each a *_forward / *_backward pair of plain functions.
// b is the batch size, F the number of fields, k the embedding dimension. Backward
// functions add into parameter gradients (+=) and overwrite input gradients (=).
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <string>
#include <vector>

#include "models/dataset.h"
#include "models/gradient.h"

namespace gbasim {

using MatrixMap = Eigen::Map<RowMatrixXf>;
using ConstMatrixMap = Eigen::Map<const RowMatrixXf>;
using VectorMap = Eigen::Map<Eigen::VectorXf>;
using ConstVectorMap = Eigen::Map<const Eigen::VectorXf>;

// x (b x in), w (in x out), bias (out) -> y (b x out) = x w + bias
void linear_forward(const RowMatrixXf& x, ConstMatrixMap w, ConstVectorMap bias, RowMatrixXf& y);
// dy (b x out) -> dw (in x out) += x^T dy, dbias (out) += column sums of dy,
// dx (b x in) = dy w^T when dx is given
void linear_backward(const RowMatrixXf& x, ConstMatrixMap w, const RowMatrixXf& dy, MatrixMap dw,
                     VectorMap dbias, RowMatrixXf* dx);

// x (b x n) -> x = max(x, 0), in place
void relu_forward(RowMatrixXf& x);
// y (b x n) the ReLU's output, dy (b x n) -> dy = 0 where y <= 0, in place
void relu_backward(const RowMatrixXf& y, RowMatrixXf& dy);

// Named blocks of dense parameters in the flat dense vector.
struct DenseLayout {
  struct Block {
    std::string name;
    int64_t offset = 0, size = 0;
  };
  int64_t size = 0;
  std::vector<Block> blocks;

  int64_t add(const std::string& name, int64_t n) {
    blocks.push_back({name, size, n});
    size += n;
    return blocks.back().offset;
  }
};

// A multi-layer perceptron: ReLU after every hidden layer, and after the last one only
// when relu_last is set (DLRM's bottom MLP).
struct Mlp {
  struct Layer {
    int in = 0, out = 0;
    int64_t weight = 0, bias = 0;  // offsets of w (in x out, row-major) and bias (out)
  };
  std::vector<Layer> layers;
  bool relu_last = false;

  // Blocks are named "<name>.<layer>.weight" and "<name>.<layer>.bias".
  static Mlp build(const std::string& name, int in, const std::vector<int>& widths, bool relu_last,
                   DenseLayout& layout);
  int out() const { return layers.back().out; }
  int64_t multiply_adds() const;  // per sample, forward
};

// acts[0] is the input (b x in), filled by the caller; acts[i + 1] is layer i's output.
struct MlpCache {
  std::vector<RowMatrixXf> acts;
};

// acts[0] (b x in) -> acts.back() (b x out)
void mlp_forward(const Mlp& mlp, const Eigen::VectorXf& params, MlpCache& cache);
// dy (b x out), destroyed -> dparams += gradients of every layer, dx (b x in) when given
void mlp_backward(const Mlp& mlp, const Eigen::VectorXf& params, const MlpCache& cache,
                  RowMatrixXf& dy, Eigen::VectorXf& dparams, RowMatrixXf* dx);

// The unique ids of each field in a batch and, for each sample, the position of its id
// among them: what turns per-sample embedding gradients into sparse rows.
struct FieldGroups {
  std::vector<std::vector<int32_t>> unique_ids;  // F, each sorted
  std::vector<std::vector<int32_t>> position;    // F x b

  explicit FieldGroups(const RowMatrixXi& ids);
};

// ids (b x F), tables[first + f] (rows_f x k) -> e (b x F*k), e[i, f*k .. f*k+k) = row ids[i, f]
void embedding_forward(const RowMatrixXi& ids, const std::vector<RowMatrixXf>& tables, int first,
                       RowMatrixXf& e);
// de (b x F*k) -> grads[first + f] = sum of de's field-f slices over samples sharing an id
void embedding_backward(const FieldGroups& groups, const RowMatrixXf& de, int k, int first,
                        std::vector<SparseRows>& grads);

// e (b x F*k) -> y (b) = 0.5 * sum_k ((sum_f e_f)^2 - sum_f e_f^2); sum (b x k) = sum_f e_f
void fm_forward(const RowMatrixXf& e, int num_fields, int k, Eigen::VectorXf& y, RowMatrixXf& sum);
// dy (b) -> de (b x F*k) += dy * (sum - e_f)
void fm_backward(const RowMatrixXf& e, int num_fields, int k, const RowMatrixXf& sum,
                 const Eigen::VectorXf& dy, RowMatrixXf& de);

// z (b x n*k), n vectors of dimension k a sample -> p (b x n(n-1)/2) written at column
// `offset`: the dot products z_i . z_j for i > j, in the order (1,0), (2,0), (2,1), (3,0), ...
void dot_interaction_forward(const RowMatrixXf& z, int n, int k, RowMatrixXf& p, int offset);
// dp (b x ...) read from column `offset` -> dz (b x n*k) += the gradient through the dots
void dot_interaction_backward(const RowMatrixXf& z, int n, int k, const RowMatrixXf& dp, int offset,
                              RowMatrixXf& dz);

// logits (b), labels (b) -> mean log-loss; dlogits (b) = (sigmoid(logits) - labels) / b
double logistic_loss(const Eigen::VectorXf& logits, const Eigen::VectorXf& labels,
                     Eigen::VectorXf& dlogits);

}  // namespace gbasim
