// Single-process training: the reference every distributed mode is compared with.
#pragma once

#include <cstdint>
#include <functional>
#include <vector>

#include "models/model.h"
#include "models/optimizer.h"

namespace gbasim {

struct TrainConfig {
  int64_t batch_size = 256;
  double epochs = 1.0;
  int64_t eval_every = 0;  // steps between test evaluations; 0 spreads 10 over the run
  uint64_t seed = 1;       // data order
};

struct CurvePoint {
  int64_t step = 0;
  int64_t samples = 0;
  double train_loss = 0.0;  // mean batch loss since the previous point
  Evaluation test;
};

struct TrainResult {
  std::vector<CurvePoint> curve;  // the last point is the final evaluation
  int64_t steps = 0;
  int64_t samples = 0;
  bool diverged = false;  // a batch loss was not a finite number: training stopped there
};

// Number of optimizer steps `config` makes over `train_size` samples.
int64_t total_steps(const TrainConfig& config, int64_t train_size);

// Trains `params` in place: forward, backward, update, with a test evaluation every
// eval_every steps and at the end, or at the first batch loss that is not finite (diverged). `on_point` (optional) sees each point as it is made.
TrainResult train_single_process(const Model& model, Parameters& params, Optimizer& optimizer,
                                 const Dataset& train, const Dataset& test,
                                 const TrainConfig& config,
                                 const std::function<void(const CurvePoint&)>& on_point = {});

}  // namespace gbasim
