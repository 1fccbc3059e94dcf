#include "models/metrics.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <numeric>
#include <stdexcept>
#include <vector>

namespace gbasim {

double roc_auc(std::span<const float> scores, std::span<const float> labels) {
  if (scores.size() != labels.size()) throw std::invalid_argument("roc_auc: size mismatch");
  // A NaN compares unequal to itself: it would end no group below (and break the sort's order).
  for (float s : scores)
    if (std::isnan(s)) return std::numeric_limits<double>::quiet_NaN();
  std::vector<uint32_t> order(scores.size());
  std::iota(order.begin(), order.end(), 0u);
  std::sort(order.begin(), order.end(),
            [&](uint32_t a, uint32_t b) { return scores[a] < scores[b]; });

  // Walk groups of equal scores upwards; each positive beats every negative below its
  // group and ties half of the negatives inside it.
  double negatives_below = 0.0, wins = 0.0, positives = 0.0;
  for (size_t start = 0; start < order.size();) {
    size_t end = start;
    double group_pos = 0.0, group_neg = 0.0;
    while (end < order.size() && scores[order[end]] == scores[order[start]]) {
      (labels[order[end]] > 0.5f ? group_pos : group_neg) += 1.0;
      ++end;
    }
    wins += group_pos * (negatives_below + 0.5 * group_neg);
    negatives_below += group_neg;
    positives += group_pos;
    start = end;
  }
  if (positives == 0.0 || negatives_below == 0.0) return std::numeric_limits<double>::quiet_NaN();
  return wins / (positives * negatives_below);
}

double log_loss(std::span<const float> probabilities, std::span<const float> labels) {
  if (probabilities.size() != labels.size()) throw std::invalid_argument("log_loss: size mismatch");
  if (labels.empty()) return std::numeric_limits<double>::quiet_NaN();
  constexpr double kEps = 1e-7;
  double total = 0.0;
  for (size_t i = 0; i < labels.size(); ++i) {
    const double p = std::clamp(static_cast<double>(probabilities[i]), kEps, 1.0 - kEps);
    total -= labels[i] > 0.5f ? std::log(p) : std::log1p(-p);
  }
  return total / static_cast<double>(labels.size());
}

}  // namespace gbasim
