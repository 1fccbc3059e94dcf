#include <algorithm>

#include "strategies/rules.h"

namespace gbasim {

BoundedStalenessRule::BoundedStalenessRule(const RuleConfig& config)
    : UpdateRule(config), completed_(config.num_workers, 0), at_slowest_(config.num_workers) {}

Admission BoundedStalenessRule::admit(int worker) {
  return grant(worker, completed_.at(worker) - slowest_ <= config_.staleness_bound);
}

std::optional<Gradient> BoundedStalenessRule::receive(int worker, int64_t token,
                                                      Gradient gradient) {
  take(worker, token);
  ++metrics_.gradients_full;
  // The slowest moves on when its last worker does: a count of the workers at it, recounted
  // then, keeps an admission O(1) (thousands of workers ask at every update).
  if (completed_.at(worker)++ == slowest_ && --at_slowest_ == 0) {
    slowest_ = *std::min_element(completed_.begin(), completed_.end());
    at_slowest_ = std::count(completed_.begin(), completed_.end(), slowest_);
  }
  advance();
  return gradient;
}

}  // namespace gbasim
