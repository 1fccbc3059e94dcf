// A spec's values against each other and against sane ranges, a section at a time
// (experiment/spec.h, load_spec). Each check throws InputError naming the file and the key.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <string>

#include "base/error.h"
#include "base/system.h"
#include "experiment/spec.h"
#include "experiment/spec_check.h"
#include "strategies/switching.h"
#include "traces/usage_trace.h"

namespace gbasim {
namespace {

// The spec, where it came from, and the two ways a check fails.
struct Checks {
  const ExperimentSpec& s;
  const std::string& source;
  // What several sections read.
  const ClusterSpec& c = s.cluster;
  const bool one_queue = c.server_model == ServerModel::kOneQueue;
  const int per_switch = c.fat_tree.nodes_per_switch, over = c.fat_tree.oversubscription;
  static constexpr double kMinSpeed = 1e3, kMaxSpeed = 1e18;  // flop/s

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw InputError(source, key, what);
  }
  // Beyond [lo, hi] a value is a typo, and SimGrid's solver fails or never ends.
  void within(const std::string& key, double value, double lo, double hi) const {
    if (!(value >= lo && value <= hi)) {
      char range[96];
      std::snprintf(range, sizeof range, "must lie in [%g, %g], not %g", lo, hi, value);
      fail(key, range);
    }
  }

  void check_pools_and_rules() const;
  void check_cluster() const;
  void check_topology() const;
  void check_combinations() const;
  void check_learning() const;
  void check_data() const;
};

// The pools' sizes, then the rules' own checks (the data generator, the training rule, the stragglers, switching).
void Checks::check_pools_and_rules() const {
  // The pools' sizes first: the switching check below divides by them.
  for (size_t i = 0; i < s.cluster.pools.size(); ++i) {
    const PoolSpec& p = s.cluster.pools[i];
    const std::string key = "cluster.pools[" + std::to_string(i) + "]";
    if (p.workers < 1 || p.workers > 4096) fail(key + ".workers", "must lie in [1, 4096]");
    if (p.local_batch < 1) fail(key + ".local_batch", "must be at least 1");
  }
  try {
    validate(s.data.synthetic);
    validate(s.training);
    validate(s.stragglers);
    if (s.switching.enabled()) {
      SwitchPolicy policy = switch_policy(s.switching);
      policy.pools = worker_pools(s);
      try {
        SwitchingController check(s.training, policy, s.training.mode);
      } catch (const InputError& e) {
        throw InputError(std::string("training.") + e.what());  // "training.switching: ..."
      }
    }
  } catch (const InputError& e) {
    throw e.in_file(source);
  }
}

// The cluster's numbers: sane ranges (beyond them a value is a typo, and SimGrid's solver fails or never ends), the server model, the nodes.
void Checks::check_cluster() const {
  if (c.ps_shards < 1 || c.ps_shards > 4096) fail("cluster.ps_shards", "must lie in [1, 4096]");
  within("cluster.worker_speed", c.worker_speed, kMinSpeed, kMaxSpeed);
  if (!c.worker_groups.empty()) {
    double total = 0.0;
    for (const auto& g : c.worker_groups) {
      if (g[0] < 1.0 || g[0] != static_cast<double>(static_cast<int64_t>(g[0]))) {
        fail("cluster.worker_groups", "counts must be positive integers");
      }
      within("cluster.worker_groups", g[1], kMinSpeed, kMaxSpeed);
      total += g[0];
    }
    if (total != s.training.num_workers)
      fail("cluster.worker_groups", "counts must add up to training.workers");
  }
  within("cluster.ps_speed", c.ps_speed, kMinSpeed, kMaxSpeed);
  if (c.ps_cores < 1 || c.ps_cores > 4096) fail("cluster.ps_cores", "must lie in [1, 4096]");
  if (c.shared_machine.cores < 0) fail("cluster.shared_cores", "must not be negative");
  if (!(c.shared_machine.time_slice_s >= 0.0)) fail("cluster.time_slice_s", "must not be negative");
  within("cluster.time_slice_s", c.shared_machine.time_slice_s, 0.0, 1.0);
  if (c.shared_machine.time_slice_s > 0.0 && c.shared_machine.cores == 0)
    fail("cluster.time_slice_s", "needs cluster.shared_cores");
  if (one_queue && c.ps_shards != 1)
    fail("cluster.server_model", "one_queue needs cluster.ps_shards = 1");
  if (one_queue && s.switching.enabled())
    fail("cluster.server_model", "one_queue cannot be combined with training.switching");
  if (c.ps_service_seed < 0) fail("cluster.ps_service_seed", "must not be negative");
  if (c.ps_service_seed > 0 && !one_queue)
    fail("cluster.ps_service_seed", "needs cluster.server_model \"one_queue\"");
  if (!(c.nic_bandwidth > 0.0)) fail("cluster.nic_bandwidth", "must be positive");
  within("cluster.nic_bandwidth", c.nic_bandwidth, 1e3, 1e13);  // bytes/s
  if (c.nic_latency < 0.0) fail("cluster.nic_latency", "must not be negative");
  within("cluster.nic_latency", c.nic_latency, 0.0, 1.0);  // seconds
  if (c.network_model != "LV08" && c.network_model != "CM02")
    fail("cluster.network_model", "must be LV08 or CM02");
  if (c.gpu_node.gpus_per_node < 1 || c.gpu_node.gpus_per_node > 4096)
    fail("cluster.gpus_per_node", "must lie in [1, 4096]");
  if (s.training.num_workers % c.gpu_node.gpus_per_node != 0)
    fail("cluster.gpus_per_node", "must divide training.workers (nodes are alike)");
  within("cluster.intra_node_bandwidth", c.gpu_node.intra_node_bandwidth, 1e3, 1e13);  // bytes/s
  within("cluster.intra_node_latency", c.gpu_node.intra_node_latency, 0.0, 1.0);       // seconds
  within("cluster.gpu_nic_bandwidth", c.gpu_node.gpu_nic_bandwidth, 1e3, 1e13);        // bytes/s
  within("cluster.gpu_nic_latency", c.gpu_node.gpu_nic_latency, 0.0, 1.0);             // seconds
  within("cluster.tree_chunk_bytes", c.tree_chunk_bytes, 1.0, 1e12);
  if (c.gpu_node.nics_per_node < 1 || c.gpu_node.nics_per_node > 64)
    fail("cluster.nics_per_node", "must lie in [1, 64]");
  if (per_switch < 1 || per_switch > 4096)
    fail("cluster.fat_tree.nodes_per_switch", "must lie in [1, 4096]");
  if (over < 1 || per_switch % over != 0)
    fail("cluster.fat_tree.oversubscription",
         "must be a positive divisor of cluster.fat_tree.nodes_per_switch (the leaf switches' "
         "links down per link up)");
}

// A topology's settings: only with that topology, and enough points or leaves for every worker node and server shard.
void Checks::check_topology() const {
  // A topology's settings with another topology would be ignored: refused, so that a user who
  // forgot cluster.topology hears of it. (A setting left at its default is not one given.)
  {
    const ClusterSpec d;
    const std::string topology = "is for cluster.topology \"";
    const std::string ignored = "\", and the topology is \"" + topology_name(c.topology) +
                                "\" (it would be ignored)";
    // Each by its own key: the first of the topology's settings given.
    auto refuse = [&](Topology chosen, const char* name,
                      std::initializer_list<std::pair<const char*, bool>> given) {
      if (c.topology == chosen) return;
      for (const auto& [key, changed] : given)
        if (changed) fail(key, topology + name + ignored);
    };
    refuse(Topology::kFatTree, "fat_tree",
           {{"cluster.fat_tree.nodes_per_switch", per_switch != d.fat_tree.nodes_per_switch},
            {"cluster.fat_tree.oversubscription", over != d.fat_tree.oversubscription}});
    refuse(Topology::kTorus, "torus", {{"cluster.torus.dimensions", !c.torus.dimensions.empty()}});
    refuse(Topology::kDragonfly, "dragonfly",
           {{"cluster.dragonfly.groups", c.dragonfly.groups != d.dragonfly.groups},
            {"cluster.dragonfly.chassis", c.dragonfly.chassis != d.dragonfly.chassis},
            {"cluster.dragonfly.routers", c.dragonfly.routers != d.dragonfly.routers},
            {"cluster.dragonfly.nodes_per_router",
             c.dragonfly.nodes_per_router != d.dragonfly.nodes_per_router}});
  }
  // A torus's points and a dragonfly's leaves must hold every worker node and server shard.
  const int64_t leaves =
      s.training.num_workers / std::max(c.gpu_node.gpus_per_node, 1) + c.ps_shards;
  if (c.topology == Topology::kTorus) {
    int64_t points = 1;
    for (size_t i = 0; i < c.torus.dimensions.size(); ++i) {
      const int d = c.torus.dimensions[i];
      if (d < 1 || d > 4096)
        fail("cluster.torus.dimensions[" + std::to_string(i) + "]", "must lie in [1, 4096]");
      points *= d;
      if (points > (int64_t{1} << 20))
        fail("cluster.torus.dimensions", "must make at most 2^20 points");
    }
    if (!c.torus.dimensions.empty() && points < leaves)
      fail("cluster.torus.dimensions",
           "make " + std::to_string(points) + " points, and the cluster has " +
               std::to_string(leaves) + " nodes (worker nodes and server shards)");
  }
  if (c.topology == Topology::kDragonfly) {
    int64_t points = c.dragonfly.nodes_per_router;
    for (auto [key, level] :
         {std::pair{"groups", &c.dragonfly.groups}, std::pair{"chassis", &c.dragonfly.chassis},
          std::pair{"routers", &c.dragonfly.routers}}) {
      const std::string name = std::string("cluster.dragonfly.") + key;
      if (level->size() != 2 || (*level)[0] < 1 || (*level)[0] > 4096 || (*level)[1] < 1 ||
          (*level)[1] > 64)
        fail(name, "must be [count, links] with count in [1, 4096] and links in [1, 64]");
      points *= (*level)[0];
    }
    if (c.dragonfly.nodes_per_router < 1 || c.dragonfly.nodes_per_router > 4096)
      fail("cluster.dragonfly.nodes_per_router", "must lie in [1, 4096]");
    if (points > (int64_t{1} << 20)) fail("cluster.dragonfly", "must make at most 2^20 leaves");
    if (points < leaves)
      fail("cluster.dragonfly",
           "makes " + std::to_string(points) + " leaves (groups x chassis x routers x "
               "nodes_per_router), and the cluster has " + std::to_string(leaves) +
               " nodes (worker nodes and server shards)");
  }
}

// What the cluster's parts allow together: shared cores, stragglers on nodes, pools, failures, an XML platform.
void Checks::check_combinations() const {
  const bool nodes = c.gpu_node.gpus_per_node > 1 || c.topology != Topology::kStar;
  const bool xml = !c.platform_xml.empty();
  if (c.shared_machine.cores > 0 && (nodes || xml))
    fail("cluster.shared_cores", "is one machine: it cannot be combined with GPU nodes, a "
                                 "topology other than the star, or an XML platform");
  const StragglerConfig& g = s.stragglers;
  const bool usage = is_usage_format(g.trace_format);
  if ((c.gpu_node.gpus_per_node > 1 || c.topology != Topology::kStar) &&
      (g.network_rate_per_s > 0.0 || usage)) {
    fail(g.network_rate_per_s > 0.0 ? "stragglers.network_rate_per_s" : "stragglers.trace.format",
         "slows a worker's own NIC, which only cluster.topology \"star\" with "
         "cluster.gpus_per_node 1 gives it (a node's workers share the node's NICs)");
  }
  for (size_t i = 0; i < c.pools.size(); ++i) {
    const PoolSpec& p = c.pools[i];
    const std::string key = "cluster.pools[" + std::to_string(i) + "]";
    within(key + ".worker_speed", p.worker_speed, kMinSpeed, kMaxSpeed);
  }
  if (!c.pools.empty()) {
    const char* why = nullptr;
    if (!s.switching.enabled()) why = "take training only by a scheduled switch (training.switching)";
    else if (nodes || xml) why = "are hosts on the star: they need cluster.topology \"star\", gpus_per_node 1 and no platform_xml";
    else if (c.shared_machine.cores > 0)
      why = "cannot be combined with cluster.shared_cores";
    else if (one_queue) why = "need cluster.server_model \"sharded\"";
    else if (!g.trace_format.empty()) why = "cannot replay a trace yet (stragglers.trace)";
    if (why != nullptr) fail("cluster.pools", why);
  }
  if (g.server_failure_rate_per_s > 0.0 && one_queue)
    fail("stragglers.failures.server_rate_per_s", "needs cluster.server_model \"sharded\"");
  if (g.server_failure_rate_per_s > 0.0 && c.shared_machine.cores > 0) {
    fail("stragglers.failures.server_rate_per_s",
         "cannot be combined with cluster.shared_cores (a shared machine replays real ranks, "
         "which do not fail)");
  }
  if (g.failure_rate_per_s > 0.0) {
    if (one_queue) {
      fail("stragglers.failures.rate_per_s",
           "needs cluster.server_model \"sharded\" (the one-queue model answers requests, and a "
           "failed worker's token would stay out)");
    }
    if (c.shared_machine.cores > 0) {
      fail("stragglers.failures.rate_per_s",
           "cannot be combined with cluster.shared_cores (a shared machine replays real ranks, "
           "which do not fail)");
    }
  }
  if (xml) {
    if (c.topology != Topology::kStar)
      fail("cluster.topology", "comes from cluster.platform_xml's file: leave it out");
    if (!c.worker_groups.empty())
      fail("cluster.worker_groups", "sets the speeds of hosts gbasim builds; with "
                                    "cluster.platform_xml the speeds are the file's: leave it out");
    if (static_cast<int>(c.worker_hosts.size()) != s.training.num_workers)
      fail("cluster.roles.workers", "must name one host a worker (training.workers of them)");
    if (static_cast<int>(c.server_hosts.size()) != c.ps_shards)
      fail("cluster.roles.servers", "must name one host a server shard (cluster.ps_shards)");
    if (g.transient_rate_per_s > 0.0 || g.network_rate_per_s > 0.0 || usage) {
      fail(g.transient_rate_per_s > 0.0  ? "stragglers.transient_rate_per_s"
           : g.network_rate_per_s > 0.0 ? "stragglers.network_rate_per_s"
                                        : "stragglers.trace.format",
           "changes a host's speed or bandwidth over time, which a host read from "
           "cluster.platform_xml cannot take: give the profile in the XML file");
    }
  } else if (!c.worker_hosts.empty() || !c.server_hosts.empty()) {
    fail("cluster.roles", "names hosts of cluster.platform_xml, which is not given");
  }
}

// The cost model, the evaluation, the budget, the model and the optimizer.
void Checks::check_learning() const {
  if (!(s.cost.flops_scale > 0.0)) fail("cost.flops_scale", "must be positive");
  if (s.cost.update_flops_per_value < 0.0)
    fail("cost.update_flops_per_value", "must not be negative");
  if (s.cost.server_flops_per_push < 0.0)
    fail("cost.server_flops_per_push", "must not be negative");
  if (s.cost.merge_flops_per_value < 0.0)
    fail("cost.merge_flops_per_value", "must not be negative");
  if (!(s.evaluation.interval_s > 0.0)) fail("evaluation.interval_s", "must be positive");
  within("evaluation.interval_s", s.evaluation.interval_s, 1e-6, 1e9);
  within("evaluation.target_auc", s.evaluation.target_auc, 0.0, 1.0);
  if (s.evaluation.test_samples < 0) fail("evaluation.test_samples", "must not be negative");
  if (s.budget.max_samples < 0) fail("budget.max_samples", "must not be negative");
  if (s.budget.max_time_s < 0.0) fail("budget.max_time_s", "must not be negative");
  if (s.model.embedding_dim < 1 || s.model.embedding_dim > 1024)
    fail("model.embedding_dim", "must lie in [1, 1024]");
  for (auto [key, widths] : {std::pair{"model.mlp", &s.model.mlp},
                             std::pair{"model.bottom_mlp", &s.model.bottom_mlp}}) {
    if (widths->size() > 64) fail(key, "must have at most 64 layers");
    for (int w : *widths)
      if (w < 1 || w > 65536) fail(key, "widths must lie in [1, 65536]");
  }
  if (!(s.optimizer.learning_rate > 0.0)) fail("optimizer.learning_rate", "must be positive");
  if (!(s.optimizer.epsilon > 0.0)) fail("optimizer.epsilon", "must be positive");
  if (!(s.optimizer.l2 >= 0.0)) fail("optimizer.l2", "must not be negative");
  if (!(s.optimizer.beta1 >= 0.0 && s.optimizer.beta1 < 1.0))
    fail("optimizer.beta1", "must lie in [0, 1)");
  if (!(s.optimizer.beta2 >= 0.0 && s.optimizer.beta2 < 1.0))
    fail("optimizer.beta2", "must lie in [0, 1)");
  if (!(s.optimizer.adagrad_initial >= 0.0))
    fail("optimizer.adagrad_initial", "must not be negative");
}

// The data, its size against the global batches and this machine's memory, and the simulation's limits.
void Checks::check_data() const {
  const DataOptions& d = s.data;
  if (!(d.test_fraction > 0.0 && d.test_fraction < 1.0))
    fail("data.test_fraction", "must lie in (0, 1)");
  if (d.criteo.table_size < 1 || d.criteo.table_size > (int64_t{1} << 31))
    fail("data.table_size", "must lie in [1, 2^31]");
  if (d.criteo.max_samples < -1)
    fail("data.max_file_samples", "must be -1 (the whole file) or a number of samples");
  if (d.criteo_path.empty()) {
    // Every pool's first global step needs a global batch of samples.
    for (const WorkerPool& p : worker_pools(s)) {
      const int64_t batch = int64_t{p.workers} * p.local_batch;
      if (d.synthetic.train_samples < batch) {
        char what[160];
        std::snprintf(what, sizeof what,
                      "(%lld) must hold at least one global batch (%d workers x %lld = %lld)",
                      static_cast<long long>(d.synthetic.train_samples), p.workers,
                      static_cast<long long>(p.local_batch), static_cast<long long>(batch));
        fail("data.train_samples", what);
      }
    }
    // The embedding tables and the optimizer's two moments of each value, at the least.
    double rows = 0.0;
    for (int64_t card : field_cardinalities(d.synthetic)) rows += static_cast<double>(card);
    const double bytes = rows * (s.model.embedding_dim + 1.0) * 4.0 * 3.0;
    const double memory = physical_memory_bytes();
    if (memory > 0.0 && bytes > memory) {
      char what[200];
      std::snprintf(what, sizeof what,
                    "gives embedding tables of about %.3g GB with the optimizer's state (the "
                    "fields' cardinalities x model.embedding_dim), more than this machine's "
                    "%.3g GB",
                    bytes / 1e9, memory / 1e9);
      fail("model.embedding_dim", what);
    }
  }
  within("cost.flops_scale", s.cost.flops_scale, 1e-9, 1e9);
  within("cost.update_flops_per_value", s.cost.update_flops_per_value, 0.0, 1e9);
  within("cost.server_flops_per_push", s.cost.server_flops_per_push, 0.0, 1e15);
  within("cost.merge_flops_per_value", s.cost.merge_flops_per_value, 0.0, 1e9);
  if (!(s.simulation.max_simulated_s >= 0.0))
    fail("simulation.max_simulated_s", "must not be negative");
  if (s.simulation.stall_evaluations < 0)
    fail("simulation.stall_evaluations", "must not be negative");
}

}  // namespace

void check_semantics(const ExperimentSpec& s, const std::string& source) {
  const Checks k{s, source};
  k.check_pools_and_rules();
  k.check_cluster();
  k.check_topology();
  k.check_combinations();
  k.check_learning();
  k.check_data();
}

}  // namespace gbasim
