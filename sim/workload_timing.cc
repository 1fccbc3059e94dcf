#include "sim/workload_timing.h"

#include <simgrid/s4u.hpp>

#include "sim/cluster.h"
#include "sim/collectives.h"
#include "sim/network.h"
#include "sim/training.h"

namespace gbasim {

namespace sg4 = simgrid::s4u;

WorkloadTiming time_workload(const ExperimentSpec& spec) {
  const Workload workload(*spec.workload);
  const WorkloadSpec& w = workload.spec();
  configure_network(spec.cluster);
  const ReplayedTrace no_trace;
  const Cluster cluster(spec, no_trace);
  const int n = spec.training.num_workers;
  const int shards = static_cast<int>(cluster.servers().size());
  const StepBytes bytes = step_bytes(workload, w.local_batch, w.placement, shards);
  WorkloadTiming t;
  t.compute_s = workload.flops_per_sample() * static_cast<double>(w.local_batch) /
                spec.cluster.worker_speed;
  Collectives collectives(cluster, spec.cluster, 0, n);
  Network& network = cluster.network();
  auto barrier = sg4::Barrier::create(static_cast<unsigned>(n));
  // Worker `me` sends `to` bytes to every shard, then every shard sends it `from`.
  auto with_servers = [&](sg4::Host* me, double to, double from) {
    std::vector<Transfer> comms;
    for (sg4::Host* s : cluster.servers())
      if (to > 0.0) comms.push_back(network.send(me, s, to));
    network.wait_all(comms);
    comms.clear();
    for (sg4::Host* s : cluster.servers())
      if (from > 0.0) comms.push_back(network.send(s, me, from));
    network.wait_all(comms);
  };
  const auto per = [&](double total, int owners) {
    return std::vector<double>(owners, total / owners);
  };
  for (int r = 0; r < n; ++r) {
    sg4::Actor::create("rank-" + std::to_string(r), cluster.workers()[r].host, [&, r] {
      sg4::Host* me = cluster.workers()[r].host;
      barrier->wait();
      double start = sg4::Engine::get_clock();
      switch (w.placement) {
        case TablePlacement::kWorkers:
          if (n > 1) {
            collectives.all_to_all(r, per(bytes.exchange_ids, n));
            collectives.barrier();
            collectives.all_to_all(r, per(bytes.exchange_vectors, n));
            collectives.barrier();
            collectives.all_to_all(r, per(bytes.exchange_gradients, n));
            collectives.barrier();
          }
          break;
        case TablePlacement::kServers:
          with_servers(me, kControlBytes + bytes.exchange_ids / shards,
                       bytes.exchange_vectors / shards);
          with_servers(me, bytes.exchange_gradients / shards, 0.0);
          break;
        case TablePlacement::kReplicated:
        case TablePlacement::kCluster:
          if (n > 1) collectives.all_gather(r, std::vector<double>(n, bytes.exchange_gradients));
          break;
      }
      barrier->wait();
      if (r == 0) t.sync_exchange_s = sg4::Engine::get_clock() - start;
      start = sg4::Engine::get_clock();
      if (n > 1) collectives.all_reduce(r, bytes.allreduce);
      barrier->wait();
      if (r == 0) t.sync_allreduce_s = sg4::Engine::get_clock() - start;
      if (r != 0) return;
      // Worker 0 alone with the shards.
      start = sg4::Engine::get_clock();
      with_servers(me, kControlBytes + bytes.request_per_shard, 0.0);
      t.ps_request_s = sg4::Engine::get_clock() - start;
      start = sg4::Engine::get_clock();
      with_servers(me, 0.0, bytes.pull_per_shard);
      t.ps_pull_s = sg4::Engine::get_clock() - start;
      start = sg4::Engine::get_clock();
      with_servers(me, bytes.push_per_shard, 0.0);
      t.ps_push_s = sg4::Engine::get_clock() - start;
    });
  }
  sg4::Engine::get_instance()->run();
  return t;
}

}  // namespace gbasim
