// The simulated cluster (docs/cluster.md): a host per worker (its speed, persistent slowdown
// and speed profile) and per parameter-server shard, on one of these platforms:
// - cluster.gpus_per_node 1 and topology "star": every host's own NIC on a non-blocking
//   switch (a SimGrid star zone);
// - GPU nodes (gpus_per_node g > 1): each node a zone of g worker hosts, each with its own
//   link to the node's switch (NVLink or PCIe), the node's NICs one link to the network;
// - topology "fat_tree", "torus" or "dragonfly": worker nodes and server hosts on the leaves
//   of SimGrid's zone of that topology (a two-level fat-tree with the chosen
//   oversubscription, a torus of the chosen dimensions, a dragonfly of groups, chassis and
//   routers);
// - a SimGrid XML platform file (cluster.platform_xml), its hosts given roles by name;
// - with cluster.shared_cores, one machine whose cores every rank shares, as gbasim-mpi's
//   ranks share this one.
#pragma once

#include <simgrid/s4u.hpp>

#include <memory>
#include <vector>

#include "experiment/run_record.h"
#include "experiment/spec.h"
#include "sim/network.h"

namespace gbasim {

namespace sg4 = simgrid::s4u;
using NetPoint = simgrid::kernel::routing::NetPoint;

struct WorkerHost {
  sg4::Host* host = nullptr;
  double speed = 0.0;       // flop/s, the persistent slowdown included
  double persistent = 1.0;  // the persistent slowdown
  // What a computation's flops are multiplied by on this host: 1 where the host's own speed
  // carries the persistent slowdown; the slowdown on a host read from an XML file, whose
  // speed is the file's.
  double flops_factor = 1.0;
};

// The argument a SimGrid engine must be created with in this build, or null: in a build with
// AddressSanitizer, thread contexts (the context factory is chosen when the engine starts).
const char* engine_context_arg();

// The actors' stack size in KiB (SimGrid's contexts/stack-size) that the engine was given:
// gbasim's default is 1024, SimGrid's own 8192. The simulation checks that its actors fit
// the address-space limit with it.
int actor_stack_kib();
void set_actor_stack_kib(int kib);

// Sets SimGrid's network model from cluster.network_model, before the platform is built.
void configure_network(const ClusterSpec& spec);

class Cluster {
 public:
  // Builds the platform in the engine the caller has created.
  Cluster(const ExperimentSpec& spec, const ReplayedTrace& trace);

  const std::vector<WorkerHost>& workers() const { return workers_; }
  const std::vector<sg4::Host*>& servers() const { return servers_; }
  // Workers per node: worker w is local rank w % g of node w / g.
  int gpus_per_node() const { return gpus_per_node_; }
  // Every host-to-host transfer goes through it (cluster.network_solver).
  Network& network() const { return *network_; }
  // The shared machine (cluster.shared_cores), or null.
  sg4::Host* machine() const { return machine_; }

  // Runs `flops` for the calling actor: on its own host (with `threads` cores), or on the
  // shared machine (one core) when there is one, taken a slice at a time with
  // cluster.time_slice_s.
  void run_flops(double flops, int threads = 1) const;

 private:
  // Worker w's host in `zone`, with its speed, persistent slowdown and speed profile.
  sg4::Host* create_worker(sg4::NetZone* zone, int w);
  // Server shard p's host in `zone`, or in a zone of its own below it beside GPU nodes;
  // returns the netpoint to route to and its gateway (null for the host itself).
  std::pair<NetPoint*, NetPoint*> create_server(sg4::NetZone* zone, int p);
  // Node k's zone of gpus_per_node worker hosts below `parent`, each on its own intra-node
  // link to the node's switch; returns the zone and the switch, its gateway.
  std::pair<sg4::NetZone*, NetPoint*> create_node(sg4::NetZone* parent, int k);
  void build_star();
  // The topologies of SimGrid's cluster zones: fat-tree, torus, dragonfly.
  void build_topology();
  void load_xml();
  // An XML platform as SimGrid read it, before anything runs: links with bandwidth, role hosts
  // that compute, routes between roles that talk, and (fluid) links the fluid model takes.
  // InputError naming the file otherwise.
  void check_xml_platform(NetworkSolver solver) const;

  const ExperimentSpec& spec_;
  const ReplayedTrace& trace_;
  int gpus_per_node_ = 1;
  std::vector<double> speeds_;      // each worker's nominal speed
  std::vector<double> persistent_;  // each worker's persistent slowdown
  std::vector<WorkerHost> workers_;
  std::vector<sg4::Host*> servers_;
  sg4::Host* machine_ = nullptr;
  std::unique_ptr<Network> network_;
  // cluster.time_slice_s: the machine's cores, taken for a slice at a time in arrival order.
  sg4::SemaphorePtr cores_;
  double slice_flops_ = 0.0;
};

}  // namespace gbasim
