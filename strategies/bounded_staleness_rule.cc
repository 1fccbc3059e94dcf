#include <algorithm>

#include "strategies/rules.h"

namespace gbasim {

BoundedStalenessRule::BoundedStalenessRule(const RuleConfig& config)
    : UpdateRule(config), completed_(config.num_workers, 0) {}

Admission BoundedStalenessRule::admit(int worker) {
  const int64_t slowest = *std::min_element(completed_.begin(), completed_.end());
  return grant(worker, completed_.at(worker) - slowest <= config_.staleness_bound);
}

std::optional<Gradient> BoundedStalenessRule::receive(int worker, int64_t token,
                                                      Gradient gradient) {
  take(worker, token);
  ++metrics_.gradients_full;
  ++completed_[worker];
  advance();
  return gradient;
}

}  // namespace gbasim
