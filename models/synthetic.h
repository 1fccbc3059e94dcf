// A synthetic CTR data set with learnable signal: labels come from a random "teacher" whose
// logit mixes per-value weights, dense weights, FM-like field interactions and a small MLP,
// so linear models, factorization machines and deep models reach different AUCs.
#pragma once

#include <cstdint>
#include <vector>

#include "models/dataset.h"

namespace gbasim {

struct SyntheticConfig {
  int64_t train_samples = 2'000'000;
  int64_t test_samples = 100'000;
  int num_fields = 26;
  int num_dense = 13;
  int64_t min_cardinality = 10;  // field 0; later fields log-spaced up to max
  int64_t max_cardinality = 100'000;
  double zipf_exponent = 1.1;  // value frequency ~ rank^-exponent
  double target_ctr = 0.25;
  // The teacher logit is bias + linear + dense + interaction + mlp; each term is scaled so
  // that its standard deviation over the samples equals the value below.
  double linear_std = 0.5;
  double dense_std = 0.7;
  double interaction_std = 0.8;
  double mlp_std = 0.3;
  int64_t nonlinear_max_cardinality = 300;  // fields at most this large feed interactions/MLP
  int interaction_fields = 6;               // nonlinear fields whose every pair interacts
  int teacher_dim = 8;                      // hidden vector of each value of a nonlinear field
  int teacher_mlp_width = 32;
  double label_flip = 0.0;  // probability that a drawn label is flipped
  int days = 1;             // > 1: train on days 1..days, test on day days + 1
  double day_drift = 0.1;   // per-day innovation of the teacher's weights
  uint64_t seed = 1;
};

struct SyntheticData {
  Dataset train;
  Dataset test;
  double bias = 0.0;       // the calibrated teacher bias
  double bayes_auc = 0.0;  // AUC of the true probabilities on the test labels
};

// Throws InputError naming the first invalid field of `config`.
void validate(const SyntheticConfig& config);

// Table sizes of the fields: log-spaced from min_cardinality to max_cardinality.
std::vector<int64_t> field_cardinalities(const SyntheticConfig& config);

// Deterministic in `config` (seed included).
SyntheticData generate_synthetic(const SyntheticConfig& config);

}  // namespace gbasim
