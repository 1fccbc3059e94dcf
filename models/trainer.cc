#include "models/trainer.h"

#include <cmath>

#include "base/error.h"

namespace gbasim {

int64_t total_steps(const TrainConfig& config, int64_t train_size) {
  return std::max<int64_t>(
      1, static_cast<int64_t>(std::ceil(config.epochs * static_cast<double>(train_size) /
                                        static_cast<double>(config.batch_size))));
}

TrainResult train_single_process(const Model& model, Parameters& params, Optimizer& optimizer,
                                 const Dataset& train, const Dataset& test,
                                 const TrainConfig& config,
                                 const std::function<void(const CurvePoint&)>& on_point) {
  if (config.batch_size < 1) throw InputError("train: 'batch_size' must be at least 1");
  if (!(config.epochs > 0.0)) throw InputError("train: 'epochs' must be positive");
  if (config.eval_every < 0) throw InputError("train: 'eval_every' must not be negative");
  const int64_t steps = total_steps(config, train.size());
  const int64_t eval_every =
      config.eval_every > 0 ? config.eval_every : std::max<int64_t>(1, (steps + 9) / 10);

  TrainResult result;
  ShardIterator data(train, 0, 1, config.seed);
  Gradient grad;
  double loss_sum = 0.0;
  int64_t loss_count = 0;
  for (int64_t step = 1; step <= steps; ++step) {
    const Batch batch = data.next(config.batch_size);
    const double loss = model.forward_backward(params, batch, grad);
    loss_sum += loss;
    ++loss_count;
    result.diverged = !std::isfinite(loss);
    if (!result.diverged) optimizer.apply(params, grad);
    if (step % eval_every == 0 || step == steps || result.diverged) {
      CurvePoint point{step, data.samples_read(), loss_sum / static_cast<double>(loss_count),
                       evaluate(model, params, test)};
      loss_sum = 0.0;
      loss_count = 0;
      result.curve.push_back(point);
      if (on_point) on_point(point);
    }
    result.steps = step;
    if (result.diverged) break;
  }
  result.samples = data.samples_read();
  return result;
}

}  // namespace gbasim
