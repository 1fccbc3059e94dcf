#include <cmath>

#include "strategies/rules.h"

namespace gbasim {

GbaRule::GbaRule(const RuleConfig& config)
    : UpdateRule(config),
      m_((config.global_batch > 0 ? config.global_batch : config.num_workers * config.local_batch) /
         config.local_batch) {}

// Workers never wait for each other.
Admission GbaRule::admit(int worker) { return grant(worker, true); }

double GbaRule::weight(int64_t staleness) const {
  const GbaConfig& g = config_.gba;
  if (staleness <= g.iota) return 1.0;
  const auto beyond = static_cast<double>(staleness - g.iota);
  switch (g.decay) {
    case Decay::kDrop:
      return 0.0;
    case Decay::kExp:
      return std::pow(g.gamma, beyond);
    case Decay::kInverse:
      return 1.0 / (1.0 + beyond);
  }
  return 0.0;
}

std::optional<Gradient> GbaRule::receive(int worker, int64_t token, Gradient gradient) {
  const double w = weight(take(worker, token));
  const GbaConfig& g = config_.gba;
  if (w == 0.0) {
    ++metrics_.gradients_dropped;
    if (g.dropped_count) ++counted_;
  } else {
    if (w < 1.0) {
      ++metrics_.gradients_decayed;
      gradient.scale(static_cast<float>(w));
      if (g.decayed_count) ++counted_;
    } else {
      ++metrics_.gradients_full;
      ++counted_;
    }
    sum_.add(std::move(gradient));
    weight_sum_ += w;
  }
  if (counted_ < m_) return std::nullopt;
  return aggregate(g.normalize_by_weights ? weight_sum_ : static_cast<double>(m_));
}

// A step whose gradients were all dropped applies nothing and keeps the version.
std::optional<Gradient> GbaRule::aggregate(double divisor) {
  const bool any = weight_sum_ > 0.0;
  weight_sum_ = 0.0;
  counted_ = 0;
  if (!any) return std::nullopt;
  Gradient update = sum_.take(static_cast<float>(1.0 / divisor));
  advance();
  return update;
}

}  // namespace gbasim
