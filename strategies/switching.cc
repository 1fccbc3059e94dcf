#include "strategies/switching.h"

#include <algorithm>
#include <cstdio>

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

RuleConfig with_mode(RuleConfig config, Mode mode) {
  config.mode = mode;
  return config;
}

}  // namespace

SwitchingController::SwitchingController(const RuleConfig& config, const SwitchPolicy& policy,
                                         Mode initial)
    : config_(config), policy_(policy), mode_(initial), step_times_(config.num_workers) {
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
  rule_ = make_rule(with_mode(config, initial));
}

Admission SwitchingController::admit(int worker) {
  if (draining_) {
    ++drain_waits_;
    return {};
  }
  return rule_->admit(worker);
}

std::optional<Gradient> SwitchingController::receive(int worker, int64_t token, Gradient gradient) {
  if (draining_) {
    rule_->discard(worker, token);
    advance_switch(false);
    return std::nullopt;
  }
  std::optional<Gradient> update = rule_->receive(worker, token, std::move(gradient));
  if (update) {
    check_schedule();
    advance_switch(true);
  }
  return update;
}

void SwitchingController::lose_token(int worker) {
  rule_->lose_token(worker);
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
  for (const auto& times : step_times_) {
    if (times.empty()) return 0.0;  // not every worker seen yet
    double sum = 0.0;
    for (double t : times) sum += t;
    means.push_back(sum / static_cast<double>(times.size()));
  }
  const double middle = median(means);
  return middle > 0.0 ? *std::max_element(means.begin(), means.end()) / middle : 0.0;
}

void SwitchingController::request(Mode to, const std::string& reason) {
  if (pending_ || to == mode_) return;
  pending_ = {to, reason};
}

void SwitchingController::check_schedule() {
  while (next_at_step_ < policy_.at_steps.size() &&
         policy_.at_steps[next_at_step_].step <= rule_->global_step()) {
    request(policy_.at_steps[next_at_step_++].mode, "step");
  }
  while (next_at_time_ < policy_.at_times.size() &&
         policy_.at_times[next_at_time_].seconds <= now_) {
    request(policy_.at_times[next_at_time_++].mode, "time");
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
  const Mode to = pending_->first;
  events_.push_back({step, now_, mode_, to, pending_->second, straggler_ratio()});
  add_metrics(finished_, rule_->metrics());
  rule_ = make_rule(with_mode(config_, to));
  rule_->resume_at(step);
  // Only a change of transport moves the model: between two server modes it stays put.
  if (mode_ == Mode::kSync || to == Mode::kSync) {
    move_ = ModelMove{to == Mode::kSync ? ModelMove::Direction::kToWorkers
                                        : ModelMove::Direction::kToParameterServers,
                      step};
  }
  mode_ = to;
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
