// The fluid model's sharing (sim/fluid_network.h): each link's flows served by processor
// sharing in virtual time, a flow at the rate of its most loaded link, rates taken again where
// a flow starts, ends or a link's bandwidth changes.
#include <algorithm>
#include <cmath>
#include <limits>

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

}  // namespace gbasim
