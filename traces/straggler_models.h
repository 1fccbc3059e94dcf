// Synthetic straggler models as plain per-worker slowdown series (no simulator types), drawn
// from a seed so that the simulator and the real-hardware runtime inject the same slowdowns.
// A slowdown k means a step takes k times as long as on an undisturbed host. The defaults
// are fitted to Alibaba PAI mini-batch times (scripts/fit_stragglers.py; README).
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "base/random.h"

namespace gbasim {

struct StragglerConfig {
  // Persistent: this fraction of the workers (chosen from the seed) is slower by `slowdown`
  // for the whole run.
  double persistent_fraction = 0.2;
  double persistent_slowdown = 1.08;
  // Per-step noise: every step's compute is multiplied by a log-normal factor of mean 1
  // and this coefficient of variation.
  double noise_cv = 0.05;
  // Transient: slow episodes arrive at each worker as a Poisson process; each lasts an
  // exponential time and slows the worker by a Pareto-distributed factor (heavy tail)
  // capped at max_slowdown.
  double transient_rate_per_s = 0.008;
  double transient_mean_duration_s = 0.1;
  double transient_min_slowdown = 1.5;
  double transient_pareto_alpha = 2.0;
  double transient_max_slowdown = 10.0;
  // Network: slow episodes of a worker's link (the same laws); during one the link's
  // bandwidth is divided by the episode's factor.
  double network_rate_per_s = 0.0;
  double network_mean_duration_s = 1.0;
  double network_min_slowdown = 2.0;
  double network_pareto_alpha = 2.0;
  double network_max_slowdown = 20.0;
  // Co-located load: this fraction of the workers (chosen from the seed) shares its host
  // with another tenant that computes for `colocated_duty` of every `colocated_period_s`.
  double colocated_fraction = 0.0;
  double colocated_duty = 0.5;
  double colocated_period_s = 0.1;
  // Failures (docs/spec.md, "Failures"): each worker fails as a Poisson process of
  // failure_rate_per_s over the time it is up and is back failure_restart_s after each
  // failure, having lost its batch and its token; each parameter-server shard fails as one
  // of server_failure_rate_per_s, and the first such failure ends the run.
  double failure_rate_per_s = 0.0;
  double failure_restart_s = 5.0;
  double server_failure_rate_per_s = 0.0;
  // Replay of a production trace, on top of the models above (docs/spec.md, "Trace replay").
  // "pai": per-worker mini-batch times (traces/pai_trace.h), indexed by the worker's step:
  // each step's compute is also multiplied by the trace's slowdown. "alibaba-v2018",
  // "alibaba-v2017", "generic": per-machine usage (traces/usage_trace.h), indexed by time:
  // the worker's host speed and link bandwidth follow its machine's factors.
  std::string trace_format;  // "" (none), "pai", "alibaba-v2018", "alibaba-v2017", "generic"
  std::string trace_path;
  std::string trace_mapping = "in_order";   // or "random", "explicit"
  std::vector<std::string> trace_machines;  // explicit: the trace's worker or machine ids
  // Where replay starts: iterations after the first (pai), or trace seconds after the
  // trace's first time stamp (the usage formats).
  double trace_offset = 0.0;
  double trace_time_scale = 1.0;  // trace seconds per simulated second (the usage formats)
  // pai: each slowdown s replays as max(0.1, 1 + intensity x (s - 1)): 0 takes the trace's
  // stragglers away, 2 doubles every worker's departure from the median.
  double trace_intensity = 1.0;
  // Utilisation -> factors (traces/usage_trace.h, UsageMapping).
  double trace_load_share = 1.0;
  double trace_min_speed = 0.05;
  double trace_net_share = 1.0;
  double trace_min_bandwidth = 0.05;
  // The realisation's seed: which workers are slow, the noise, the episodes, the failures. A
  // spec's stragglers.seed, absent or 0, is the spec's own seed (resolved when it is read).
  uint64_t seed = 1;
};

struct Episode {
  double start = 0.0, end = 0.0;  // seconds
  double slowdown = 1.0;
};

// Throws InputError naming the first invalid key.
void validate(const StragglerConfig& config);

// One factor per worker: persistent_slowdown for the chosen workers, 1 for the others.
std::vector<double> persistent_slowdowns(const StragglerConfig& config, int workers);

// The transient (host) episodes of `worker` that start before `horizon_s`, in time order,
// not overlapping.
std::vector<Episode> transient_episodes(const StragglerConfig& config, int worker,
                                        double horizon_s);
// The same for the worker's network link.
std::vector<Episode> network_episodes(const StragglerConfig& config, int worker, double horizon_s);

// Whether each worker has a co-located tenant.
std::vector<bool> colocated_workers(const StragglerConfig& config, int workers);

// The noise factor of `worker`'s step number `step`.
double step_noise(const StragglerConfig& config, int worker, int64_t step);

// When `worker` fails: next() is the time of its next failure (infinity without failures);
// after a failure, back(now) draws the one after, an exponential up time from `now`.
class WorkerFailures {
 public:
  WorkerFailures(const StragglerConfig& config, int worker);
  double next() const { return next_; }
  void back(double now);

 private:
  double rate_;
  Rng rng_;
  double next_ = std::numeric_limits<double>::infinity();
};

// The first failure of any of `shards` parameter-server shards: its time (infinity without
// server failures) and the shard.
struct ServerFailure {
  double time = std::numeric_limits<double>::infinity();
  int shard = -1;
};
ServerFailure first_server_failure(const StragglerConfig& config, int shards);

}  // namespace gbasim
