#include "strategies/rules.h"

namespace gbasim {

QuorumRule::QuorumRule(const RuleConfig& config, int quorum)
    : UpdateRule(config), quorum_(quorum), contributed_(config.num_workers, false) {}

Admission QuorumRule::admit(int worker) { return grant(worker, !contributed_.at(worker)); }

std::optional<Gradient> QuorumRule::receive(int worker, int64_t token, Gradient gradient) {
  if (take(worker, token) > 0) {
    ++metrics_.gradients_dropped;  // computed on an older version: too late
    return std::nullopt;
  }
  ++metrics_.gradients_full;
  contributed_[worker] = true;
  sum_.add(std::move(gradient));
  if (++count_ < quorum_) return std::nullopt;
  Gradient update = sum_.take(1.0f / static_cast<float>(quorum_));
  count_ = 0;
  contributed_.assign(config_.num_workers, false);
  advance();
  return update;
}

}  // namespace gbasim
