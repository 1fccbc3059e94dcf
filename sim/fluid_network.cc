#include "sim/fluid_network.h"

#include <xbt/config.hpp>

#include <algorithm>
#include <cmath>
#include <limits>

#include "base/error.h"
#include "sim/network.h"

namespace gbasim {

using namespace fluid;

FluidNetwork::FluidNetwork(sg4::Host* home, bool exact) : home_(home), exact_(exact) {
  semaphores_.push_back(sg4::Semaphore::create(0));
  woken_.push_back(false);
  outstanding_.push_back(0);
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
  const int index = it->second;  // `it` does not outlive the twin's insertion below
  if (added) {
    Link l;
    l.link = link;
    l.capacity = link->get_bandwidth();
    l.updated = sg4::Engine::get_clock();
    links_.push_back(std::move(l));
    // SimGrid names a split-duplex link's two directions NAME_UP and NAME_DOWN.
    const std::string& name = link->get_name();
    const auto ends = [&](const std::string& tail) {
      return name.size() > tail.size() &&
             name.compare(name.size() - tail.size(), tail.size(), tail) == 0;
    };
    std::string other;
    if (ends("_UP")) other = name.substr(0, name.size() - 3) + "_DOWN";
    if (ends("_DOWN")) other = name.substr(0, name.size() - 5) + "_UP";
    // One map of the platform's links by name: SimGrid's own lookup searches every zone.
    if (link_by_name_.empty())
      for (sg4::Link* k : sg4::Engine::get_instance()->get_all_links())
        link_by_name_[k->get_name()] = k;
    const auto found = other.empty() ? link_by_name_.end() : link_by_name_.find(other);
    sg4::Link* sibling = found == link_by_name_.end() ? nullptr : found->second;
    if (crosstraffic_ && sibling != nullptr &&
        sibling->get_sharing_policy() != sg4::Link::SharingPolicy::FATPIPE) {
      const int twin = link_index(sibling);
      links_[index].twin = twin;
      links_[twin].twin = index;
    }
  }
  return index;
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
  std::vector<int> hops;
  for (sg4::Link* link : links) {
    const auto policy = link->get_sharing_policy();
    if (policy == sg4::Link::SharingPolicy::WIFI || policy == sg4::Link::SharingPolicy::NONLINEAR)
      throw InputError("link '" + link->get_name() +
                       "': the fluid network model (cluster.network_solver) takes shared, "
                       "split-duplex and fat-pipe links only");
    if (smallest < 0.0 || link->get_bandwidth() < smallest) smallest = link->get_bandwidth();
    s_terms += weight_s_ / link->get_bandwidth();
    if (policy == sg4::Link::SharingPolicy::FATPIPE) continue;
    hops.push_back(link_index(link));
    ++links_[hops.back()].routes;
  }
  r.forward_count = static_cast<int16_t>(hops.size());
  if (crosstraffic_) {
    std::vector<sg4::Link*> back;
    dst->route_to(src, back, nullptr);
    for (sg4::Link* link : back)
      if (link->get_sharing_policy() != sg4::Link::SharingPolicy::FATPIPE)
        hops.push_back(link_index(link));
  }
  r.back_count = static_cast<int16_t>(hops.size() - r.forward_count);
  if (hops.size() <= kInline)
    std::copy(hops.begin(), hops.end(), r.inline_hops.begin());
  else
    r.spill_hops = std::move(hops);
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
    books_.emplace_back();
  } else {
    f = free_flows_.back();
    free_flows_.pop_back();
  }
  const Route& r = route(src, dst);
  // A slot keeps its vectors' room, so that a flow costs no allocation once warm; its
  // generation goes on, so that an old heap entry of this slot is never taken.
  FlowBook& book = books_[f];
  ++book.generation;
  assign_hops(f, r);
  Flow& fl = flows_[f];
  fl.rate = 0.0;
  fl.bottleneck = -1;
  book.size = std::max(0.0, bytes) / bandwidth_factor_;
  fl.weight = 1.0 / r.penalty;
  fl.cap = r.bound;
  book.activity = std::make_shared<FluidActivity>();
  book.box = box;
  book.payload = payload;
  auto activity = book.activity;
  const double now = sg4::Engine::get_clock();
  const double latency = r.latency * latency_factor_;
  if (latency > 0.0)
    schedule(now + latency, Kind::kLatencyPaid, f);
  else
    activate(f, now);
  if (std::min(events_.empty() ? kNever : events_.top().time, next_due()) < wake_at_) wake(0);
  return activity;
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
    outstanding_.push_back(0);
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
  if (a.waiter >= 0 && --outstanding_[a.waiter] <= 0) wake(a.waiter);
}

size_t FluidNetwork::wait(const std::vector<FluidActivity*>& activities, bool all) {
  // The waiter is woken once: when the last of its activities is done (all), or the first
  // (any); not at each, as an actor waiting on tens of flows would be.
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
  if (ready(index)) return index;
  const int slot = actor_slot();
  int pending = 0;
  for (FluidActivity* a : activities) {
    if (a->done) continue;
    a->waiter = slot;
    ++pending;
  }
  outstanding_[slot] = all ? pending : 1;
  while (true) {
    semaphores_[slot]->acquire();
    woken_[slot] = false;
    if (ready(index)) break;
  }
  for (FluidActivity* a : activities) a->waiter = -1;
  return index;
}

}  // namespace gbasim
