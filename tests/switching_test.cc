#include "strategies/switching.h"

#include <gtest/gtest.h>

#include "base/error.h"
#include "models/model.h"
#include "models/optimizer.h"
#include "models/synthetic.h"
#include "strategies/rules.h"

namespace gbasim {
namespace {

RuleConfig four_workers() {
  RuleConfig c;
  c.num_workers = 4;
  c.local_batch = 32;
  return c;
}

struct LockstepRun {
  Parameters params;
  std::vector<Mode> mode_at_step;
  std::vector<ModelMove> moves;
};

// Lockstep schedule (no stragglers): every global step, all workers pull, compute on the
// current parameters and push in worker order.
LockstepRun run_lockstep(SwitchingController& controller, int steps) {
  static const SyntheticData data = generate_synthetic([] {
    SyntheticConfig c;
    c.train_samples = 4'000;
    c.test_samples = 200;
    return c;
  }());
  ModelConfig mc;
  mc.embedding_dim = 4;
  mc.mlp = {16, 8};
  const Model model(mc, data.train.cardinalities, data.train.num_dense);
  LockstepRun run{model.init_parameters(1), {}, {}};
  Optimizer optimizer(OptimizerConfig{}, run.params);
  std::vector<ShardIterator> shards;
  for (int w = 0; w < 4; ++w) shards.emplace_back(data.train, w, 4, 5);
  while (controller.global_step() < steps) {
    run.mode_at_step.push_back(controller.mode());
    std::vector<Gradient> grads(4);
    std::vector<int64_t> tokens(4);
    for (int w = 0; w < 4; ++w) {
      const Admission a = controller.admit(w);
      EXPECT_TRUE(a.admitted);
      tokens[w] = a.token;
      model.forward_backward(run.params, shards[w].next(32), grads[w]);
    }
    for (int w = 0; w < 4; ++w) {
      if (auto update = controller.receive(w, tokens[w], std::move(grads[w])))
        optimizer.apply(run.params, *update);
    }
    if (auto move = controller.take_model_move()) run.moves.push_back(*move);
  }
  return run;
}

TEST(Switching, SyncGbaSyncWithoutStragglersMatchesAllSync) {
  SwitchingController all_sync(four_workers(), SwitchPolicy{}, Mode::kSync);
  SwitchPolicy policy;
  policy.at_steps = {{5, Mode::kGBA}, {12, Mode::kSync}};
  SwitchingController switching(four_workers(), policy, Mode::kSync);
  const LockstepRun a = run_lockstep(all_sync, 20);
  const LockstepRun b = run_lockstep(switching, 20);
  EXPECT_EQ(a.params.dense, b.params.dense);
  EXPECT_EQ(a.params.tables, b.params.tables);
  ASSERT_EQ(b.mode_at_step.size(), 20u);
  EXPECT_EQ(b.mode_at_step[4], Mode::kSync);
  EXPECT_EQ(b.mode_at_step[5], Mode::kGBA);
  EXPECT_EQ(b.mode_at_step[11], Mode::kGBA);
  EXPECT_EQ(b.mode_at_step[12], Mode::kSync);
  ASSERT_EQ(b.moves.size(), 2u);
  EXPECT_EQ(b.moves[0].direction, ModelMove::Direction::kToParameterServers);
  EXPECT_EQ(b.moves[0].global_step, 5);
  EXPECT_EQ(b.moves[1].direction, ModelMove::Direction::kToWorkers);
  EXPECT_EQ(b.moves[1].global_step, 12);
  EXPECT_EQ(switching.metrics().global_steps, 20);
  EXPECT_EQ(switching.metrics().gradients_full, 80);
}

Gradient scalar(float v) {
  Gradient g;
  g.dense = Eigen::VectorXf::Constant(1, v);
  g.samples = 32;
  return g;
}

TEST(Switching, GbaToSyncFinishesTheStepThenDiscardsWhatIsStillInFlight) {
  SwitchingController c(four_workers(), SwitchPolicy{}, Mode::kGBA);
  const int64_t t0 = c.admit(0).token;  // worker 0 is slow: its gradient comes last
  int64_t t1 = c.admit(1).token;
  c.request(Mode::kSync, "test");
  EXPECT_TRUE(c.switching());
  // The GBA step in progress still takes gradients until its global batch is full.
  for (int i = 0; i < 3; ++i) {
    EXPECT_FALSE(c.receive(1, t1, scalar(1)).has_value());
    t1 = c.admit(1).token;
  }
  ASSERT_TRUE(c.receive(1, t1, scalar(1)).has_value());
  EXPECT_EQ(c.global_step(), 1);
  EXPECT_FALSE(c.admit(2).admitted) << "admissions stop once the last GBA step is applied";
  EXPECT_EQ(c.mode(), Mode::kGBA) << "worker 0's token is still out";
  EXPECT_FALSE(c.receive(0, t0, scalar(100)).has_value()) << "discarded";
  EXPECT_EQ(c.mode(), Mode::kSync);
  EXPECT_EQ(c.metrics().gradients_dropped, 1);
  const auto move = c.take_model_move();
  ASSERT_TRUE(move.has_value());
  EXPECT_EQ(move->direction, ModelMove::Direction::kToWorkers);
  EXPECT_FALSE(c.take_model_move().has_value()) << "a move is owed once";
  EXPECT_EQ(c.admit(2).token, 1) << "sync resumes at the same global step";
}

TEST(Switching, AutomaticPolicySwitchesWithHysteresis) {
  SwitchPolicy policy;
  policy.automatic = true;
  policy.window = 2;
  policy.min_steps_between = 0;
  SwitchingController c(four_workers(), policy, Mode::kSync);
  auto sync_step = [&](double straggler_seconds) {
    std::vector<int64_t> tokens;
    for (int w = 0; w < 4; ++w) tokens.push_back(c.admit(w).token);
    for (int w = 0; w < 4; ++w) {
      c.observe_step(w, w == 3 ? straggler_seconds : 1.0, 0.0);
      c.receive(w, tokens[w], scalar(1));
    }
  };
  sync_step(1.3);
  EXPECT_EQ(c.mode(), Mode::kSync) << "ratio 1.3 is below 1.5";
  sync_step(3.0);  // worker 3's mean over the window: 2.15
  EXPECT_EQ(c.mode(), Mode::kGBA);
  ASSERT_EQ(c.events().size(), 1u);
  EXPECT_EQ(c.events()[0].reason.rfind("ratio", 0), 0u);
  // Under GBA a ratio of 1.3 is inside the hysteresis band: stay.
  for (int w = 0; w < 4; ++w) c.observe_step(w, w == 3 ? 1.3 : 1.0, 1.0);
  for (int w = 0; w < 4; ++w) c.observe_step(w, w == 3 ? 1.3 : 1.0, 1.0);
  EXPECT_FALSE(c.switching());
  for (int w = 0; w < 4; ++w) c.observe_step(w, 1.0, 2.0);
  for (int w = 0; w < 4; ++w) c.observe_step(w, 1.0, 2.0);
  EXPECT_TRUE(c.switching()) << "ratio 1.0 < 1.2 asks for sync";
}

TEST(Switching, BadPoliciesAreInputErrors) {
  SwitchPolicy p;
  p.to_sync_ratio = 2.0;
  EXPECT_THROW(SwitchingController(four_workers(), p, Mode::kSync), InputError);
  SwitchPolicy automatic;
  automatic.automatic = true;
  EXPECT_THROW(SwitchingController(four_workers(), automatic, Mode::kAsync), InputError);
  EXPECT_NO_THROW(SwitchingController(four_workers(), SwitchPolicy{}, Mode::kAsync));
}

// Scheduled switches may name any server mode; only a change of transport moves the model.
TEST(Switching, SyncToAsyncToGbaMovesTheModelOnce) {
  SwitchPolicy policy;
  policy.at_steps = {{3, Mode::kAsync}, {20, Mode::kGBA}};
  SwitchingController c(four_workers(), policy, Mode::kSync);
  const LockstepRun run = run_lockstep(c, 30);
  EXPECT_EQ(run.mode_at_step[2], Mode::kSync);
  EXPECT_EQ(run.mode_at_step[3], Mode::kAsync);
  ASSERT_EQ(c.events().size(), 2u);
  EXPECT_EQ(c.events()[0].to, Mode::kAsync);
  EXPECT_EQ(c.events()[1].from, Mode::kAsync);
  EXPECT_EQ(c.events()[1].to, Mode::kGBA);
  EXPECT_EQ(c.mode(), Mode::kGBA);
  ASSERT_EQ(run.moves.size(), 1u);
  EXPECT_EQ(run.moves[0].direction, ModelMove::Direction::kToParameterServers);
  EXPECT_EQ(run.moves[0].global_step, 3);
}

}  // namespace
}  // namespace gbasim

namespace gbasim {
namespace {

// Pool 0: workers 0-3, local batch 32 (G = 128); pool 1: workers 4-11, local batch 16.
SwitchPolicy two_pools() {
  SwitchPolicy p;
  p.pools = {{0, 4, 32}, {4, 8, 16}};
  return p;
}

Gradient of_samples(int64_t samples) {
  Gradient g;
  g.dense = Eigen::VectorXf::Constant(1, 1.0f);
  g.samples = samples;
  return g;
}

TEST(Switching, APoolSwitchKeepsTheGlobalBatchAndAdmitsOnlyThatPool) {
  SwitchPolicy policy = two_pools();
  policy.at_steps = {{2, Mode::kGBA, 1}, {4, Mode::kSync, 1}};
  SwitchingController c(four_workers(), policy, Mode::kSync);
  std::vector<int64_t> samples_per_step;
  while (c.global_step() < 6) {
    const WorkerPool& p = c.pool_of(c.pool());
    // Workers outside the pool in force are refused.
    const int outside = p.first == 0 ? 4 : 0;
    EXPECT_FALSE(c.admit(outside).admitted);
    int64_t applied = 0;
    for (int w = p.first; w < p.first + p.workers; ++w) {
      const Admission a = c.admit(w);
      ASSERT_TRUE(a.admitted) << "worker " << w << " at step " << c.global_step();
      if (auto update = c.receive(w, a.token, of_samples(p.local_batch))) {
        applied = update->samples;
        break;  // GBA: the step is applied once G samples are in
      }
    }
    samples_per_step.push_back(applied);
    c.take_model_move();
  }
  // Sync on pool 0 (4 x 32), GBA on pool 1 (128 / 16 = 8 gradients), sync on pool 1 (8 x 16):
  // every step applies G = 128 samples.
  EXPECT_EQ(samples_per_step, std::vector<int64_t>(6, 128));
  ASSERT_EQ(c.events().size(), 2u);
  EXPECT_EQ(c.events()[0].from_pool, 0);
  EXPECT_EQ(c.events()[0].to_pool, 1);
  EXPECT_EQ(c.events()[1].to, Mode::kSync);
  EXPECT_EQ(c.metrics().global_steps, 6);
}

TEST(Switching, MovesBetweenPoolsNameBothPools) {
  SwitchPolicy policy = two_pools();
  policy.at_steps = {{1, Mode::kSync, 1}};
  SwitchingController c(four_workers(), policy, Mode::kSync);
  for (int w = 0; w < 4; ++w) {
    const Admission a = c.admit(w);
    c.receive(w, a.token, of_samples(32));
  }
  const std::optional<ModelMove> move = c.take_model_move();
  ASSERT_TRUE(move.has_value());
  EXPECT_EQ(move->direction, ModelMove::Direction::kBetweenPools);
  EXPECT_EQ(move->from.first, 0);
  EXPECT_EQ(move->to.first, 4);
  EXPECT_EQ(move->to.workers, 8);
}

TEST(Switching, SyncOnAPoolThatCannotMakeTheGlobalBatchIsRefused) {
  SwitchPolicy policy;
  policy.pools = {{0, 4, 32}, {4, 6, 16}};  // 6 x 16 = 96, not 128
  policy.at_steps = {{1, Mode::kSync, 1}};
  EXPECT_THROW(SwitchingController(four_workers(), policy, Mode::kGBA), InputError);
  policy.at_steps = {{1, Mode::kGBA, 1}};  // GBA there is fine: 128 / 16 = 8 gradients
  EXPECT_NO_THROW(SwitchingController(four_workers(), policy, Mode::kSync));
  policy.at_steps = {{1, Mode::kGBA, 2}};
  EXPECT_THROW(SwitchingController(four_workers(), policy, Mode::kSync), InputError);
}

}  // namespace
}  // namespace gbasim
