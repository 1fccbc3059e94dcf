#include "experiment/spec.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "base/enum_names.h"
#include "base/error.h"
#include "base/files.h"
#include "base/system.h"
#include "base/text.h"
#include "experiment/json_file.h"
#include "experiment/platform_xml.h"
#include "traces/usage_trace.h"

namespace gbasim {
namespace {

using Json = nlohmann::json;

// Every key of the spec, once: the reader and the writer below both walk this.
template <class V>
void visit(V& v, ExperimentSpec& s) {
  v.field("seed", s.seed);
  v.section("data", [&] {
    SyntheticConfig& d = s.data.synthetic;
    v.field("train_samples", d.train_samples);
    v.field("test_samples", d.test_samples);
    v.field("fields", d.num_fields);
    v.field("dense", d.num_dense);
    v.field("min_cardinality", d.min_cardinality);
    v.field("max_cardinality", d.max_cardinality);
    v.field("zipf_exponent", d.zipf_exponent);
    v.field("target_ctr", d.target_ctr);
    v.field("linear_std", d.linear_std);
    v.field("dense_std", d.dense_std);
    v.field("interaction_std", d.interaction_std);
    v.field("mlp_std", d.mlp_std);
    v.field("nonlinear_max_cardinality", d.nonlinear_max_cardinality);
    v.field("interaction_fields", d.interaction_fields);
    v.field("teacher_dim", d.teacher_dim);
    v.field("teacher_mlp_width", d.teacher_mlp_width);
    v.field("label_flip", d.label_flip);
    v.field("days", d.days);
    v.field("day_drift", d.day_drift);
    v.field("seed", d.seed);
    v.named("sharding", s.data.sharding, parse_data_sharding, data_sharding_name);
    v.field("criteo_path", s.data.criteo_path);
    v.field("test_fraction", s.data.test_fraction);
    v.field("table_size", s.data.criteo.table_size);
    v.field("skip_bad_lines", s.data.criteo.skip_bad_lines);
    v.field("max_file_samples", s.data.criteo.max_samples);
  });
  v.section("model", [&] {
    v.named("name", s.model.kind, parse_model_kind, model_name);
    v.field("embedding_dim", s.model.embedding_dim);
    v.field("mlp", s.model.mlp);
    v.field("bottom_mlp", s.model.bottom_mlp);
  });
  v.workload("workload", s.workload);
  v.section("optimizer", [&] {
    v.named("name", s.optimizer.kind, parse_optimizer_kind, optimizer_name);
    v.field("learning_rate", s.optimizer.learning_rate);
    v.field("l2", s.optimizer.l2);
    v.field("beta1", s.optimizer.beta1);
    v.field("beta2", s.optimizer.beta2);
    v.field("epsilon", s.optimizer.epsilon);
    v.field("adagrad_initial", s.optimizer.adagrad_initial);
  });
  v.section("training", [&] {
    RuleConfig& t = s.training;
    v.named("mode", t.mode, parse_mode, mode_name);
    v.field("workers", t.num_workers);
    v.field("local_batch", t.local_batch);
    v.field("global_batch", t.global_batch);
    v.field("staleness_bound", t.staleness_bound);
    v.field("backup_workers", t.backup_workers);
    v.section("gba", [&] {
      v.field("iota", t.gba.iota);
      v.named("decay", t.gba.decay, parse_decay, decay_name);
      v.field("gamma", t.gba.gamma);
      v.field("decayed_count", t.gba.decayed_count);
      v.field("dropped_count", t.gba.dropped_count);
      v.field("normalize_by_weights", t.gba.normalize_by_weights);
    });
    v.section("switching", [&] {
      SwitchingSpec& w = s.switching;
      v.field("at_steps", w.at_steps);
      v.field("at_times", w.at_times);
      v.field("automatic", w.automatic);
      v.field("window", w.window);
      v.field("to_gba_ratio", w.to_gba_ratio);
      v.field("to_sync_ratio", w.to_sync_ratio);
      v.field("min_steps_between", w.min_steps_between);
    });
  });
  v.section("cluster", [&] {
    ClusterSpec& c = s.cluster;
    v.field("platform", c.platform);
    v.field("ps_shards", c.ps_shards);
    v.field("worker_speed", c.worker_speed);
    v.field("worker_groups", c.worker_groups);
    v.field("ps_speed", c.ps_speed);
    v.field("ps_cores", c.ps_cores);
    v.field("nic_bandwidth", c.nic_bandwidth);
    v.field("nic_latency", c.nic_latency);
    v.field("network_model", c.network_model);
    v.named("network_solver", c.network_solver, parse_network_solver, network_solver_name);
    v.named("ring_model", c.ring_model, parse_ring_model, ring_model_name);
    v.named("all_to_all_model", c.all_to_all_model, parse_ring_model, ring_model_name);
    v.named("allreduce", c.allreduce, parse_allreduce, allreduce_name);
    v.named("embedding_exchange", c.embedding_exchange, parse_embedding_exchange,
            embedding_exchange_name);
    v.field("tree_chunk_bytes", c.tree_chunk_bytes);
    v.field("gpus_per_node", c.gpus_per_node);
    v.field("intra_node_bandwidth", c.intra_node_bandwidth);
    v.field("intra_node_latency", c.intra_node_latency);
    v.field("gpu_nic_bandwidth", c.gpu_nic_bandwidth);
    v.field("gpu_nic_latency", c.gpu_nic_latency);
    v.field("nics_per_node", c.nics_per_node);
    v.named("topology", c.topology, parse_topology, topology_name);
    v.section("fat_tree", [&] {
      v.field("nodes_per_switch", c.fat_tree_nodes_per_switch);
      v.field("oversubscription", c.fat_tree_oversubscription);
    });
    v.section("torus", [&] { v.field("dimensions", c.torus_dimensions); });
    v.section("dragonfly", [&] {
      v.field("groups", c.dragonfly_groups);
      v.field("chassis", c.dragonfly_chassis);
      v.field("routers", c.dragonfly_routers);
      v.field("nodes_per_router", c.dragonfly_nodes_per_router);
    });
    v.field("pools", c.pools);
    v.field("platform_xml", c.platform_xml);
    v.section("roles", [&] {
      v.field("workers", c.worker_hosts);
      v.field("servers", c.server_hosts);
    });
    v.field("shared_cores", c.shared_cores);
    v.field("time_slice_s", c.time_slice_s);
    v.named("server_model", c.server_model, parse_server_model, server_model_name);
    v.field("ps_service_seed", c.ps_service_seed);
  });
  v.section("cost", [&] {
    v.field("flops_scale", s.cost.flops_scale);
    v.field("update_flops_per_value", s.cost.update_flops_per_value);
    v.field("server_flops_per_push", s.cost.server_flops_per_push);
    v.field("merge_flops_per_value", s.cost.merge_flops_per_value);
  });
  v.section("stragglers", [&] {
    StragglerConfig& g = s.stragglers;
    v.read_only("time_unit", s.straggler_time_unit);
    v.field("seed", g.seed);
    v.field("persistent_fraction", g.persistent_fraction);
    v.field("persistent_slowdown", g.persistent_slowdown);
    v.field("noise_cv", g.noise_cv);
    v.field("transient_rate_per_s", g.transient_rate_per_s);
    v.field("transient_mean_duration_s", g.transient_mean_duration_s);
    v.field("transient_min_slowdown", g.transient_min_slowdown);
    v.field("transient_pareto_alpha", g.transient_pareto_alpha);
    v.field("transient_max_slowdown", g.transient_max_slowdown);
    v.field("network_rate_per_s", g.network_rate_per_s);
    v.field("network_mean_duration_s", g.network_mean_duration_s);
    v.field("network_min_slowdown", g.network_min_slowdown);
    v.field("network_pareto_alpha", g.network_pareto_alpha);
    v.field("network_max_slowdown", g.network_max_slowdown);
    v.field("colocated_fraction", g.colocated_fraction);
    v.field("colocated_duty", g.colocated_duty);
    v.field("colocated_period_s", g.colocated_period_s);
    v.section("failures", [&] {
      v.field("rate_per_s", g.failure_rate_per_s);
      v.field("restart_s", g.failure_restart_s);
      v.field("server_rate_per_s", g.server_failure_rate_per_s);
    });
    v.section("trace", [&] {
      v.field("format", g.trace_format);
      v.field("path", g.trace_path);
      v.field("mapping", g.trace_mapping);
      v.field("machines", g.trace_machines);
      v.field("offset", g.trace_offset);
      v.field("time_scale", g.trace_time_scale);
      v.field("load_share", g.trace_load_share);
      v.field("min_speed", g.trace_min_speed);
      v.field("net_share", g.trace_net_share);
      v.field("min_bandwidth", g.trace_min_bandwidth);
    });
  });
  v.section("evaluation", [&] {
    v.field("interval_s", s.evaluation.interval_s);
    v.field("target_auc", s.evaluation.target_auc);
    v.field("test_samples", s.evaluation.test_samples);
  });
  v.section("budget", [&] {
    v.field("max_samples", s.budget.max_samples);
    v.field("max_time_s", s.budget.max_time_s);
  });
  v.section("simulation", [&] {
    v.field("timing_only", s.simulation.timing_only);
    v.field("max_simulated_s", s.simulation.max_simulated_s);
    v.field("stall_evaluations", s.simulation.stall_evaluations);
  });
}

template <class T>
const char* type_name() {
  if constexpr (std::is_same_v<T, bool>)
    return "true or false";
  else if constexpr (std::is_integral_v<T>)
    return "an integer";
  else if constexpr (std::is_floating_point_v<T>)
    return "a number";
  else if constexpr (std::is_same_v<T, std::string>)
    return "a string";
  else if constexpr (std::is_same_v<T, std::vector<int>>)
    return "a list of integers";
  else if constexpr (std::is_same_v<T, std::vector<std::string>>)
    return "a list of strings";
  else if constexpr (std::is_same_v<T, std::vector<std::pair<double, std::string>>>)
    return "a list of [number, mode] pairs";
  else if constexpr (std::is_same_v<T, std::vector<PoolSpec>>)
    return "a list of {\"workers\": integer, \"local_batch\": integer, \"worker_speed\": number} objects";
  else
    return "a list of [count, value] pairs";
}

template <class T>
bool has_type(const Json& j) {
  if constexpr (std::is_same_v<T, bool>)
    return j.is_boolean();
  else if constexpr (std::is_unsigned_v<T>)
    return j.is_number_unsigned();
  else if constexpr (std::is_integral_v<T>)
    return j.is_number_integer();
  else if constexpr (std::is_floating_point_v<T>)
    return j.is_number();
  else if constexpr (std::is_same_v<T, std::string>)
    return j.is_string();
  else if constexpr (std::is_same_v<T, std::vector<int>>) {
    if (!j.is_array()) return false;
    for (const auto& e : j)
      if (!e.is_number_integer()) return false;
    return true;
  } else if constexpr (std::is_same_v<T, std::vector<std::string>>) {
    if (!j.is_array()) return false;
    for (const auto& e : j)
      if (!e.is_string()) return false;
    return true;
  } else if constexpr (std::is_same_v<T, std::vector<PoolSpec>>) {
    if (!j.is_array()) return false;
    for (const auto& e : j) {
      if (!e.is_object()) return false;
      for (const auto& [key, value] : e.items()) {
        if (key == "workers" || key == "local_batch") {
          if (!value.is_number_integer()) return false;
        } else if (key == "worker_speed") {
          if (!value.is_number()) return false;
        } else {
          return false;
        }
      }
    }
    return true;
  } else if constexpr (std::is_same_v<T, std::vector<std::pair<double, std::string>>>) {
    if (!j.is_array()) return false;
    for (const auto& e : j) {
      if (!e.is_array() || e.size() != 2 || !e[0].is_number() || !e[1].is_string()) return false;
    }
    return true;
  } else {
    if (!j.is_array()) return false;
    for (const auto& e : j) {
      if (!e.is_array() || e.size() != 2 || !e[0].is_number() || !e[1].is_number()) return false;
    }
    return true;
  }
}

// Whether every number in `j` (a value, or a list of them, nested) is finite: a JSON number
// too large for a double reads as infinity.
bool finite(const Json& j) {
  if (j.is_number_float()) return std::isfinite(j.get<double>());
  if (j.is_array() || j.is_object()) {
    for (const auto& e : j)
      if (!finite(e)) return false;
  }
  return true;
}

// Whether every string in `j` (a value, or a list of them, nested) is valid UTF-8, as the result
// that echoes it must be.
bool utf8(const Json& j) {
  if (j.is_string()) return valid_utf8(j.get_ref<const std::string&>());
  if (j.is_array()) {
    for (const auto& e : j)
      if (!utf8(e)) return false;
  }
  return true;
}

// Reads values present in the document and rejects keys it does not know.
class Reader {
 public:
  Reader(const Json& doc, std::string source) : source_(std::move(source)) { enter(doc, ""); }

  template <class T>
  void field(const char* key, T& out) {
    const Json* j = lookup(key);
    if (j == nullptr) return;
    if constexpr (std::is_same_v<T, std::vector<PoolSpec>>) {  // an unknown key, by its name
      for (size_t i = 0; j->is_array() && i < j->size(); ++i) {
        if (!(*j)[i].is_object()) continue;
        for (const auto& [k, v] : (*j)[i].items()) {
          if (k != "workers" && k != "local_batch" && k != "worker_speed")
            throw InputError::unknown_key(source_, path(key) + "[" + std::to_string(i) + "]." + k);
        }
      }
    }
    if (!has_type<T>(*j)) fail(key, std::string("must be ") + type_name<T>());
    if (!finite(*j)) fail(key, "must be a finite number (a value overflows a double)");
    if (!utf8(*j)) fail(key, "is not valid UTF-8 text");
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (!j->is_number_unsigned() && std::is_unsigned_v<T>) fail(key, "must not be negative");
      const auto wide = j->get<int64_t>();
      if (wide < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          (j->is_number_unsigned() &&
           j->get<uint64_t>() > static_cast<uint64_t>(std::numeric_limits<T>::max()))) {
        fail(key, "is out of range");
      }
    }
    out = j->get<T>();
  }

  template <class E, class Parse, class Name>
  void named(const char* key, E& out, Parse parse, Name) {
    const Json* j = lookup(key);
    if (j == nullptr) return;
    if (!j->is_string()) fail(key, "must be a string");
    try {
      out = parse(j->get<std::string>());
    } catch (const InputError& e) {
      fail(key, e.what());
    }
  }

  void read_only(const char* key, std::string& out) { field(key, out); }

  void workload(const char* key, std::optional<WorkloadSpec>& out) {
    const Json* j = lookup(key);
    if (j != nullptr) out = parse_workload(*j, source_);
  }

  void section(const char* key, const std::function<void()>& body) {
    const Json* j = lookup(key);
    if (j == nullptr) return;
    if (!j->is_object()) fail(key, "must be an object");
    enter(*j, path(key) + ".");
    body();
    leave();
  }

  void finish() { leave(); }

 private:
  struct Level {
    const Json* object;
    std::string prefix;
    std::set<std::string> seen;
  };

  std::string path(const char* key) const { return levels_.back().prefix + key; }

  [[noreturn]] void fail(const char* key, const std::string& what) const {
    throw InputError(source_, path(key), what);
  }

  const Json* lookup(const char* key) {
    Level& level = levels_.back();
    level.seen.insert(key);
    const auto it = level.object->find(key);
    return it == level.object->end() ? nullptr : &*it;
  }

  void enter(const Json& object, std::string prefix) {
    if (!object.is_object()) throw InputError(source_ + ": the spec must be a JSON object");
    levels_.push_back({&object, std::move(prefix), {}});
  }

  void leave() {
    const Level& level = levels_.back();
    for (const auto& [key, value] : level.object->items()) {
      if (level.seen.count(key)) continue;
      const std::string path = level.prefix + key;
      if (path == "cluster.ps_one_queue") {
        throw InputError(source_ + ": '" + path +
                         "' is now 'cluster.server_model': \"one_queue\" (true) or "
                         "\"sharded\" (false)");
      }
      throw InputError::unknown_key(source_, path);
    }
    levels_.pop_back();
  }

  std::string source_;
  std::vector<Level> levels_;
};

// Writes every value, defaults included.
class Writer {
 public:
  template <class T>
  void field(const char* key, T& value) {
    (*current_)[key] = value;
  }
  template <class E, class Parse, class Name>
  void named(const char* key, E& value, Parse, Name name) {
    (*current_)[key] = name(value);
  }
  void read_only(const char*, const std::string&) {}
  // Written only when given, so that a run without one echoes the spec it always has.
  void workload(const char* key, const std::optional<WorkloadSpec>& value) {
    if (value) (*current_)[key] = workload_to_json(*value);
  }
  void section(const char* key, const std::function<void()>& body) {
    nlohmann::ordered_json* parent = current_;
    current_ = &(*parent)[key];
    *current_ = nlohmann::ordered_json::object();
    body();
    current_ = parent;
  }
  nlohmann::ordered_json doc = nlohmann::ordered_json::object();

 private:
  nlohmann::ordered_json* current_ = &doc;
};

}  // namespace

std::vector<WorkerPool> worker_pools(const ExperimentSpec& spec) {
  std::vector<WorkerPool> pools{{0, spec.training.num_workers, spec.training.local_batch}};
  for (const PoolSpec& p : spec.cluster.pools)
    pools.push_back({pools.back().first + pools.back().workers, p.workers, p.local_batch});
  return pools;
}

int total_workers(const ExperimentSpec& spec) {
  const WorkerPool last = worker_pools(spec).back();
  return last.first + last.workers;
}

namespace {
constexpr EnumName<ServerModel> kServerModelNames[] = {{ServerModel::kSharded, "sharded"}, {ServerModel::kOneQueue, "one_queue"}};
}  // namespace

ServerModel parse_server_model(const std::string& name) {
  return parse_enum(name, kServerModelNames);
}

std::string server_model_name(ServerModel model) { return enum_name(model, kServerModelNames); }

namespace {
constexpr EnumName<NetworkSolver> kNetworkSolverNames[] = {{NetworkSolver::kSimGrid, "simgrid"}, {NetworkSolver::kFluid, "fluid"}, {NetworkSolver::kAuto, "auto"}};
}  // namespace

NetworkSolver parse_network_solver(const std::string& name) {
  return parse_enum(name, kNetworkSolverNames);
}

std::string network_solver_name(NetworkSolver solver) { return enum_name(solver, kNetworkSolverNames); }

namespace {
constexpr EnumName<RingModel> kRingModelNames[] = {{RingModel::kMessages, "messages"}, {RingModel::kAggregate, "aggregate"}, {RingModel::kAuto, "auto"}};
}  // namespace

RingModel parse_ring_model(const std::string& name) {
  return parse_enum(name, kRingModelNames);
}

std::string ring_model_name(RingModel model) { return enum_name(model, kRingModelNames); }

namespace {
constexpr EnumName<DataSharding> kDataShardingNames[] = {{DataSharding::kStatic, "static"}, {DataSharding::kQueue, "queue"}};
}  // namespace

DataSharding parse_data_sharding(const std::string& name) {
  return parse_enum(name, kDataShardingNames);
}

std::string data_sharding_name(DataSharding sharding) { return enum_name(sharding, kDataShardingNames); }

namespace {
constexpr EnumName<Topology> kTopologyNames[] = {{Topology::kStar, "star"}, {Topology::kFatTree, "fat_tree"}, {Topology::kTorus, "torus"}, {Topology::kDragonfly, "dragonfly"}};
}  // namespace

Topology parse_topology(const std::string& name) {
  return parse_enum(name, kTopologyNames);
}

std::string topology_name(Topology topology) { return enum_name(topology, kTopologyNames); }

namespace {
constexpr EnumName<AllReduce> kAllReduceNames[] = {{AllReduce::kRing, "ring"}, {AllReduce::kHierarchical, "hierarchical"}, {AllReduce::kTree, "tree"}};
}  // namespace

AllReduce parse_allreduce(const std::string& name) {
  return parse_enum(name, kAllReduceNames);
}

std::string allreduce_name(AllReduce algorithm) { return enum_name(algorithm, kAllReduceNames); }

namespace {
constexpr EnumName<EmbeddingExchange> kEmbeddingExchangeNames[] = {{EmbeddingExchange::kAllGather, "all_gather"}, {EmbeddingExchange::kAllToAll, "all_to_all"}, {EmbeddingExchange::kHybrid, "hybrid"}};
}  // namespace

EmbeddingExchange parse_embedding_exchange(const std::string& name) {
  return parse_enum(name, kEmbeddingExchangeNames);
}

std::string embedding_exchange_name(EmbeddingExchange exchange) { return enum_name(exchange, kEmbeddingExchangeNames); }

SwitchPolicy switch_policy(const SwitchingSpec& spec) {
  SwitchPolicy p;
  // "gba" (on the pool in force) or "gba@1" (on pool 1).
  auto target = [](const std::string& key, size_t i, const std::string& name) {
    const std::string where = "'training.switching." + key + "[" + std::to_string(i) + "]' ";
    const size_t at = name.find('@');
    int pool = -1;
    if (at != std::string::npos) {
      const std::string number = name.substr(at + 1);
      if (number.empty() || number.size() > 4 ||
          number.find_first_not_of("0123456789") != std::string::npos)
        throw InputError(where + "the pool after '@' must be a pool number, not '" + number + "'");
      pool = std::stoi(number);
    }
    try {
      return std::pair<Mode, int>{parse_mode(name.substr(0, at)), pool};
    } catch (const InputError& e) {
      throw InputError(where + e.what());
    }
  };
  for (size_t i = 0; i < spec.at_steps.size(); ++i) {
    const double step = spec.at_steps[i].first;
    if (!(step >= 0.0 && step <= 1e15) || step != std::floor(step)) {
      throw InputError("'training.switching.at_steps[" + std::to_string(i) +
                       "]' the step must be an integer in [0, 1e15]");
    }
    const auto [mode, pool] = target("at_steps", i, spec.at_steps[i].second);
    p.at_steps.push_back({static_cast<int64_t>(step), mode, pool});
  }
  for (size_t i = 0; i < spec.at_times.size(); ++i) {
    if (!(spec.at_times[i].first >= 0.0)) {
      throw InputError("'training.switching.at_times[" + std::to_string(i) +
                       "]' the time must not be negative");
    }
    const auto [mode, pool] = target("at_times", i, spec.at_times[i].second);
    p.at_times.push_back({spec.at_times[i].first, mode, pool});
  }
  p.automatic = spec.automatic;
  p.window = spec.window;
  p.to_gba_ratio = spec.to_gba_ratio;
  p.to_sync_ratio = spec.to_sync_ratio;
  p.min_steps_between = spec.min_steps_between;
  return p;
}

namespace {

void check_semantics(const ExperimentSpec& s, const std::string& source) {
  auto fail = [&](const std::string& key, const std::string& what) {
    throw InputError(source, key, what);
  };
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
  const ClusterSpec& c = s.cluster;
  // Sane ranges: beyond them a value is a typo, and SimGrid's solver fails or never ends.
  auto within = [&](const std::string& key, double value, double lo, double hi) {
    if (!(value >= lo && value <= hi)) {
      char range[96];
      std::snprintf(range, sizeof range, "must lie in [%g, %g], not %g", lo, hi, value);
      fail(key, range);
    }
  };
  constexpr double kMinSpeed = 1e3, kMaxSpeed = 1e18;  // flop/s
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
  if (c.shared_cores < 0) fail("cluster.shared_cores", "must not be negative");
  if (!(c.time_slice_s >= 0.0)) fail("cluster.time_slice_s", "must not be negative");
  within("cluster.time_slice_s", c.time_slice_s, 0.0, 1.0);
  if (c.time_slice_s > 0.0 && c.shared_cores == 0)
    fail("cluster.time_slice_s", "needs cluster.shared_cores");
  const bool one_queue = c.server_model == ServerModel::kOneQueue;
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
  if (c.gpus_per_node < 1 || c.gpus_per_node > 4096)
    fail("cluster.gpus_per_node", "must lie in [1, 4096]");
  if (s.training.num_workers % c.gpus_per_node != 0)
    fail("cluster.gpus_per_node", "must divide training.workers (nodes are alike)");
  within("cluster.intra_node_bandwidth", c.intra_node_bandwidth, 1e3, 1e13);  // bytes/s
  within("cluster.intra_node_latency", c.intra_node_latency, 0.0, 1.0);       // seconds
  within("cluster.gpu_nic_bandwidth", c.gpu_nic_bandwidth, 1e3, 1e13);         // bytes/s
  within("cluster.gpu_nic_latency", c.gpu_nic_latency, 0.0, 1.0);             // seconds
  within("cluster.tree_chunk_bytes", c.tree_chunk_bytes, 1.0, 1e12);
  if (c.nics_per_node < 1 || c.nics_per_node > 64)
    fail("cluster.nics_per_node", "must lie in [1, 64]");
  const int per_switch = c.fat_tree_nodes_per_switch, over = c.fat_tree_oversubscription;
  if (per_switch < 1 || per_switch > 4096)
    fail("cluster.fat_tree.nodes_per_switch", "must lie in [1, 4096]");
  if (over < 1 || per_switch % over != 0)
    fail("cluster.fat_tree.oversubscription",
         "must be a positive divisor of cluster.fat_tree.nodes_per_switch (the leaf switches' "
         "links down per link up)");
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
           {{"cluster.fat_tree.nodes_per_switch", per_switch != d.fat_tree_nodes_per_switch},
            {"cluster.fat_tree.oversubscription", over != d.fat_tree_oversubscription}});
    refuse(Topology::kTorus, "torus", {{"cluster.torus.dimensions", !c.torus_dimensions.empty()}});
    refuse(Topology::kDragonfly, "dragonfly",
           {{"cluster.dragonfly.groups", c.dragonfly_groups != d.dragonfly_groups},
            {"cluster.dragonfly.chassis", c.dragonfly_chassis != d.dragonfly_chassis},
            {"cluster.dragonfly.routers", c.dragonfly_routers != d.dragonfly_routers},
            {"cluster.dragonfly.nodes_per_router",
             c.dragonfly_nodes_per_router != d.dragonfly_nodes_per_router}});
  }
  // A torus's points and a dragonfly's leaves must hold every worker node and server shard.
  const int64_t leaves = s.training.num_workers / std::max(c.gpus_per_node, 1) + c.ps_shards;
  if (c.topology == Topology::kTorus) {
    int64_t points = 1;
    for (size_t i = 0; i < c.torus_dimensions.size(); ++i) {
      const int d = c.torus_dimensions[i];
      if (d < 1 || d > 4096)
        fail("cluster.torus.dimensions[" + std::to_string(i) + "]", "must lie in [1, 4096]");
      points *= d;
      if (points > (int64_t{1} << 20))
        fail("cluster.torus.dimensions", "must make at most 2^20 points");
    }
    if (!c.torus_dimensions.empty() && points < leaves)
      fail("cluster.torus.dimensions",
           "make " + std::to_string(points) + " points, and the cluster has " +
               std::to_string(leaves) + " nodes (worker nodes and server shards)");
  }
  if (c.topology == Topology::kDragonfly) {
    int64_t points = c.dragonfly_nodes_per_router;
    for (auto [key, level] : {std::pair{"groups", &c.dragonfly_groups},
                              std::pair{"chassis", &c.dragonfly_chassis},
                              std::pair{"routers", &c.dragonfly_routers}}) {
      const std::string name = std::string("cluster.dragonfly.") + key;
      if (level->size() != 2 || (*level)[0] < 1 || (*level)[0] > 4096 || (*level)[1] < 1 ||
          (*level)[1] > 64)
        fail(name, "must be [count, links] with count in [1, 4096] and links in [1, 64]");
      points *= (*level)[0];
    }
    if (c.dragonfly_nodes_per_router < 1 || c.dragonfly_nodes_per_router > 4096)
      fail("cluster.dragonfly.nodes_per_router", "must lie in [1, 4096]");
    if (points > (int64_t{1} << 20)) fail("cluster.dragonfly", "must make at most 2^20 leaves");
    if (points < leaves)
      fail("cluster.dragonfly",
           "makes " + std::to_string(points) + " leaves (groups x chassis x routers x "
               "nodes_per_router), and the cluster has " + std::to_string(leaves) +
               " nodes (worker nodes and server shards)");
  }
  const bool nodes = c.gpus_per_node > 1 || c.topology != Topology::kStar;
  const bool xml = !c.platform_xml.empty();
  if (c.shared_cores > 0 && (nodes || xml))
    fail("cluster.shared_cores", "is one machine: it cannot be combined with GPU nodes, a "
                                 "topology other than the star, or an XML platform");
  const StragglerConfig& g = s.stragglers;
  const bool usage = is_usage_format(g.trace_format);
  if ((c.gpus_per_node > 1 || c.topology != Topology::kStar) &&
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
    else if (c.shared_cores > 0) why = "cannot be combined with cluster.shared_cores";
    else if (one_queue) why = "need cluster.server_model \"sharded\"";
    else if (!g.trace_format.empty()) why = "cannot replay a trace yet (stragglers.trace)";
    if (why != nullptr) fail("cluster.pools", why);
  }
  if (g.server_failure_rate_per_s > 0.0 && one_queue)
    fail("stragglers.failures.server_rate_per_s", "needs cluster.server_model \"sharded\"");
  if (g.server_failure_rate_per_s > 0.0 && c.shared_cores > 0) {
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
    if (c.shared_cores > 0) {
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
      if (d.synthetic.train_samples < batch)
        fail("data.train_samples",
             "(" + std::to_string(d.synthetic.train_samples) +
                 ") must hold at least one global batch (" + std::to_string(p.workers) +
                 " workers x " + std::to_string(p.local_batch) + " = " + std::to_string(batch) +
                 ")");
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

// Sets "a.b.c" to `text` in `doc`, creating objects on the way.
void apply_override(Json& doc, const std::string& assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError("--set '" + assignment + "': expected key.path=value");
  }
  const std::string key = assignment.substr(0, eq), text = assignment.substr(eq + 1);
  Json* node = &doc;
  std::stringstream parts(key);
  std::string part;
  std::vector<std::string> path;
  while (std::getline(parts, part, '.')) path.push_back(part);
  for (size_t i = 0; i + 1 < path.size(); ++i) {
    Json& next = (*node)[path[i]];
    if (next.is_null()) next = Json::object();
    if (!next.is_object())
      throw InputError("--set '" + assignment + "': '" + path[i] + "' is not an object");
    node = &next;
  }
  check_json_depth(text, "--set '" + key + "'");
  Json value = Json::parse(text, nullptr, false);
  (*node)[path.back()] = value.is_discarded() ? Json(text) : value;
}

}  // namespace

namespace {

// The workload's table placement decides sync's embedding exchange (or, without one, the
// cluster's exchange is echoed as the placement), and straggler keys counted in steps become
// seconds of the workload's nominal step: its flops a local batch on cluster.worker_speed.
void resolve_workload(ExperimentSpec& spec, const std::string& source) {
  if (spec.workload) {
    WorkloadSpec& w = *spec.workload;
    switch (w.placement) {
      case TablePlacement::kWorkers:
        spec.cluster.embedding_exchange = EmbeddingExchange::kAllToAll;
        break;
      case TablePlacement::kServers:
        spec.cluster.embedding_exchange = EmbeddingExchange::kHybrid;
        break;
      case TablePlacement::kReplicated:
        spec.cluster.embedding_exchange = EmbeddingExchange::kAllGather;
        break;
      case TablePlacement::kCluster:
        w.placement = spec.cluster.embedding_exchange == EmbeddingExchange::kAllToAll
                          ? TablePlacement::kWorkers
                      : spec.cluster.embedding_exchange == EmbeddingExchange::kHybrid
                          ? TablePlacement::kServers
                          : TablePlacement::kReplicated;
        break;
    }
    if (w.local_batch == 0) w.local_batch = spec.training.local_batch;
    if (spec.cluster.worker_speed > 0.0) {
      spec.workload_step_s = Workload(w).flops_per_sample() * static_cast<double>(w.local_batch) /
                             spec.cluster.worker_speed;
    }
  }
  const std::string& unit = spec.straggler_time_unit;
  if (unit == "s") return;
  if (unit != "step")
    throw InputError(source, "stragglers.time_unit", "must be \"s\" or \"step\", not \"" + unit + "\"");
  if (!spec.workload) {
    throw InputError(source, "stragglers.time_unit",
                     "\"step\" needs a workload (its step time sizes the straggler keys)");
  }
  const double step = spec.workload_step_s;
  if (!(step > 0.0) || !std::isfinite(step)) {
    throw InputError(source, "stragglers.time_unit",
                     "\"step\" needs a workload step of positive time (flops a sample, and a "
                     "positive cluster.worker_speed)");
  }
  StragglerConfig& g = spec.stragglers;
  for (double* rate : {&g.transient_rate_per_s, &g.network_rate_per_s, &g.failure_rate_per_s,
                       &g.server_failure_rate_per_s})
    *rate /= step;
  for (double* duration : {&g.transient_mean_duration_s, &g.network_mean_duration_s,
                           &g.colocated_period_s, &g.failure_restart_s})
    *duration *= step;
  spec.straggler_time_unit = "s";
}

}  // namespace

ExperimentSpec parse_spec(const Json& doc, const std::string& source) {
  ExperimentSpec spec;
  spec.stragglers.seed = 0;  // absent: the spec's seed, below
  Reader reader(doc, source);
  visit(reader, spec);
  reader.finish();
  // The straggler realisation follows the spec's seed unless it has its own.
  if (spec.stragglers.seed == 0) spec.stragglers.seed = spec.seed;
  resolve_workload(spec, source);
  check_semantics(spec, source);
  // The result echoes the model the run used.
  // A ring is as long as its pool: "auto" looks at the largest.
  int largest = 0;
  for (const WorkerPool& p : worker_pools(spec)) largest = std::max(largest, p.workers);
  spec.cluster.ring_model = resolve_ring_model(spec.cluster.ring_model, largest);
  spec.cluster.all_to_all_model = resolve_ring_model(spec.cluster.all_to_all_model, largest);
  spec.cluster.network_solver =
      resolve_network_solver(spec.cluster.network_solver, total_workers(spec));
  return spec;
}

namespace {

Json read_json(const std::string& path) {
  const std::string text = read_json_text(path, "spec or platform file");
  try {
    return Json::parse(text);
  } catch (const Json::exception& e) {  // a syntax error, or a number that overflows a double
    throw InputError(path + ": not valid JSON (" + e.what() + ")");
  }
}

// Reads the keys and types of `doc` (a spec, or a part of one) as a spec's, without the checks
// that need the whole spec: unknown keys and wrong types are errors of `source`.
void check_keys(const Json& doc, const std::string& source) {
  ExperimentSpec ignored;
  Reader reader(doc, source);
  visit(reader, ignored);
  reader.finish();
}

struct PlatformKeys {
  std::string file;          // the cluster file, or ""
  std::set<std::string> keys;  // the cluster keys it gave, the spec's own not among them
};

// Puts the cluster file's keys under the spec's own cluster keys. Returns the folder that
// cluster.platform_xml is relative to: the spec's, or the cluster file's when that names it.
std::filesystem::path merge_platform(Json& doc, const std::string& spec_path,
                                     PlatformKeys& from) {
  const std::filesystem::path spec_folder = std::filesystem::path(spec_path).parent_path();
  if (!doc.is_object() || !doc.contains("cluster") || !doc["cluster"].is_object())
    return spec_folder;
  Json& cluster = doc["cluster"];
  if (!cluster.contains("platform")) return spec_folder;
  if (!cluster["platform"].is_string())
    throw InputError(spec_path + ": 'cluster.platform' must be a string");
  const std::filesystem::path file =
      std::filesystem::path(spec_path).parent_path() / cluster["platform"].get<std::string>();
  Json merged;
  try {
    merged = read_json(file.string());
  } catch (const InputError& e) {
    throw InputError(spec_path, "cluster.platform", std::string("names a file that cannot be used: ") + e.what());
  }
  if (!merged.is_object())
    throw InputError(file.string() + ": a platform must be a JSON object of cluster keys");
  if (merged.contains("platform"))
    throw InputError(file.string() + ": a platform cannot name another platform");
  check_keys(Json{{"cluster", merged}}, file.string());
  from.file = file.string();
  for (const auto& [key, value] : merged.items())
    if (!cluster.contains(key)) from.keys.insert(key);
  const bool xml_from_file = merged.contains("platform_xml") && !cluster.contains("platform_xml");
  for (const auto& [key, value] : cluster.items()) merged[key] = value;
  cluster = std::move(merged);
  return xml_from_file ? file.parent_path() : spec_folder;
}

}  // namespace

namespace {

// The --with fragment each override that fragment_overrides() made came from, so that an error
// of its key names the fragment, not the spec it was merged over.
std::map<std::string, std::string>& fragment_origins() {
  static std::map<std::string, std::string> origins;
  return origins;
}

// Where the value of `key` that an error names was given: the last override that set it (or
// an object above it), as "--set KEY=VALUE" or its fragment's file; "" when the spec gave it.
std::string override_origin(const std::vector<std::string>& overrides, const std::string& key) {
  for (auto it = overrides.rbegin(); it != overrides.rend(); ++it) {
    const std::string set = it->substr(0, it->find('='));
    const bool covers = key == set || key.rfind(set + ".", 0) == 0 ||
                        key.rfind(set + "[", 0) == 0 || set.rfind(key + ".", 0) == 0;
    if (!covers) continue;
    const auto from = fragment_origins().find(*it);
    return from != fragment_origins().end() ? from->second : "--set " + *it;
  }
  return "";
}

}  // namespace

ExperimentSpec load_spec(const std::string& path, const std::vector<std::string>& overrides) {
  Json doc = read_json(path);
  if (!doc.is_object()) throw InputError(path + ": the spec must be a JSON object");
  for (const auto& o : overrides) apply_override(doc, o);
  PlatformKeys from;
  const std::filesystem::path xml_folder = merge_platform(doc, path, from);
  ExperimentSpec spec;
  try {
    spec = parse_spec(doc, path);
  } catch (const InputError& e) {
    // An error of a key an override gave is the override's (--set, or a --with fragment).
    const std::string& key = e.key();
    if (!key.empty()) {
      const std::string origin = override_origin(overrides, key);
      if (!origin.empty()) throw e.told_of(origin);
    }
    // An error of a key the cluster file gave is the cluster file's.
    const std::string prefix = "cluster.";
    if (!from.file.empty() && key.rfind(prefix, 0) == 0) {
      std::string name = key.substr(prefix.size());
      name = name.substr(0, name.find_first_of(".["));
      if (from.keys.count(name)) throw e.told_of(from.file);
    }
    throw;
  }
  if (!spec.cluster.platform_xml.empty()) {
    spec.cluster.platform_xml_file = (xml_folder / spec.cluster.platform_xml).string();
    try {
      check_platform_xml_file(spec.cluster.platform_xml_file);
    } catch (const InputError& e) {
      throw InputError(from.keys.count("platform_xml") ? from.file : path, "cluster.platform_xml",
                       std::string("names a file that cannot be used: ") + e.what());
    }
  }
  return spec;
}

ExperimentSpec spec_from_overrides(const std::vector<std::string>& overrides,
                                   const std::string& source) {
  Json doc = Json::object();
  for (const auto& o : overrides) apply_override(doc, o);
  return parse_spec(doc, source);
}

std::vector<std::string> fragment_overrides(const std::string& path) {
  const Json doc = read_json(path);
  if (!doc.is_object() || doc.empty())
    throw InputError(path + ": a spec fragment must be a JSON object of spec keys");
  check_keys(doc, path);
  std::vector<std::string> overrides;
  auto flatten = [&](auto&& self, const Json& node, const std::string& prefix) -> void {
    for (const auto& [key, value] : node.items()) {
      const std::string name = prefix.empty() ? key : prefix + "." + key;
      if (value.is_object() && !value.empty())
        self(self, value, name);
      else
        overrides.push_back(name + "=" + value.dump());
    }
  };
  flatten(flatten, doc, "");
  for (const std::string& o : overrides) fragment_origins()[o] = path;
  return overrides;
}

std::vector<std::string> with_fragments(const std::vector<std::string>& fragments,
                                        const std::vector<std::string>& sets) {
  std::vector<std::string> all;
  for (const std::string& f : fragments) {
    const std::vector<std::string> from = fragment_overrides(f);
    all.insert(all.end(), from.begin(), from.end());
  }
  all.insert(all.end(), sets.begin(), sets.end());
  return all;
}

std::string timed_workload_line(const ExperimentSpec& spec) {
  if (!spec.workload) {
    char line[200];
    std::snprintf(line, sizeof line,
                  "timing the proxy model's own batch (no workload: its flops x "
                  "cost.flops_scale %g, its own bytes; docs/workload.md)",
                  spec.cost.flops_scale);
    return line;
  }
  const Workload w(*spec.workload);
  const WorkloadSpec& s = w.spec();
  char line[400];
  std::snprintf(line, sizeof line,
                "timing the workload %s: %.3g MFLOP a sample, %.3g M dense parameters, %zu tables "
                "of %.3g M rows (%.3g GB), local batch %lld for the proxy's %lld, tables %s",
                s.preset.empty() ? "(given)" : s.preset.c_str(), w.flops_per_sample() / 1e6,
                static_cast<double>(w.dense_params()) / 1e6, s.tables.size(),
                static_cast<double>(w.embedding_rows()) / 1e6,
                w.embedding_values() * s.value_bytes / 1e9, static_cast<long long>(s.local_batch),
                static_cast<long long>(spec.training.local_batch),
                s.placement == TablePlacement::kReplicated ? "replicated in sync"
                : s.placement == TablePlacement::kServers  ? "on the servers in sync"
                                                           : "on the workers in sync");
  return line;
}

nlohmann::ordered_json spec_to_json(const ExperimentSpec& spec) {
  ExperimentSpec copy = spec;
  Writer writer;
  visit(writer, copy);
  return writer.doc;
}

}  // namespace gbasim
