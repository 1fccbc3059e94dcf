// gbasim-mpi on real ranks (scripts/mpirun.sh, oversubscribed on this machine): sync equals
// the same rule run in one process, the server modes learn, a dying rank ends the job.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "base/error.h"
#include "models/model.h"
#include "models/optimizer.h"
#include "experiment/spec.h"
#include "mpi/mpi_runtime.h"
#include "strategies/rule_in_force.h"
#include "strategies/update_rule.h"

namespace gbasim {
namespace {

const std::string kSpec = R"({"data": {"train_samples": 12000, "test_samples": 2000, "sharding": "static"},
  "model": {"name": "fm", "embedding_dim": 4},
  "training": {"workers": 3, "local_batch": 64},
  "stragglers": {"persistent_fraction": 0, "noise_cv": 0, "transient_rate_per_s": 0},
  "evaluation": {"interval_s": 0.02}, "budget": {"max_samples": 3840}})";

// A temporary file name of this test's own: CTest runs these tests in parallel.
std::string own_file(const std::string& what) {
  std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
  for (char& c : name)
    if (c == '/') c = '_';
  return testing::TempDir() + "mpi_" + name + "_" + what;
}

struct MpiRun {
  int exit_code;
  std::string output;
};

// Runs scripts/mpirun.sh with `ranks` and the arguments; the output is stdout and stderr.
// A job still running after `limit_s` is stopped, and its exit code is 124.
MpiRun mpirun(int ranks, const std::string& args, int limit_s = 120) {
  const std::string log = own_file("log.txt");
  const std::string command = std::string("GBASIM_MPI=") + GBASIM_MPI_EXE + " timeout -k 5 " +
                              std::to_string(limit_s) + " bash " + GBASIM_MPIRUN + " " +
                              std::to_string(ranks) + " " + args + " >" + log + " 2>&1";
  const int status = std::system(command.c_str());
  std::ifstream in(log);
  std::string output((std::istreambuf_iterator<char>(in)), {});
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, output};
}

std::string spec_file() {
  const std::string path = own_file("spec.json");
  std::ofstream(path) << kSpec;
  return path;
}

std::vector<float> read_floats(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<float> v;
  float x;
  while (in.read(reinterpret_cast<char*>(&x), sizeof x)) v.push_back(x);
  return v;
}

// The largest difference between the parameters gbasim-mpi wrote (--params-out) and `p`;
// infinite when their sizes differ.
double largest_difference(const std::string& params_file, const Parameters& p) {
  std::vector<float> expected(p.dense.data(), p.dense.data() + p.dense.size());
  for (const auto& t : p.tables) expected.insert(expected.end(), t.data(), t.data() + t.size());
  const std::vector<float> got = read_floats(params_file);
  if (got.size() != expected.size()) return INFINITY;
  double worst = 0.0;
  for (size_t i = 0; i < got.size(); ++i)
    worst = std::max(worst, std::abs(double(got[i]) - expected[i]));
  return worst;
}

// What the rule in force gives when driven in one process by a rule log of gbasim-mpi (each
// admission granted, each gradient taken in), each gradient computed on the parameters of its
// token and on the batch its worker read: its pool's shard in order, or (the queue) the
// pool's shared sequence, a batch for each admission of one of the pool's workers.
struct Replayed {
  Parameters params;
  int64_t global_step = 0, received = 0, gba_gradients = 0;
};

Replayed replay_rule_log(const ExperimentSpec& spec, const std::string& log) {
  const LoadedData data = load_data(spec.data);
  const Model model(spec.model, data.train.cardinalities, data.train.num_dense);
  Parameters p = model.init_parameters(spec.seed);
  Optimizer optimizer(spec.optimizer, p);
  SwitchPolicy policy = switch_policy(spec.switching);
  policy.pools = worker_pools(spec);
  RuleInForce rule(spec.training, policy);
  const bool queue = spec.data.sharding == DataSharding::kQueue;
  std::vector<int> pool_of;
  std::vector<ShardIterator> shards, sequences;
  for (const WorkerPool& pool : policy.pools) {
    sequences.emplace_back(data.train, 0, 1, spec.seed);
    for (int i = 0; i < pool.workers; ++i) {
      shards.emplace_back(data.train, i, pool.workers, spec.seed);
      pool_of.push_back(static_cast<int>(sequences.size()) - 1);
    }
  }
  auto batch_of = [&](int w) { return policy.pools[pool_of[w]].local_batch; };
  std::vector<Batch> granted(pool_of.size());
  std::map<int64_t, Parameters> versions{{0, p}};
  Replayed r;
  std::ifstream calls(log);
  std::string call;
  int w = 0;
  int64_t token = 0;
  while (calls >> call >> w >> token) {
    if (call == "admit") {
      const Admission a = rule.admit(w);
      EXPECT_TRUE(a.admitted) << "admission " << w << " " << token;
      EXPECT_EQ(a.token, token);
      if (queue) granted[w] = sequences[pool_of[w]].next(batch_of(w));
      continue;
    }
    EXPECT_EQ(call, "receive");
    if (!versions.count(token)) {
      ADD_FAILURE() << "no parameters of version " << token;
      break;
    }
    Gradient g;
    model.forward_backward(versions.at(token), queue ? granted[w] : shards[w].next(batch_of(w)), g);
    ++r.received;
    if (rule.mode() == Mode::kGBA) ++r.gba_gradients;
    if (auto update = rule.receive(w, token, std::move(g))) {
      optimizer.apply(p, *update);
      versions[rule.global_step()] = p;
    }
  }
  r.global_step = rule.global_step();
  r.params = std::move(p);
  return r;
}

// The total distance the dense parameters moved from their initial values.
double moved_from_start(const ExperimentSpec& spec, const Parameters& p) {
  const LoadedData data = load_data(spec.data);
  const Model model(spec.model, data.train.cardinalities, data.train.num_dense);
  const Parameters init = model.init_parameters(spec.seed);
  double moved = 0.0;
  for (Eigen::Index i = 0; i < init.dense.size(); ++i) moved += std::abs(init.dense[i] - p.dense[i]);
  return moved;
}

// A real run of a server mode or a switching job against the rule in force driven in one
// process by its rule log: the same global steps and gradients (at least `gba_gradients` in
// GBA), and its parameters (--params-out) within a few float roundings, MPI's dense sums being
// in another order. Planted: training moved the parameters.
void expect_the_same_calls_in_one_process(const std::string& spec_path, const std::string& log,
                                          const std::string& params, const nlohmann::json& result,
                                          int64_t gba_gradients) {
  const ExperimentSpec spec = load_spec(spec_path, {});
  const Replayed replayed = replay_rule_log(spec, log);
  EXPECT_EQ(replayed.global_step, result["summary"]["global_steps"].get<int64_t>());
  EXPECT_EQ(replayed.received, result["summary"]["gradients"]["received"].get<int64_t>());
  EXPECT_GE(replayed.gba_gradients, gba_gradients);
  EXPECT_LT(largest_difference(params, replayed.params), 1e-5);
  EXPECT_GT(moved_from_start(spec, replayed.params), 1e-3);
}

// The switches and the model moves of a result, in order.
std::vector<std::string> switches(const nlohmann::json& r) {
  std::vector<std::string> list;
  for (const auto& e : r["switching"]["events"])
    list.push_back(std::to_string(e["global_step"].get<int64_t>()) + " " +
                   e["from"].get<std::string>() + "->" + e["to"].get<std::string>());
  for (const auto& m : r["switching"]["moves"])
    list.push_back(std::to_string(m["global_step"].get<int64_t>()) + " " +
                   m["direction"].get<std::string>());
  return list;
}

nlohmann::json read_json(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in);
}

// A real run's switches and model moves are `expected`, and the simulator's on the same spec
// (its result written to `simulated`), with the same global steps.
void expect_the_simulators_switches(const std::string& spec_path, const std::string& simulated,
                                    const nlohmann::json& result,
                                    const std::vector<std::string>& expected) {
  const std::string command = std::string(GBASIM_EXE) + " run --spec " + spec_path + " -q --out " +
                              simulated + " >/dev/null 2>&1";
  if (std::system(command.c_str()) != 0) {
    ADD_FAILURE() << "the simulator failed: " << command;
    return;
  }
  const nlohmann::json sim = read_json(simulated);
  EXPECT_EQ(switches(result), switches(sim));
  EXPECT_EQ(switches(result), expected);
  EXPECT_EQ(result["summary"]["global_steps"], sim["summary"]["global_steps"]);
}

// data.sharding "static" (a shard a rank) and "queue" (one shared sequence: sync step s gives
// worker w batch 3s + w).
class Sharding : public ::testing::TestWithParam<const char*> {};

TEST_P(Sharding, SyncOnThreeRanksEqualsTheRuleInOneProcess) {
  const std::string spec_path = spec_file(), params = own_file("params.bin");
  const std::string sharding = std::string("data.sharding=") + GetParam();
  const MpiRun run = mpirun(3, "--spec " + spec_path + " --set training.mode=sync --set " +
                                   sharding + " -q --out " + own_file("result.json") +
                                   " --params-out " + params);
  ASSERT_EQ(run.exit_code, 0) << run.output;

  // The same steps in one process: three shards (or the one sequence), the sync rule,
  // gradients in worker order.
  const ExperimentSpec spec = load_spec(spec_path, {"training.mode=sync", sharding});
  const LoadedData data = load_data(spec.data);
  const Model model(spec.model, data.train.cardinalities, data.train.num_dense);
  Parameters p = model.init_parameters(spec.seed);
  Optimizer optimizer(spec.optimizer, p);
  auto rule = make_rule(spec.training);
  const bool queue = spec.data.sharding == DataSharding::kQueue;
  std::vector<ShardIterator> shards;
  for (int w = 0; w < (queue ? 1 : 3); ++w) shards.emplace_back(data.train, w, queue ? 1 : 3, spec.seed);
  int64_t applied = 0;
  while (applied < spec.budget.max_samples) {
    std::vector<Gradient> grads(3);
    std::vector<int64_t> tokens(3);
    for (int w = 0; w < 3; ++w) {
      tokens[w] = rule->admit(w).token;
      model.forward_backward(p, shards[queue ? 0 : w].next(64), grads[w]);
    }
    for (int w = 0; w < 3; ++w) {
      if (auto update = rule->receive(w, tokens[w], std::move(grads[w]))) {
        optimizer.apply(p, *update);
        applied += update->samples;
      }
    }
  }
  // Only the order of MPI's dense sum differs: a few float roundings.
  EXPECT_LT(largest_difference(params, p), 1e-5);
  // The last snapshot, replayed from the changed rows of every snapshot, is the final model.
  std::ifstream result_file(own_file("result.json"));
  const auto result = nlohmann::json::parse(result_file);
  EXPECT_NEAR(result["curve"].back()["test_auc"].get<double>(), evaluate(model, p, data.test).auc,
              1e-4);
  EXPECT_GT(moved_from_start(spec, p), 1e-3);  // planted check: the parameters did move
}

class ServerMode : public ::testing::TestWithParam<const char*> {};

TEST_P(ServerMode, AucRisesOnThreeRanks) {
  const std::string out = own_file("result.json");
  const MpiRun run = mpirun(3, "--spec " + spec_file() +
                                   " --set training.workers=2 --set training.mode=" + GetParam() +
                                   " --set budget.max_samples=0 -q --out " + out);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  std::ifstream in(out);
  const auto result = nlohmann::json::parse(in);
  const auto& curve = result["curve"];
  ASSERT_GE(curve.size(), 2u);
  EXPECT_GT(curve.back()["test_auc"].get<double>(), curve.front()["test_auc"].get<double>() + 0.05)
      << GetParam();
  EXPECT_GE(result["summary"]["samples"].get<int64_t>(), 12000);
  EXPECT_EQ(result["summary"]["clock"], "wall");
  EXPECT_EQ(result["workers"].size(), 2u);
}

INSTANTIATE_TEST_SUITE_P(Modes, ServerMode, ::testing::Values("async", "gba", "ssp", "backup"));

// A scheduled sync -> GBA -> sync switch on 3 real ranks (2 workers and the server): it
// switches at the steps the simulator switches at on the same spec, and its parameters are
// those of the rule in force driven in one process by the same calls (the log of every
// admission granted and every gradient taken in), each gradient computed on the parameters of
// its token.
// With the queue, the server hands out the shared sequence's batches in the order it grants:
// the k-th admission of the log (sync steps' included) reads batch k.
TEST_P(Sharding, ScheduledSwitchesFollowTheRuleInForceOnThreeRanks) {
  const std::string spec_path = own_file("switching.json"), params = own_file("params.bin"),
                    log = own_file("rules.txt"), out = own_file("result.json"),
                    simulated = own_file("simulated.json");
  std::ofstream(spec_path) << R"({"data": {"train_samples": 12000, "test_samples": 2000, "sharding": ")"
                           << GetParam() << R"(",
                                           "max_cardinality": 2000},
    "model": {"name": "fm", "embedding_dim": 4},
    "training": {"workers": 2, "local_batch": 64, "mode": "sync",
                 "switching": {"at_steps": [[10, "gba"], [30, "sync"]]}},
    "stragglers": {"persistent_fraction": 0, "noise_cv": 0, "transient_rate_per_s": 0},
    "evaluation": {"interval_s": 0.02}, "budget": {"max_samples": 6400}})";
  const MpiRun run = mpirun(3, "--spec " + spec_path + " -q --out " + out + " --params-out " +
                                   params + " --rule-log " + log);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json result = read_json(out);
  expect_the_simulators_switches(spec_path, simulated, result,
                                 {"10 sync->gba", "30 gba->sync", "10 to_parameter_servers",
                                  "30 to_workers"});

  // The same calls in one process; 20 GBA steps of two gradients each.
  expect_the_same_calls_in_one_process(spec_path, log, params, result, 40);
}

// A long GBA job on 3 ranks (2 workers and the server): a minute of training unless it fails.
std::string long_job() {
  return "--spec " + spec_file() +
         " --set training.workers=2 --set training.mode=gba --set budget.max_samples=1000000000 "
         "--set budget.max_time_s=60 -q --out " + own_file("result.json");
}

bool written(const std::string& path) { return std::ifstream(path).good(); }

// Any rank's failure ends the whole job within 10 seconds, with that rank's message, and
// writes no result: a crash (abort) of a worker, bad input on one rank alone while the job is
// prepared, and an error during training on a worker and on the server.
TEST(Mpi, ADyingRankEndsTheJobWithAnError) {
  const MpiRun run = mpirun(3, long_job() + " --fail-rank 2 --fail-step 3", 10);
  EXPECT_NE(run.exit_code, 0) << run.output;
  EXPECT_NE(run.exit_code, 124) << "the job ran on past 10 s: " << run.output;
  EXPECT_NE(run.output.find("rank 2: failing on purpose at step 3"), std::string::npos)
      << run.output;
  EXPECT_FALSE(written(own_file("result.json")));
}

TEST(Mpi, BadInputOnOneRankStopsEveryRankBeforeTrainingWithThatRanksMessage) {
  const MpiRun run = mpirun(3, long_job() + " --fail-rank 2 --fail-how error", 10);
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("gbasim-mpi: rank 2: error: failing on purpose while preparing"),
            std::string::npos)
      << run.output;
  EXPECT_FALSE(written(own_file("result.json")));
}

// Only rank 0 (the server) opens the rule log: it alone fails, and the workers stop with it.
TEST(Mpi, AServerThatCannotStartStopsTheWorkers) {
  const MpiRun run = mpirun(3, long_job() + " --rule-log /nonexistent/folder/rule.log", 10);
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("gbasim-mpi: error: /nonexistent/folder/rule.log: cannot write"),
            std::string::npos)
      << run.output;
}

class FailingRank : public ::testing::TestWithParam<int> {};

TEST_P(FailingRank, AnErrorDuringTrainingEndsTheJobWithinTenSeconds) {
  const int rank = GetParam();
  const MpiRun run =
      mpirun(3, long_job() + " --fail-how error --fail-step 3 --fail-rank " + std::to_string(rank), 10);
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("gbasim-mpi: rank " + std::to_string(rank) +
                            ": error: failing on purpose at step 3"),
            std::string::npos)
      << run.output;
  EXPECT_FALSE(written(own_file("result.json")));
}

INSTANTIATE_TEST_SUITE_P(ServerAndWorker, FailingRank, ::testing::Values(0, 2));

// A rank killed from outside (kill -9), or mpirun told to stop (SIGTERM, as a batch scheduler
// or `timeout` does): every rank is gone within 10 seconds and nothing is written.
class KilledJob : public ::testing::TestWithParam<std::string> {};

TEST_P(KilledJob, EveryRankIsGoneWithinTenSeconds) {
  const std::string log = own_file("log.txt"), marker = own_file("spec.json");
  const bool kill_rank = GetParam() == "rank";
  const std::string script =
      std::string("GBASIM_MPI=") + GBASIM_MPI_EXE + " bash " + GBASIM_MPIRUN + " 3 " + long_job() +
      " >" + log + " 2>&1 & job=$!\n"
      "for i in $(seq 100); do [ $(pgrep -f -c -- \"" + marker + "\") -ge 3 ] && break; sleep 0.1; done\n"
      "sleep 1\n" +
      (kill_rank ? "kill -KILL $(pgrep -f -n -- \"gbasim-mpi --spec " + marker + "\")\n"
                 : "kill -TERM $job\n") +
      "for i in $(seq 100); do pgrep -f -- \"" + marker + "\" >/dev/null || exit 0; sleep 0.1; done\n"
      "pkill -KILL -f -- \"" + marker + "\"; exit 124\n";
  const std::string script_path = own_file("kill.sh");
  std::ofstream(script_path) << script;
  const int status = std::system(("bash " + script_path).c_str());
  std::ifstream in(log);
  const std::string output((std::istreambuf_iterator<char>(in)), {});
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "ranks still running 10 s after the kill:\n" << output;
  if (kill_rank) {
    EXPECT_NE(output.find("signal 9"), std::string::npos) << output;
  }
  EXPECT_FALSE(written(own_file("result.json")));
}

INSTANTIATE_TEST_SUITE_P(RankOrMpirun, KilledJob, ::testing::Values("rank", "mpirun"));

// Every rank reads the trace (once) before training, so a bad one stops them all; the server
// once waited forever for workers that had exited.
TEST(Mpi, ABadTraceStopsEveryRankWithAnError) {
  const MpiRun run = mpirun(3, "--spec " + spec_file() +
                                   " --set training.workers=2 --set training.mode=gba "
                                   "--set stragglers.trace.format=pai "
                                   "--set stragglers.trace.path=/nonexistent/trace.csv -q --out " +
                                   own_file("result.json"));
  EXPECT_EQ(run.exit_code, 2) << run.output;
  EXPECT_NE(run.output.find("'stragglers.trace.path': /nonexistent/trace.csv: cannot open"),
            std::string::npos)
      << run.output;
}

TEST(Mpi, TheWrongNumberOfRanksIsAClearError) {
  const MpiRun run = mpirun(
      2, "--spec " + spec_file() + " --set training.mode=gba -q --out " + own_file("result.json"));
  EXPECT_NE(run.exit_code, 0);
  EXPECT_NE(run.output.find("needs 4 ranks (a server and one per worker), not 2"),
            std::string::npos)
      << run.output;
}

// Worker pools on 7 real ranks (the server, pool 0 of 2 workers with local batch 64, pool 1
// of 4 with 32; G = 128): sync on pool 0, GBA on pool 1 (4 gradients a step), sync on pool 0
// again, then sync on pool 1 (the model goes between the pools through the server). The
// switches and moves are the simulator's; the parameters are those of the rule in force
// driven in one process by the same calls, each pool reading its own shards or sequence.
TEST_P(Sharding, WorkerPoolsFollowTheRuleInForceOnSevenRanks) {
  const std::string spec_path = own_file("pools.json"), params = own_file("params.bin"),
                    log = own_file("rules.txt"), out = own_file("result.json"),
                    simulated = own_file("simulated.json");
  std::ofstream(spec_path) << R"({"data": {"train_samples": 12000, "test_samples": 2000, "sharding": ")"
                           << GetParam() << R"(", "max_cardinality": 2000},
    "model": {"name": "fm", "embedding_dim": 4},
    "training": {"workers": 2, "local_batch": 64, "mode": "sync",
                 "switching": {"at_steps": [[8, "gba@1"], [16, "sync@0"], [24, "sync@1"]]}},
    "cluster": {"pools": [{"workers": 4, "local_batch": 32}]},
    "stragglers": {"persistent_fraction": 0, "noise_cv": 0, "transient_rate_per_s": 0},
    "evaluation": {"interval_s": 0.02}, "budget": {"max_samples": 4096}})";
  const MpiRun run = mpirun(7, "--spec " + spec_path + " -q --out " + out + " --params-out " +
                                   params + " --rule-log " + log, 240);
  ASSERT_EQ(run.exit_code, 0) << run.output;
  const nlohmann::json result = read_json(out);
  expect_the_simulators_switches(spec_path, simulated, result,
                                 {"8 sync->gba", "16 gba->sync", "24 sync->sync",
                                  "8 to_parameter_servers", "16 to_workers", "24 between_pools"});
  // Each worker's steps: pool 1's in its GBA phase and its last sync phase.
  ASSERT_EQ(result["workers"].size(), 6u);
  for (int w = 0; w < 6; ++w) {
    EXPECT_EQ(result["workers"][w]["pool"], w < 2 ? 0 : 1);
    EXPECT_GT(result["workers"][w]["steps"].get<int64_t>(), 0) << "worker " << w;
  }

  // 8 GBA steps of four gradients each.
  expect_the_same_calls_in_one_process(spec_path, log, params, result, 32);
}

// Every rank holds the whole data set: ranks whose copies would not fit this machine's
// available memory are refused before any loads its data, naming data.train_samples. A
// million ranks of 2M samples and 2,000 test samples (40 values of 4 bytes a sample: 0.30 GiB
// each) fit no machine; one rank of 12,000 fits.
TEST(Mpi, RanksWhoseDataWouldNotFitThisMachineAreRefused) {
  const ExperimentSpec spec = load_spec(spec_file(), {});
  const ExperimentSpec large = load_spec(spec_file(), {"data.train_samples=2000000"});
  try {
    check_memory_on_this_machine(large, "spec.json", 1000000);
    ADD_FAILURE() << "a million ranks of 2M samples were not refused";
  } catch (const InputError& e) {
    EXPECT_NE(std::string(e.what()).find("spec.json: 'data.train_samples': the 1000000 ranks on "
                                         "this machine each hold the whole data set (0.30 GiB a "
                                         "rank), 298321.2 GiB in all"),
              std::string::npos)
        << e.what();
  }
  EXPECT_NO_THROW(check_memory_on_this_machine(spec, "spec.json", 1));
}

INSTANTIATE_TEST_SUITE_P(Modes, Sharding, ::testing::Values("static", "queue"));

// gbasim calibrate's platform file is one the simulator runs on (microbenchmarks only).
TEST(Mpi, CalibrateWritesAPlatformTheSimulatorLoads) {
  const std::string platform = own_file("platform.json"), log = own_file("log.txt");
  std::string command = std::string(GBASIM_EXE) + " calibrate --no-fit --spec " + spec_file() +
                        " --out " + platform + " >" + log + " 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream in(platform);
  const auto p = nlohmann::json::parse(in);
  EXPECT_GT(p["worker_speed"].get<double>(), 1e6);
  EXPECT_GT(p["nic_bandwidth"].get<double>(), 1e6);
  EXPECT_GT(p["nic_latency"].get<double>(), 0.0);
  EXPECT_GE(p["shared_cores"].get<int>(), 1);
  EXPECT_GE(p["time_slice_s"].get<double>(), 0.0);
  command = std::string(GBASIM_EXE) + " run --spec " + spec_file() +
            " --set cluster.platform=" + platform + " --set training.mode=gba -q --out " +
            own_file("result.json") + " >" + log + " 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  std::ifstream result(own_file("result.json"));
  const auto r = nlohmann::json::parse(result);
  EXPECT_EQ(r["spec"]["cluster"]["shared_cores"], p["shared_cores"]);
  EXPECT_EQ(r["spec"]["cluster"]["time_slice_s"], p["time_slice_s"]);
}

}  // namespace
}  // namespace gbasim
