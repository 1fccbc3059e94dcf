#include "strategies/switching.h"

#include <algorithm>
#include <cstdio>
#include <stdexcept>

#include "base/error.h"
#include "base/stats.h"

namespace gbasim {
namespace {

void add_metrics(RuleMetrics& total, const RuleMetrics& m) {
  total.global_steps += m.global_steps;
  total.gradients_received += m.gradients_received;
  total.gradients_full += m.gradients_full;
  total.gradients_decayed += m.gradients_decayed;
  total.gradients_dropped += m.gradients_dropped;
  total.admissions += m.admissions;
  total.waits += m.waits;
  total.tokens_lost += m.tokens_lost;
  for (auto [staleness, count] : m.staleness) total.staleness[staleness] += count;
}

}  // namespace

SwitchingController::SwitchingController(const RuleConfig& config, const SwitchPolicy& policy,
                                         Mode initial)
    : config_(config),
      pools_(policy.pools.empty()
                 ? std::vector<WorkerPool>{{0, config.num_workers, config.local_batch}}
                 : policy.pools),
      global_batch_(config.global_batch > 0 ? config.global_batch
                                            : config.num_workers * config.local_batch),
      policy_(policy),
      mode_(initial) {
  int total = 0;
  for (const WorkerPool& p : pools_) total = std::max(total, p.first + p.workers);
  step_times_.resize(static_cast<size_t>(total));
  auto check_pool = [&](Mode mode, int pool, const std::string& where) {
    if (pool < 0) return;
    if (pool >= static_cast<int>(pools_.size()))
      throw InputError("switching: " + where + " names pool " + std::to_string(pool) +
                       ", and there are " + std::to_string(pools_.size()));
    const WorkerPool& p = pools_[pool];
    if (mode == Mode::kSync && p.workers * p.local_batch != global_batch_) {
      throw InputError("switching: " + where + " runs sync on pool " + std::to_string(pool) +
                       ", whose workers x local batch (" + std::to_string(p.workers) + " x " +
                       std::to_string(p.local_batch) + ") is not the global batch " +
                       std::to_string(global_batch_));
    }
    if (global_batch_ % p.local_batch != 0) {
      throw InputError("switching: pool " + std::to_string(pool) + "'s local batch " +
                       std::to_string(p.local_batch) + " does not divide the global batch " +
                       std::to_string(global_batch_));
    }
    if (mode == Mode::kBackupWorkers && config.backup_workers >= p.workers)
      throw InputError("switching: " + where + ": backup workers need more workers in the pool");
  };
  for (size_t i = 0; i < policy.at_steps.size(); ++i)
    check_pool(policy.at_steps[i].mode, policy.at_steps[i].pool, "at_steps[" + std::to_string(i) + "]");
  for (size_t i = 0; i < policy.at_times.size(); ++i)
    check_pool(policy.at_times[i].mode, policy.at_times[i].pool, "at_times[" + std::to_string(i) + "]");
  if (policy.automatic && initial != Mode::kSync && initial != Mode::kGBA) {
    throw InputError("switching: automatic switching starts in sync or gba, not '" +
                     mode_name(initial) + "'");
  }
  if (policy.window < 1) throw InputError("switching: 'window' must be at least 1");
  if (!(policy.to_sync_ratio >= 1.0 && policy.to_sync_ratio < policy.to_gba_ratio)) {
    throw InputError("switching: need 1 <= 'to_sync_ratio' < 'to_gba_ratio'");
  }
  if (policy.min_steps_between < 0)
    throw InputError("switching: 'min_steps_between' must not be negative");
  std::sort(policy_.at_steps.begin(), policy_.at_steps.end(),
            [](auto& a, auto& b) { return a.step < b.step; });
  std::sort(policy_.at_times.begin(), policy_.at_times.end(),
            [](auto& a, auto& b) { return a.seconds < b.seconds; });
  rule_ = rule_on(initial, 0);
}

std::unique_ptr<UpdateRule> SwitchingController::rule_on(Mode mode, int pool) const {
  RuleConfig c = config_;
  c.mode = mode;
  c.num_workers = pools_[pool].workers;
  c.local_batch = pools_[pool].local_batch;
  // GBA aggregates G / b' gradients of this pool; sync takes N' x b', which must be G (the
  // rule checks it); the other rules take a local batch a step.
  c.global_batch = mode == Mode::kGBA || mode == Mode::kSync ? global_batch_ : 0;
  return make_rule(c);
}

int SwitchingController::local(int worker) const {
  const WorkerPool& p = pools_[pool_];
  return worker >= p.first && worker < p.first + p.workers ? worker - p.first : -1;
}

Admission SwitchingController::admit(int worker) {
  if (draining_) {
    ++drain_waits_;
    return {};
  }
  const int i = local(worker);
  if (i < 0) return {};  // its pool is not in force: it waits for a switch
  return rule_->admit(i);
}

std::optional<Gradient> SwitchingController::receive(int worker, int64_t token, Gradient gradient) {
  const int i = local(worker);
  if (i < 0) throw std::logic_error("switching: a gradient from a worker outside the pool in force");
  if (draining_) {
    rule_->discard(i, token);
    advance_switch(false);
    return std::nullopt;
  }
  std::optional<Gradient> update = rule_->receive(i, token, std::move(gradient));
  if (update) {
    check_schedule();
    advance_switch(true);
  }
  return update;
}

void SwitchingController::lose_token(int worker) {
  const int i = local(worker);
  if (i < 0) return;
  rule_->lose_token(i);
  if (draining_) advance_switch(false);
}

void SwitchingController::observe_step(int worker, double seconds, double now) {
  now_ = std::max(now_, now);
  auto& times = step_times_.at(worker);
  times.push_back(seconds);
  if (static_cast<int>(times.size()) > policy_.window) times.pop_front();
  check_schedule();
  if (!policy_.automatic || pending_) return;
  if (rule_->global_step() - last_switch_step_ < policy_.min_steps_between && !events_.empty())
    return;
  const double ratio = straggler_ratio();
  char reason[64];
  std::snprintf(reason, sizeof reason, "ratio %.3f", ratio);
  if (mode_ == Mode::kSync && ratio > policy_.to_gba_ratio) request(Mode::kGBA, reason);
  if (mode_ == Mode::kGBA && ratio > 0.0 && ratio < policy_.to_sync_ratio)
    request(Mode::kSync, reason);
}

double SwitchingController::straggler_ratio() const {
  std::vector<double> means;
  const WorkerPool& p = pools_[pool_];
  for (int w = p.first; w < p.first + p.workers; ++w) {
    const auto& times = step_times_[w];
    if (times.empty()) return 0.0;  // not every worker of the pool seen yet
    double sum = 0.0;
    for (double t : times) sum += t;
    means.push_back(sum / static_cast<double>(times.size()));
  }
  const double middle = median(means);
  return middle > 0.0 ? *std::max_element(means.begin(), means.end()) / middle : 0.0;
}

void SwitchingController::request(Mode to, const std::string& reason, int pool) {
  if (pool < 0) pool = pool_;
  if (pending_ || (to == mode_ && pool == pool_)) return;
  pending_ = Pending{to, reason, pool};
}

void SwitchingController::check_schedule() {
  while (next_at_step_ < policy_.at_steps.size() &&
         policy_.at_steps[next_at_step_].step <= rule_->global_step()) {
    const auto& at = policy_.at_steps[next_at_step_++];
    request(at.mode, "step", at.pool);
  }
  while (next_at_time_ < policy_.at_times.size() &&
         policy_.at_times[next_at_time_].seconds <= now_) {
    const auto& at = policy_.at_times[next_at_time_++];
    request(at.mode, "time", at.pool);
  }
}

void SwitchingController::advance_switch(bool updated) {
  if (!pending_) return;
  if (mode_ == Mode::kSync) {
    // Right after a sync update nobody holds a token: the boundary the switch waits for.
    if (updated) complete_switch();
    return;
  }
  if (updated) draining_ = true;
  if (draining_ && !rule_->any_in_flight()) complete_switch();
}

void SwitchingController::complete_switch() {
  const int64_t step = rule_->global_step();
  const Mode to = pending_->mode;
  const int to_pool = pending_->pool;
  events_.push_back({step, now_, mode_, to, pool_, to_pool, pending_->reason, straggler_ratio()});
  add_metrics(finished_, rule_->metrics());
  rule_ = rule_on(to, to_pool);
  rule_->resume_at(step);
  // Only a change of transport moves the model: between two server modes it stays put on the
  // servers; between two sync pools it goes through them.
  const WorkerPool from = pools_[pool_], onto = pools_[to_pool];
  if (mode_ == Mode::kSync && to == Mode::kSync) {
    if (to_pool != pool_) move_ = ModelMove{ModelMove::Direction::kBetweenPools, step, from, onto};
  } else if (mode_ == Mode::kSync || to == Mode::kSync) {
    move_ = ModelMove{to == Mode::kSync ? ModelMove::Direction::kToWorkers
                                        : ModelMove::Direction::kToParameterServers,
                      step, from, onto};
  }
  mode_ = to;
  pool_ = to_pool;
  pending_.reset();
  draining_ = false;
  last_switch_step_ = step;
}

std::optional<ModelMove> SwitchingController::take_model_move() {
  std::optional<ModelMove> move = move_;
  move_.reset();
  return move;
}

RuleMetrics SwitchingController::metrics() const {
  RuleMetrics total = finished_;
  add_metrics(total, rule_->metrics());
  total.waits += drain_waits_;
  return total;
}

}  // namespace gbasim
