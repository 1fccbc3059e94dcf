#include "sim/fluid_network.h"

#include <xbt/config.hpp>

#include <algorithm>
#include <limits>

#include "base/error.h"
#include "sim/network.h"

namespace gbasim {
namespace {

constexpr double kInfinity = std::numeric_limits<double>::infinity();
// Events this close are one: SimGrid's clock resolves no finer, and a timeout shorter than
// this could wake the model's actor at the same instant forever.
constexpr double kTimeEpsilon = 1e-9;
// The share of a flow's rate that it takes on its reverse route with network/crosstraffic
// (SimGrid 3.32, NetworkCm02Model::comm_action_expand_constraints).
constexpr double kCrossTraffic = 0.05;
// Routes kept for reuse, at most: beyond, a route is looked up for each flow.
constexpr size_t kRoutesCached = 1 << 20;

}  // namespace

FluidNetwork::FluidNetwork(sg4::Host* home) : home_(home) {
  semaphores_.push_back(sg4::Semaphore::create(0));
  woken_.push_back(false);
  sg4::Link::on_bandwidth_change_cb([this](const sg4::Link& link) { on_bandwidth_change(link); });
  sg4::Actor::create("fluid-network", home_, [this] { serve(); })->daemonize();
}

void FluidNetwork::read_config() {
  // The network model's own factors, as it applies them to each communication
  // (NetworkCm02Model::communicate in SimGrid 3.32).
  latency_factor_ = simgrid::config::get_value<double>("network/latency-factor");
  bandwidth_factor_ = simgrid::config::get_value<double>("network/bandwidth-factor");
  weight_s_ = simgrid::config::get_value<double>("network/weight-S");
  tcp_gamma_ = simgrid::config::get_value<double>("network/TCP-gamma");
  crosstraffic_ = simgrid::config::get_value<bool>("network/crosstraffic");
  configured_ = true;
}

int FluidNetwork::link_index(sg4::Link* link) {
  const auto [it, added] = link_of_.try_emplace(link, static_cast<int>(links_.size()));
  if (added) {
    Link l;
    l.link = link;
    l.capacity = link->get_bandwidth();
    l.updated = sg4::Engine::get_clock();
    links_.push_back(std::move(l));
  }
  return it->second;
}

const FluidNetwork::Route& FluidNetwork::route(sg4::Host* src, sg4::Host* dst) {
  const std::pair<const sg4::Host*, const sg4::Host*> key{src, dst};
  if (const auto it = routes_.find(key); it != routes_.end()) return it->second;
  Route r;
  std::vector<sg4::Link*> links;
  src->route_to(dst, links, &r.latency);
  if (links.empty() && r.latency <= 0.0 && src != dst) {
    throw InputError("the platform has no route from host '" + src->get_name() + "' to host '" +
                     dst->get_name() + "'");
  }
  double smallest = -1.0, s_terms = 0.0;
  for (sg4::Link* link : links) {
    const auto policy = link->get_sharing_policy();
    if (policy == sg4::Link::SharingPolicy::WIFI || policy == sg4::Link::SharingPolicy::NONLINEAR)
      throw InputError("link '" + link->get_name() +
                       "': the fluid network model (cluster.network_solver) takes shared, "
                       "split-duplex and fat-pipe links only");
    if (smallest < 0.0 || link->get_bandwidth() < smallest) smallest = link->get_bandwidth();
    s_terms += weight_s_ / link->get_bandwidth();
    if (policy != sg4::Link::SharingPolicy::FATPIPE) r.links.push_back(link_index(link));
    if (policy != sg4::Link::SharingPolicy::FATPIPE) ++links_[r.links.back()].routes;
  }
  if (crosstraffic_) {
    std::vector<sg4::Link*> back;
    dst->route_to(src, back, nullptr);
    for (sg4::Link* link : back)
      if (link->get_sharing_policy() != sg4::Link::SharingPolicy::FATPIPE)
        r.back_links.push_back(link_index(link));
  }
  // A flow without latency keeps SimGrid's initial penalty of 1.
  r.penalty = r.latency > 0.0 ? r.latency + s_terms : 1.0;
  r.bound = smallest;
  if (r.latency > 0.0) {
    const double window = tcp_gamma_ / (2.0 * r.latency);
    r.bound = r.bound < 0.0 ? window : std::min(r.bound, window);
  }
  if (routes_.size() >= kRoutesCached) {
    spare_route_ = std::move(r);
    return spare_route_;
  }
  return routes_.emplace(key, std::move(r)).first->second;
}

void FluidNetwork::schedule(double time, Kind kind, int index, uint64_t version) {
  events_.push(Event{time, seq_++, kind, index, version});
}

std::shared_ptr<FluidActivity> FluidNetwork::done_now() const {
  auto a = std::make_shared<FluidActivity>();
  a->done = true;
  return a;
}

std::shared_ptr<FluidActivity> FluidNetwork::start(sg4::Host* src, sg4::Host* dst, double bytes,
                                                   Box* box, void* payload) {
  if (!configured_) read_config();
  int f;
  if (free_flows_.empty()) {
    f = static_cast<int>(flows_.size());
    flows_.emplace_back();
  } else {
    f = free_flows_.back();
    free_flows_.pop_back();
  }
  const Route& r = route(src, dst);
  Flow& fl = flows_[f];
  const uint64_t generation = fl.generation;
  fl = Flow{};
  fl.generation = generation + 1;  // so that an old heap entry of this slot is never taken
  fl.route = r;
  fl.size = std::max(0.0, bytes) / bandwidth_factor_;
  fl.weight = 1.0 / r.penalty;
  fl.cap = r.bound;
  fl.activity = std::make_shared<FluidActivity>();
  fl.box = box;
  fl.payload = payload;
  auto activity = fl.activity;
  const double now = sg4::Engine::get_clock();
  const double latency = r.latency * latency_factor_;
  if (latency > 0.0)
    schedule(now + latency, Kind::kLatencyPaid, f);
  else
    activate(f, now);
  if (!events_.empty() && events_.top().time < wake_at_) wake(0);
  return activity;
}

void FluidNetwork::advance(Link& l, double now) {
  l.virtual_time += l.level * (now - l.updated);
  l.updated = now;
}

bool FluidNetwork::stale(const Link& l, int index) const {
  const auto& [tag, f, generation] = l.tags.top();
  return flows_[f].generation != generation || flows_[f].bottleneck != index;
}

void FluidNetwork::relevel(int index, double now) {
  Link& l = links_[index];
  ++l.version;
  while (!l.tags.empty() && stale(l, index)) l.tags.pop();
  if (l.own == 0) {
    l.level = 0.0;
    return;
  }
  // The free capacity over the own flows' weights; never below the equal share of every
  // flow crossing the link (the through loads are rates when last looked at).
  double level = std::max((l.capacity - l.through) / l.own_weight, share(l));
  if (!l.caps.empty()) level = std::min(level, *l.caps.begin());
  l.level = level;
  const double ahead = std::max(0.0, std::get<0>(l.tags.top()) - l.virtual_time);
  schedule(level > 0.0 ? now + ahead / level : kInfinity, Kind::kLinkDue, index, l.version);
}

int FluidNetwork::pick_bottleneck(const Flow& fl) const {
  constexpr double kTie = 1e-9;
  int best = -1;
  double lowest = kInfinity;
  for (int l : fl.route.links) {
    const double s = share(links_[l]);
    // Among equal shares, the link on more routes (a server's NIC rather than a worker's):
    // likelier to be the busier from now on.
    if (best < 0 || s < lowest * (1.0 - kTie) ||
        (s <= lowest * (1.0 + kTie) && links_[l].routes > links_[best].routes)) {
      best = l;
      lowest = s;
    }
  }
  // A flow moves only to a link clearly busier than its own.
  if (fl.bottleneck >= 0 && share(links_[fl.bottleneck]) <= lowest * (1.0 + kTie))
    return fl.bottleneck;
  return best;
}

void FluidNetwork::serve_at(int f, int b, double left, double now) {
  Flow& fl = flows_[f];
  Link& l = links_[b];
  advance(l, now);
  l.own_weight += fl.weight;
  ++l.own;
  fl.cap_entry = l.caps.insert(fl.cap / fl.weight);
  fl.bottleneck = b;
  ++fl.generation;
  fl.tag = l.virtual_time + left;
  l.tags.push({fl.tag, f, fl.generation});
}

void FluidNetwork::set_rate(int f, double now) {
  Flow& fl = flows_[f];
  const double rate = std::min(links_[fl.bottleneck].level * fl.weight, fl.cap);
  const double change = rate - fl.rate;
  fl.rate = rate;
  if (change == 0.0) return;
  for (int l : fl.route.links) {
    if (l == fl.bottleneck) continue;
    advance(links_[l], now);
    links_[l].through += change;
    relevel(l, now);
  }
  for (int l : fl.route.back_links) {
    advance(links_[l], now);
    links_[l].through += kCrossTraffic * change;
    relevel(l, now);
  }
}

void FluidNetwork::rebalance(int index, double now) {
  // Two a change: every change of a link's flows looks again at two of them, so that the
  // members of a link that keeps changing are all looked at again as often as flows come.
  constexpr int kLooks = 2;
  for (int k = 0; k < kLooks; ++k) {
    Link& l = links_[index];
    if (l.members.empty()) return;
    if (l.cursor >= l.members.size()) l.cursor = 0;
    const int f = l.members[l.cursor++];
    Flow& fl = flows_[f];
    const int from = fl.bottleneck;
    const int to = pick_bottleneck(fl);
    if (to != from) {
      Link& a = links_[from];
      advance(a, now);
      const double left = std::max(0.0, fl.tag - a.virtual_time);
      a.own_weight -= fl.weight;
      if (--a.own == 0) a.own_weight = 0.0;
      a.caps.erase(fl.cap_entry);
      a.through += fl.rate;
      advance(links_[to], now);
      links_[to].through -= fl.rate;
      serve_at(f, to, left, now);
      relevel(from, now);
      relevel(to, now);
    }
    set_rate(f, now);
  }
}

void FluidNetwork::join(std::vector<int>& members, std::vector<int>& slots, size_t i, int f) {
  slots[i] = static_cast<int>(members.size());
  members.push_back(f);
}

void FluidNetwork::leave(int l, bool back, int slot) {
  std::vector<int>& members = back ? links_[l].back_members : links_[l].members;
  const int moved = members.back();
  members[slot] = moved;
  members.pop_back();
  Flow& m = flows_[moved];
  const std::vector<int>& route_links = back ? m.route.back_links : m.route.links;
  std::vector<int>& slots = back ? m.back_slot : m.slot;
  for (size_t i = 0; i < route_links.size(); ++i)
    if (route_links[i] == l) slots[i] = slot;
}

void FluidNetwork::activate(int f, double now) {
  Flow& fl = flows_[f];
  if (fl.size <= 0.0) return finish(f, now);
  if (fl.route.links.empty()) {  // fat pipes alone: the flow's bound is its rate
    if (fl.cap <= 0.0) return finish(f, now);
    schedule(now + fl.size / fl.cap, Kind::kFixedDone, f);
    return;
  }
  fl.slot.resize(fl.route.links.size());
  fl.back_slot.resize(fl.route.back_links.size());
  for (size_t i = 0; i < fl.route.links.size(); ++i) {
    Link& l = links_[fl.route.links[i]];
    advance(l, now);
    l.all_weight += fl.weight;
    join(l.members, fl.slot, i, f);
  }
  for (size_t i = 0; i < fl.route.back_links.size(); ++i) {
    Link& l = links_[fl.route.back_links[i]];
    advance(l, now);
    l.all_weight += kCrossTraffic * fl.weight;
    join(l.back_members, fl.back_slot, i, f);
  }
  serve_at(f, pick_bottleneck(fl), fl.size / fl.weight, now);
  for (int l : fl.route.links) relevel(l, now);
  for (int l : fl.route.back_links) relevel(l, now);
  set_rate(f, now);
  for (int l : fl.route.links) rebalance(l, now);
}

void FluidNetwork::finish(int f, double now) {
  Flow& fl = flows_[f];
  if (fl.bottleneck >= 0) {
    // Its load leaves every link; a link without others' flows left has none.
    auto drop = [&](Link& l, double weight, double through) {
      advance(l, now);
      l.all_weight -= weight;
      l.through -= through;
      if (l.members.size() + l.back_members.size() == static_cast<size_t>(l.own))
        l.through = 0.0;
      if (l.members.empty() && l.back_members.empty()) l.all_weight = 0.0;
    };
    Link& b = links_[fl.bottleneck];
    b.own_weight -= fl.weight;
    if (--b.own == 0) b.own_weight = 0.0;
    b.caps.erase(fl.cap_entry);
    for (size_t i = 0; i < fl.route.links.size(); ++i) {
      const int l = fl.route.links[i];
      leave(l, false, fl.slot[i]);
      drop(links_[l], fl.weight, l == fl.bottleneck ? 0.0 : fl.rate);
    }
    for (size_t i = 0; i < fl.route.back_links.size(); ++i) {
      const int l = fl.route.back_links[i];
      leave(l, true, fl.back_slot[i]);
      drop(links_[l], kCrossTraffic * fl.weight, kCrossTraffic * fl.rate);
    }
    fl.bottleneck = -1;
    for (int l : fl.route.links) relevel(l, now);
    for (int l : fl.route.back_links) relevel(l, now);
    for (int l : fl.route.links) rebalance(l, now);
  }
  ++fl.generation;
  std::shared_ptr<FluidActivity> activity = std::move(fl.activity);
  Box* box = fl.box;
  void* payload = fl.payload;
  fl.route = Route{};
  free_flows_.push_back(f);
  if (box != nullptr) box->deliver(payload);
  complete(*activity);
}

void FluidNetwork::on_bandwidth_change(const sg4::Link& link) {
  const auto it = link_of_.find(&link);
  if (it == link_of_.end()) return;
  const double now = sg4::Engine::get_clock();
  Link& l = links_[it->second];
  advance(l, now);
  l.capacity = link.get_bandwidth();
  relevel(it->second, now);
  if (!events_.empty() && events_.top().time < wake_at_) wake(0);
}

void FluidNetwork::serve() {
  slot_of_actor_[sg4::this_actor::get_pid()] = 0;
  while (true) {
    const double now = sg4::Engine::get_clock();
    while (!events_.empty() && events_.top().time <= now + kTimeEpsilon) {
      const Event e = events_.top();
      events_.pop();
      switch (e.kind) {
        case Kind::kLatencyPaid: activate(e.index, now); break;
        case Kind::kFixedDone: finish(e.index, now); break;
        case Kind::kLinkDue: {
          Link& l = links_[e.index];
          if (e.version != l.version) break;  // superseded by a later change
          advance(l, now);
          const double slack = l.level * kTimeEpsilon;
          bool any = false;
          while (!l.tags.empty() && std::get<0>(l.tags.top()) <= l.virtual_time + slack) {
            const bool gone = stale(l, e.index);
            const int f = std::get<1>(l.tags.top());
            l.tags.pop();
            if (gone) continue;
            finish(f, now);
            any = true;
          }
          if (!any) relevel(e.index, now);
          break;
        }
      }
    }
    // Superseded link events are dropped here, so that they wake nobody.
    while (!events_.empty() && events_.top().kind == Kind::kLinkDue &&
           events_.top().version != links_[events_.top().index].version)
      events_.pop();
    wake_at_ = events_.empty() ? kInfinity : events_.top().time;
    woken_[0] = false;
    if (wake_at_ == kInfinity)
      semaphores_[0]->acquire();
    else
      semaphores_[0]->acquire_timeout(std::max(0.0, wake_at_ - sg4::Engine::get_clock()));
  }
}

int FluidNetwork::actor_slot() {
  const long pid = sg4::this_actor::get_pid();
  const auto [it, added] = slot_of_actor_.try_emplace(pid, static_cast<int>(semaphores_.size()));
  if (added) {
    semaphores_.push_back(sg4::Semaphore::create(0));
    woken_.push_back(false);
  }
  return it->second;
}

void FluidNetwork::wake(int slot) {
  if (woken_[slot]) return;
  woken_[slot] = true;
  semaphores_[slot]->release();
}

void FluidNetwork::complete(FluidActivity& a) {
  a.done = true;
  if (a.waiter >= 0) wake(a.waiter);
}

size_t FluidNetwork::wait(const std::vector<FluidActivity*>& activities, bool all) {
  const int slot = actor_slot();
  auto ready = [&](size_t& index) {
    for (size_t i = 0; i < activities.size(); ++i) {
      if (activities[i]->done) {
        index = i;
        if (!all) return true;
      } else if (all) {
        return false;
      }
    }
    return all;
  };
  size_t index = 0;
  for (FluidActivity* a : activities) a->waiter = slot;
  while (!ready(index)) {
    semaphores_[slot]->acquire();
    woken_[slot] = false;
  }
  for (FluidActivity* a : activities) a->waiter = -1;
  return index;
}

}  // namespace gbasim
