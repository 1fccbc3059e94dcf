#include <gtest/gtest.h>

#include <algorithm>
#include <random>

#include "base/error.h"
#include "models/synthetic.h"
#include "models/trainer.h"
#include "strategies/rules.h"

namespace gbasim {
namespace {

// A gradient of one dense value, no tables, covering `samples` samples.
Gradient scalar(float value, int64_t samples = 10) {
  Gradient g;
  g.dense = Eigen::VectorXf::Constant(1, value);
  g.samples = samples;
  return g;
}

RuleConfig rule_config(Mode mode, int workers, int64_t b = 10) {
  RuleConfig c;
  c.mode = mode;
  c.num_workers = workers;
  c.local_batch = b;
  return c;
}

// A small real model on a small real data set.
struct RealSetup {
  SyntheticData data;
  Model model;
  RealSetup()
      : data(generate_synthetic([] {
          SyntheticConfig c;
          c.train_samples = 4'000;
          c.test_samples = 500;
          return c;
        }())),
        model(
            [] {
              ModelConfig m;
              m.kind = ModelKind::kDeepFM;
              m.embedding_dim = 4;
              m.mlp = {16, 8};
              return m;
            }(),
            data.train.cardinalities, data.train.num_dense) {}
};

// Runs K global steps where all N workers pull the current parameters, compute, and
// push in worker order: the no-staleness schedule.
Parameters run_lockstep(UpdateRule& rule, const RealSetup& s, int steps, int64_t b) {
  const int n = rule.config().num_workers;
  Parameters params = s.model.init_parameters(1);
  Optimizer optimizer(OptimizerConfig{}, params);
  std::vector<ShardIterator> shards;
  for (int w = 0; w < n; ++w) shards.emplace_back(s.data.train, w, n, 7);
  for (int k = 0; k < steps; ++k) {
    std::vector<Gradient> grads(n);
    std::vector<int64_t> tokens(n);
    for (int w = 0; w < n; ++w) {
      const Admission a = rule.admit(w);
      EXPECT_TRUE(a.admitted);
      tokens[w] = a.token;
      s.model.forward_backward(params, shards[w].next(b), grads[w]);
    }
    for (int w = 0; w < n; ++w) {
      auto update = rule.receive(w, tokens[w], std::move(grads[w]));
      EXPECT_EQ(update.has_value(), w == n - 1);
      if (update) optimizer.apply(params, *update);
    }
  }
  return params;
}

TEST(QuorumRule, SyncAveragesAllWorkersAndMakesContributorsWait) {
  const auto owned = make_rule(rule_config(Mode::kSync, 3));
  UpdateRule& rule = *owned;
  std::vector<int64_t> tokens;
  for (int w = 0; w < 3; ++w) tokens.push_back(rule.admit(w).token);
  EXPECT_FALSE(rule.receive(0, tokens[0], scalar(1)).has_value());
  EXPECT_FALSE(rule.admit(0).admitted) << "a worker that contributed waits for the step";
  EXPECT_FALSE(rule.receive(1, tokens[1], scalar(2)).has_value());
  const auto update = rule.receive(2, tokens[2], scalar(6));
  ASSERT_TRUE(update.has_value());
  EXPECT_FLOAT_EQ(update->dense[0], 3.0f);
  EXPECT_EQ(update->samples, 30) << "a sync step covers G = N x b samples";
  EXPECT_EQ(rule.global_step(), 1);
  EXPECT_EQ(rule.metrics().waits, 1);
  EXPECT_EQ(rule.admit(0).token, 1);
}

TEST(Rules, ATokenMustComeBackFromItsWorker) {
  AsyncRule rule(rule_config(Mode::kAsync, 2));
  const int64_t token = rule.admit(0).token;
  EXPECT_THROW(rule.receive(1, token, scalar(1)), std::logic_error);
  EXPECT_THROW(rule.admit(0), std::logic_error) << "one token per worker at a time";
}

TEST(GbaRule, WithoutStalenessEqualsSyncExactly) {
  const RealSetup s;
  QuorumRule sync(rule_config(Mode::kSync, 4, 32), 4);
  GbaRule gba(rule_config(Mode::kGBA, 4, 32));
  const Parameters a = run_lockstep(sync, s, 12, 32);
  const Parameters b = run_lockstep(gba, s, 12, 32);
  EXPECT_EQ(a.dense, b.dense);
  EXPECT_EQ(a.tables, b.tables);
  EXPECT_EQ(gba.global_step(), 12);
  EXPECT_EQ(gba.metrics().gradients_full, 48);
}

TEST(AsyncRule, OneWorkerEqualsSingleProcessTraining) {
  const RealSetup s;
  TrainConfig tc;
  tc.batch_size = 50;
  tc.epochs = 1.0;  // 80 steps
  tc.seed = 7;
  Parameters expected = s.model.init_parameters(1);
  Optimizer single(OptimizerConfig{}, expected);
  train_single_process(s.model, expected, single, s.data.train, s.data.test, tc);

  AsyncRule rule(rule_config(Mode::kAsync, 1, 50));
  Parameters params = s.model.init_parameters(1);
  Optimizer optimizer(OptimizerConfig{}, params);
  ShardIterator shard(s.data.train, 0, 1, 7);
  Gradient grad;
  for (int k = 0; k < 80; ++k) {
    const Admission a = rule.admit(0);
    s.model.forward_backward(params, shard.next(50), grad);
    auto update = rule.receive(0, a.token, std::move(grad));
    ASSERT_TRUE(update.has_value());
    optimizer.apply(params, *update);
  }
  EXPECT_EQ(params.dense, expected.dense);
  EXPECT_EQ(params.tables, expected.tables);
  EXPECT_EQ(rule.metrics().staleness.at(0), 80);
}

// Worker 1 makes `steps` global steps alone (M = 2 gradients each) while worker 0 holds
// the token of step 0; then worker 0's gradient (value 8) arrives with staleness `steps`.
GbaRule stale_scenario(const GbaConfig& g, int64_t steps) {
  RuleConfig c = rule_config(Mode::kGBA, 2);
  c.gba = g;
  GbaRule rule(c);
  EXPECT_EQ(rule.admit(0).token, 0);
  for (int64_t i = 0; i < 2 * steps; ++i) rule.receive(1, rule.admit(1).token, scalar(100));
  EXPECT_EQ(rule.global_step(), steps);
  return rule;
}

TEST(GbaRule, DecaysExactlyBeyondIota) {
  GbaConfig g;
  g.iota = 1;
  g.decay = Decay::kExp;
  g.gamma = 0.5;
  EXPECT_EQ(GbaRule(RuleConfig{}).gradients_per_step(), 4);
  {
    GbaRule rule = stale_scenario(g, 1);  // staleness 1 = iota: full weight
    EXPECT_FALSE(rule.receive(0, 0, scalar(8)).has_value());
    const auto update = rule.receive(1, rule.admit(1).token, scalar(2));
    ASSERT_TRUE(update.has_value());
    EXPECT_FLOAT_EQ(update->dense[0], (8.0f + 2.0f) / 2.0f);
    EXPECT_EQ(rule.metrics().gradients_decayed, 0);
  }
  {
    GbaRule rule = stale_scenario(g, 3);  // staleness 3: weight 0.5^2
    EXPECT_FALSE(rule.receive(0, 0, scalar(8)).has_value());
    const auto update = rule.receive(1, rule.admit(1).token, scalar(2));
    ASSERT_TRUE(update.has_value());
    EXPECT_FLOAT_EQ(update->dense[0], (0.25f * 8.0f + 2.0f) / 2.0f);
    EXPECT_EQ(rule.metrics().gradients_decayed, 1);
    EXPECT_EQ(rule.metrics().staleness.at(3), 1);
  }
  g.normalize_by_weights = true;
  {
    GbaRule rule = stale_scenario(g, 3);
    rule.receive(0, 0, scalar(8));
    const auto update = rule.receive(1, rule.admit(1).token, scalar(2));
    EXPECT_FLOAT_EQ(update->dense[0], (0.25f * 8.0f + 2.0f) / 1.25f);
  }
  g.normalize_by_weights = false;
  g.decay = Decay::kInverse;
  {
    GbaRule rule = stale_scenario(g, 3);  // weight 1 / (1 + 2)
    rule.receive(0, 0, scalar(9));
    const auto update = rule.receive(1, rule.admit(1).token, scalar(2));
    EXPECT_FLOAT_EQ(update->dense[0], (3.0f + 2.0f) / 2.0f);
  }
  g.decay = Decay::kDrop;
  {
    GbaRule rule = stale_scenario(g, 2);
    EXPECT_FALSE(rule.receive(0, 0, scalar(8)).has_value());
    // Dropped gradients do not count toward M by default: two fresh ones make the step.
    EXPECT_FALSE(rule.receive(1, rule.admit(1).token, scalar(2)).has_value());
    const auto update = rule.receive(1, rule.admit(1).token, scalar(4));
    ASSERT_TRUE(update.has_value());
    EXPECT_FLOAT_EQ(update->dense[0], 3.0f);
    EXPECT_EQ(rule.metrics().gradients_dropped, 1);
  }
  g.dropped_count = true;
  {
    GbaRule rule = stale_scenario(g, 2);
    rule.receive(0, 0, scalar(8));
    const auto update = rule.receive(1, rule.admit(1).token, scalar(2));
    ASSERT_TRUE(update.has_value()) << "a dropped gradient that counts completes the step";
    EXPECT_FLOAT_EQ(update->dense[0], 2.0f / 2.0f);
  }
}

TEST(GbaRule, FastWorkersFillTheGlobalBatchAndALostTokenChangesNothing) {
  GbaRule rule(rule_config(Mode::kGBA, 3));
  rule.admit(0);
  rule.lose_token(0);  // worker 0 fails mid-step
  EXPECT_FALSE(rule.receive(1, rule.admit(1).token, scalar(3)).has_value());
  EXPECT_FALSE(rule.receive(1, rule.admit(1).token, scalar(6)).has_value());
  const auto update = rule.receive(2, rule.admit(2).token, scalar(9));
  ASSERT_TRUE(update.has_value());
  EXPECT_FLOAT_EQ(update->dense[0], 6.0f);
  EXPECT_EQ(update->samples, 30);
  EXPECT_EQ(rule.metrics().tokens_lost, 1);
  EXPECT_TRUE(rule.admit(0).admitted) << "the failed worker starts afresh";
}

TEST(BoundedStalenessRule, NoWorkerEverStartsMoreThanSAheadOfTheSlowest) {
  for (int64_t bound : {0, 1, 3}) {
    for (uint32_t seed = 0; seed < 50; ++seed) {
      RuleConfig c = rule_config(Mode::kBoundedStaleness, 5);
      c.staleness_bound = bound;
      BoundedStalenessRule rule(c);
      std::mt19937 rng(seed);
      std::vector<int64_t> tokens(5);
      for (int event = 0; event < 400; ++event) {
        const int w = static_cast<int>(rng() % 5);
        if (rule.in_flight(w)) {
          ASSERT_TRUE(rule.receive(w, tokens[w], scalar(1)).has_value());
          continue;
        }
        int64_t slowest = rule.completed(0);
        for (int v = 1; v < 5; ++v) slowest = std::min(slowest, rule.completed(v));
        const Admission a = rule.admit(w);
        ASSERT_EQ(a.admitted, rule.completed(w) - slowest <= bound) << "seed " << seed;
        if (a.admitted) tokens[w] = a.token;
      }
      EXPECT_GT(rule.global_step(), 50) << "the slowest worker is always admitted: no deadlock";
    }
  }
}

TEST(QuorumRule, BackupWorkersStepsTakeExactlyNMinusKGradients) {
  RuleConfig c = rule_config(Mode::kBackupWorkers, 5);
  c.backup_workers = 2;
  const auto owned = make_rule(c);  // backup: the quorum N - k = 3
  UpdateRule& rule = *owned;
  std::mt19937 rng(3);
  std::vector<int64_t> tokens(5);
  int updates = 0;
  for (int event = 0; event < 2000; ++event) {
    const int w = static_cast<int>(rng() % 5);
    if (!rule.in_flight(w)) {
      const Admission a = rule.admit(w);
      if (a.admitted) tokens[w] = a.token;
      continue;
    }
    const int64_t before = rule.global_step();
    // Each gradient carries its token as its value: a step's average must be its version.
    const auto update = rule.receive(w, tokens[w], scalar(static_cast<float>(tokens[w])));
    if (update) {
      ++updates;
      EXPECT_EQ(update->samples, 3 * 10);
      EXPECT_FLOAT_EQ(update->dense[0], static_cast<float>(before)) << "a late gradient was used";
      EXPECT_EQ(rule.global_step(), before + 1);
    }
  }
  const RuleMetrics& m = rule.metrics();
  EXPECT_EQ(updates, m.global_steps);
  EXPECT_GE(m.gradients_full, 3 * m.global_steps);  // and at most 2 more wait in the buffer
  EXPECT_LT(m.gradients_full, 3 * m.global_steps + 3);
  EXPECT_GT(m.gradients_dropped, 0);
  EXPECT_EQ(m.gradients_received, m.gradients_full + m.gradients_dropped);
}

TEST(Rules, InvalidConfigNamesTheKey) {
  RuleConfig c = rule_config(Mode::kGBA, 4);
  c.global_batch = 45;
  try {
    make_rule(c);
    FAIL();
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("'training.global_batch'"), std::string::npos);
  }
  c = rule_config(Mode::kBackupWorkers, 4);
  c.backup_workers = 4;
  EXPECT_THROW(make_rule(c), InputError);
  EXPECT_THROW(parse_mode("hogwild"), InputError);
}

}  // namespace
}  // namespace gbasim
