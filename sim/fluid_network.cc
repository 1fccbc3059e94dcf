#include "sim/fluid_network.h"

#include <xbt/config.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"
#include "sim/network.h"

namespace gbasim {
namespace {

// Events this close are one: SimGrid's clock resolves no finer, and a timeout shorter than
// this could wake the model's actor at the same instant forever.
constexpr double kTimeEpsilon = 1e-9;
// The share of a flow's rate that it takes on its reverse route with network/crosstraffic
// (SimGrid 3.32, NetworkCm02Model::comm_action_expand_constraints).
constexpr double kCrossTraffic = 0.05;
// Shares this close are equal.
constexpr double kTie = 1e-9;
// A flow's rate is taken again on the other links of its route when it has changed by more.
constexpr double kRateChange = 1e-3;
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

void FluidNetwork::schedule(double time, Kind kind, int flow) {
  events_.push(Event{time, seq_++, kind, flow});
}

bool FluidNetwork::earlier(int a, int b) const {
  return links_[a].due != links_[b].due ? links_[a].due < links_[b].due : a < b;
}

void FluidNetwork::place(int position, int l) {
  due_[position] = l;
  links_[l].heap_position = position;
}

void FluidNetwork::set_due(int l, double due) {
  Link& link = links_[l];
  if (link.heap_position < 0) {
    if (due == kNever) return;
    link.heap_position = static_cast<int>(due_.size());
    due_.push_back(l);
  } else if (due == kNever) {  // out of the heap: the last one takes its place
    const int position = link.heap_position;
    const int last = due_.back();
    due_.pop_back();
    link.heap_position = -1;
    link.due = kNever;
    if (last == l) return;
    place(position, last);
    l = last;
    due = links_[last].due;
  }
  links_[l].due = due;
  int position = links_[l].heap_position;
  while (position > 0 && earlier(l, due_[(position - 1) / 2])) {  // up
    place(position, due_[(position - 1) / 2]);
    position = (position - 1) / 2;
  }
  while (true) {  // down
    const int left = 2 * position + 1;
    if (left >= static_cast<int>(due_.size())) break;
    int child = left;
    if (left + 1 < static_cast<int>(due_.size()) && earlier(due_[left + 1], due_[left])) ++child;
    if (!earlier(due_[child], l)) break;
    place(position, due_[child]);
    position = child;
  }
  place(position, l);
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
  // A slot keeps its vectors' room, so that a flow costs no allocation once warm; its
  // generation goes on, so that an old heap entry of this slot is never taken.
  ++fl.generation;
  fl.hops.assign(r.links, r.back_links);
  fl.rate = 0.0;
  fl.bottleneck = -1;
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
  if (std::min(events_.empty() ? kNever : events_.top().time, next_due()) < wake_at_) wake(0);
  return activity;
}

void FluidNetwork::add_cap(Link& l, double cap) {
  for (auto& [value, count] : l.caps) {
    if (value == cap) {
      ++count;
      return;
    }
  }
  l.caps.emplace_back(cap, 1);
}

void FluidNetwork::remove_cap(Link& l, double cap) {
  for (size_t i = 0; i < l.caps.size(); ++i) {
    if (l.caps[i].first == cap && --l.caps[i].second == 0) {
      l.caps[i] = l.caps.back();
      l.caps.pop_back();
      return;
    }
  }
}

void FluidNetwork::advance(Link& l, double now) {
  l.virtual_time += l.level * (now - l.updated);
  l.updated = now;
}

bool FluidNetwork::stale(const Link& l, int index) const {
  const auto& [tag, f, generation] = l.tags.top();
  return flows_[f].generation != generation || flows_[f].bottleneck != index;
}

void FluidNetwork::touch(int l) {
  if (links_[l].dirty) return;
  links_[l].dirty = true;
  dirty_.push_back(l);
}

void FluidNetwork::flush(double now) {
  for (int l : dirty_)
    if (links_[l].dirty) relevel(l, now);
  dirty_.clear();
}

void FluidNetwork::relevel(int index, double now) {
  Link& l = links_[index];
  l.dirty = false;
  while (!l.tags.empty() && stale(l, index)) l.tags.pop();
  if (l.own == 0) {
    l.level = 0.0;
    set_due(index, kNever);
    return;
  }
  // The free capacity over the own flows' weights; never below the equal share of every
  // flow crossing the link (the through loads are rates when last looked at).
  double level = std::max((l.capacity - l.through) / l.own_weight, share(l));
  for (const auto& [cap, count] : l.caps) level = std::min(level, cap);
  l.level = level;
  const double ahead = std::max(0.0, std::get<0>(l.tags.top()) - l.virtual_time);
  set_due(index, level > 0.0 ? now + ahead / level : kNever);
}

void FluidNetwork::Hops::assign(const std::vector<int>& forward, const std::vector<int>& back) {
  forward_count_ = static_cast<int>(forward.size());
  back_count_ = static_cast<int>(back.size());
  int* out = links_.data();
  if (total() > kInline) {
    spill_links_.resize(total());
    spill_slots_.resize(total());
    out = spill_links_.data();
  }
  std::copy(forward.begin(), forward.end(), out);
  std::copy(back.begin(), back.end(), out + forward_count_);
}

double FluidNetwork::coefficient(const Flow& fl, int l) {
  const auto forward = fl.hops.forward();
  return std::find(forward.begin(), forward.end(), l) != forward.end() ? 1.0 : kCrossTraffic;
}

int FluidNetwork::pick_bottleneck(const Flow& fl) const {
  int best = -1;
  double lowest = kNever;
  // A link of the reverse route can be the bottleneck too: SimGrid's max-min gives every flow
  // on a link the same share of it per unit of weight, whatever the flow consumes of it.
  const int* hops = fl.hops.links();
  for (int i = 0; i < fl.hops.total(); ++i) {
    const int l = hops[i];
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
  fl.coefficient = coefficient(fl, b);
  l.own_weight += fl.coefficient * fl.weight;
  ++l.own;
  add_cap(l, fl.cap / fl.weight);
  fl.bottleneck = b;
  ++fl.generation;
  fl.tag = l.virtual_time + left;
  l.tags.push({fl.tag, f, fl.generation});
}

void FluidNetwork::set_rate(int f, double now) {
  Flow& fl = flows_[f];
  if (links_[fl.bottleneck].dirty) relevel(fl.bottleneck, now);
  const double rate = std::min(links_[fl.bottleneck].level * fl.weight, fl.cap);
  const double change = rate - fl.rate;
  if (std::abs(change) <= kRateChange * fl.rate) return;
  fl.rate = rate;
  for (int l : fl.hops.forward()) {
    if (l == fl.bottleneck) continue;
    advance(links_[l], now);
    links_[l].through += change;
    touch(l);
  }
  for (int l : fl.hops.back()) {
    if (l == fl.bottleneck) continue;
    advance(links_[l], now);
    links_[l].through += kCrossTraffic * change;
    touch(l);
  }
}

void FluidNetwork::rebalance(int index, double now) {
  // Three a change: every change of a link's flows looks again at three of its flows, so
  // that the flows of a busy link are each looked at again several times in their life.
  // Fewer are faster and further from SimGrid's model, more closer and slower
  // (results/network-solvers/ has the agreement at three).
  constexpr int kLooks = 3;
  for (int k = 0; k < kLooks; ++k) {
    Link& l = links_[index];
    const size_t crossing = l.members.size() + l.back_members.size();
    if (crossing == 0) return;
    if (l.cursor >= crossing) l.cursor = 0;
    const size_t at = l.cursor++;
    const int f = at < l.members.size() ? l.members[at] : l.back_members[at - l.members.size()];
    Flow& fl = flows_[f];
    const int from = fl.bottleneck;
    // Only this link's share changed for it: a flow it serves may now be better served
    // elsewhere; another flow, here.
    const int to = from == index                                      ? pick_bottleneck(fl)
                   : share(l) < share(links_[from]) * (1.0 - kTie) ? index
                                                                    : from;
    if (to != from) {
      Link& a = links_[from];
      advance(a, now);
      const double left = std::max(0.0, fl.tag - a.virtual_time);
      a.own_weight -= fl.coefficient * fl.weight;
      if (--a.own == 0) a.own_weight = 0.0;
      remove_cap(a, fl.cap / fl.weight);
      a.through += fl.coefficient * fl.rate;
      advance(links_[to], now);
      links_[to].through -= coefficient(fl, to) * fl.rate;
      serve_at(f, to, left, now);
      touch(from);
      touch(to);
    }
    set_rate(f, now);
  }
}

void FluidNetwork::leave(int l, bool back, int slot) {
  std::vector<int>& members = back ? links_[l].back_members : links_[l].members;
  const int moved = members.back();
  members[slot] = moved;
  members.pop_back();
  Flow& m = flows_[moved];
  const int* hops = m.hops.links();
  int* slots = m.hops.slots();
  for (int i = back ? m.hops.forward_count() : 0;
       i < (back ? m.hops.total() : m.hops.forward_count()); ++i)
    if (hops[i] == l) slots[i] = slot;
}

void FluidNetwork::activate(int f, double now) {
  Flow& fl = flows_[f];
  if (fl.size <= 0.0) return finish(f, now);
  if (fl.hops.forward().empty()) {  // fat pipes alone: the flow's bound is its rate
    if (fl.cap <= 0.0) return finish(f, now);
    schedule(now + fl.size / fl.cap, Kind::kFixedDone, f);
    return;
  }
  const int* hops = fl.hops.links();
  int* slots = fl.hops.slots();
  for (int i = 0; i < fl.hops.total(); ++i) {
    Link& l = links_[hops[i]];
    const bool forward = i < fl.hops.forward_count();
    advance(l, now);
    l.all_weight += (forward ? 1.0 : kCrossTraffic) * fl.weight;
    std::vector<int>& members = forward ? l.members : l.back_members;
    slots[i] = static_cast<int>(members.size());
    members.push_back(f);
  }
  serve_at(f, pick_bottleneck(fl), fl.size / fl.weight, now);
  for (int i = 0; i < fl.hops.total(); ++i) touch(hops[i]);
  set_rate(f, now);
  for (int i = 0; i < fl.hops.total(); ++i) rebalance(hops[i], now);
  flush(now);
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
    b.own_weight -= fl.coefficient * fl.weight;
    if (--b.own == 0) b.own_weight = 0.0;
    remove_cap(b, fl.cap / fl.weight);
    const int* hops = fl.hops.links();
    for (int i = 0; i < fl.hops.total(); ++i) {
      const int l = hops[i];
      const double c = i < fl.hops.forward_count() ? 1.0 : kCrossTraffic;
      leave(l, i >= fl.hops.forward_count(), fl.hops.slot(i));
      drop(links_[l], c * fl.weight, l == fl.bottleneck ? 0.0 : c * fl.rate);
    }
    fl.bottleneck = -1;
    for (int i = 0; i < fl.hops.total(); ++i) touch(hops[i]);
    for (int i = 0; i < fl.hops.total(); ++i) rebalance(hops[i], now);
    flush(now);
  }
  ++fl.generation;
  std::shared_ptr<FluidActivity> activity = std::move(fl.activity);
  Box* box = fl.box;
  void* payload = fl.payload;
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
  touch(it->second);
  rebalance(it->second, now);  // its flows may be better served elsewhere now, or others here
  flush(now);
  if (next_due() < wake_at_) wake(0);
}

void FluidNetwork::take_due(int index, double now) {
  Link& l = links_[index];
  advance(l, now);
  const double slack = l.level * kTimeEpsilon;
  // The first flow's time has come (within kTimeEpsilon): it ends even where rounding leaves its
  // tag a hair above the link's virtual time, so that the clock always moves on; the next ones
  // end if their tags are reached too.
  bool first = true;
  while (!l.tags.empty()) {
    if (stale(l, index)) {
      l.tags.pop();
      continue;
    }
    if (!first && std::get<0>(l.tags.top()) > l.virtual_time + slack) break;
    const int f = std::get<1>(l.tags.top());
    l.tags.pop();
    finish(f, now);
    first = false;
  }
  if (first) touch(index);
  flush(now);
}

void FluidNetwork::serve() {
  slot_of_actor_[sg4::this_actor::get_pid()] = 0;
  while (true) {
    const double now = sg4::Engine::get_clock();
    while (true) {
      const double event = events_.empty() ? kNever : events_.top().time;
      const double due = next_due();
      if (std::min(event, due) > now + kTimeEpsilon) break;
      if (event <= due) {
        const Event e = events_.top();
        events_.pop();
        if (e.kind == Kind::kLatencyPaid)
          activate(e.flow, now);
        else
          finish(e.flow, now);
      } else {
        take_due(due_[0], now);
      }
    }
    wake_at_ = std::min(events_.empty() ? kNever : events_.top().time, next_due());
    woken_[0] = false;
    if (wake_at_ == kNever)
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
