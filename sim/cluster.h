// The simulated cluster: a host per worker (its speed, persistent slowdown and speed
// profile) and per parameter-server shard, each with its own NIC on a non-blocking switch
// (a SimGrid star zone); or, with cluster.shared_cores, one machine whose cores every rank
// shares, as gbasim-mpi's ranks share this one.
#pragma once

#include <simgrid/s4u.hpp>

#include <vector>

#include "experiment/run_record.h"
#include "experiment/spec.h"

namespace gbasim {

namespace sg4 = simgrid::s4u;

struct WorkerHost {
  sg4::Host* host = nullptr;
  double speed = 0.0;       // flop/s, the persistent slowdown included
  double persistent = 1.0;  // the persistent slowdown
};

class Cluster {
 public:
  // Builds the platform in the engine the caller has created.
  Cluster(const ExperimentSpec& spec, const ReplayedTrace& trace);

  const std::vector<WorkerHost>& workers() const { return workers_; }
  const std::vector<sg4::Host*>& servers() const { return servers_; }
  // The shared machine (cluster.shared_cores), or null.
  sg4::Host* machine() const { return machine_; }

  // Runs `flops` for the calling actor: on its own host (with `threads` cores), or on the
  // shared machine (one core) when there is one, taken a slice at a time with
  // cluster.time_slice_s.
  void run_flops(double flops, int threads = 1) const;

 private:
  std::vector<WorkerHost> workers_;
  std::vector<sg4::Host*> servers_;
  sg4::Host* machine_ = nullptr;
  // cluster.time_slice_s: the machine's cores, taken for a slice at a time in arrival order.
  sg4::SemaphorePtr cores_;
  double slice_flops_ = 0.0;
};

}  // namespace gbasim
