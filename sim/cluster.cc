#include "sim/cluster.h"

#include <string>

#include "sim/profiles.h"

namespace gbasim {

Cluster::Cluster(const ExperimentSpec& spec, const ReplayedTrace& trace) {
  const ClusterSpec& c = spec.cluster;
  const int n = spec.training.num_workers;
  const std::vector<std::vector<std::pair<double, double>>> none;
  const auto& speed_changes = trace.usage ? trace.usage->speed : none;
  const auto& bandwidth_changes = trace.usage ? trace.usage->bandwidth : none;
  auto* zone = sg4::create_star_zone("cluster");
  const StragglerConfig& g = spec.stragglers;
  auto connect = [&](sg4::Host* host, int worker) {
    const double initial = worker >= 0 ? initial_factor(bandwidth_changes, worker) : 1.0;
    auto* link =
        zone->create_split_duplex_link(host->get_name() + "-nic", c.nic_bandwidth * initial)
            ->set_latency(c.nic_latency);
    std::vector<ChangeSource> factors;
    if (worker >= 0 && g.network_rate_per_s > 0.0)
      factors.push_back(
          episode_source([g, worker](double h) { return network_episodes(g, worker, h); }));
    if (worker >= 0 && !bandwidth_changes.empty())
      factors.push_back(fixed_source(bandwidth_changes[worker]));
    if (!factors.empty()) {
      link->set_bandwidth_profile(
          product_profile(host->get_name() + "-network", std::move(factors), c.nic_bandwidth,
                          g.network_rate_per_s > 0.0 ? 10.0 / g.network_rate_per_s : 10.0));
    }
    link->seal();
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                    {{link, sg4::LinkInRoute::Direction::UP}}, true);
  };
  std::vector<double> speeds;
  for (const auto& group : c.worker_groups)
    for (int i = 0; i < static_cast<int>(group[0]); ++i) speeds.push_back(group[1]);
  if (speeds.empty()) speeds.assign(n, c.worker_speed);
  const std::vector<double> persistent = persistent_slowdowns(spec.stragglers, n);
  const bool shared = c.shared_cores > 0;
  if (shared) {
    machine_ = zone->create_host("machine", c.worker_speed)->set_core_count(c.shared_cores);
    machine_->seal();
    if (c.time_slice_s > 0.0) {
      cores_ = sg4::Semaphore::create(static_cast<unsigned>(c.shared_cores));
      slice_flops_ = c.time_slice_s * c.worker_speed;
    }
  }
  workers_.resize(n);
  for (int w = 0; w < n; ++w) {
    WorkerHost& s = workers_[w];
    s.persistent = persistent[w];
    s.speed = speeds[w] / persistent[w];
    const double initial = initial_factor(speed_changes, w);
    s.host = zone->create_host("worker-" + std::to_string(w), s.speed * initial);
    std::vector<ChangeSource> factors;
    if (g.transient_rate_per_s > 0.0)
      factors.push_back(episode_source([g, w](double h) { return transient_episodes(g, w, h); }));
    if (!speed_changes.empty()) factors.push_back(fixed_source(speed_changes[w]));
    if (!factors.empty() && !shared) {
      s.host->set_speed_profile(
          product_profile(s.host->get_name() + "-speed", std::move(factors), 1.0 / initial,
                          g.transient_rate_per_s > 0.0 ? 10.0 / g.transient_rate_per_s : 10.0));
    }
    s.host->seal();
    connect(s.host, w);
  }
  for (int p = 0; p < c.ps_shards; ++p) {
    auto* host =
        zone->create_host("ps-" + std::to_string(p), c.ps_speed)->set_core_count(c.ps_cores);
    host->seal();
    connect(host, -1);
    servers_.push_back(host);
  }
  zone->seal();
}

void Cluster::run_flops(double flops, int threads) const {
  if (cores_) {  // no more computations at once than cores, each at a core's speed
    for (double left = flops; left > 0.0; left -= slice_flops_) {
      cores_->acquire();
      sg4::this_actor::exec_init(std::min(left, slice_flops_))->set_host(machine_)->wait();
      cores_->release();
    }
  } else if (machine_ != nullptr) {
    sg4::this_actor::exec_init(flops)->set_host(machine_)->wait();
  } else if (threads > 1) {
    sg4::this_actor::exec_init(flops)->set_thread_count(threads)->wait();
  } else {
    sg4::this_actor::execute(flops);
  }
}

}  // namespace gbasim
