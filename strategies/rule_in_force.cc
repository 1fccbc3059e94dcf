#include "strategies/rule_in_force.h"

namespace gbasim {

RuleInForce::RuleInForce(const RuleConfig& config, const std::optional<SwitchPolicy>& switching) {
  if (switching)
    switcher_.emplace(config, *switching, config.mode);
  else
    rule_ = make_rule(config);
}

Admission RuleInForce::admit(int worker) {
  return switcher_ ? switcher_->admit(worker) : rule_->admit(worker);
}

std::optional<Gradient> RuleInForce::receive(int worker, int64_t token, Gradient gradient) {
  return switcher_ ? switcher_->receive(worker, token, std::move(gradient))
                   : rule_->receive(worker, token, std::move(gradient));
}

void RuleInForce::lose_token(int worker) {
  if (switcher_) {
    switcher_->lose_token(worker);
  } else {
    rule_->lose_token(worker);
  }
}

int64_t RuleInForce::global_step() const {
  return switcher_ ? switcher_->global_step() : rule_->global_step();
}

Mode RuleInForce::mode() const { return switcher_ ? switcher_->mode() : rule_->config().mode; }

RuleMetrics RuleInForce::metrics() const {
  return switcher_ ? switcher_->metrics() : rule_->metrics();
}

std::optional<ModelMove> RuleInForce::take_model_move() {
  return switcher_ ? switcher_->take_model_move() : std::nullopt;
}

void RuleInForce::observe_step(int worker, double seconds, double now) {
  if (switcher_) switcher_->observe_step(worker, seconds, now);
}

}  // namespace gbasim
