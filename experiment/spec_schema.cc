// The spec's schema: every key, its type and its default, walked once (`visit`) by the reader
// that fills an ExperimentSpec from JSON and by the writer that gives it back.
#include "experiment/spec_schema.h"

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
#include "base/text.h"
#include "experiment/json_file.h"

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
    v.field("gpus_per_node", c.gpu_node.gpus_per_node);
    v.field("intra_node_bandwidth", c.gpu_node.intra_node_bandwidth);
    v.field("intra_node_latency", c.gpu_node.intra_node_latency);
    v.field("gpu_nic_bandwidth", c.gpu_node.gpu_nic_bandwidth);
    v.field("gpu_nic_latency", c.gpu_node.gpu_nic_latency);
    v.field("nics_per_node", c.gpu_node.nics_per_node);
    v.named("gpu_generation", c.gpu_node.gpu_generation, parse_gpu_generation, gpu_generation_name);
    v.named("cpu_vendor", c.gpu_node.cpu_vendor, parse_cpu_vendor, cpu_vendor_name);
    v.named("nccl_algorithm", c.nccl_algorithm, parse_nccl_algorithm, nccl_algorithm_name);
    v.named("topology", c.topology, parse_topology, topology_name);
    v.section("fat_tree", [&] {
      v.field("nodes_per_switch", c.fat_tree.nodes_per_switch);
      v.field("oversubscription", c.fat_tree.oversubscription);
    });
    v.section("torus", [&] { v.field("dimensions", c.torus.dimensions); });
    v.section("dragonfly", [&] {
      v.field("groups", c.dragonfly.groups);
      v.field("chassis", c.dragonfly.chassis);
      v.field("routers", c.dragonfly.routers);
      v.field("nodes_per_router", c.dragonfly.nodes_per_router);
    });
    v.field("pools", c.pools);
    v.field("platform_xml", c.platform_xml);
    v.section("roles", [&] {
      v.field("workers", c.worker_hosts);
      v.field("servers", c.server_hosts);
    });
    v.field("shared_cores", c.shared_machine.cores);
    v.field("time_slice_s", c.shared_machine.time_slice_s);
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
      v.field("intensity", g.trace_intensity);
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
    Json whole;  // a whole number written as a float, where the key takes integers
    if constexpr ((std::is_integral_v<T> && !std::is_same_v<T, bool>) ||
                  std::is_same_v<T, std::vector<int>> || std::is_same_v<T, std::vector<PoolSpec>>) {
      whole = whole_numbers(*j);
      j = &whole;
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

void read_spec_keys(const nlohmann::json& doc, const std::string& source, ExperimentSpec& spec) {
  Reader reader(doc, source);
  visit(reader, spec);
  reader.finish();
}

nlohmann::ordered_json write_spec_keys(ExperimentSpec spec) {
  Writer writer;
  visit(writer, spec);
  return writer.doc;
}

}  // namespace gbasim
