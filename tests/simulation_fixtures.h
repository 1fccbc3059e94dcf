// What the simulation tests share: one engine a run, a straggler-free cluster, and the
// analytic timing of a two-worker ring. SimGrid allows one engine per process: CTest runs each
// test in a process of its own (gtest_discover_tests).
#pragma once

#include <gtest/gtest.h>
#include <xbt/log.h>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <vector>

#include "models/layers.h"
#include "models/synthetic.h"
#include "sim/batch_rows.h"
#include "sim/cluster.h"
#include "sim/messages.h"
#include "sim/simulation.h"

namespace gbasim {

inline nlohmann::ordered_json simulate(const ExperimentSpec& spec) {
  xbt_log_control_set("root.thres:critical");
  char name[] = "simulation_test";
  char* argv[] = {name, const_cast<char*>(engine_context_arg()), nullptr};
  int argc = argv[1] == nullptr ? 1 : 2;
  simgrid::s4u::Engine engine(&argc, argv);
  return run_simulation(spec);
}

// No stragglers, plain alpha-beta network timing, a small data set.
inline ExperimentSpec straggler_free_cluster(Mode mode, int workers) {
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
inline double sparse_bytes(const Batch& batch, const std::vector<int>& table_dims) {
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

// 60k samples on 4 workers, one of them `slowdown` times slower, evaluated every 0.05 s.
inline ExperimentSpec short_run(Mode mode, double slowdown) {
  ExperimentSpec s = straggler_free_cluster(mode, 4);
  s.data.synthetic.train_samples = 60'000;
  s.data.synthetic.test_samples = 5'000;
  s.stragglers.persistent_fraction = 0.25;
  s.stragglers.persistent_slowdown = slowdown;
  s.evaluation.interval_s = 0.05;
  return s;
}

// The most steps a worker took less the fewest (bounded staleness keeps it within the bound).
inline int64_t step_spread(const nlohmann::ordered_json& result) {
  int64_t fewest = INT64_MAX, most = 0;
  for (const auto& w : result["workers"]) {
    fewest = std::min(fewest, w["steps"].get<int64_t>());
    most = std::max(most, w["steps"].get<int64_t>());
  }
  return most - fewest;
}

}  // namespace gbasim
