// Tuning-free switching between modes during one run: sync <-> GBA (scheduled or automatic),
// and, scheduled, from sync to any server mode and back (async, SSP, backup workers). The
// controller stands where a rule stands (admit / receive / lose_token) and swaps the rule
// underneath at a switch. Parameters and optimizer state belong to the driver and are never touched
// here: the learning rate and the global batch G stay as they are.
//
// Protocol (docs/gba.md, "Switching"):
//   sync -> GBA (or another server mode): the request takes effect when the sync step in
//     progress is applied; then the model moves from the all-reduce workers to the
//     parameter servers.
//   GBA (or another server mode) -> any mode: the step in progress is completed (for GBA,
//     admissions go on until its global batch is full); once it is applied, admissions stop
//     and gradients still in flight are discarded as they arrive (counted as dropped); when
//     none is left, the new rule starts; to sync, the model first moves back to every worker.
// The global step continues across a switch.
#pragma once

#include <deque>
#include <memory>
#include <string>
#include <vector>

#include "strategies/update_rule.h"

namespace gbasim {

// Workers first to first + workers - 1 with their local batch: a pool that a mode runs on.
struct WorkerPool {
  int first = 0;
  int workers = 0;
  int64_t local_batch = 0;
};

struct SwitchPolicy {
  // Scheduled switches: to `mode` (on `pool`, -1 for the pool in force) at the first global
  // step >= step, or at time >= seconds.
  struct AtStep {
    int64_t step;
    Mode mode;
    int pool = -1;
  };
  struct AtTime {
    double seconds;
    Mode mode;
    int pool = -1;
  };
  std::vector<AtStep> at_steps;
  std::vector<AtTime> at_times;

  // Automatic switching from cluster status. Each worker's step time is the mean of its
  // last `window` steps; the straggler ratio is the largest over the median of these.
  // Sync -> GBA when the ratio exceeds to_gba_ratio, GBA -> sync when it falls below
  // to_sync_ratio; the gap between the two, and at least min_steps_between global steps
  // between switches, keep it from flapping.
  bool automatic = false;
  int window = 10;
  double to_gba_ratio = 1.5;
  double to_sync_ratio = 1.2;
  int64_t min_steps_between = 50;

  // The pools of workers (docs/gba.md, "Worker pools"); empty: one pool of every worker with
  // the config's local batch. Training starts on pool 0; a switch to another pool keeps the
  // global batch G (the config's, or N x b of pool 0): GBA aggregates G / b' gradients of
  // that pool's local batch b', sync needs N' x b' = G there. Workers outside the pool in
  // force are refused admission.
  std::vector<WorkerPool> pools;
};

// What the driver must move at a switch, so that it can charge the time.
struct ModelMove {
  // kBetweenPools: from a sync pool to another sync pool, through the parameter servers.
  enum class Direction { kToParameterServers, kToWorkers, kBetweenPools };
  Direction direction;
  int64_t global_step;
  WorkerPool from, to;  // the pools before and after the switch
};

struct SwitchEvent {
  int64_t global_step;
  double time;  // the driver's clock when the switch took effect
  Mode from, to;
  int from_pool, to_pool;
  std::string reason;  // "step", "time", or "ratio <value>"
  double straggler_ratio;
};

class SwitchingController {
 public:
  // `config` configures every rule (its mode is ignored). Automatic switching goes between
  // sync and GBA and must start in one of them; scheduled switches may name any mode.
  SwitchingController(const RuleConfig& config, const SwitchPolicy& policy, Mode initial);

  Admission admit(int worker);
  std::optional<Gradient> receive(int worker, int64_t token, Gradient gradient);
  void lose_token(int worker);
  // Forces a switch to `to` (on `pool`, -1 for the pool in force) by the protocol above, as a
  // schedule would.
  void request(Mode to, const std::string& reason, int pool = -1);
  int pool() const { return pool_; }
  const WorkerPool& pool_of(int index) const { return pools_.at(index); }
  int pools() const { return static_cast<int>(pools_.size()); }
  // One finished step of `worker` that took `seconds` of its own work (not waits), seen at
  // the driver's time `now`. Feeds the automatic policy and the time schedule.
  void observe_step(int worker, double seconds, double now);

  Mode mode() const { return mode_; }
  bool switching() const { return pending_.has_value(); }
  int64_t global_step() const { return rule_->global_step(); }
  double straggler_ratio() const;
  // The model move of the last switch, once; nothing when none is owed.
  std::optional<ModelMove> take_model_move();
  const std::vector<SwitchEvent>& events() const { return events_; }
  // The metrics of every rule that has run, summed.
  RuleMetrics metrics() const;

 private:
  void check_schedule();
  // After an update or a discard: starts the drain, or completes the pending switch.
  void advance_switch(bool updated);
  void complete_switch();
  // The rule of `mode` on pool `pool`: its workers, its local batch, the global batch G.
  std::unique_ptr<UpdateRule> rule_on(Mode mode, int pool) const;
  // `worker`'s index in the pool in force, or -1 outside it.
  int local(int worker) const;

  RuleConfig config_;
  std::vector<WorkerPool> pools_;
  int pool_ = 0;
  int64_t global_batch_;
  SwitchPolicy policy_;
  Mode mode_;
  std::unique_ptr<UpdateRule> rule_;
  RuleMetrics finished_;  // metrics of the rules already replaced
  struct Pending {
    Mode mode;
    std::string reason;
    int pool;
  };
  std::optional<Pending> pending_;
  bool draining_ = false;  // GBA -> sync: the last GBA step is applied, tokens still out
  int64_t drain_waits_ = 0;
  std::optional<ModelMove> move_;
  std::vector<SwitchEvent> events_;
  std::vector<std::deque<double>> step_times_;
  double now_ = 0.0;
  int64_t last_switch_step_ = 0;
  size_t next_at_step_ = 0, next_at_time_ = 0;
};

}  // namespace gbasim
