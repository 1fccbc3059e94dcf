#include "sim/cluster.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>

#include "base/error.h"
#include "base/files.h"
#include "experiment/platform_xml.h"
#include "sim/profiles.h"

namespace gbasim {
namespace {

const std::vector<std::vector<std::pair<double, double>>> kNoChanges;

const std::vector<std::vector<std::pair<double, double>>>& speed_changes(const ReplayedTrace& t) {
  return t.usage ? t.usage->speed : kNoChanges;
}

const std::vector<std::vector<std::pair<double, double>>>& bandwidth_changes(
    const ReplayedTrace& t) {
  return t.usage ? t.usage->bandwidth : kNoChanges;
}

}  // namespace

namespace {
int stack_kib = 8192;  // SimGrid's default, until the engine is told otherwise

// While SimGrid loads an XML platform, its standard error goes to a file; SimGrid ends the
// process (abort) on platforms it cannot use in ways no check here foresees (a route declared
// twice, a zone's malformed parameters). The handler then names the file and SimGrid's
// message, without its backtrace, and exits 2 as for any bad input.
struct PlatformLoad {
  int saved_stderr = -1;  // standard error's own descriptor
  int captured = -1;      // where SimGrid's output goes meanwhile
  char file[1024] = {};
};
PlatformLoad loading;

void platform_abort(int) {
  char text[8192];
  ssize_t n = 0;
  if (::lseek(loading.captured, 0, SEEK_SET) == 0) n = ::read(loading.captured, text, sizeof text - 1);
  text[n > 0 ? n : 0] = '\0';
  // SimGrid's message: the text after "CRITICAL] " up to the end of its line.
  const char* message = std::strstr(text, "CRITICAL] ");
  message = message != nullptr ? message + 10 : "SimGrid stopped while reading it";
  const char* end = std::strchr(message, '\n');
  const size_t length = end != nullptr ? static_cast<size_t>(end - message) : std::strlen(message);
  const int fd = loading.saved_stderr;
  auto put = [fd](const char* s, size_t k) { (void)!::write(fd, s, k); };
  put("gbasim: error: ", 15);
  put(loading.file, std::strlen(loading.file));
  put(": a platform SimGrid cannot use: ", 33);
  put(message, length);
  put("\n", 1);
  ::_exit(2);
}

using HostPair = std::pair<sg4::Host*, sg4::Host*>;

// SimGrid 3.32 ends the process on some route lookups, with nothing to catch: a "Full" zone
// without a single route crashes, routing "None" aborts. So the lookups are tried first in a
// child process, which writes the index of each pair before looking it up. Returns the index of
// the pair it died on, or -1 when it found them all (or could not be started: the lookups then
// run here, as before).
long fatal_route(const std::vector<HostPair>& pairs) {
  int fds[2];
  if (::pipe(fds) != 0) return -1;
  std::fflush(stdout);
  std::fflush(stderr);
  const pid_t child = ::fork();
  if (child < 0) {
    ::close(fds[0]);
    ::close(fds[1]);
    return -1;
  }
  if (child == 0) {
    ::close(fds[0]);
    const int null = ::open("/dev/null", O_WRONLY);
    if (null >= 0) ::dup2(null, STDERR_FILENO);
    std::vector<sg4::Link*> links;
    for (long k = 0; k < static_cast<long>(pairs.size()); ++k) {
      if (::write(fds[1], &k, sizeof k) != sizeof k) ::_exit(3);
      double latency = 0.0;
      links.clear();
      pairs[k].first->route_to(pairs[k].second, links, &latency);
    }
    ::_exit(0);
  }
  ::close(fds[1]);
  long last = -1, k = 0;
  for (ssize_t n; (n = ::read(fds[0], &k, sizeof k)) == sizeof k;) last = k;
  ::close(fds[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  const bool died = WIFSIGNALED(status) ||
                    (WIFEXITED(status) && WEXITSTATUS(status) != 0 && WEXITSTATUS(status) != 3);
  return died ? last : -1;
}
}  // namespace

int actor_stack_kib() { return stack_kib; }
void set_actor_stack_kib(int kib) { stack_kib = kib; }

const char* engine_context_arg() {
#ifdef GBASIM_SANITIZED
  // AddressSanitizer takes SimGrid's raw context switches for stack overflows: actors run on
  // threads in a sanitized build (slower, the same results).
  return "--cfg=contexts/factory:thread";
#else
  return nullptr;
#endif
}

void configure_network(const ClusterSpec& spec) {
  if (spec.network_model == "CM02") {
    // Plain latency + size / bandwidth timing, as analytic checks expect.
    sg4::Engine::set_config("network/model:CM02");
    sg4::Engine::set_config("network/crosstraffic:0");
  }
}

Cluster::Cluster(const ExperimentSpec& spec, const ReplayedTrace& trace)
    : spec_(spec), trace_(trace), gpus_per_node_(spec.cluster.gpu_node.gpus_per_node) {
  const ClusterSpec& c = spec.cluster;
  if (spec.stragglers.network_rate_per_s > 0.0 || !bandwidth_changes(trace).empty()) {
    // Links change bandwidth over time. SimGrid 3.32 then adds the change of the weight-S term
    // (S / bandwidth, LV08's RTT unfairness) to the sharing penalty of every message on the
    // link, whether or not its penalty held the term (those that use the link only as their
    // reverse, cross-traffic path never did): a penalty can reach 0, which stalls the message
    // forever (a "deadlock"), or turn negative, which aborts SimGrid. Without weight-S the
    // sharing penalty is the route's latency, which no bandwidth change touches.
    sg4::Engine::set_config("network/weight-S:0");
  }
  const int n = total_workers(spec);
  for (const auto& group : c.worker_groups)
    for (int i = 0; i < static_cast<int>(group[0]); ++i) speeds_.push_back(group[1]);
  if (speeds_.empty()) speeds_.assign(spec.training.num_workers, c.worker_speed);
  for (const PoolSpec& pool : c.pools) speeds_.insert(speeds_.end(), pool.workers, pool.worker_speed);
  persistent_ = persistent_slowdowns(spec.stragglers, n);
  workers_.resize(n);
  if (!c.platform_xml.empty())
    load_xml();
  else if (c.topology != Topology::kStar)
    build_topology();
  else
    build_star();
  const NetworkSolver solver = resolve_network_solver(c.network_solver, n);
  if (!c.platform_xml.empty()) check_xml_platform(solver);
  network_ = std::make_unique<Network>(solver, servers_.empty() ? workers_[0].host : servers_[0]);
}

void Cluster::check_xml_platform(NetworkSolver solver) const {
  const ClusterSpec& c = spec_.cluster;
  const std::string& file = c.platform_xml_file.empty() ? c.platform_xml : c.platform_xml_file;
  for (const sg4::Link* link : sg4::Engine::get_instance()->get_all_links()) {
    if (!(link->get_bandwidth() > 0.0))
      throw InputError(file + ": link '" + link->get_name() + "' has no bandwidth");
    const auto policy = link->get_sharing_policy();
    if (solver == NetworkSolver::kFluid &&
        (policy == sg4::Link::SharingPolicy::WIFI || policy == sg4::Link::SharingPolicy::NONLINEAR))
      throw InputError(file, "cluster.network_solver",
                       "\"fluid\" takes shared, split-duplex and fat-pipe links only, and link '" +
                           link->get_name() + "' is not one");
  }
  // Every role's host computes, and every pair of roles that talk has a route both ways:
  // SimGrid would end the process at the first message between hosts with none. Workers talk
  // to every server, and (all-reduce, backup, switching) to one another: all pairs up to 64
  // workers, beyond that each to its ring neighbours and to worker 0.
  std::vector<sg4::Host*> hosts;
  for (const WorkerHost& w : workers_) hosts.push_back(w.host);
  std::vector<sg4::Host*> computing = hosts;
  computing.insert(computing.end(), servers_.begin(), servers_.end());
  for (sg4::Host* h : computing) {
    if (!(h->get_speed() > 0.0) || h->get_core_count() < 1)
      throw InputError(file, "cluster.roles", "names host '" + h->get_name() +
                                                  "', which has no speed or no core");
    if (h->get_speed() < 1e3 || h->get_speed() > 1e18) {
      throw InputError(file + ": host '" + h->get_name() +
                       "' needs a speed in [1e3, 1e18] flop/s, as cluster.worker_speed does");
    }
  }
  std::vector<HostPair> pairs;
  auto need_route = [&](sg4::Host* from, sg4::Host* to) {
    if (from != to) pairs.emplace_back(from, to);
  };
  for (sg4::Host* w : hosts) {
    for (sg4::Host* server : servers_) {
      need_route(w, server);
      need_route(server, w);
    }
  }
  const size_t n = hosts.size();
  for (size_t i = 0; i < n; ++i) {
    if (n <= 64) {
      for (size_t j = 0; j < n; ++j) need_route(hosts[i], hosts[j]);
    } else {
      for (size_t j : {(i + 1) % n, (i + n - 1) % n, size_t{0}}) {
        need_route(hosts[i], hosts[j]);
        need_route(hosts[j], hosts[i]);
      }
    }
  }
  auto no_route = [&](const HostPair& p, const std::string& why) {
    return InputError(file, "cluster.roles",
                      "has no route from host '" + p.first->get_name() + "' to host '" +
                          p.second->get_name() + "'" + why);
  };
  const long fatal = fatal_route(pairs);
  if (fatal >= 0 && fatal < static_cast<long>(pairs.size())) {
    throw no_route(pairs[fatal],
                   " (SimGrid stops on looking it up: a zone with no route at all, or routing "
                   "\"None\")");
  }
  std::vector<sg4::Link*> links;
  for (const HostPair& p : pairs) {
    double latency = 0.0;
    links.clear();
    p.first->route_to(p.second, links, &latency);
    if (links.empty() && latency <= 0.0) throw no_route(p, "");
    // Beyond the ranges of the spec's own keys a number is a typo, and a run would crawl or
    // stop at once (docs/spec.md, "Ranges").
    for (const sg4::Link* link : links) {
      // (A backbone may be far faster than a NIC: 1e15 bytes/s.)
      if (link->get_bandwidth() < 1e3 || link->get_bandwidth() > 1e15 ||
          !(link->get_latency() <= 1.0)) {
        throw InputError(file + ": link '" + link->get_name() +
                         "' needs a bandwidth in [1e3, 1e15] bytes/s and a latency of at most 1 "
                         "s (cluster.nic_latency's range)");
      }
    }
  }
}

sg4::Host* Cluster::create_worker(sg4::NetZone* zone, int w) {
  const StragglerConfig& g = spec_.stragglers;
  WorkerHost& s = workers_[w];
  s.persistent = persistent_[w];
  s.speed = speeds_[w] / persistent_[w];
  const double initial = initial_factor(speed_changes(trace_), w);
  s.host = zone->create_host("worker-" + std::to_string(w), s.speed * initial);
  std::vector<ChangeSource> factors;
  if (g.transient_rate_per_s > 0.0)
    factors.push_back(episode_source([g, w](double h) { return transient_episodes(g, w, h); }));
  if (!speed_changes(trace_).empty()) factors.push_back(fixed_source(speed_changes(trace_)[w]));
  if (!factors.empty() && machine_ == nullptr) {
    s.host->set_speed_profile(
        product_profile(s.host->get_name() + "-speed", std::move(factors), 1.0 / initial,
                        g.transient_rate_per_s > 0.0 ? 10.0 / g.transient_rate_per_s : 10.0));
  }
  s.host->seal();
  return s.host;
}

std::pair<NetPoint*, NetPoint*> Cluster::create_server(sg4::NetZone* zone, int p) {
  const ClusterSpec& c = spec_.cluster;
  const std::string name = "ps-" + std::to_string(p);
  sg4::NetZone* home = zone;
  if (gpus_per_node_ > 1) {
    // Beside GPU nodes a server is a zone of its own, its host the gateway: SimGrid 3.32 finds
    // no route between a host inside a node's zone and a host directly in the zone above.
    home = sg4::create_star_zone(name + "-zone");
    home->set_parent(zone);
  }
  auto* host = home->create_host(name, c.ps_speed)->set_core_count(c.ps_cores);
  host->seal();
  servers_.push_back(host);
  if (home == zone) return {host->get_netpoint(), nullptr};
  home->add_route(host->get_netpoint(), nullptr, nullptr, nullptr, {}, true);
  home->seal();
  return {home->get_netpoint(), host->get_netpoint()};
}

std::pair<sg4::NetZone*, NetPoint*> Cluster::create_node(sg4::NetZone* parent, int k) {
  const ClusterSpec& c = spec_.cluster;
  const std::string name = "node-" + std::to_string(k);
  // Every route is given: worker to worker over both intra-node links, worker to the NICs
  // (the node's gateway) over its own GPU-to-NIC link, as GPUDirect RDMA goes over PCIe and
  // not over NVLink.
  auto* node = sg4::create_full_zone(name);
  node->set_parent(parent);
  NetPoint* gateway = node->create_router(name + "-nics");
  std::vector<sg4::Host*> hosts;
  std::vector<sg4::Link*> intra, to_nic;
  for (int i = 0; i < gpus_per_node_; ++i) {
    const int w = k * gpus_per_node_ + i;
    hosts.push_back(create_worker(node, w));
    intra.push_back(node->create_split_duplex_link(hosts.back()->get_name() + "-intra",
                                                   c.gpu_node.intra_node_bandwidth)
                        ->set_latency(c.gpu_node.intra_node_latency)
                        ->seal());
    to_nic.push_back(node->create_split_duplex_link(hosts.back()->get_name() + "-to-nic",
                                                    c.gpu_node.gpu_nic_bandwidth)
                         ->set_latency(c.gpu_node.gpu_nic_latency)
                         ->seal());
  }
  using Direction = sg4::LinkInRoute::Direction;
  for (int i = 0; i < gpus_per_node_; ++i) {
    node->add_route(hosts[i]->get_netpoint(), gateway, nullptr, nullptr,
                    {{to_nic[i], Direction::UP}}, true);
    for (int j = i + 1; j < gpus_per_node_; ++j) {
      node->add_route(hosts[i]->get_netpoint(), hosts[j]->get_netpoint(), nullptr, nullptr,
                      {{intra[i], Direction::UP}, {intra[j], Direction::DOWN}}, true);
    }
  }
  node->seal();
  return {node, gateway};
}

void Cluster::build_star() {
  const ClusterSpec& c = spec_.cluster;
  const StragglerConfig& g = spec_.stragglers;
  const int n = total_workers(spec_);  // every pool's (pools need gpus_per_node 1)
  auto* zone = sg4::create_star_zone("cluster");
  // A NIC to the switch for `point` (a host, or a node's zone through its gateway); a
  // worker's (gpus_per_node 1) carries its network episodes and replayed bandwidth.
  auto connect = [&](NetPoint* point, NetPoint* gateway, const std::string& name, double bandwidth,
                     int worker) {
    const double initial = worker >= 0 ? initial_factor(bandwidth_changes(trace_), worker) : 1.0;
    auto* link =
        zone->create_split_duplex_link(name + "-nic", bandwidth * initial)->set_latency(c.nic_latency);
    std::vector<ChangeSource> factors;
    if (worker >= 0 && g.network_rate_per_s > 0.0)
      factors.push_back(
          episode_source([g, worker](double h) { return network_episodes(g, worker, h); }));
    if (worker >= 0 && !bandwidth_changes(trace_).empty())
      factors.push_back(fixed_source(bandwidth_changes(trace_)[worker]));
    if (!factors.empty()) {
      link->set_bandwidth_profile(
          product_profile(name + "-network", std::move(factors), bandwidth,
                          g.network_rate_per_s > 0.0 ? 10.0 / g.network_rate_per_s : 10.0));
    }
    link->seal();
    zone->add_route(point, nullptr, gateway, nullptr, {{link, sg4::LinkInRoute::Direction::UP}},
                    true);
  };
  if (c.shared_machine.cores > 0) {
    machine_ = zone->create_host("machine", c.worker_speed)->set_core_count(c.shared_machine.cores);
    machine_->seal();
    if (c.shared_machine.time_slice_s > 0.0) {
      cores_ = sg4::Semaphore::create(static_cast<unsigned>(c.shared_machine.cores));
      slice_flops_ = c.shared_machine.time_slice_s * c.worker_speed;
    }
  }
  if (gpus_per_node_ == 1) {
    for (int w = 0; w < n; ++w) {
      sg4::Host* host = create_worker(zone, w);
      connect(host->get_netpoint(), nullptr, host->get_name(), c.nic_bandwidth, w);
    }
  } else {
    for (int k = 0; k < n / gpus_per_node_; ++k) {
      auto [node, gateway] = create_node(zone, k);
      connect(node->get_netpoint(), gateway, node->get_name(),
              c.gpu_node.nics_per_node * c.nic_bandwidth, -1);
    }
  }
  for (int p = 0; p < c.ps_shards; ++p) {
    auto [point, gateway] = create_server(zone, p);
    connect(point, gateway, servers_.back()->get_name(), c.nic_bandwidth, -1);
  }
  zone->seal();
}

// Leaves 0 to nodes - 1 are the worker nodes, the next ps_shards the server hosts, the rest
// (up to a full leaf switch, torus or dragonfly) routers nobody uses; every link has the
// node's NIC bandwidth (nics_per_node x nic_bandwidth) and the NIC's latency.
void Cluster::build_topology() {
  const ClusterSpec& c = spec_.cluster;
  const int nodes = spec_.training.num_workers / gpus_per_node_;
  const auto leaves = static_cast<unsigned>(nodes + c.ps_shards);
  auto leaf = [this, nodes](sg4::NetZone* zone, const std::vector<unsigned long>&,
                            unsigned long id) -> std::pair<NetPoint*, NetPoint*> {
    const auto k = static_cast<int>(id);
    if (k < nodes) {
      if (gpus_per_node_ == 1) return {create_worker(zone, k)->get_netpoint(), nullptr};
      auto [node, gateway] = create_node(zone, k);
      return {node->get_netpoint(), gateway};
    }
    if (k < nodes + spec_.cluster.ps_shards)
      return create_server(zone, k - nodes);
    return {zone->create_router("unused-leaf-" + std::to_string(k)), nullptr};
  };
  const sg4::ClusterCallbacks callbacks(leaf);
  const double bandwidth = c.gpu_node.nics_per_node * c.nic_bandwidth;
  const auto sharing = sg4::Link::SharingPolicy::SPLITDUPLEX;
  sg4::NetZone* zone = nullptr;
  if (c.topology == Topology::kFatTree) {
    // Two levels; a leaf switch has nodes_per_switch leaves down and a spine switch every
    // leaf switch; a leaf has one switch up and a leaf switch nodes_per_switch /
    // oversubscription spines.
    const auto per_switch = static_cast<unsigned>(c.fat_tree.nodes_per_switch);
    const unsigned switches = (leaves + per_switch - 1) / per_switch;
    const unsigned spines = per_switch / static_cast<unsigned>(c.fat_tree.oversubscription);
    const sg4::FatTreeParams params(2, {per_switch, switches}, {1, spines}, {1, 1});
    zone = sg4::create_fatTree_zone("cluster", nullptr, params, callbacks, bandwidth,
                                    c.nic_latency, sharing);
  } else if (c.topology == Topology::kTorus) {
    // A dimension of size 1 adds no neighbour; SimGrid names its link after the point alone, so
    // a second one would declare that link twice. They are left out.
    std::vector<unsigned long> dimensions;
    for (int d : c.torus.dimensions)
      if (d > 1) dimensions.push_back(static_cast<unsigned long>(d));
    if (dimensions.empty()) dimensions = {leaves};
    zone = sg4::create_torus_zone("cluster", nullptr, dimensions, callbacks, bandwidth,
                                  c.nic_latency, sharing);
  } else {
    auto level = [](const std::vector<int>& v) {
      return std::pair{static_cast<unsigned>(v[0]), static_cast<unsigned>(v[1])};
    };
    const sg4::DragonflyParams params(level(c.dragonfly.groups), level(c.dragonfly.chassis),
                                      level(c.dragonfly.routers),
                                      static_cast<unsigned>(c.dragonfly.nodes_per_router));
    zone = sg4::create_dragonfly_zone("cluster", nullptr, params, callbacks, bandwidth,
                                      c.nic_latency, sharing);
  }
  zone->seal();
}

void Cluster::load_xml() {
  const ClusterSpec& c = spec_.cluster;
  const std::string& file = c.platform_xml_file.empty() ? c.platform_xml : c.platform_xml_file;
  check_platform_xml_file(file);  // a missing file, a folder, or numbers SimGrid dies of
  std::fflush(stderr);
  std::snprintf(loading.file, sizeof loading.file, "%s", file.c_str());
  std::error_code ec;
  std::string captured_name =
      (std::filesystem::temp_directory_path(ec) / "gbasim-platform-XXXXXX").string();
  loading.captured = ::mkstemp(captured_name.data());
  if (loading.captured >= 0) {
    ::unlink(captured_name.c_str());
    loading.saved_stderr = ::dup(STDERR_FILENO);
    ::dup2(loading.captured, STDERR_FILENO);
  }
  struct sigaction abort_action {}, before {};
  abort_action.sa_handler = platform_abort;
  ::sigaction(SIGABRT, &abort_action, &before);
  auto restore = [&] {
    ::sigaction(SIGABRT, &before, nullptr);
    if (loading.captured < 0) return;
    std::fflush(stderr);
    ::dup2(loading.saved_stderr, STDERR_FILENO);
    // What SimGrid said without stopping (warnings) is passed on.
    char text[4096];
    ::lseek(loading.captured, 0, SEEK_SET);
    for (ssize_t n; (n = ::read(loading.captured, text, sizeof text)) > 0;)
      (void)!::write(STDERR_FILENO, text, static_cast<size_t>(n));
    ::close(loading.captured);
    ::close(loading.saved_stderr);
    loading.captured = loading.saved_stderr = -1;
  };
  try {
    sg4::Engine::get_instance()->load_platform(file);
  } catch (const std::exception& e) {
    restore();
    throw InputError(file + ": not a SimGrid platform SimGrid can read (" + e.what() + ")");
  }
  restore();
  auto host = [&](const std::string& name, const std::string& key) {
    sg4::Host* h = sg4::Host::by_name_or_null(name);
    if (h == nullptr) throw InputError(file, key, "names host '" + name + "', which the file lacks");
    return h;
  };
  for (size_t w = 0; w < workers_.size(); ++w) {
    WorkerHost& s = workers_[w];
    s.host = host(c.worker_hosts[w], "cluster.roles.workers[" + std::to_string(w) + "]");
    s.persistent = persistent_[w];
    s.flops_factor = persistent_[w];
    s.speed = s.host->get_speed() / persistent_[w];
  }
  for (size_t p = 0; p < c.server_hosts.size(); ++p)
    servers_.push_back(host(c.server_hosts[p], "cluster.roles.servers[" + std::to_string(p) + "]"));
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
