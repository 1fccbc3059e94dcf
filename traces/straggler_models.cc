#include "traces/straggler_models.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

namespace gbasim {
namespace {

// Streams of their own, apart from the data and model streams of models/random.h.
enum : uint64_t { kStreamPersistent = 101, kStreamTransient = 102, kStreamNoise = 103 };

std::mt19937_64 stream(uint64_t seed, uint64_t which, uint64_t sub) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(which), static_cast<uint32_t>(sub),
                    static_cast<uint32_t>(sub >> 32)};
  return std::mt19937_64(seq);
}

}  // namespace

void validate(const StragglerConfig& c) {
  auto require = [](bool ok, const std::string& key, const std::string& what) {
    // std::invalid_argument keeps traces/ free of other folders; callers rethrow as input errors.
    if (!ok) throw std::invalid_argument("'stragglers." + key + "' " + what);
  };
  require(c.persistent_fraction >= 0.0 && c.persistent_fraction <= 1.0, "persistent_fraction",
          "must lie in [0, 1]");
  require(c.persistent_slowdown >= 1.0, "persistent_slowdown", "must be at least 1");
  require(c.noise_cv >= 0.0, "noise_cv", "must not be negative");
  require(c.transient_rate_per_s >= 0.0, "transient_rate_per_s", "must not be negative");
  require(c.transient_mean_duration_s > 0.0, "transient_mean_duration_s", "must be positive");
  require(c.transient_min_slowdown >= 1.0, "transient_min_slowdown", "must be at least 1");
  require(c.transient_pareto_alpha > 0.0, "transient_pareto_alpha", "must be positive");
  require(c.transient_max_slowdown >= c.transient_min_slowdown, "transient_max_slowdown",
          "must be at least transient_min_slowdown");
}

std::vector<double> persistent_slowdowns(const StragglerConfig& c, int workers) {
  std::vector<int> order(workers);
  std::iota(order.begin(), order.end(), 0);
  auto rng = stream(c.seed, kStreamPersistent, 0);
  std::shuffle(order.begin(), order.end(), rng);
  const auto slow = static_cast<int>(std::llround(c.persistent_fraction * workers));
  std::vector<double> factor(workers, 1.0);
  for (int i = 0; i < slow; ++i) factor[order[i]] = c.persistent_slowdown;
  return factor;
}

std::vector<Episode> transient_episodes(const StragglerConfig& c, int worker, double horizon_s) {
  std::vector<Episode> episodes;
  if (c.transient_rate_per_s <= 0.0) return episodes;
  auto rng = stream(c.seed, kStreamTransient, static_cast<uint64_t>(worker));
  std::exponential_distribution<double> gap(c.transient_rate_per_s);
  std::exponential_distribution<double> duration(1.0 / c.transient_mean_duration_s);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  double t = 0.0;
  while (true) {
    t += gap(rng);
    if (t >= horizon_s) break;
    const double length = duration(rng);
    // Pareto by inversion: x_m / U^(1 / alpha).
    const double slowdown = std::min(
        c.transient_max_slowdown,
        c.transient_min_slowdown / std::pow(1.0 - uniform(rng), 1.0 / c.transient_pareto_alpha));
    episodes.push_back({t, t + length, slowdown});
    t += length;
  }
  return episodes;
}

double step_noise(const StragglerConfig& c, int worker, int64_t step) {
  if (c.noise_cv <= 0.0) return 1.0;
  auto rng = stream(c.seed, kStreamNoise,
                    (static_cast<uint64_t>(worker) << 40) ^ static_cast<uint64_t>(step));
  const double sigma2 = std::log1p(c.noise_cv * c.noise_cv);
  std::normal_distribution<double> normal(-0.5 * sigma2, std::sqrt(sigma2));
  return std::exp(normal(rng));
}

}  // namespace gbasim
