// SimGrid allows one engine per process: CTest runs each of these tests in a process of
// its own (gtest_discover_tests), which is how they must be run.
#include "sim/simulation.h"

#include <gtest/gtest.h>
#include <xbt/log.h>
#include <simgrid/s4u.hpp>

#include <cmath>
#include <fstream>
#include <iomanip>
#include <random>

#include "models/layers.h"
#include "sim/batch_rows.h"
#include "sim/cluster.h"
#include "sim/batch_rows.h"
#include "sim/messages.h"
#include "models/synthetic.h"

namespace gbasim {
namespace {

// A gradient's rows by owner are the sums of its rows' one by one: each row lands at one
// owner with its own table's dimension, whatever the number of owners (one, a power of two
// counted without a division, any other, more owners than rows).
TEST(RowsByOwner, AreTheSumOfEachRowsOwnOwner) {
  const std::vector<int64_t> dims = {4, 16, 8};
  Gradient g;
  g.tables.resize(dims.size());
  std::mt19937 rng(7);
  for (size_t t = 0; t < dims.size(); ++t) {
    for (int32_t row = 0; row < 1500; ++row)
      if (rng() % 3 == 0) g.tables[t].rows.push_back(row);
  }
  for (int owners : {1, 3, 4, 7, 64, 1000, 20000}) {
    std::vector<double> rows(owners, 0.0), values(owners, 0.0);
    for (size_t t = 0; t < dims.size(); ++t) {
      for (int32_t row : g.tables[t].rows) {
        Gradient one;
        one.tables.resize(dims.size());
        one.tables[t].rows = {row};
        const RowsByOwner single = rows_by_owner(one, dims, owners);
        int holders = 0;
        for (int p = 0; p < owners; ++p) {
          if (single.rows[p] == 0.0) continue;
          ++holders;
          EXPECT_EQ(single.rows[p], 1.0);
          EXPECT_EQ(single.values[p], static_cast<double>(dims[t]));
          rows[p] += 1.0;
          values[p] += static_cast<double>(dims[t]);
        }
        ASSERT_EQ(holders, 1) << "table " << t << " row " << row << ", " << owners << " owners";
      }
    }
    const RowsByOwner all = rows_by_owner(g, dims, owners);
    EXPECT_EQ(all.rows, rows) << owners << " owners";
    EXPECT_EQ(all.values, values) << owners << " owners";
  }
}

// A batch's distinct ids, field by field, in the order each first appears: FirstSeen over
// each field's column. Fields of sizes that share bit words (1, 63, 65, ...), and batches
// one after another (bits left set by one batch would drop ids from the next).
TEST(BatchRows, EachFieldsDistinctIdsInFirstSeenOrderBatchAfterBatch) {
  const std::vector<int64_t> cardinalities = {1, 63, 65, 3, 1000, 64, 100000, 2};
  const auto fields = cardinalities.size();
  BatchRows batch_rows(cardinalities);
  std::mt19937 rng(11);
  for (int batch = 0; batch < 30; ++batch) {
    const int64_t b = 1 + static_cast<int64_t>(rng() % 300);
    std::vector<int32_t> ids(static_cast<size_t>(b) * fields);
    for (int64_t i = 0; i < b; ++i)
      for (size_t f = 0; f < fields; ++f) {  // a field's first and last ids half the time
        const auto size = static_cast<uint32_t>(cardinalities[f]);
        const uint32_t r = rng();
        ids[static_cast<size_t>(i) * fields + f] =
            static_cast<int32_t>(r % 4 == 0 ? 0 : r % 4 == 1 ? size - 1 : (r / 4) % size);
      }
    std::vector<SparseRows> tables(fields);
    batch_rows.take(b, [&](int64_t i) { return ids.data() + i * static_cast<int64_t>(fields); }, tables);
    FirstSeen first_seen;
    for (size_t f = 0; f < fields; ++f) {
      first_seen.add_each(static_cast<size_t>(b), [&](size_t i) { return ids[i * fields + f]; });
      ASSERT_EQ(tables[f].rows, first_seen.take()) << "batch " << batch << ", field " << f;
    }
  }
}

nlohmann::ordered_json simulate(const ExperimentSpec& spec) {
  xbt_log_control_set("root.thres:critical");
  char name[] = "simulation_test";
  char* argv[] = {name, const_cast<char*>(engine_context_arg()), nullptr};
  int argc = argv[1] == nullptr ? 1 : 2;
  simgrid::s4u::Engine engine(&argc, argv);
  return run_simulation(spec);
}

// No stragglers, plain alpha-beta network timing, a small data set.
ExperimentSpec straggler_free_cluster(Mode mode, int workers) {
  ExperimentSpec s;
  s.data.synthetic.train_samples = 20'000;
  s.data.synthetic.test_samples = 1'000;
  s.model.embedding_dim = 4;
  s.model.mlp = {16, 8};
  s.training.mode = mode;
  s.training.num_workers = workers;
  s.training.local_batch = 64;
  s.stragglers.persistent_fraction = 0.0;
  s.stragglers.noise_cv = 0.0;
  s.cluster.network_model = "CM02";
  s.cluster.ps_shards = 1;
  s.evaluation.interval_s = 1000.0;
  // The analytic timings below read each worker's batches from its own shard.
  s.data.sharding = DataSharding::kStatic;
  return s;
}

// Bytes of the sparse rows of a batch: per table, unique rows x (8-byte id + 4 per value).
double sparse_bytes(const Batch& batch, const std::vector<int>& table_dims) {
  const FieldGroups groups(batch.ids);
  double bytes = 0.0;
  for (int dim : table_dims)
    for (const auto& unique : groups.unique_ids)
      bytes += static_cast<double>(unique.size()) * (8.0 + 4.0 * dim);
  return bytes;
}

// The analytic timing of a sync step of two workers with local batch 64 on straggler_free_cluster
// (CM02): one batch's compute, and the ring's communication of step k (the dense all-reduce,
// two passes of half the values, then the all-gather of the larger sparse block) over links
// of nic_bandwidth x `bandwidth_factor`; two NICs a path.
struct TwoWorkerRing {
  TwoWorkerRing(const ExperimentSpec& s, int steps, double bandwidth_factor = 1.0)
      : bandwidth(s.cluster.nic_bandwidth * bandwidth_factor),
        latency(2.0 * s.cluster.nic_latency) {
    const SyntheticData data = generate_synthetic(s.data.synthetic);
    const Model model(s.model, data.train.cardinalities, data.train.num_dense);
    compute = s.cost.flops_scale * model.flops_per_sample() * 64 / s.cluster.worker_speed;
    dense_pass = latency + 4.0 * static_cast<double>(model.num_dense_parameters()) / 2 / bandwidth;
    ShardIterator shard0(data.train, 0, 2, s.seed), shard1(data.train, 1, 2, s.seed);
    // DeepFM: a first-order table (dimension 1) and an embedding table per field.
    for (int k = 0; k < steps; ++k) {
      sparse.push_back(
          std::max(sparse_bytes(shard0.next(64), {1, 4}), sparse_bytes(shard1.next(64), {1, 4})));
    }
  }
  double comm(size_t k) const { return 2 * dense_pass + latency + sparse[k] / bandwidth; }
  // Worker 0's steps, each ending `computes` computes and the ring after the one before.
  void expect_step_ends(const nlohmann::json& result, size_t steps, double computes) const {
    const auto& ends = result["workers"][0]["step_ends"];
    ASSERT_EQ(ends.size(), steps);
    double t = 0.0;
    for (size_t k = 0; k < ends.size(); ++k) {
      t += computes * compute + comm(k);
      EXPECT_NEAR(ends[k].get<double>(), t, 1e-9 * t) << "step " << k;
    }
  }

  double bandwidth, latency, compute = 0.0, dense_pass = 0.0;
  std::vector<double> sparse;  // the larger of the two workers' sparse bytes, per step
};

TEST(Simulation, SyncStepIsComputePlusRingAllReduce) {
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 2);
  s.cost.update_flops_per_value = 0.0;
  s.budget.max_samples = 2 * 64 * 6;
  const auto result = simulate(s);
  const TwoWorkerRing ring(s, 6);
  ring.expect_step_ends(result, 6, 1);
  EXPECT_EQ(result["summary"]["global_steps"], 6);
}

// With a workload, the step is the workload's: its flops a local batch, the all-reduce of its
// dense part and the all-gather of its expected distinct rows (tables replicated), whatever the
// proxy's sizes. An MLP 100-50-1 (5,101 parameters), a table of 1,000 rows of dim 8, one
// uniform id a sample, batches of 128 workload samples for the proxy's 64.
TEST(Simulation, WithAWorkloadTheSyncStepIsTheWorkloads) {
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 2);
  s.cost.update_flops_per_value = 0.0;
  s.budget.max_samples = 2 * 64 * 5;
  s.simulation.timing_only = true;
  WorkloadSpec w;
  w.dense_layers = {{100, 50, 1}};
  w.tables = {{1000, 8, 1.0, 0.0, 1, false}};
  w.local_batch = 128;
  w.placement = TablePlacement::kReplicated;
  s.workload = w;
  const auto result = simulate(s);
  const double bandwidth = s.cluster.nic_bandwidth, latency = 2.0 * s.cluster.nic_latency;
  const double compute = 6.0 * 5101 * 128 / s.cluster.worker_speed;
  const double dense_pass = latency + 4.0 * 5101 / 2 / bandwidth;
  const double rows = 1000.0 * (1.0 - std::pow(1.0 - 1.0 / 1000.0, 128.0));
  const double gather = latency + rows * (8.0 + 4.0 * 8) / bandwidth;
  const auto& ends = result["workers"][0]["step_ends"];
  ASSERT_EQ(ends.size(), 5u);
  for (size_t k = 0; k < ends.size(); ++k) {
    const double t = static_cast<double>(k + 1) * (compute + 2 * dense_pass + gather);
    // SimGrid sends whole bytes: the expected rows' fraction of a byte is within 1e-6.
    EXPECT_NEAR(ends[k].get<double>(), t, 1e-6 * t) << "step " << k;
  }
  EXPECT_DOUBLE_EQ(result["workers"][0]["nominal_step_s"].get<double>(), compute);
}

// data.sharding: with a worker 10x slower, async over one epoch's budget (one simulation a
// test: the engine starts once a process).
nlohmann::json reads_under_a_straggler(DataSharding sharding) {
  ExperimentSpec s = straggler_free_cluster(Mode::kAsync, 4);
  s.data.sharding = sharding;
  s.stragglers.persistent_fraction = 0.25;
  s.stragglers.persistent_slowdown = 10.0;
  s.budget.max_samples = s.data.synthetic.train_samples;
  s.simulation.timing_only = true;
  nlohmann::json reads = simulate(s)["data_reads"];
  EXPECT_EQ(reads["training_samples"], s.data.synthetic.train_samples);
  EXPECT_GE(reads["samples_read"].get<int64_t>(), s.budget.max_samples);
  return reads;
}

// The shared queue hands out whole permutations of the training set, so R reads touch
// min(R, N) distinct samples, none more than ceil(R / N) times.
TEST(Simulation, QueueShardingReadsEverySampleOnceAnEpochUnderAStraggler) {
  const auto reads = reads_under_a_straggler(DataSharding::kQueue);
  const int64_t n = reads["training_samples"], r = reads["samples_read"];
  EXPECT_EQ(reads["sharding"], "queue");
  EXPECT_EQ(reads["distinct_samples_read"].get<int64_t>(), std::min(r, n));
  EXPECT_LE(reads["most_reads_of_a_sample"].get<int64_t>(), (r + n - 1) / n);
}

// Static shards: the slow worker's steps take far longer (10x the compute, the same
// communication), so much of its quarter of the data stays unread (a tenth of the data at
// least) while the fast workers read theirs again.
TEST(Simulation, StaticShardingLeavesTheStragglersShardUnread) {
  const auto reads = reads_under_a_straggler(DataSharding::kStatic);
  const int64_t n = reads["training_samples"], r = reads["samples_read"];
  EXPECT_EQ(reads["sharding"], "static");
  EXPECT_LT(reads["distinct_samples_read"].get<int64_t>(), n - n / 10) << "samples read " << r;
  EXPECT_GE(reads["most_reads_of_a_sample"].get<int64_t>(), 2);
}

TEST(Simulation, AsyncIsBoundedByTheParameterServerLink) {
  ExperimentSpec s = straggler_free_cluster(Mode::kAsync, 4);
  s.cluster.nic_bandwidth = 2e7;  // 20 MB/s: the server's link is the bottleneck
  s.budget.max_samples = 64 * 40;
  const auto result = simulate(s);

  const SyntheticData data = generate_synthetic(s.data.synthetic);
  const Model model(s.model, data.train.cardinalities, data.train.num_dense);
  const double dense = 4.0 * static_cast<double>(model.num_dense_parameters());
  double into_server = 0.0, out_of_server = 0.0;
  for (int w = 0; w < 4; ++w) {
    ShardIterator shard(data.train, w, 4, s.seed);
    for (int64_t k = 0; k < result["workers"][w]["steps"].get<int64_t>(); ++k) {
      const Batch batch = shard.next(64);
      const double rows = sparse_bytes(batch, {1, 4});
      const double ids = sparse_bytes(batch, {0, 0});
      into_server += 64 + ids + dense + rows + 64;  // request, push, notice
      out_of_server += dense + rows - ids + 64;     // parameters, acknowledgement
    }
  }
  const double time = result["summary"]["simulated_time"].get<double>();
  const double busy = std::max(into_server, out_of_server) / s.cluster.nic_bandwidth;
  EXPECT_GE(time, busy);
  EXPECT_LE(time, 1.2 * busy) << "with a slow server link the run is link-bound";
}

TEST(Simulation, PersistentStragglerComputesSlowerByItsFactor) {
  ExperimentSpec s = straggler_free_cluster(Mode::kAsync, 4);
  s.stragglers.persistent_fraction = 0.25;
  s.stragglers.persistent_slowdown = 3.0;
  s.budget.max_samples = 64 * 60;
  const auto result = simulate(s);
  int slow = -1;
  for (int w = 0; w < 4; ++w)
    if (result["workers"][w]["persistent_slowdown"].get<double>() > 1.0) slow = w;
  ASSERT_GE(slow, 0);
  const int fast = slow == 0 ? 1 : 0;
  auto per_step = [&](int w) {
    return result["workers"][w]["compute_s"].get<double>() /
           result["workers"][w]["steps"].get<double>();
  };
  EXPECT_NEAR(per_step(slow) / per_step(fast), 3.0, 1e-9);
  EXPECT_LT(result["workers"][slow]["steps"].get<int>(),
            result["workers"][fast]["steps"].get<int>());
}

TEST(Simulation, TransientEpisodesSlowTheirWorkerDown) {
  ExperimentSpec s = straggler_free_cluster(Mode::kAsync, 2);
  s.stragglers.transient_rate_per_s = 50.0;
  s.stragglers.transient_mean_duration_s = 0.01;
  s.stragglers.transient_min_slowdown = 4.0;
  s.budget.max_samples = 64 * 200;
  const auto result = simulate(s);
  double nominal = 0.0;
  {
    const SyntheticData data = generate_synthetic(s.data.synthetic);
    const Model model(s.model, data.train.cardinalities, data.train.num_dense);
    nominal = s.cost.flops_scale * model.flops_per_sample() * 64 / s.cluster.worker_speed;
  }
  for (int w = 0; w < 2; ++w) {
    const auto& worker = result["workers"][w];
    ASSERT_FALSE(worker["transient_episodes"].empty());
    const double mean_compute = worker["compute_s"].get<double>() / worker["steps"].get<double>();
    EXPECT_GT(mean_compute, 1.2 * nominal) << "worker " << w;
  }
}

TEST(Simulation, NetworkEpisodesSlowTheLinks) {
  ExperimentSpec s = straggler_free_cluster(Mode::kAsync, 2);
  s.cluster.nic_bandwidth = 2e7;
  s.stragglers.network_rate_per_s = 20.0;
  s.stragglers.network_mean_duration_s = 0.05;
  s.stragglers.network_min_slowdown = 20.0;
  s.stragglers.network_max_slowdown = 20.0;
  s.budget.max_samples = 64 * 100;
  const auto result = simulate(s);
  const SyntheticData data = generate_synthetic(s.data.synthetic);
  const Model model(s.model, data.train.cardinalities, data.train.num_dense);
  // A step moves at least the dense values twice (pull and push): its nominal floor.
  const double floor =
      2.0 * 4.0 * static_cast<double>(model.num_dense_parameters()) / s.cluster.nic_bandwidth;
  for (int w = 0; w < 2; ++w) {
    const auto& worker = result["workers"][w];
    ASSERT_FALSE(worker["network_episodes"].empty());
    EXPECT_GT(worker["comm_s"].get<double>() / worker["steps"].get<double>(), 3.0 * floor)
        << "worker " << w;
  }
}

// Deep network episodes under LV08 on a ring of hosts: SimGrid 3.32's weight-S bookkeeping
// on a bandwidth change once drove a message's sharing penalty to 0 (stalled: "deadlock") or
// below (abort); the run must end, every worker in step.
TEST(Simulation, DeepNetworkEpisodesUnderLv08EndTheRun) {
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 8);
  s.cluster.network_model = "LV08";
  s.cluster.nic_bandwidth = 2e7;
  s.stragglers.network_rate_per_s = 20.0;
  s.stragglers.network_mean_duration_s = 0.02;
  s.stragglers.network_min_slowdown = 5.0;
  s.simulation.timing_only = true;
  s.budget.max_samples = 64 * 8 * 60;
  const auto result = simulate(s);
  EXPECT_EQ(result["summary"]["status"], "completed");
  EXPECT_EQ(result["summary"]["global_steps"], 60);
  EXPECT_FALSE(result["workers"][0]["network_episodes"].empty());
}

TEST(Simulation, ColocatedTenantSharesItsHost) {
  ExperimentSpec s = straggler_free_cluster(Mode::kAsync, 2);
  s.stragglers.colocated_fraction = 0.5;
  s.stragglers.colocated_duty = 0.5;
  s.stragglers.colocated_period_s = 1e-5;
  s.budget.max_samples = 64 * 100;
  const auto result = simulate(s);
  const SyntheticData data = generate_synthetic(s.data.synthetic);
  const Model model(s.model, data.train.cardinalities, data.train.num_dense);
  const double nominal =
      s.cost.flops_scale * model.flops_per_sample() * 64 / s.cluster.worker_speed;
  for (int w = 0; w < 2; ++w) {
    const auto& worker = result["workers"][w];
    const double per_step = worker["compute_s"].get<double>() / worker["steps"].get<double>();
    if (worker["colocated"].get<bool>()) {
      EXPECT_GT(per_step, 1.3 * nominal);
    } else {
      EXPECT_NEAR(per_step, nominal, 1e-9 * nominal);
    }
  }
}

TEST(Simulation, ReplayedTraceSetsEachWorkersStepTimes) {
  const std::string path = testing::TempDir() + "replay_trace.csv";
  std::ofstream(path) << ",worker,gpu,time,batch_time_norm\n"
                         "0,0,25,1,100\n1,1,25,1,100\n2,2,25,1,300\n"
                         "3,0,25,11,100\n4,1,25,11,100\n5,2,25,11,200\n";
  ExperimentSpec s = straggler_free_cluster(Mode::kAsync, 3);
  s.stragglers.trace_format = "pai";
  s.stragglers.trace_path = path;
  s.budget.max_samples = 64 * 60;
  const auto result = simulate(s);
  const SyntheticData data = generate_synthetic(s.data.synthetic);
  const Model model(s.model, data.train.cardinalities, data.train.num_dense);
  const double nominal =
      s.cost.flops_scale * model.flops_per_sample() * 64 / s.cluster.worker_speed;
  // Worker 2 replays slowdowns 3 at iteration 1, 2 at 11, linear between, held after.
  auto slowdown = [](int64_t step) {
    return step >= 10 ? 2.0 : 3.0 - 0.1 * static_cast<double>(step);
  };
  const auto& slow = result["workers"][2];
  double expected = 0.0;
  for (int64_t k = 0; k < slow["steps"].get<int64_t>(); ++k) expected += slowdown(k) * nominal;
  EXPECT_NEAR(slow["compute_s"].get<double>(), expected, 1e-9 * expected);
  const auto& even = result["workers"][0];
  EXPECT_NEAR(even["compute_s"].get<double>(), nominal * even["steps"].get<double>(),
              1e-9 * nominal);
  EXPECT_EQ(result["trace"]["assignment"], nlohmann::json::array({0, 1, 2}));
}

// A usage trace (generic format) on a straggler-free platform: worker 1's machine gives half
// the speed and half the bandwidth from the start, and a quarter of the speed from trace time
// T on. Every step of sync's ring must take exactly what those factors say.
TEST(Simulation, ReplayedUsageTraceSetsSpeedAndBandwidthOverTime) {
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 2);
  s.cost.update_flops_per_value = 0.0;
  s.budget.max_samples = 2 * 64 * 6;
  const TwoWorkerRing ring(s, 6, 0.5);
  const double c = ring.compute;
  auto comm = [&](int k) { return ring.comm(static_cast<size_t>(k)); };
  // Simulated seconds: in the middle of step 2's compute.
  const double change = 2 * c + comm(0) + 2 * c + comm(1) + c;
  const double time_scale = 4.0;  // trace seconds per simulated second

  const std::string path = testing::TempDir() + "usage_replay.csv";
  std::ofstream(path) << std::setprecision(17) << "host,time,speed_factor,bandwidth_factor\n"
                      << "a,100,1,\nb,100,0.5,0.5\nb," << 100 + 8 + change * time_scale
                      << ",0.25,\n";
  s.stragglers.trace_format = "generic";
  s.stragglers.trace_path = path;
  s.stragglers.trace_offset = 8;
  s.stragglers.trace_time_scale = time_scale;
  const auto result = simulate(s);

  // Worker 1's compute from t0: 2c per step before the change, 4c after.
  auto slow_compute = [&](double t0) {
    if (t0 + 2 * c <= change) return 2 * c;
    if (t0 >= change) return 4 * c;
    return (change - t0) + (1.0 - (change - t0) / (2 * c)) * 4 * c;
  };
  const auto& ends = result["workers"][0]["step_ends"];
  ASSERT_EQ(ends.size(), 6u);
  double t = 0.0;
  for (int k = 0; k < 6; ++k) {
    t += slow_compute(t) + comm(k);
    EXPECT_NEAR(ends[k].get<double>(), t, 1e-9 * t) << "step " << k;
  }
  EXPECT_EQ(result["trace"]["assignment"], nlohmann::json::array({"a", "b"}));
  EXPECT_FALSE(result["trace"]["wraps"].get<bool>());
}

// Scheduled sync -> GBA -> sync on a quiet cluster: the switches happen at the steps asked,
// and each model move takes what moving the whole model over the links costs (CM02).
TEST(Simulation, ScheduledSwitchesMoveTheModelAndKeepTraining) {
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 3);
  s.switching.at_steps = {{3, "gba"}, {8, "sync"}};
  s.budget.max_samples = 64 * 3 * 12;
  s.evaluation.interval_s = 1e-4;
  const auto result = simulate(s);
  const auto& sw = result["switching"];
  ASSERT_EQ(sw["events"].size(), 2u);
  EXPECT_EQ(sw["events"][0]["global_step"], 3);
  EXPECT_EQ(sw["events"][0]["from"], "sync");
  EXPECT_EQ(sw["events"][0]["to"], "gba");
  EXPECT_EQ(sw["events"][1]["global_step"], 8);
  EXPECT_EQ(sw["events"][1]["to"], "sync");
  EXPECT_EQ(sw["final_mode"], "sync");
  EXPECT_EQ(result["summary"]["global_steps"], 12);

  const SyntheticData data = generate_synthetic(s.data.synthetic);
  const Model model(s.model, data.train.cardinalities, data.train.num_dense);
  const Parameters params = model.init_parameters(s.seed);
  double values = static_cast<double>(params.dense.size());
  for (const auto& t : params.tables) values += static_cast<double>(t.size());
  const double bytes = 4.0 * values, latency = 2.0 * s.cluster.nic_latency,
               bandwidth = s.cluster.nic_bandwidth;
  ASSERT_EQ(sw["moves"].size(), 2u);
  const auto& up = sw["moves"][0];
  EXPECT_EQ(up["direction"], "to_parameter_servers");
  EXPECT_NEAR(up["end"].get<double>() - up["start"].get<double>(), latency + bytes / bandwidth,
              1e-9);
  // Back to the workers: the one server's link carries the model three times.
  const auto& down = sw["moves"][1];
  EXPECT_EQ(down["direction"], "to_workers");
  EXPECT_NEAR(down["end"].get<double>() - down["start"].get<double>(),
              latency + 3 * bytes / bandwidth, 1e-9);
  // The timeline names the mode in force at each snapshot.
  bool saw_gba = false;
  for (const auto& point : sw["status"]) saw_gba = saw_gba || point[1] == "gba";
  EXPECT_TRUE(saw_gba);
}

// Worker pools: sync on 2 workers of local batch 64 (G = 128), then GBA on a pool of 4 slower
// workers of local batch 32 (G / 32 = 4 gradients a step), then sync on that pool (4 x 32 =
// G): every step applies G samples; only the pool in force computes; the model goes to the
// servers, then back to the second pool's 4 workers.
TEST(Simulation, APoolSwitchKeepsTheGlobalBatchAndRunsOnThatPool) {
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 2);
  s.cluster.pools = {PoolSpec{4, 32, 1e12}};
  s.switching.at_steps = {{3, "gba@1"}, {7, "sync"}};
  s.budget.max_samples = 128 * 10;
  s.evaluation.interval_s = 1e-4;
  const auto result = simulate(s);
  EXPECT_EQ(result["summary"]["global_steps"], 10);
  EXPECT_EQ(result["summary"]["samples"], 128 * 10);
  const auto& sw = result["switching"];
  ASSERT_EQ(sw["events"].size(), 2u);
  EXPECT_EQ(sw["events"][0]["to_pool"], 1);
  EXPECT_EQ(sw["events"][1]["from_pool"], 1);
  EXPECT_EQ(sw["events"][1]["to_pool"], 1);
  const auto& workers = result["workers"];
  ASSERT_EQ(workers.size(), 6u);
  int64_t first_pool = 0, second_pool = 0;
  for (const auto& w : workers) (w["pool"] == 0 ? first_pool : second_pool) += w["steps"].get<int64_t>();
  EXPECT_EQ(first_pool, 2 * 3);  // three sync steps of 2 workers
  // GBA: 4 steps of 4 gradients (a few more may be in flight and dropped at the switch), then
  // three sync steps of 4 workers.
  EXPECT_GE(second_pool, 4 * 4 + 3 * 4);
  EXPECT_EQ(workers[2]["nominal_step_s"].get<double>() * 2,
            workers[0]["nominal_step_s"].get<double>() * 3e12 / 1e12);
  ASSERT_EQ(sw["moves"].size(), 2u);
  EXPECT_EQ(sw["moves"][0]["direction"], "to_parameter_servers");
  EXPECT_EQ(sw["moves"][1]["direction"], "to_workers");
  EXPECT_EQ(sw["moves"][1]["bytes"].get<double>(), 4 * sw["moves"][0]["bytes"].get<double>());
}

// Automatic switching: one worker three times slower makes the straggler ratio 3, above
// to_gba_ratio, so the run goes to GBA after the first window of steps and stays there.
TEST(Simulation, AutomaticSwitchingLeavesSyncUnderAStraggler) {
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 4);
  s.cluster.worker_groups = {{3, s.cluster.worker_speed}, {1, s.cluster.worker_speed / 3}};
  s.switching.automatic = true;
  s.switching.window = 2;
  s.switching.min_steps_between = 0;
  s.budget.max_samples = 64 * 4 * 20;
  const auto result = simulate(s);
  const auto& events = result["switching"]["events"];
  ASSERT_GE(events.size(), 1u);
  EXPECT_EQ(events[0]["to"], "gba");
  EXPECT_NEAR(events[0]["straggler_ratio"].get<double>(), 3.0, 1e-6);
  EXPECT_LE(events[0]["global_step"].get<int>(), 3);
  EXPECT_EQ(result["switching"]["final_mode"], "gba");
}

// Two ranks on one machine of one core (cluster.shared_cores): their computations share the
// core, so each takes twice as long, and the slow one then sleeps (2 - 1) x that, as a real
// rank would. A sync step is 4 c plus the ring.
TEST(Simulation, RanksOnASharedMachineShareItsCoresAndSleepTheirSlowdown) {
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 2);
  s.cost.update_flops_per_value = 0.0;
  s.cluster.shared_cores = 1;
  s.stragglers.persistent_fraction = 0.5;
  s.stragglers.persistent_slowdown = 2.0;
  s.budget.max_samples = 2 * 64 * 4;
  const auto result = simulate(s);
  const TwoWorkerRing ring(s, 4);
  ring.expect_step_ends(result, 4, 4);
}

// The same two ranks without stragglers, the core taken a slice at a time: with a slice
// longer than a step's compute c, one rank computes while the other waits, so their steps'
// compute times are c and 2c (3c a step together) where sharing gives 2c each; with slices
// of c / 2 they take turns, ending at 1.5c and 2c. Either way a step still ends after 2c
// and the ring.
class TimeSlice : public ::testing::TestWithParam<double> {};  // in computes; 0: sharing

TEST_P(TimeSlice, CoresServeOneComputationAtATimeOrShare) {
  const double slices = GetParam();
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 2);
  s.cost.update_flops_per_value = 0.0;
  s.cluster.shared_cores = 1;
  s.budget.max_samples = 2 * 64 * 4;
  const TwoWorkerRing ring(s, 4);
  s.cluster.time_slice_s = slices * ring.compute;
  const auto result = simulate(s);
  const double both = result["workers"][0]["compute_s"].get<double>() +
                      result["workers"][1]["compute_s"].get<double>();
  const double per_step = slices == 0.0 ? 4.0 : slices < 1.0 ? 3.5 : 3.0;
  EXPECT_NEAR(both, 4 * per_step * ring.compute, 1e-9);
  ring.expect_step_ends(result, 4, 2);
}

INSTANTIATE_TEST_SUITE_P(Computes, TimeSlice, ::testing::Values(0.0, 0.5, 2.0));

// Async, two workers, a server that takes 1 s per push, compute and network next to nothing.
ExperimentSpec saturated_server() {
  ExperimentSpec s = straggler_free_cluster(Mode::kAsync, 2);
  s.data.synthetic.train_samples = 64 * 40;
  s.cluster.nic_latency = 0.0;
  s.cluster.nic_bandwidth = 1e15;
  s.cost.server_flops_per_push = s.cluster.ps_speed;  // one second
  s.cost.update_flops_per_value = 0.0;
  return s;
}

// A worker's token is taken as soon as its push is acknowledged (after its update), so the
// other worker's push always lands in between: staleness 1 after the first (40 updates
// reach the budget; the other worker's push, in flight then, is taken in too: 41 s).
TEST(Simulation, SeparateAdmissionsTakeTheTokenAfterTheUpdate) {
  const auto result = simulate(saturated_server());
  EXPECT_EQ(result["staleness_histogram"], nlohmann::json::parse("[[0, 1], [1, 40]]"))
      << result["staleness_histogram"];
  EXPECT_NEAR(result["summary"]["simulated_time"].get<double>(), 41.0, 1e-3);
}

// With one queue (gbasim-mpi's server) the request waits behind the other worker's push,
// already queued: pushes 2k and 2k + 1 are computed on the same parameters, staleness 0
// then 1. The 40th update comes with both requests queued behind it: they are told to
// stop, and nothing is in flight (40 s).
TEST(Simulation, OneQueueServerTakesTheTokenWhenItServesTheRequest) {
  ExperimentSpec s = saturated_server();
  s.cluster.server_model = ServerModel::kOneQueue;
  const auto result = simulate(s);
  EXPECT_EQ(result["staleness_histogram"], nlohmann::json::parse("[[0, 20], [1, 20]]"))
      << result["staleness_histogram"];
  EXPECT_NEAR(result["summary"]["simulated_time"].get<double>(), 40.0, 1e-3);
}

// Messages flow to the sharded server while it works: a notice sent during another push's
// update waits in the server's mailbox and is taken in the moment that update is done, not a
// notice latency (2 x 10 ms, one NIC each way) later. So the saturated server's updates,
// 1 s of work each, follow one another exactly 1 s apart, and each of the two workers pushes
// every 2 s (a notice that waited for the server's get would make that 2.04 s). It also
// keeps a worker's next admission apart from the next update: the acknowledgement arrives
// 20 ms after that update began, never at the same instant, which SimGrid's solver settings
// would order either way.
TEST(Simulation, ASaturatedShardedServerTakesQueuedNoticesWithoutTheirLatency) {
  ExperimentSpec s = saturated_server();
  s.cluster.nic_latency = 0.01;
  const auto result = simulate(s);
  for (int w = 0; w < 2; ++w) {
    const auto& ends = result["workers"][w]["step_ends"];
    ASSERT_GE(ends.size(), 10u);
    for (size_t k = 1; k < ends.size(); ++k)
      EXPECT_NEAR(ends[k].get<double>() - ends[k - 1].get<double>(), 2.0, 1e-9)
          << "worker " << w << ", step " << k;
  }
  const double first = result["workers"][1]["step_ends"][0].get<double>();
  const double second = result["workers"][0]["step_ends"][0].get<double>();
  EXPECT_NEAR(second - first, 1.0, 1e-9);
  EXPECT_EQ(result["staleness_histogram"], nlohmann::json::parse("[[0, 1], [1, 40]]"))
      << result["staleness_histogram"];
}

// 60k samples on 4 workers, one of them `slowdown` times slower, evaluated every 0.05 s.
ExperimentSpec short_run(Mode mode, double slowdown) {
  ExperimentSpec s = straggler_free_cluster(mode, 4);
  s.data.synthetic.train_samples = 60'000;
  s.data.synthetic.test_samples = 5'000;
  s.stragglers.persistent_fraction = 0.25;
  s.stragglers.persistent_slowdown = slowdown;
  s.evaluation.interval_s = 0.05;
  return s;
}

// Served in a random order of what has arrived, the saturated server still takes 1 s a push
// and is never idle (the run lasts 1 s per push taken: the 40 of the budget, and one more
// when a push is queued when the 40th update is done), and the order differs from arrival
// order.
TEST(Simulation, RandomServiceOrderKeepsTheServerBusyAndShufflesStaleness) {
  ExperimentSpec s = saturated_server();
  s.cluster.server_model = ServerModel::kOneQueue;
  s.cluster.ps_service_seed = 1;
  const auto result = simulate(s);
  int64_t taken = 0;
  for (const auto& bin : result["staleness_histogram"]) taken += bin[1].get<int64_t>();
  EXPECT_GE(taken, 40);
  EXPECT_LE(taken, 41);
  EXPECT_NEAR(result["summary"]["simulated_time"].get<double>(), static_cast<double>(taken), 1e-3);
  EXPECT_NE(result["staleness_histogram"], nlohmann::json::parse("[[0, 20], [1, 20]]"))
      << result["staleness_histogram"];
}

// Runs that cannot finish end with a status instead of hanging (a NaN model once made the AUC
// loop forever; a worker that never finishes its step made the evaluator snapshot forever).
TEST(Simulation, ADivergedModelEndsTheRunWithItsStatus) {
  ExperimentSpec s = short_run(Mode::kGBA, 1.0);
  s.optimizer.learning_rate = 1e30;
  s.evaluation.interval_s = 0.01;
  const auto result = simulate(s);
  const auto& summary = result["summary"];
  EXPECT_EQ(summary["status"], "diverged");
  EXPECT_LT(summary["samples"].get<int64_t>(), 60'000) << "the run must stop at the divergence";
  EXPECT_NE(summary["status_detail"].get<std::string>().find("not finite"), std::string::npos);
}

TEST(Simulation, AStalledRunEndsAfterItsEvaluationsWithoutProgress) {
  ExperimentSpec s = short_run(Mode::kSync, 1.0);
  s.cluster.worker_groups = {{3, s.cluster.worker_speed}, {1, 1e3}};  // a step of hours
  s.evaluation.interval_s = 0.01;
  s.simulation.stall_evaluations = 20;
  const auto result = simulate(s);
  EXPECT_EQ(result["summary"]["status"], "stalled");
  EXPECT_EQ(result["summary"]["global_steps"], 0);
  // Twenty evaluations without an update after the last one that saw the step move (none).
  EXPECT_NEAR(result["summary"]["simulated_time"].get<double>(), 0.2, 1e-9);
}

TEST(Simulation, TheWatchdogEndsARunAtItsSimulatedTimeLimit) {
  ExperimentSpec s = short_run(Mode::kAsync, 1.0);
  s.simulation.max_simulated_s = 0.01;  // the whole run takes 0.038 s
  const auto result = simulate(s);
  EXPECT_EQ(result["summary"]["status"], "time limit");
  EXPECT_DOUBLE_EQ(result["summary"]["simulated_time"].get<double>(), 0.01);
  EXPECT_GT(result["summary"]["global_steps"].get<int64_t>(), 0);
}

// stragglers.failures in sync: a worker that fails stops computing, is down restart_s, and
// computes the step again; the step waits for it. Replayed here from the same failure draws
// (WorkerFailures): a failure that falls outside a compute (in the ring) stops the worker
// when its next compute starts. Each step ends when the last worker's compute is done, plus
// the ring.
TEST(Failures, SyncStallsUntilTheFailedWorkerIsBackAndHasComputedAgain) {
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 2);
  s.cost.update_flops_per_value = 0.0;
  const int steps = 8;
  s.budget.max_samples = 2 * 64 * steps;
  const TwoWorkerRing ring(s, steps);
  s.stragglers.failure_rate_per_s = 0.2 / ring.compute;
  s.stragglers.failure_restart_s = 1.5 * ring.compute;
  const auto result = simulate(s);

  std::vector<WorkerFailures> draws = {WorkerFailures(s.stragglers, 0),
                                       WorkerFailures(s.stragglers, 1)};
  std::vector<std::vector<double>> times(2);
  double end = 0.0, lost = 0.0;
  const auto& ends = result["workers"][0]["step_ends"];
  ASSERT_EQ(ends.size(), static_cast<size_t>(steps));
  for (int k = 0; k < steps; ++k) {
    double last_compute_done = 0.0;
    for (int w = 0; w < 2; ++w) {
      double start = end;
      while (draws[w].next() < start + ring.compute) {
        const double stop = std::max(draws[w].next(), start);
        times[w].push_back(stop);
        lost += stop - start;
        start = stop + s.stragglers.failure_restart_s;
        draws[w].back(start);
      }
      last_compute_done = std::max(last_compute_done, start + ring.compute);
    }
    end = last_compute_done + ring.comm(k);
    EXPECT_NEAR(ends[k].get<double>(), end, 1e-9 * end) << "step " << k;
  }
  ASSERT_GE(times[0].size() + times[1].size(), 2u) << "the test needs failures to check";
  for (int w = 0; w < 2; ++w) {
    const auto& got = result["workers"][w]["failure_times"];
    ASSERT_EQ(got.size(), times[w].size()) << "worker " << w;
    for (size_t i = 0; i < got.size(); ++i)
      EXPECT_NEAR(got[i].get<double>(), times[w][i], 1e-9) << "worker " << w << " failure " << i;
  }
  const auto& f = result["failures"];
  EXPECT_EQ(f["worker_failures"], times[0].size() + times[1].size());
  EXPECT_EQ(f["tokens_lost"], 0) << "a sync worker keeps its step";
  EXPECT_NEAR(f["lost_compute_s"].get<double>(), lost, 1e-9);
  EXPECT_NEAR(f["down_s"].get<double>(),
              static_cast<double>(times[0].size() + times[1].size()) * s.stragglers.failure_restart_s,
              1e-9);
  EXPECT_EQ(result["summary"]["global_steps"], steps);
}

// The most steps a worker took less the fewest (bounded staleness keeps it within the bound).
int64_t step_spread(const nlohmann::ordered_json& result) {
  int64_t fewest = INT64_MAX, most = 0;
  for (const auto& w : result["workers"]) {
    fewest = std::min(fewest, w["steps"].get<int64_t>());
    most = std::max(most, w["steps"].get<int64_t>());
  }
  return most - fewest;
}

// One failure every 20 computes or so, a restart of 3 computes, on the short run.
ExperimentSpec failing_run(Mode mode) {
  ExperimentSpec s = short_run(mode, 1.0);
  const double compute = TwoWorkerRing(s, 0).compute;
  s.stragglers.failure_rate_per_s = 0.05 / compute;
  s.stragglers.failure_restart_s = 3.0 * compute;
  return s;
}

// GBA: a failed worker's token disappears and the others fill the global batch, so every
// update still sums G = 4 x 64 samples, and the run learns as it would.
TEST(Failures, GbaLosesTheFailedWorkersTokenAndEveryUpdateStillHasTheGlobalBatch) {
  const ExperimentSpec s = failing_run(Mode::kGBA);
  const auto result = simulate(s);
  const auto& summary = result["summary"];
  EXPECT_EQ(summary["status"], "completed");
  const auto& f = result["failures"];
  EXPECT_GE(f["worker_failures"].get<int64_t>(), 5);
  EXPECT_EQ(f["tokens_lost"], f["worker_failures"]);
  EXPECT_EQ(summary["samples"].get<int64_t>(), summary["global_steps"].get<int64_t>() * 4 * 64);
  EXPECT_GT(summary["final_auc"].get<double>(), 0.6);
  int64_t stops = 0;
  for (const auto& w : result["workers"]) stops += static_cast<int64_t>(w["failure_times"].size());
  EXPECT_EQ(stops, f["worker_failures"].get<int64_t>());
}

// Every server mode runs to its end with failing workers: each failure loses its token, and
// bounded staleness still keeps every worker within the bound of the slowest.
class FailuresInEveryServerMode : public ::testing::TestWithParam<Mode> {};

TEST_P(FailuresInEveryServerMode, EveryFailureLosesItsTokenAndTheRunEnds) {
  const ExperimentSpec s = failing_run(GetParam());
  const auto result = simulate(s);
  EXPECT_EQ(result["summary"]["status"], "completed");
  EXPECT_GE(result["summary"]["samples"].get<int64_t>(), s.data.synthetic.train_samples);
  const auto& f = result["failures"];
  EXPECT_GE(f["worker_failures"].get<int64_t>(), 5);
  EXPECT_EQ(f["tokens_lost"], f["worker_failures"]);
  if (GetParam() == Mode::kBoundedStaleness) {
    EXPECT_LE(step_spread(result), s.training.staleness_bound + 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, FailuresInEveryServerMode,
                         ::testing::Values(Mode::kAsync, Mode::kGBA, Mode::kBoundedStaleness,
                                           Mode::kBackupWorkers),
                         [](const auto& info) { return mode_name(info.param); });

// A lost token during a switch's drain completes the drain as a returned one would.
TEST(Failures, ScheduledSwitchesGoThroughWithFailingWorkers) {
  ExperimentSpec s = straggler_free_cluster(Mode::kSync, 3);
  s.switching.at_steps = {{3, "gba"}, {8, "sync"}};
  s.budget.max_samples = 64 * 3 * 12;
  const double compute = TwoWorkerRing(s, 0).compute;
  s.stragglers.failure_rate_per_s = 0.3 / compute;
  s.stragglers.failure_restart_s = compute;
  const auto result = simulate(s);
  EXPECT_EQ(result["summary"]["status"], "completed");
  EXPECT_EQ(result["summary"]["global_steps"], 12);
  EXPECT_EQ(result["switching"]["events"].size(), 2u);
  EXPECT_GT(result["failures"]["tokens_lost"].get<int64_t>(), 0);
}

// The first parameter-server shard to fail ends the run there, with its status and the shard.
TEST(Failures, AServerShardFailureEndsTheRunWithItsStatus) {
  ExperimentSpec s = short_run(Mode::kGBA, 1.0);
  s.cluster.ps_shards = 2;
  s.stragglers.server_failure_rate_per_s = 20.0;
  const ServerFailure first = first_server_failure(s.stragglers, 2);
  const auto result = simulate(s);
  const auto& summary = result["summary"];
  EXPECT_EQ(summary["status"], "server failed");
  EXPECT_NE(summary["status_detail"].get<std::string>().find("shard " + std::to_string(first.shard)),
            std::string::npos);
  EXPECT_DOUBLE_EQ(summary["simulated_time"].get<double>(), first.time);
  EXPECT_EQ(result["failures"]["server"]["shard"], first.shard);
  EXPECT_LT(summary["samples"].get<int64_t>(), s.data.synthetic.train_samples);
}

// Sync with the rows on the workers has no server shard to fail.
TEST(Failures, AllReduceWithoutServersIgnoresServerFailures) {
  ExperimentSpec s = short_run(Mode::kSync, 1.0);
  s.stragglers.server_failure_rate_per_s = 20.0;
  const auto result = simulate(s);
  EXPECT_EQ(result["summary"]["status"], "completed");
  EXPECT_TRUE(result["failures"]["server"].is_null());
}

class EveryMode : public ::testing::TestWithParam<Mode> {};

TEST_P(EveryMode, AShortRunLearns) {
  ExperimentSpec s = short_run(GetParam(), 2.0);
  s.stragglers.noise_cv = 0.1;
  s.cluster.network_model = "LV08";
  s.cluster.ps_shards = 2;
  const auto result = simulate(s);
  const auto& summary = result["summary"];
  EXPECT_GT(summary["final_auc"].get<double>(), 0.6) << mode_name(GetParam());
  EXPECT_GE(summary["samples"].get<int64_t>(), 60'000);
  EXPECT_EQ(summary["status"], "completed");
  EXPECT_GT(result["curve"].size(), 2u);
  EXPECT_EQ(result["curve"][0]["time"], 0.0);
}

// Every server mode also runs to the end with one queue: refused requests wait in the
// server's queue and are served again after each update.
class EveryServerMode : public ::testing::TestWithParam<Mode> {};

TEST_P(EveryServerMode, AShortRunWithOneQueueLearns) {
  ExperimentSpec s = short_run(GetParam(), 3.0);
  s.cluster.server_model = ServerModel::kOneQueue;
  const auto result = simulate(s);
  EXPECT_GT(result["summary"]["final_auc"].get<double>(), 0.6) << mode_name(GetParam());
  EXPECT_GE(result["summary"]["samples"].get<int64_t>(), 60'000);
  if (GetParam() == Mode::kBoundedStaleness) {  // the 3x straggler holds the others back
    EXPECT_LE(step_spread(result), s.training.staleness_bound + 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Modes, EveryMode,
                         ::testing::Values(Mode::kSync, Mode::kAsync, Mode::kGBA,
                                           Mode::kBoundedStaleness, Mode::kBackupWorkers),
                         [](const auto& info) { return mode_name(info.param); });

INSTANTIATE_TEST_SUITE_P(Modes, EveryServerMode,
                         ::testing::Values(Mode::kAsync, Mode::kGBA, Mode::kBoundedStaleness,
                                           Mode::kBackupWorkers),
                         [](const auto& info) { return mode_name(info.param); });

}  // namespace
}  // namespace gbasim
