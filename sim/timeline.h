// A run's activity for a person to look at (gbasim run --timeline FILE): every worker's compute,
// communication, waits and failures as spans on its own track, the parameter server's work on
// its own, the applied updates and the snapshots as instants on the training's tracks, and the staleness of each gradient and the
// gradients waiting for the next update as counters. Written in the Trace Event format that
// Perfetto (ui.perfetto.dev) and chrome://tracing open, in simulated microseconds.
//
// Recording reads the simulated clock and nothing else, so a run's result is the same with or
// without it. Its size is bounded: only events that overlap the window [from_s, to_s] of
// simulated time are kept, and at most max_events of them; recording stops at that many, and
// the file says so (otherData.truncated).
#pragma once

#include <cstdint>
#include <limits>
#include <string>

namespace gbasim {

class Timeline {
 public:
  Timeline(double from_s = 0.0, double to_s = std::numeric_limits<double>::infinity(),
           int64_t max_events = 1000000);

  // Worker w was doing `what` from `start` to `end` (simulated seconds).
  void worker_span(int w, const char* what, double start, double end);
  // Something happened to worker w at `t` (a lost gradient).
  void worker_instant(int w, const char* what, double t);
  // The parameter server's actor was doing `what` (taking a gradient in, applying an update,
  // sending a grant) from `start` to `end`.
  void server_span(const char* what, double start, double end);
  // Server shard `shard` was doing `what` (its part of an update) from `start` to `end`.
  void shard_span(int shard, const char* what, double start, double end);
  // An update was applied (global step `step`), or the parameters were snapshotted.
  void update(double t, int64_t step);
  void snapshot(double t);
  // A counter's value from `t` on ("staleness", "gradients waiting").
  void counter(const char* name, double t, double value);

  int64_t events() const { return events_; }
  bool truncated() const { return truncated_; }
  // The trace for `workers` workers and `shards` server shards (their tracks named), as a
  // Trace Event file's text.
  std::string text(int workers, int shards) const;

 private:
  // Whether an event from start to end is kept (it counts it).
  bool keep(double start, double end);
  void add(const char* json);

  double from_s_, to_s_;
  int64_t max_events_;
  int64_t events_ = 0;
  bool truncated_ = false;
  std::string body_;  // the events, each a JSON object followed by ",\n"
};

}  // namespace gbasim
