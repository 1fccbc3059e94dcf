// The fluid network model (network.h): SimGrid's platform, routes, latencies, bandwidths
// (profiles included) and its network model's factors, with the flows' rates computed here.
//
// A flow pays its route's latency (times network/latency-factor), then moves its bytes at the
// rate SimGrid's max-min model gives it, kept in time per flow event that does not grow with
// the flows on a link:
// - a resource is a link, or under network/crosstraffic a split-duplex link's two directions
//   together: a flow crosses one and takes 5% of the other, and max-min fixes its rate at
//   whichever saturates first;
// - each flow is served by one resource, its bottleneck, by processor sharing in virtual time:
//   the resource's level s (bytes/s per unit of 1/penalty) is, on each of its links, the free
//   capacity over the weights of the flows it serves, the lower of the two, never below the
//   link's equal share; a flow of penalty p moves at s / p, capped as SimGrid caps it (the
//   route's smallest bandwidth, the TCP window over twice the latency); flows end in the order
//   of their virtual finish tags, so a resource keeps them in a heap;
// - on the other links of its route (and at 5% on its reverse route) a flow takes the rate it
//   had when last looked at (the "through" load);
// - each change of a resource's flows looks again at one of them, in turn, and moves it where
//   another resource of its route would give it a lower level;
// - every (flows in flight) / k flow events, max-min is solved exactly by progressive filling,
//   as SimGrid's solver does: every flow moves to the link that fixes it, every through load
//   is set again; k runs from kFewestSolvesPerTurnover to kSolvesPerTurnover, up where a solve
//   had to move flows and down where it did not. Between two solves the bottlenecks are followed by
//   the looks above.
// Where flows change bottleneck faster than that, rates are approximate (docs/cluster.md,
// "Two network models", and results/network-solvers/ say where and by how much).
#pragma once

#include <simgrid/s4u.hpp>

#include <array>
#include <cstdint>
#include <limits>
#include <memory>
#include <queue>
#include <span>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace gbasim {

// The fluid model's constants (sim/fluid_network.cc and sim/fluid_sharing.cc).
namespace fluid {
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
// Max-min is solved exactly every (flows in flight) / k flow events, k between these as the
// solves find the bottlenecks moved or kept: fewer solves are faster and further from
// SimGrid's model (results/network-solvers/). An exact solve costs about k x (links a route)
// operations a flow event, less than the looks it replaces.
constexpr int64_t kFewestSolvesPerTurnover = 2;
constexpr int64_t kSolvesPerTurnover = 16;
// Routes kept for reuse, at most: beyond, a route is looked up for each flow.
constexpr size_t kRoutesCached = 1 << 20;
}  // namespace fluid

namespace sg4 = simgrid::s4u;

class Box;

// What an actor waits for: a flow's arrival, or a payload taken from a box.
struct FluidActivity {
  bool done = false;
  void** into = nullptr;  // a receive: where the payload goes
  int waiter = -1;        // the waiting actor's slot, while it waits
};

class FluidNetwork {
 public:
  // `exact`: solve max-min exactly at every flow event (a check of the model; as slow as
  // SimGrid's solver), not every active / kSolvesPerTurnover events.
  explicit FluidNetwork(sg4::Host* home, bool exact = false);

  // Starts a flow of `bytes` from `src` to `dst`; on arrival `box` (if any) gets `payload`.
  std::shared_ptr<FluidActivity> start(sg4::Host* src, sg4::Host* dst, double bytes,
                                       Box* box = nullptr, void* payload = nullptr);
  // An activity done at once (a receive that finds its payload waiting).
  std::shared_ptr<FluidActivity> done_now() const;
  // Blocks the calling actor until every one (all) or one (any) of `activities` is done;
  // returns the index of one done.
  size_t wait(const std::vector<FluidActivity*>& activities, bool all);
  // Marks `a` done and wakes its waiter.
  void complete(FluidActivity& a);

 private:
  static constexpr int kInline = 8;
  struct Route {
    // Its shared links, then its reverse route's (cross-traffic): held in place up to kInline.
    int16_t forward_count = 0, back_count = 0;
    std::array<int, kInline> inline_hops{};
    std::vector<int> spill_hops;
    double latency = 0.0;  // raw, before the latency factor
    double penalty = 1.0;  // SimGrid's sharing penalty
    double bound = 0.0;    // the rate bound, before the bandwidth factor
  };
  // A flow, in two records. What a look at it reads (sharing.cc's rebalance, pick_bottleneck,
  // set_rate) is in one cache line, as hundreds of thousands of flows in flight are looked at
  // in no order: its weight, cap, rate, bottleneck and shared links, its route's then its
  // reverse route's (held in place up to kInline; longer routes' are in its book).
  struct alignas(64) Flow {
    double weight = 1.0;  // 1 / SimGrid's sharing penalty
    double cap = 0.0;
    double rate = 0.0;    // its rate when last looked at: its load on the other links
    int bottleneck = -1;  // a resource (a link, or the first of twins); -1: a fixed rate
    int16_t forward_count = 0, back_count = 0;
    std::array<int, kInline> inline_hops{};
    int total() const { return forward_count + back_count; }
  };
  static_assert(sizeof(Flow) == 64);
  // The rest of a flow: its size and place in its bottleneck's heap, its place in each link's
  // members (or back members), and what its arrival does.
  struct FlowBook {
    double size = 0.0;        // in SimGrid's variable units: bytes / bandwidth factor
    uint64_t generation = 0;  // of its entry in its bottleneck's heap
    double tag = 0.0;         // its virtual finish time at its bottleneck
    // Its place in each link's members (or back members): the first kInline here.
    std::array<int, kInline> slots{};
    std::vector<int> spill_hops, spill_slots;  // routes longer than kInline
    std::shared_ptr<FluidActivity> activity;
    Box* box = nullptr;
    void* payload = nullptr;
  };
  struct Member {
    int flow, hop;
  };
  // A link: what a level reads first, in one cache line.
  struct alignas(64) Link {
    double capacity = 0.0;  // bytes/s in variable units (the bandwidth)
    // Of the flows its resource serves that cross it: their weights times what they take of it.
    double own_weight = 0.0;
    double all_weight = 0.0;  // of every flow crossing it, reverse ones at 5%
    double through = 0.0;     // the rate the flows its resource does not serve take on it
    double level = 0.0;
    int twin = -1;  // the other direction of a split-duplex link, where cross-traffic couples them
    int own = 0;    // the flows its resource serves that cross it
    int own_forward = 0;  // of which on their route
    int served = 0;       // the flows it serves, where it is a resource
    int routes = 0;       // routes seen through it
    bool dirty = false;   // changed since its level was last set
    bool listed = false;  // in solve_links_
    double virtual_time = 0.0, updated = 0.0;
    sg4::Link* link = nullptr;
    // The own flows' caps over their weights, each with its count (a few distinct values).
    std::vector<std::pair<double, int>> caps;
    // The own flows by virtual finish tag (tag, flow, generation).
    std::priority_queue<std::tuple<double, int, uint64_t>,
                        std::vector<std::tuple<double, int, uint64_t>>, std::greater<>>
        tags;
    // The flows crossing it, and in reverse (cross-traffic): each with the link's place among
    // its hops, so that a flow moved in the list has its slot set without a look at its route.
    std::vector<Member> members, back_members;
    size_t cursor = 0;       // the next flow to look at again, of its resource's
    double due = 0.0;        // when its next own flow ends
    int heap_position = -1;  // in due_
  };
  enum class Kind { kLatencyPaid, kFixedDone };
  struct Event {
    double time;
    uint64_t seq;
    Kind kind;
    int flow;
    bool operator>(const Event& o) const { return time != o.time ? time > o.time : seq > o.seq; }
  };

  void serve();  // the model's actor
  void read_config();
  const Route& route(sg4::Host* src, sg4::Host* dst);
  int link_index(sg4::Link* link);
  void schedule(double time, Kind kind, int flow);
  // The links by due time: a binary heap of link indices, each link knowing its place.
  bool earlier(int a, int b) const;
  void place(int position, int l);
  void set_due(int l, double due);
  double next_due() const { return due_.empty() ? kNever : links_[due_[0]].due; }
  void take_due(int l, double now);  // the link's flows that have ended
  void advance(Link& l, double now);
  static void add_cap(Link& l, double cap);
  static void remove_cap(Link& l, double cap);
  void relevel(int l, double now);  // after a change: the level and the next flow due
  // A link changed: relevel it before the event ends (flush), or before its level is read.
  void touch(int l);
  void flush(double now);
  // Max-min by progressive filling over every flow in flight, as SimGrid's solver computes it;
  // each flow moves to the resource of the link that fixed it, at that link's level.
  void solve_exactly(double now);
  // Its two halves: max-min by progressive filling (solve_flows_: each flow with the link that
  // fixed it), then each flow served where it was fixed; returns the flows that moved.
  void fill_progressively();
  int64_t apply_solve(double now);
  // A flow's shared links (its route's, then its reverse route's) and its places among their
  // members.
  const int* hops(int f) const {
    return flows_[f].total() <= kInline ? flows_[f].inline_hops.data()
                                        : books_[f].spill_hops.data();
  }
  int& slot(int f, int i) {
    return i < kInline ? books_[f].slots[i] : books_[f].spill_slots[i - kInline];
  }
  std::span<const int> forward(int f) const {
    return {hops(f), static_cast<size_t>(flows_[f].forward_count)};
  }
  std::span<const int> back(int f) const {
    return {hops(f) + flows_[f].forward_count, static_cast<size_t>(flows_[f].back_count)};
  }
  void assign_hops(int f, const Route& r);
  bool stale(const Link& l, int index) const;  // the top of its heap names no flow it serves
  void leave(int l, bool back, int slot);
  double share(const Link& l) const { return l.capacity / l.all_weight; }
  // The resource a link belongs to: the link, or the first of twins. Under cross-traffic a flow
  // crosses a split-duplex link one way and takes 5% of the other; SimGrid's max-min then fixes
  // its rate at whichever direction saturates first, so the two are served as one.
  int home(int l) const {
    const int t = links_[l].twin;
    return t >= 0 && t < l ? t : l;
  }
  // The level resource r would have with fl among the flows it serves: on each of its links
  // that a flow it serves crosses on its route, the free capacity over their weights, never
  // below the link's equal share; the lower one.
  double level_with(int f, int r) const;
  // One link's part of that: with `rate` and `weight` of a flow not yet served there (on its
  // route where `forward`).
  double direction_level(const Link& x, double rate = 0.0, double weight = 0.0,
                         bool forward = false) const;
  // The flow's bottleneck: the resource of its routes' links with the lowest level_with.
  int pick_bottleneck(int f) const;
  // What the flow takes of the link per byte/s of its rate: 1 on its route, 5% on the reverse
  // route, 0 off both.
  double coefficient(int f, int l) const;
  // Calls `fn` with each link of resource r.
  template <typename Fn>
  void each_direction(int r, Fn fn) {
    fn(r);
    if (links_[r].twin >= 0) fn(links_[r].twin);
  }
  // fn(r) for each resource of f's route and reverse route, once: a split-duplex link is on
  // the route one way and on the reverse route the other.
  template <class Fn>
  void each_resource(int f, Fn fn) const {
    const int* hops = this->hops(f);
    const int total = flows_[f].total();
    for (int i = 0; i < total; ++i) {
      const int r = home(hops[i]);
      bool seen = false;
      for (int j = 0; j < i && !seen; ++j) seen = home(hops[j]) == r;
      if (!seen) fn(r);
    }
  }
  void unserve(int f, double now);  // takes f off its bottleneck's resource
  // Serves `f` at link b from now, `left` of its size (times its penalty) to go.
  void serve_at(int f, int b, double left, double now);
  // Sets f's rate to what its bottleneck gives it, and its load on the other links.
  void set_rate(int f, double now);
  // The at-th flow crossing resource r, -1 past the last.
  int crossing(int r, size_t at) const;
  // Looks again at the next flow crossing a resource: moves it if its bottleneck is now
  // another resource, and refreshes the rate it takes on the others.
  void rebalance(int resource, double now);
  // Rebalances each resource of f's routes.
  void rebalance_route(int f, double now);
  void activate(int f, double now);
  void finish(int f, double now);
  void on_bandwidth_change(const sg4::Link& link);
  int actor_slot();
  void wake(int slot);

  sg4::Host* home_;
  bool exact_;
  bool configured_ = false;
  double latency_factor_ = 1.0, bandwidth_factor_ = 1.0, weight_s_ = 0.0, tcp_gamma_ = 0.0;
  bool crosstraffic_ = false;
  std::unordered_map<const sg4::Link*, int> link_of_;
  std::unordered_map<std::string, sg4::Link*> link_by_name_;
  std::vector<Link> links_;
  struct PairHash {
    size_t operator()(const std::pair<const sg4::Host*, const sg4::Host*>& p) const {
      return std::hash<const void*>()(p.first) * 31 + std::hash<const void*>()(p.second);
    }
  };
  std::unordered_map<std::pair<const sg4::Host*, const sg4::Host*>, Route, PairHash> routes_;
  Route spare_route_;  // beyond the cache
  std::vector<Flow> flows_;
  std::vector<FlowBook> books_;
  std::vector<int> free_flows_;
  static constexpr double kNever = std::numeric_limits<double>::infinity();
  std::priority_queue<Event, std::vector<Event>, std::greater<>> events_;
  std::vector<int> due_;
  std::vector<int> dirty_;
  int64_t active_ = 0;       // flows in flight on shared links
  int64_t since_solve_ = 0;  // flow events since the last exact solve
  int64_t solves_per_turnover_ = fluid::kSolvesPerTurnover;
  // The exact solve's scratch, kept between solves: each link's free capacity, weight and
  // count of the flows not yet fixed and level; the last solve that fixed each flow;
  // the links crossed, the flows in the order fixed with the link that fixed each, and the
  // heap of levels.
  uint32_t solve_ = 0;
  std::vector<double> remaining_, usage_, solved_level_;
  std::vector<int> unfixed_;
  std::vector<uint32_t> fixed_in_;
  std::vector<int> solve_links_;  // every link a flow crosses, and some no flow crosses now
  std::vector<std::pair<int, int>> solve_flows_;  // each with the link that fixed it
  std::vector<std::pair<double, int>> solve_heap_;
  uint64_t seq_ = 0;
  double wake_at_ = 0.0;  // when the model's actor next wakes by itself
  // Each waiting actor's semaphore, and whether a wake-up is already owed to it; slot 0 is the
  // model's own actor.
  std::vector<sg4::SemaphorePtr> semaphores_;
  std::vector<bool> woken_;
  std::vector<int> outstanding_;  // of each waiting actor's activities, those it still waits for
  std::unordered_map<long, int> slot_of_actor_;
};

}  // namespace gbasim
