#include "experiment/slowdown.h"

#include <algorithm>

#include "base/error.h"

namespace gbasim {

RankSlowdown::RankSlowdown(const ExperimentSpec& spec, int worker) : spec_(spec), worker_(worker) {
  const StragglerConfig& g = spec.stragglers;
  const int n = spec.training.num_workers;
  persistent_ = persistent_slowdowns(g, n).at(worker);
  if (g.trace_format.empty()) return;
  try {
    if (g.trace_format == "pai") {
      replay_.emplace(read_pai_trace(g.trace_path), g.trace_mapping, g.trace_machines,
                      g.trace_offset, n, spec.seed);
      return;
    }
    speed_changes_ = plan_usage_replay(g, n, spec.seed).speed.at(worker);
  } catch (const InputError& e) {
    throw InputError(std::string("'stragglers.trace': ") + e.what());
  }
}

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
  if (replay_) k *= replay_->slowdown(worker_, step);
  if (!speed_changes_.empty()) {
    const auto after =
        std::upper_bound(speed_changes_.begin(), speed_changes_.end(), elapsed_s,
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
  return left;
}

}  // namespace gbasim
