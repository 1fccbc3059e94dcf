// The fluid model's sharing (sim/fluid_network.h): each link's flows served by processor
// sharing in virtual time, a flow at the rate of its most loaded link, rates taken again where
// a flow starts, ends or a link's bandwidth changes.
#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <tuple>

#include "sim/fluid_network.h"
#include "sim/network.h"

namespace gbasim {

using namespace fluid;

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
  return books_[f].generation != generation || flows_[f].bottleneck != index;
}

void FluidNetwork::touch(int l) {
  l = home(l);
  if (links_[l].dirty) return;
  links_[l].dirty = true;
  dirty_.push_back(l);
}

void FluidNetwork::flush(double now) {
  for (int l : dirty_)
    if (links_[l].dirty) relevel(l, now);
  dirty_.clear();
  // The exact solve every active / solves_per_turnover_ flow events: a few times in the life
  // of the flows in flight, at a cost per flow event that does not grow with them.
  if (++since_solve_ >= (exact_ ? 1 : std::max<int64_t>(1, active_ / solves_per_turnover_))) {
    since_solve_ = 0;
    solve_exactly(now);
  }
}

void FluidNetwork::solve_exactly(double now) {
  fill_progressively();
  const int64_t moved = apply_solve(now);
  // Where the looks kept the bottlenecks (fewer than 1 flow in 100 moved), solve half as
  // often; where they did not (more than 1 in 20), twice as often.
  const auto flows = static_cast<int64_t>(solve_flows_.size());
  if (100 * moved < flows)
    solves_per_turnover_ = std::max(kFewestSolvesPerTurnover, solves_per_turnover_ / 2);
  if (20 * moved > flows)
    solves_per_turnover_ = std::min(kSolvesPerTurnover, 2 * solves_per_turnover_);
}

void FluidNetwork::fill_progressively() {
  // Progressive filling, as SimGrid's max-min solver does it: the link of the lowest level
  // (free capacity over the weights of the flows not yet fixed) saturates first and fixes
  // every flow crossing it at that level; then the next one. Fixing a flow below a link's
  // level only raises that level, so a link's entry in the heap is a bound from below: a link
  // popped above it goes back in at its level.
  if (++solve_ == 0) {  // the counter went round: no flow is marked fixed in this solve
    std::fill(fixed_in_.begin(), fixed_in_.end(), 0);
    solve_ = 1;
  }
  const auto n = links_.size();
  if (remaining_.size() < n) {
    remaining_.resize(n);
    usage_.resize(n);
    solved_level_.resize(n);
    unfixed_.resize(n);
  }
  if (fixed_in_.size() < flows_.size()) fixed_in_.resize(flows_.size(), 0);
  solve_flows_.clear();
  solve_heap_.clear();
  // The links that flows cross: those listed since the last solve, less those left empty.
  size_t kept = 0;
  for (int l : solve_links_) {
    Link& x = links_[l];
    if (x.members.empty() && x.back_members.empty()) {
      x.listed = false;
      continue;
    }
    solve_links_[kept++] = l;
    remaining_[l] = x.capacity;
    usage_[l] = x.all_weight;
    unfixed_[l] = static_cast<int>(x.members.size() + x.back_members.size());
    solve_heap_.emplace_back(x.capacity / x.all_weight, l);
  }
  solve_links_.resize(kept);
  const auto later = std::greater<>();
  std::make_heap(solve_heap_.begin(), solve_heap_.end(), later);
  while (!solve_heap_.empty()) {
    std::pop_heap(solve_heap_.begin(), solve_heap_.end(), later);
    const auto [bound, l] = solve_heap_.back();
    solve_heap_.pop_back();
    if (unfixed_[l] == 0) continue;
    const double level = std::max(0.0, remaining_[l]) / usage_[l];
    if (level > bound * (1.0 + kTie)) {
      solve_heap_.emplace_back(level, l);
      std::push_heap(solve_heap_.begin(), solve_heap_.end(), later);
      continue;
    }
    solved_level_[l] = level;
    auto fix = [&](int f) {
      if (fixed_in_[f] == solve_) return;
      fixed_in_[f] = solve_;
      solve_flows_.emplace_back(f, l);
      const Flow& fl = flows_[f];
      const int* hops = this->hops(f);
      for (int i = 0; i < fl.total(); ++i) {
        const double c = i < fl.forward_count ? 1.0 : kCrossTraffic;
        remaining_[hops[i]] -= c * level * fl.weight;
        usage_[hops[i]] -= c * fl.weight;
        --unfixed_[hops[i]];
      }
    };
    for (const Member& m : links_[l].members) fix(m.flow);
    for (const Member& m : links_[l].back_members) fix(m.flow);
  }
}

int64_t FluidNetwork::apply_solve(double now) {
  // Each flow to the resource of the link that fixed it, at that link's level; the through
  // loads set again from the rates.
  for (int l : solve_links_) {
    advance(links_[l], now);
    links_[l].through = 0.0;
  }
  int64_t moved = 0;
  for (const auto& [f, at] : solve_flows_) {
    Flow& fl = flows_[f];
    fl.rate = std::min(solved_level_[at] * fl.weight, fl.cap);
    if (home(at) != fl.bottleneck) {
      ++moved;
      const double left = std::max(0.0, books_[f].tag - links_[fl.bottleneck].virtual_time);
      unserve(f, now);
      serve_at(f, home(at), left, now);
    }
    const int* hops = this->hops(f);
    for (int i = 0; i < fl.total(); ++i)
      if (home(hops[i]) != fl.bottleneck)
        links_[hops[i]].through += (i < fl.forward_count ? 1.0 : kCrossTraffic) * fl.rate;
  }
  for (int l : solve_links_) links_[home(l)].dirty = true;
  for (int l : solve_links_)
    if (links_[home(l)].dirty) relevel(home(l), now);
  return moved;
}

void FluidNetwork::relevel(int index, double now) {
  Link& l = links_[index];
  l.dirty = false;
  while (!l.tags.empty() && stale(l, index)) l.tags.pop();
  if (l.served == 0) {
    l.level = 0.0;
    set_due(index, kNever);
    return;
  }
  // On each link of the resource, the free capacity over the weights of the flows it serves;
  // never below the equal share of every flow crossing the link (the through loads are rates
  // when last looked at). The lower of the two directions binds.
  double level = kNever;
  each_direction(index, [&](int d) { level = std::min(level, direction_level(links_[d])); });
  for (const auto& [cap, count] : l.caps) level = std::min(level, cap);
  l.level = level;
  const double ahead = std::max(0.0, std::get<0>(l.tags.top()) - l.virtual_time);
  set_due(index, level > 0.0 ? now + ahead / level : kNever);
}

void FluidNetwork::assign_hops(int f, const Route& r) {
  Flow& fl = flows_[f];
  fl.forward_count = r.forward_count;
  fl.back_count = r.back_count;
  if (fl.total() <= kInline) {
    fl.inline_hops = r.inline_hops;
  } else {
    books_[f].spill_hops = r.spill_hops;
    books_[f].spill_slots.resize(fl.total() - kInline);
  }
}

double FluidNetwork::coefficient(int f, int l) const {
  const auto on = forward(f);
  if (std::find(on.begin(), on.end(), l) != on.end()) return 1.0;
  const auto reverse = back(f);
  return std::find(reverse.begin(), reverse.end(), l) != reverse.end() ? kCrossTraffic : 0.0;
}

double FluidNetwork::direction_level(const Link& x, double rate, double weight,
                                     bool forward) const {
  // A link binds where a flow its resource serves crosses it on its route; one taking only 5%
  // of it (cross-traffic) is left to its other direction, but for the exact mode.
  if (x.own_forward == 0 && !forward && !(exact_ && x.own > 0)) return kNever;
  const double total = x.own_weight + weight;
  return total > 0.0 ? std::max((x.capacity - x.through + rate) / total, share(x)) : kNever;
}

double FluidNetwork::level_with(int f, int r) const {
  const Flow& fl = flows_[f];
  const bool served = fl.bottleneck == r;
  double level = kNever;
  for (int d : {r, links_[r].twin}) {
    if (d < 0) continue;
    const double c = served ? 0.0 : coefficient(f, d);
    level = std::min(level, direction_level(links_[d], c * fl.rate, c * fl.weight, c == 1.0));
  }
  return level;
}

int FluidNetwork::pick_bottleneck(int f) const {
  const Flow& fl = flows_[f];
  int best = -1;
  double lowest = kNever;
  // A link of the reverse route can be the bottleneck too: SimGrid's max-min gives every flow
  // on a link the same share of it per unit of weight, whatever the flow consumes of it.
  each_resource(f, [&](int l) {
    const double s = level_with(f, l);
    // Among equal levels, the resource on more routes (a server's NIC rather than a worker's):
    // likelier to be the busier from now on.
    if (best < 0 || s < lowest * (1.0 - kTie) ||
        (s <= lowest * (1.0 + kTie) && links_[l].routes > links_[best].routes)) {
      best = l;
      lowest = s;
    }
  });
  // A flow moves only to a resource clearly busier than its own.
  if (fl.bottleneck >= 0 && level_with(f, fl.bottleneck) <= lowest * (1.0 + kTie))
    return fl.bottleneck;
  return best;
}

void FluidNetwork::serve_at(int f, int b, double left, double now) {
  Flow& fl = flows_[f];
  Link& l = links_[b];
  advance(l, now);
  each_direction(b, [&](int d) {
    const double c = coefficient(f, d);
    if (c == 0.0) return;
    links_[d].own_weight += c * fl.weight;
    ++links_[d].own;
    if (c == 1.0) ++links_[d].own_forward;
  });
  ++l.served;
  add_cap(l, fl.cap / fl.weight);
  fl.bottleneck = b;
  FlowBook& book = books_[f];
  ++book.generation;
  book.tag = l.virtual_time + left;
  l.tags.push({book.tag, f, book.generation});
}

void FluidNetwork::unserve(int f, double now) {
  Flow& fl = flows_[f];
  Link& a = links_[fl.bottleneck];
  advance(a, now);
  each_direction(fl.bottleneck, [&](int d) {
    const double c = coefficient(f, d);
    if (c == 0.0) return;
    links_[d].own_weight -= c * fl.weight;
    if (--links_[d].own == 0) links_[d].own_weight = 0.0;
    if (c == 1.0) --links_[d].own_forward;
  });
  --a.served;
  remove_cap(a, fl.cap / fl.weight);
}

void FluidNetwork::set_rate(int f, double now) {
  Flow& fl = flows_[f];
  if (links_[fl.bottleneck].dirty) relevel(fl.bottleneck, now);
  const double rate = std::min(links_[fl.bottleneck].level * fl.weight, fl.cap);
  const double change = rate - fl.rate;
  if (std::abs(change) <= kRateChange * fl.rate) return;
  fl.rate = rate;
  for (int l : forward(f)) {
    if (home(l) == fl.bottleneck) continue;
    advance(links_[l], now);
    links_[l].through += change;
    touch(l);
  }
  for (int l : back(f)) {
    if (home(l) == fl.bottleneck) continue;
    advance(links_[l], now);
    links_[l].through += kCrossTraffic * change;
    touch(l);
  }
}

int FluidNetwork::crossing(int r, size_t at) const {
  // A split-duplex resource's flows are its two directions' members: a flow on one's back
  // members is on the other's members (SimGrid's routes are symmetric but for XML platforms
  // that declare them otherwise, whose flows on a reverse route alone the exact solves find).
  for (int d : {r, links_[r].twin}) {
    if (d < 0) continue;
    const Link& x = links_[d];
    if (at < x.members.size()) return x.members[at].flow;
    at -= x.members.size();
    if (x.twin >= 0) continue;
    if (at < x.back_members.size()) return x.back_members[at].flow;
    at -= x.back_members.size();
  }
  return -1;
}

void FluidNetwork::rebalance(int resource, double now) {
  // One look a change: every change of a resource's flows looks again at the next of the
  // flows crossing it, in turn. More looks follow the bottlenecks closer between the exact
  // solves, at a cost (a look is a cache miss where hundreds of thousands of flows are in
  // flight) above that of the solves that do the same (results/network-solvers/).
  const int here = home(resource);
  Link& l = links_[here];
  int f = crossing(here, l.cursor++);
  if (f < 0) {
    l.cursor = 0;
    f = crossing(here, l.cursor++);
    if (f < 0) return;
  }
  Flow& fl = flows_[f];
  const int from = fl.bottleneck;
  // Only this link's level changed for it: a flow its resource serves may now be better
  // served elsewhere; another flow, here.
  const int to = from == here                                               ? pick_bottleneck(f)
                 : level_with(f, here) < level_with(f, from) * (1.0 - kTie) ? here
                                                                            : from;
  if (to != from) {
    Link& a = links_[from];
    advance(a, now);
    const double left = std::max(0.0, books_[f].tag - a.virtual_time);
    unserve(f, now);
    each_direction(from, [&](int d) { links_[d].through += coefficient(f, d) * fl.rate; });
    each_direction(to, [&](int d) {
      advance(links_[d], now);
      links_[d].through -= coefficient(f, d) * fl.rate;
    });
    serve_at(f, to, left, now);
    touch(from);
    touch(to);
  }
  set_rate(f, now);
}

void FluidNetwork::rebalance_route(int f, double now) {
  each_resource(f, [&](int r) { rebalance(r, now); });
}

void FluidNetwork::leave(int l, bool back, int slot) {
  std::vector<Member>& members = back ? links_[l].back_members : links_[l].members;
  const Member moved = members.back();
  members[slot] = moved;
  members.pop_back();
  this->slot(moved.flow, moved.hop) = slot;
}

void FluidNetwork::activate(int f, double now) {
  Flow& fl = flows_[f];
  const double size = books_[f].size;
  if (size <= 0.0) return finish(f, now);
  if (fl.forward_count == 0) {  // fat pipes alone: the flow's bound is its rate
    if (fl.cap <= 0.0) return finish(f, now);
    schedule(now + size / fl.cap, Kind::kFixedDone, f);
    return;
  }
  const int* hops = this->hops(f);
  ++active_;
  for (int i = 0; i < fl.total(); ++i) {
    Link& l = links_[hops[i]];
    const bool forward = i < fl.forward_count;
    if (!l.listed) {
      l.listed = true;
      solve_links_.push_back(hops[i]);
    }
    advance(l, now);
    l.all_weight += (forward ? 1.0 : kCrossTraffic) * fl.weight;
    std::vector<Member>& members = forward ? l.members : l.back_members;
    slot(f, i) = static_cast<int>(members.size());
    members.push_back({f, i});
  }
  serve_at(f, pick_bottleneck(f), size / fl.weight, now);
  for (int i = 0; i < fl.total(); ++i) touch(hops[i]);
  set_rate(f, now);
  rebalance_route(f, now);
  flush(now);
}

void FluidNetwork::finish(int f, double now) {
  Flow& fl = flows_[f];
  if (fl.bottleneck >= 0) {
    --active_;
    // Its load leaves every link; a link without others' flows left has none.
    auto drop = [&](Link& l, double weight, double through) {
      advance(l, now);
      l.all_weight -= weight;
      l.through -= through;
      if (l.members.size() + l.back_members.size() == static_cast<size_t>(l.own)) l.through = 0.0;
      if (l.members.empty() && l.back_members.empty()) l.all_weight = 0.0;
    };
    unserve(f, now);
    const int* hops = this->hops(f);
    for (int i = 0; i < fl.total(); ++i) {
      const int l = hops[i];
      const double c = i < fl.forward_count ? 1.0 : kCrossTraffic;
      leave(l, i >= fl.forward_count, slot(f, i));
      drop(links_[l], c * fl.weight, home(l) == fl.bottleneck ? 0.0 : c * fl.rate);
    }
    fl.bottleneck = -1;
    for (int i = 0; i < fl.total(); ++i) touch(hops[i]);
    rebalance_route(f, now);
    flush(now);
  }
  FlowBook& book = books_[f];
  ++book.generation;
  std::shared_ptr<FluidActivity> activity = std::move(book.activity);
  Box* box = book.box;
  void* payload = book.payload;
  free_flows_.push_back(f);
  if (box != nullptr) box->deliver(payload);
  complete(*activity);
}

}  // namespace gbasim
