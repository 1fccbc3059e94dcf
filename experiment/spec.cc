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
#include "experiment/spec_check.h"
#include "experiment/spec_schema.h"
#include "traces/straggler_models.h"
#include "traces/usage_trace.h"

namespace gbasim {
namespace {

using Json = nlohmann::json;

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
constexpr EnumName<AllReduce> kAllReduceNames[] = {{AllReduce::kRing, "ring"}, {AllReduce::kHierarchical, "hierarchical"}, {AllReduce::kTree, "tree"}, {AllReduce::kNccl, "nccl"}};
}  // namespace

AllReduce parse_allreduce(const std::string& name) {
  return parse_enum(name, kAllReduceNames);
}

std::string allreduce_name(AllReduce algorithm) { return enum_name(algorithm, kAllReduceNames); }

namespace {
constexpr EnumName<GpuGeneration> kGpuGenerationNames[] = {{GpuGeneration::kVolta, "volta"}, {GpuGeneration::kAmpere, "ampere"}, {GpuGeneration::kHopper, "hopper"}};
constexpr EnumName<CpuVendor> kCpuVendorNames[] = {{CpuVendor::kIntel, "intel"}, {CpuVendor::kAmd, "amd"}};
}  // namespace

GpuGeneration parse_gpu_generation(const std::string& name) {
  return parse_enum(name, kGpuGenerationNames);
}

std::string gpu_generation_name(GpuGeneration gpu) { return enum_name(gpu, kGpuGenerationNames); }

namespace {
constexpr EnumName<NcclAlgorithm> kNcclAlgorithmNames[] = {{NcclAlgorithm::kAuto, "auto"}, {NcclAlgorithm::kRing, "ring"}, {NcclAlgorithm::kTree, "tree"}, {NcclAlgorithm::kNvls, "nvls"}};
}  // namespace

NcclAlgorithm parse_nccl_algorithm(const std::string& name) {
  return parse_enum(name, kNcclAlgorithmNames);
}

std::string nccl_algorithm_name(NcclAlgorithm algorithm) {
  return enum_name(algorithm, kNcclAlgorithmNames);
}

CpuVendor parse_cpu_vendor(const std::string& name) { return parse_enum(name, kCpuVendorNames); }

std::string cpu_vendor_name(CpuVendor cpu) { return enum_name(cpu, kCpuVendorNames); }

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
  if (key.back() == '.') path.push_back("");
  for (const std::string& name : path) {
    if (name.empty())
      throw InputError("--set '" + assignment + "': the key path has an empty name (a stray '.')");
    if (name.find('[') != std::string::npos) {
      throw InputError("--set '" + assignment + "': a key path cannot index a list ('" + name +
                       "'); set the whole list, e.g. --set '" + key.substr(0, key.find('[')) +
                       "=[...]'");
    }
  }
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
    check_workload(w, source);
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
  bool valid_in_steps = true;
  try {
    validate(g);
  } catch (const InputError&) {
    valid_in_steps = false;  // check_semantics names the key as given
  }
  for (double* rate : {&g.transient_rate_per_s, &g.network_rate_per_s, &g.failure_rate_per_s,
                       &g.server_failure_rate_per_s})
    *rate /= step;
  for (double* duration : {&g.transient_mean_duration_s, &g.network_mean_duration_s,
                           &g.colocated_period_s, &g.failure_restart_s})
    *duration *= step;
  // Valid in steps but not in seconds: the workload's step is what is off. The defaults count
  // steps too, so the key may be one the user never set.
  if (valid_in_steps) {
    try {
      validate(g);
    } catch (const InputError& e) {
      char seconds[32];
      std::snprintf(seconds, sizeof seconds, "%g", step);
      throw InputError(source, "stragglers.time_unit",
                       "is \"step\" and the workload's step is " + std::string(seconds) +
                           " s: in seconds, " + e.what() +
                           "; every straggler rate and duration counts steps, defaults included: "
                           "set them for this workload, or use \"s\"");
    }
  }
  spec.straggler_time_unit = "s";
}

}  // namespace

ExperimentSpec parse_spec(const Json& doc, const std::string& source) {
  ExperimentSpec spec;
  spec.stragglers.seed = 0;  // absent: the spec's seed, below
  read_spec_keys(doc, source, spec);
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
  read_spec_keys(doc, source, ignored);
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
                "timing the workload %s: %.3g MFLOP a sample, %.3g M dense parameters, %lld tables "
                "of %.3g M rows (%.3g GB), local batch %lld for the proxy's %lld, tables %s",
                s.preset.empty() ? "(given)" : s.preset.c_str(), w.flops_per_sample() / 1e6,
                static_cast<double>(w.dense_params()) / 1e6, static_cast<long long>(w.tables()),
                static_cast<double>(w.embedding_rows()) / 1e6,
                w.embedding_values() * s.value_bytes / 1e9, static_cast<long long>(s.local_batch),
                static_cast<long long>(spec.training.local_batch),
                s.placement == TablePlacement::kReplicated ? "replicated in sync"
                : s.placement == TablePlacement::kServers  ? "on the servers in sync"
                                                           : "on the workers in sync");
  return line;
}

nlohmann::ordered_json spec_to_json(const ExperimentSpec& spec) {
  return write_spec_keys(spec);
}

}  // namespace gbasim
