#include "experiment/slowdown.h"

#include <algorithm>


namespace gbasim {

RankSlowdown::RankSlowdown(const ExperimentSpec& spec, const ReplayedTrace& trace, int worker)
    : spec_(spec),
      worker_(worker),
      persistent_(persistent_slowdowns(spec.stragglers, total_workers(spec)).at(worker)),
      trace_(trace) {}

double RankSlowdown::factor(int64_t step, double elapsed_s) {
  const StragglerConfig& g = spec_.stragglers;
  double k = persistent_ * step_noise(g, worker_, step);
  if (g.transient_rate_per_s > 0.0) {
    if (elapsed_s >= horizon_) {
      horizon_ = std::max(2.0 * horizon_, elapsed_s + 10.0 / g.transient_rate_per_s);
      episodes_ = transient_episodes(g, worker_, horizon_);
    }
    for (const Episode& e : episodes_) {
      if (e.start > elapsed_s) break;
      if (elapsed_s < e.end) k *= e.slowdown;
    }
  }
  if (trace_.pai) k *= trace_.pai->slowdown(worker_, step);
  if (trace_.usage) {
    const auto& changes = trace_.usage->speed.at(static_cast<size_t>(worker_));
    const auto after =
        std::upper_bound(changes.begin(), changes.end(), elapsed_s,
                         [](double t, const std::pair<double, double>& c) { return t < c.first; });
    k /= std::prev(after)->second;  // the first change is at 0
  }
  return k;
}

std::string RankSlowdown::not_injected(const ExperimentSpec& spec) {
  const StragglerConfig& g = spec.stragglers;
  std::string left;
  if (g.network_rate_per_s > 0.0) left += " network episodes;";
  if (g.colocated_fraction > 0.0) left += " co-located tenants;";
  if (is_usage_format(g.trace_format)) left += " the usage trace's bandwidth factors;";
  if (g.failure_rate_per_s > 0.0 || g.server_failure_rate_per_s > 0.0)
    left += " worker and server failures (stragglers.failures);";
  if (!spec.cluster.pools.empty())
    left += " the pools' worker speeds (every rank computes at its own speed);";
  return left;
}

}  // namespace gbasim
