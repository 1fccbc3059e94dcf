// The experiment spec: one JSON document that says everything about a run (data, model,
// optimizer, training mode, cluster, cost model, stragglers, evaluation, budget, seed).
// Both drivers (simulator, MPI runtime) read it through this library. Every key has a
// default (docs/spec.md); an unknown key or a value of the wrong type is an error that
// names the file and the key.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "models/model.h"
#include "models/optimizer.h"
#include "experiment/data.h"
#include "experiment/workload.h"
#include "strategies/switching.h"
#include "strategies/update_rule.h"
#include "traces/straggler_models.h"

namespace gbasim {

enum class ServerModel { kSharded, kOneQueue };
// How sync's rings are simulated (sim/collectives.h): a message a pass, or one a collective.
// kAuto, the default, is resolved when the spec is read: messages up to kAutoRingWorkers
// workers, aggregate beyond.
enum class RingModel { kMessages, kAggregate, kAuto };
constexpr int kAutoRingWorkers = 64;
inline RingModel resolve_ring_model(RingModel model, int workers) {
  if (model != RingModel::kAuto) return model;
  return workers <= kAutoRingWorkers ? RingModel::kMessages : RingModel::kAggregate;
}
// "messages", "aggregate", "auto"; throws InputError for anything else.
RingModel parse_ring_model(const std::string& name);
std::string ring_model_name(RingModel model);
// How the network's bandwidth is shared among the flows in flight (sim/network.h): SimGrid's
// flow-level max-min model, or the fluid model. kAuto, the default, is resolved when the spec
// is read: SimGrid's below kAutoFluidWorkers workers (its runs there take minutes at most, and
// the fluid model is 5% early at 256 workers on two shards: results/network-solvers/), the
// fluid model from there on.
enum class NetworkSolver { kSimGrid, kFluid, kAuto };
constexpr int kAutoFluidWorkers = 512;
inline NetworkSolver resolve_network_solver(NetworkSolver solver, int workers) {
  if (solver != NetworkSolver::kAuto) return solver;
  return workers < kAutoFluidWorkers ? NetworkSolver::kSimGrid : NetworkSolver::kFluid;
}
// "simgrid", "fluid", "auto"; throws InputError for anything else.
NetworkSolver parse_network_solver(const std::string& name);
std::string network_solver_name(NetworkSolver solver);
// The network between nodes (sim/cluster.h): every node's NIC on one non-blocking switch, a
// two-level fat-tree of switches, a torus of nodes, or a dragonfly of routers.
enum class Topology { kStar, kFatTree, kTorus, kDragonfly };
// "star", "fat_tree", "torus", "dragonfly"; throws InputError for anything else.
Topology parse_topology(const std::string& name);
std::string topology_name(Topology topology);
// Sync's all-reduce of the dense gradient (sim/collectives.h): one ring of every worker, or
// NCCL's hierarchical one (reduce-scatter in the node, rings across nodes, all-gather in the
// node), or NCCL's double binary tree (a reduce up and a broadcast down two trees, each
// carrying half, pipelined in chunks), or NCCL's ring or tree as NCCL's tuner picks them
// (sim/nccl_model.h).
enum class AllReduce { kRing, kHierarchical, kTree, kNccl };
// "ring", "hierarchical", "tree", "nccl"; throws InputError for anything else.
AllReduce parse_allreduce(const std::string& name);
std::string allreduce_name(AllReduce algorithm);
// The GPUs and host CPUs of allreduce "nccl": NCCL's constants differ by them.
enum class GpuGeneration { kVolta, kAmpere, kHopper };
// "volta", "ampere", "hopper"; throws InputError for anything else.
GpuGeneration parse_gpu_generation(const std::string& name);
std::string gpu_generation_name(GpuGeneration gpu);
// allreduce "nccl": the algorithm, as NCCL_ALGO forces one ("auto": NCCL's tuner picks).
// "nvls" is NVLink SHARP on one node and NVLSTree on several (Hopper GPU nodes).
enum class NcclAlgorithm { kAuto, kRing, kTree, kNvls };
// "auto", "ring", "tree", "nvls"; throws InputError for anything else.
NcclAlgorithm parse_nccl_algorithm(const std::string& name);
std::string nccl_algorithm_name(NcclAlgorithm algorithm);
enum class CpuVendor { kIntel, kAmd };
// "intel", "amd"; throws InputError for anything else.
CpuVendor parse_cpu_vendor(const std::string& name);
std::string cpu_vendor_name(CpuVendor cpu);
// How sync moves the embedding rows a step touches (sim/workers.h): every worker's rows to
// every worker (a ring all-gather); the tables sharded over the workers, as TorchRec and
// HugeCTR shard them (all-to-alls of the ids, the vectors and the row gradients); or the
// tables on the parameter servers (pull and push of the rows), only the dense part
// all-reduced.
enum class EmbeddingExchange { kAllGather, kAllToAll, kHybrid };
// "all_gather", "all_to_all", "hybrid"; throws InputError for anything else.
EmbeddingExchange parse_embedding_exchange(const std::string& name);
std::string embedding_exchange_name(EmbeddingExchange exchange);
// "static", "queue"; throws InputError for anything else.
DataSharding parse_data_sharding(const std::string& name);
std::string data_sharding_name(DataSharding sharding);
// "sharded", "one_queue"; throws InputError for anything else.
ServerModel parse_server_model(const std::string& name);
std::string server_model_name(ServerModel model);

// A pool of workers besides the first (training.workers of training.local_batch at
// cluster.worker_speed): docs/gba.md, "Worker pools".
struct PoolSpec {
  int workers = 1;
  int64_t local_batch = 256;
  double worker_speed = 3e12;  // flop/s
};
template <class Json>
void to_json(Json& j, const PoolSpec& p) {
  j = Json{{"workers", p.workers}, {"local_batch", p.local_batch}, {"worker_speed", p.worker_speed}};
}
template <class Json>
void from_json(const Json& j, PoolSpec& p) {
  p = PoolSpec{};
  if (j.contains("workers")) p.workers = j["workers"].template get<int>();
  if (j.contains("local_batch")) p.local_batch = j["local_batch"].template get<int64_t>();
  if (j.contains("worker_speed")) p.worker_speed = j["worker_speed"].template get<double>();
}

// Workers per node and what joins them (the cluster keys gpus_per_node to cpu_vendor).
struct GpuNodeSpec {
  // 1: every worker a host with its own NIC, as a GPU server with one GPU.
  // g > 1: GPU nodes of g workers each, every worker's link to the node's switch
  // (intra_node_bandwidth, intra_node_latency: NVLink or PCIe), the node's NICs one link of
  // nics_per_node x nic_bandwidth to the network.
  int gpus_per_node = 1;
  double intra_node_bandwidth = 1.5e11;  // bytes/s per GPU and direction (V100 NVLink 2)
  double intra_node_latency = 2e-6;      // seconds
  // A GPU's path to its node's NICs, apart from the intra-node links (GPUDirect RDMA over
  // PCIe): each direction. PCIe 3.0 x16: 8 GT/s x 16 lanes x 128/130 = 15.75 GB/s.
  double gpu_nic_bandwidth = 1.575e10;
  double gpu_nic_latency = 1e-6;  // seconds, an estimate
  int nics_per_node = 1;
  // allreduce "nccl": the GPUs' generation (NCCL's NVLink rate and LL caps; Volta's, as the
  // default intra_node_bandwidth is V100's) and the hosts' CPU vendor (NCCL's network post
  // overhead and multi-node LL caps).
  GpuGeneration gpu_generation = GpuGeneration::kVolta;
  CpuVendor cpu_vendor = CpuVendor::kIntel;
};

// The topologies' own keys (cluster.fat_tree, cluster.torus, cluster.dragonfly).
struct FatTreeSpec {
  // topology "fat_tree": nodes (worker nodes, then one node a server shard) hang off leaf
  // switches of nodes_per_switch each; every leaf switch has nodes_per_switch /
  // oversubscription links up, one to each spine switch; every link has the NIC's bandwidth.
  int nodes_per_switch = 8;
  int oversubscription = 1;
};

struct TorusSpec {
  // topology "torus": the nodes (worker nodes, then one a server shard) are the points of a
  // torus of these dimensions, each with one link to its next point in every dimension (the
  // NIC's bandwidth); empty: one ring of every node.
  std::vector<int> dimensions;
};

struct DragonflySpec {
  // topology "dragonfly": the nodes hang off routers, nodes_per_router each, a router one of
  // routers[0] in a chassis, a chassis one of chassis[0] in a group, groups[0] groups; the
  // second number of each is the links between two routers of a chassis, two chassis of a
  // group, two groups (SimGrid's dragonfly zone).
  std::vector<int> groups = {2, 1};
  std::vector<int> chassis = {2, 1};
  std::vector<int> routers = {2, 1};
  int nodes_per_router = 2;
};

// The shared machine (the cluster keys shared_cores and time_slice_s).
struct SharedMachineSpec {
  // 0: every worker and server shard is a host of its own. n > 0: they are processes of one
  // machine with n cores of worker_speed each (as gbasim-mpi's ranks on this machine):
  // every computation shares those cores, and stragglers sleep (slowdown - 1) x their
  // compute as real ranks do; each rank keeps its own link (nic_bandwidth, nic_latency).
  int cores = 0;
  // With cores: 0 shares the cores among every computation in progress at once
  // (processor sharing). t > 0: as an operating system's scheduler, a computation has a core
  // to itself for up to t seconds, then queues again; waiting ones take the cores in
  // arrival order.
  double time_slice_s = 0.0;
};

struct ClusterSpec {
  // A cluster file (JSON of the keys below; platforms/ ships some), read first: the spec's
  // own cluster keys override its values. Relative to the spec file's folder.
  std::string platform;
  int ps_shards = 2;
  double worker_speed = 3e12;  // flop/s a worker sustains on the model
  // Worker speeds group by group, in worker order; empty: every worker at worker_speed.
  // Each group is [count, speed]; the counts must add up to the number of workers.
  std::vector<std::vector<double>> worker_groups;
  double ps_speed = 1e11;  // flop/s of a parameter-server host, per core
  int ps_cores = 16;
  double nic_bandwidth = 3.125e9;      // bytes/s of each host's link (25 Gb/s)
  double nic_latency = 10e-6;          // seconds; hosts meet at a non-blocking switch
  std::string network_model = "LV08";  // SimGrid's network/model: LV08 or CM02
  NetworkSolver network_solver = NetworkSolver::kAuto;
  RingModel ring_model = RingModel::kAuto;
  // How sync's all-to-all of embedding rows is simulated: "messages" (every pair at once, N - 1
  // messages a worker), "aggregate" (one message a worker to a peer on another node, one to a
  // peer in its node), "auto" (messages up to 64 workers).
  RingModel all_to_all_model = RingModel::kAuto;
  AllReduce allreduce = AllReduce::kRing;
  EmbeddingExchange embedding_exchange = EmbeddingExchange::kAllGather;
  // allreduce "tree": the chunk each tree pass carries (NCCL's default 4 MiB buffer in its
  // 8 steps).
  double tree_chunk_bytes = 524288;
  GpuNodeSpec gpu_node;
  NcclAlgorithm nccl_algorithm = NcclAlgorithm::kAuto;
  Topology topology = Topology::kStar;
  FatTreeSpec fat_tree;
  TorusSpec torus;
  DragonflySpec dragonfly;
  // A SimGrid XML platform file instead of the keys above (relative to the spec's folder, or
  // to the cluster file's that names it), and the hosts that play each role: one worker a
  // host in worker order, one parameter-server shard a host.
  // More pools of workers, after the first: hosts with their own NIC on the star. Training
  // moves to one only by a scheduled switch naming it ("gba@1": GBA on pool 1).
  std::vector<PoolSpec> pools;
  std::string platform_xml;
  std::string platform_xml_file;  // platform_xml as load_spec found it (not a key)
  std::vector<std::string> worker_hosts;
  std::vector<std::string> server_hosts;
  SharedMachineSpec shared_machine;
  // How the parameter server is modelled (sim/server.h). kSharded: admissions (the token and
  // the parameter pull) do not pass through the server, and a push is acknowledged once its
  // update is done. kOneQueue: as gbasim-mpi's server, one queue of admissions and pushes
  // served one at a time in arrival order: the token is taken when the server serves the
  // request; request, grant (with the parameters) and push are one message each, flowing to
  // the server while it works; the server sends each grant itself. Server modes, one shard,
  // no switching.
  ServerModel server_model = ServerModel::kSharded;
  // With the one-queue server: 0 serves the waiting messages in arrival order; k > 0 picks one of
  // them at random (seeded by k), as an MPI server probing for any source gets them in an
  // order that is not the order they arrived in.
  int ps_service_seed = 0;
};

struct CostSpec {
  // The simulated compute of a local batch is flops_scale x the model's flops per sample
  // x b / worker speed: the small real model stands in for a production-size one.
  double flops_scale = 100.0;
  double update_flops_per_value = 10.0;  // optimizer flops per updated value
  // The parameter server's own work for each push it takes in and the pull that follows
  // (unpacking, the rule, packing parameters), in flops of one server core.
  double server_flops_per_push = 0.0;
  // GBA and backup workers: the server's work to merge each pushed gradient into the
  // step's sum, per value the gradient carries.
  double merge_flops_per_value = 0.0;
};

struct EvaluationSpec {
  double interval_s = 0.25;  // simulated seconds between parameter snapshots
  double target_auc = 0.75;  // time-to-AUC is the first snapshot at or above this
  int64_t test_samples = 0;  // evaluate on the first this many test samples; 0: all
};

struct BudgetSpec {
  int64_t max_samples = 0;  // training samples applied; 0: one epoch of the training set
  double max_time_s = 0.0;  // simulated seconds; 0: no limit
};

// Switching modes during a run (strategies/switching.h, docs/gba.md "Switching"). The run
// starts in training.mode.
struct SwitchingSpec {
  // Scheduled: [global step, mode] and [simulated seconds, mode] pairs.
  std::vector<std::pair<double, std::string>> at_steps, at_times;
  // Automatic sync <-> GBA from the straggler ratio (max / median of the workers' recent
  // compute times per step).
  bool automatic = false;
  int window = 10;
  double to_gba_ratio = 1.5;
  double to_sync_ratio = 1.2;
  int64_t min_steps_between = 50;

  bool enabled() const { return automatic || !at_steps.empty() || !at_times.empty(); }
};

// The controller's policy; throws InputError naming the first bad entry.
SwitchPolicy switch_policy(const SwitchingSpec& spec);


struct SimulationSpec {
  // Timing only: no gradient math, no optimizer, no evaluation; message sizes still come
  // from each batch's rows. For measuring how the simulator scales.
  bool timing_only = false;
  // The watchdog: a run that reaches this simulated time ends with status "time limit"
  // (0: no limit), and one whose global step has not moved in this many evaluations in a row
  // ends with status "stalled" (0: never), so that a worker that never finishes its step (an
  // infinite slowdown, a link of no bandwidth) ends the run rather than hanging it.
  double max_simulated_s = 0.0;
  int64_t stall_evaluations = 1000;
};

struct ExperimentSpec {
  uint64_t seed = 1;  // data order, initial parameters and stragglers
  DataOptions data;
  ModelConfig model;
  // The job the cluster times (experiment/workload.h); none: the proxy model's own batch.
  std::optional<WorkloadSpec> workload;
  OptimizerConfig optimizer;
  RuleConfig training;
  SwitchingSpec switching;  // read under training.switching
  ClusterSpec cluster;
  CostSpec cost;
  StragglerConfig stragglers;
  // stragglers.time_unit as given: "s", or "step" (the straggler keys in seconds count nominal
  // steps of the workload instead). Read, resolved into seconds, never echoed: the echo gives
  // the seconds that ran, and workload_step_s the step they were counted in (0: none).
  std::string straggler_time_unit = "s";
  double workload_step_s = 0.0;
  EvaluationSpec evaluation;
  BudgetSpec budget;
  SimulationSpec simulation;
};

// The pools of workers: the first (training.workers of training.local_batch), then
// cluster.pools, numbered on.
std::vector<WorkerPool> worker_pools(const ExperimentSpec& spec);
// Every worker of every pool.
int total_workers(const ExperimentSpec& spec);

// One line on what the run times: the workload (its name, flops a sample, parameters, batch), or
// the proxy's own batch when the spec has none.
std::string timed_workload_line(const ExperimentSpec& spec);

// Reads `doc` over the defaults; `source` (a file name) prefixes every error.
ExperimentSpec parse_spec(const nlohmann::json& doc, const std::string& source);
// The default spec with "key.path=value" overrides applied (as load_spec's, without a file);
// `source` names it in errors.
ExperimentSpec spec_from_overrides(const std::vector<std::string>& overrides,
                                   const std::string& source);
// Reads a spec file, after applying "key.path=value" overrides to its JSON (a value that
// parses as JSON is taken as such, anything else as a string).
ExperimentSpec load_spec(const std::string& path, const std::vector<std::string>& overrides);
// The spec with every key resolved, defaults included.
nlohmann::ordered_json spec_to_json(const ExperimentSpec& spec);

// A spec fragment (a JSON object of spec keys, such as `gbasim tune`'s tuned.json) as
// "key.path=value" overrides, one a leaf, in the file's order; --with FILE applies them before
// --set. Throws InputError naming the file.
std::vector<std::string> fragment_overrides(const std::string& path);
// What --with FILE ... and --set KEY=VALUE ... give together: every fragment's overrides in
// order, then the --set ones (which so win).
std::vector<std::string> with_fragments(const std::vector<std::string>& fragments,
                                        const std::vector<std::string>& sets);

}  // namespace gbasim
