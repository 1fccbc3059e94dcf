#include "traces/straggler_models.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>

#include "base/error.h"
#include "base/random.h"

namespace gbasim {
namespace {

// Streams of their own, apart from the data and model streams (base/random.h, which seeds them).
enum : uint64_t {
  kStreamPersistent = 101,
  kStreamTransient = 102,
  kStreamNoise = 103,
  kStreamNetwork = 104,
  kStreamColocated = 105,
  kStreamFailure = 106,
  kStreamServerFailure = 107,
};

struct EpisodeLaw {
  double rate_per_s, mean_duration_s, min_slowdown, pareto_alpha, max_slowdown;
};

// Poisson arrivals, exponential lengths, Pareto(min, alpha) factors capped at max.
std::vector<Episode> episodes(const EpisodeLaw& law, uint64_t seed, uint64_t which, int worker,
                              double horizon_s);

// The first round(fraction x workers) workers of a seeded shuffle.
std::vector<bool> chosen(double fraction, uint64_t seed, uint64_t which, int workers);

}  // namespace

void validate(const StragglerConfig& c) {
  auto require = [](bool ok, const std::string& key, const std::string& what) {
    if (!ok) throw InputError("", "stragglers." + key, what);
  };
  require(c.persistent_fraction >= 0.0 && c.persistent_fraction <= 1.0, "persistent_fraction",
          "must lie in [0, 1]");
  // Sane ranges: a slowdown beyond 1000 or a rate beyond 1e4 episodes a second is a typo, and
  // a run with one would crawl until its watchdog stopped it.
  require(c.persistent_slowdown >= 1.0 && c.persistent_slowdown <= 1000.0, "persistent_slowdown",
          "must lie in [1, 1000]");
  require(c.noise_cv >= 0.0 && c.noise_cv <= 10.0, "noise_cv", "must lie in [0, 10]");
  for (const char* kind : {"transient", "network"}) {
    const bool t = kind[0] == 't';
    const std::string k = kind;
    const double rate = t ? c.transient_rate_per_s : c.network_rate_per_s;
    const double duration = t ? c.transient_mean_duration_s : c.network_mean_duration_s;
    const double lo = t ? c.transient_min_slowdown : c.network_min_slowdown;
    const double hi = t ? c.transient_max_slowdown : c.network_max_slowdown;
    const double alpha = t ? c.transient_pareto_alpha : c.network_pareto_alpha;
    require(rate >= 0.0 && rate <= 1e4, k + "_rate_per_s", "must lie in [0, 1e4]");
    require(duration > 0.0 && duration <= 1e9, k + "_mean_duration_s", "must lie in (0, 1e9]");
    require(lo >= 1.0 && lo <= 1000.0, k + "_min_slowdown", "must lie in [1, 1000]");
    require(alpha > 0.0 && alpha <= 1000.0, k + "_pareto_alpha", "must lie in (0, 1000]");
    require(hi >= lo && hi <= 1000.0, k + "_max_slowdown",
            "must lie in [" + k + "_min_slowdown, 1000]");
  }
  require(c.colocated_fraction >= 0.0 && c.colocated_fraction <= 1.0, "colocated_fraction",
          "must lie in [0, 1]");
  require(c.colocated_duty > 0.0 && c.colocated_duty < 1.0, "colocated_duty", "must lie in (0, 1)");
  // A tenant's phases shorter than a millisecond (a kernel's time slice) are not a co-located
  // job's, and each costs the simulation two events.
  const double period = c.colocated_period_s;
  require((c.colocated_fraction > 0.0 ? period >= 1e-3 : period > 0.0) && period <= 1e9,
          "colocated_period_s",
          c.colocated_fraction > 0.0 ? "must lie in [1e-3, 1e9] with a colocated_fraction"
                                     : "must lie in (0, 1e9]");
  require(c.failure_rate_per_s >= 0.0 && c.failure_rate_per_s <= 1e4, "failures.rate_per_s",
          "must lie in [0, 1e4]");
  require(c.failure_restart_s >= 0.0 && c.failure_restart_s <= 1e9, "failures.restart_s",
          "must lie in [0, 1e9]");
  require(c.server_failure_rate_per_s >= 0.0 && c.server_failure_rate_per_s <= 1e4,
          "failures.server_rate_per_s", "must lie in [0, 1e4]");
  const std::string& f = c.trace_format;
  require(f.empty() || f == "pai" || f == "alibaba-v2018" || f == "alibaba-v2017" || f == "generic",
          "trace.format", "must be empty, pai, alibaba-v2018, alibaba-v2017 or generic");
  require(f.empty() || !c.trace_path.empty(), "trace.path", "must name a file");
  require(!f.empty() || c.trace_path.empty(), "trace.format",
          "must say what kind of trace trace.path is (pai, alibaba-v2018, alibaba-v2017, generic)");
  require(
      c.trace_mapping == "in_order" || c.trace_mapping == "random" || c.trace_mapping == "explicit",
      "trace.mapping", "must be in_order, random or explicit");
  require(c.trace_mapping != "explicit" || !c.trace_machines.empty(), "trace.machines",
          "must list the trace's workers or machines for an explicit mapping");
  require(c.trace_machines.empty() || c.trace_mapping == "explicit", "trace.machines",
          "is read only with mapping explicit");
  require(c.trace_offset >= 0.0 && std::isfinite(c.trace_offset), "trace.offset",
          "must not be negative");
  require(c.trace_time_scale > 0.0 && std::isfinite(c.trace_time_scale), "trace.time_scale",
          "must be positive");
  require(c.trace_intensity >= 0.0 && c.trace_intensity <= 10.0, "trace.intensity",
          "must lie in [0, 10]");
  require(c.trace_intensity == 1.0 || c.trace_format == "pai", "trace.intensity",
          "scales a pai trace's slowdowns; a usage trace's load_share and net_share scale its "
          "load");
  require(c.trace_load_share >= 0.0, "trace.load_share", "must not be negative");
  require(c.trace_min_speed > 0.0 && c.trace_min_speed <= 1.0, "trace.min_speed",
          "must lie in (0, 1]");
  require(c.trace_net_share >= 0.0, "trace.net_share", "must not be negative");
  require(c.trace_min_bandwidth > 0.0 && c.trace_min_bandwidth <= 1.0, "trace.min_bandwidth",
          "must lie in (0, 1]");
}

std::vector<double> persistent_slowdowns(const StragglerConfig& c, int workers) {
  const std::vector<bool> slow = chosen(c.persistent_fraction, c.seed, kStreamPersistent, workers);
  std::vector<double> factor(workers, 1.0);
  for (int w = 0; w < workers; ++w)
    if (slow[w]) factor[w] = c.persistent_slowdown;
  return factor;
}

std::vector<bool> colocated_workers(const StragglerConfig& c, int workers) {
  return chosen(c.colocated_fraction, c.seed, kStreamColocated, workers);
}

std::vector<Episode> transient_episodes(const StragglerConfig& c, int worker, double horizon_s) {
  return episodes({c.transient_rate_per_s, c.transient_mean_duration_s, c.transient_min_slowdown,
                   c.transient_pareto_alpha, c.transient_max_slowdown},
                  c.seed, kStreamTransient, worker, horizon_s);
}

std::vector<Episode> network_episodes(const StragglerConfig& c, int worker, double horizon_s) {
  return episodes({c.network_rate_per_s, c.network_mean_duration_s, c.network_min_slowdown,
                   c.network_pareto_alpha, c.network_max_slowdown},
                  c.seed, kStreamNetwork, worker, horizon_s);
}

namespace {

std::vector<bool> chosen(double fraction, uint64_t seed, uint64_t which, int workers) {
  std::vector<int> order(workers);
  std::iota(order.begin(), order.end(), 0);
  auto rng = straggler_rng(seed, which, 0);
  std::shuffle(order.begin(), order.end(), rng);
  const auto count = static_cast<int>(std::llround(fraction * workers));
  std::vector<bool> picked(workers, false);
  for (int i = 0; i < count; ++i) picked[order[i]] = true;
  return picked;
}

std::vector<Episode> episodes(const EpisodeLaw& law, uint64_t seed, uint64_t which, int worker,
                              double horizon_s) {
  std::vector<Episode> out;
  if (law.rate_per_s <= 0.0) return out;
  auto rng = straggler_rng(seed, which, static_cast<uint64_t>(worker));
  std::exponential_distribution<double> gap(law.rate_per_s);
  std::exponential_distribution<double> duration(1.0 / law.mean_duration_s);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  double t = 0.0;
  while (true) {
    t += gap(rng);
    if (t >= horizon_s) break;
    const double length = duration(rng);
    // Pareto by inversion: x_m / U^(1 / alpha).
    const double factor = std::min(
        law.max_slowdown, law.min_slowdown / std::pow(1.0 - uniform(rng), 1.0 / law.pareto_alpha));
    out.push_back({t, t + length, factor});
    t += length;
  }
  return out;
}

}  // namespace

double step_noise(const StragglerConfig& c, int worker, int64_t step) {
  if (c.noise_cv <= 0.0) return 1.0;
  auto rng = straggler_rng(c.seed, kStreamNoise,
                    (static_cast<uint64_t>(worker) << 40) ^ static_cast<uint64_t>(step));
  const double sigma2 = std::log1p(c.noise_cv * c.noise_cv);
  std::normal_distribution<double> normal(-0.5 * sigma2, std::sqrt(sigma2));
  return std::exp(normal(rng));
}

WorkerFailures::WorkerFailures(const StragglerConfig& c, int worker)
    : rate_(c.failure_rate_per_s),
      rng_(straggler_rng(c.seed, kStreamFailure, static_cast<uint64_t>(worker))) {
  back(0.0);
}

void WorkerFailures::back(double now) {
  if (rate_ > 0.0) next_ = now + std::exponential_distribution<double>(rate_)(rng_);
}

ServerFailure first_server_failure(const StragglerConfig& c, int shards) {
  ServerFailure first;
  if (c.server_failure_rate_per_s <= 0.0) return first;
  for (int p = 0; p < shards; ++p) {
    auto rng = straggler_rng(c.seed, kStreamServerFailure, static_cast<uint64_t>(p));
    const double t = std::exponential_distribution<double>(c.server_failure_rate_per_s)(rng);
    if (t < first.time) first = {t, p};
  }
  return first;
}

}  // namespace gbasim
