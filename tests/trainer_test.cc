#include "models/trainer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

#include "models/synthetic.h"

namespace gbasim {
namespace {

TrainResult train(ModelKind kind, const SyntheticData& data, const TrainConfig& config,
                  Parameters* out = nullptr, const OptimizerConfig& oc = {}) {
  ModelConfig mc;
  mc.kind = kind;
  const Model model(mc, data.train.cardinalities, data.train.num_dense);
  Parameters params = model.init_parameters(1);
  Optimizer optimizer(oc, params);
  TrainResult r = train_single_process(model, params, optimizer, data.train, data.test, config);
  if (out != nullptr) *out = std::move(params);
  return r;
}

SyntheticData small_data() {
  SyntheticConfig c;
  c.train_samples = 5'000;
  c.test_samples = 1'000;
  return generate_synthetic(c);
}

TEST(Trainer, SameSeedsGiveTheSameParameters) {
  const SyntheticData data = small_data();
  TrainConfig config;
  config.epochs = 2.0;
  Parameters a, b, other;
  train(ModelKind::kDLRM, data, config, &a);
  train(ModelKind::kDLRM, data, config, &b);
  config.seed = 2;
  train(ModelKind::kDLRM, data, config, &other);
  EXPECT_EQ(a.dense, b.dense);
  EXPECT_EQ(a.tables, b.tables);
  EXPECT_NE(a.dense, other.dense) << "another data order must give other parameters";
}

// A learning rate that blows the parameters up stops training at the first loss that is not
// finite, with a final point whose AUC is NaN (once an endless loop in the AUC).
TEST(Trainer, ADivergedModelStopsAtTheFirstNonFiniteLoss) {
  const SyntheticData data = small_data();
  OptimizerConfig oc;
  oc.learning_rate = 1e300;  // infinite as a float
  const TrainResult r = train(ModelKind::kLR, data, TrainConfig{}, nullptr, oc);
  EXPECT_TRUE(r.diverged);
  EXPECT_LT(r.steps, total_steps(TrainConfig{}, data.train.size()));
  EXPECT_TRUE(r.curve.back().test.diverged);
  EXPECT_TRUE(std::isnan(r.curve.back().test.auc));
}

TEST(Trainer, CurveHasAPointEveryEvalStepsAndAtTheEnd) {
  SyntheticConfig c;
  c.train_samples = 2'000;
  c.test_samples = 500;
  const SyntheticData data = generate_synthetic(c);
  TrainConfig config;
  config.batch_size = 100;
  config.eval_every = 7;
  const TrainResult r = train(ModelKind::kLR, data, config);
  ASSERT_EQ(r.steps, 20);
  std::vector<int64_t> steps;
  for (const auto& p : r.curve) steps.push_back(p.step);
  EXPECT_EQ(steps, (std::vector<int64_t>{7, 14, 20}));
  EXPECT_EQ(r.curve.back().samples, 2'000);
}

// One epoch of the default data set, the default model sizes and optimizer.
TEST(Trainer, OneEpochOfTheDefaultDataLearnsAndDeepModelsBeatLR) {
  const SyntheticData data = generate_synthetic(SyntheticConfig{});
  TrainConfig config;
  config.eval_every = 1'000'000;  // evaluate once, at the end
  std::map<ModelKind, double> auc;
  for (ModelKind kind : {ModelKind::kLR, ModelKind::kFM, ModelKind::kDeepFM, ModelKind::kWideDeep,
                         ModelKind::kDLRM}) {
    auc[kind] = train(kind, data, config).curve.back().test.auc;
    EXPECT_GT(auc[kind], 0.70) << model_name(kind);
    EXPECT_LT(auc[kind], data.bayes_auc) << model_name(kind);
  }
  for (ModelKind deep : {ModelKind::kDeepFM, ModelKind::kWideDeep, ModelKind::kDLRM}) {
    EXPECT_GT(auc[deep], auc[ModelKind::kLR]) << model_name(deep);
  }
}

}  // namespace
}  // namespace gbasim
