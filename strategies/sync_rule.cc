#include <stdexcept>

#include "strategies/rules.h"

namespace gbasim {

SyncRule::SyncRule(const RuleConfig& config)
    : UpdateRule(config), contributed_(config.num_workers, false) {}

Admission SyncRule::admit(int worker) { return grant(worker, !contributed_.at(worker)); }

std::optional<Gradient> SyncRule::receive(int worker, int64_t token, Gradient gradient) {
  if (take(worker, token) != 0) throw std::logic_error("sync: a gradient of an older version");
  ++metrics_.gradients_full;
  contributed_[worker] = true;
  sum_.add(std::move(gradient));
  if (++count_ < config_.num_workers) return std::nullopt;
  Gradient update = sum_.take(1.0f / static_cast<float>(config_.num_workers));
  count_ = 0;
  contributed_.assign(config_.num_workers, false);
  advance();
  return update;
}

}  // namespace gbasim
