// Per-worker mini-batch times in the Alibaba PAI format (cluster-trace-gpu-v2020,
// mini-batch-time): CSV with a header naming at least `worker`, `time` (the iteration) and
// `batch_time_norm`. A worker's slowdown at an iteration is its time over the median of the
// workers sampled at that iteration.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/error.h"

namespace gbasim {

struct WorkerSlowdowns {
  int worker = 0;                   // the trace's worker id
  std::vector<int64_t> iterations;  // increasing
  std::vector<double> slowdowns;    // one per iteration
};

struct PaiTrace {
  std::vector<WorkerSlowdowns> workers;  // by increasing worker id
  int64_t samples = 0;                   // valid (worker, iteration) samples read
  int64_t invalid_samples = 0;           // empty, zero or negative times: treated as gaps
};

// Rows with an empty, zero or negative batch_time_norm are gaps, counted in invalid_samples;
// a row that is not CSV of the header's width, or a non-numeric value, is a InputError.
PaiTrace read_pai_trace(const std::string& path);

// The slowdown at `iteration`: linear between the samples around it, the first sample's
// value before the first, the last one's after the last (held).
double slowdown_at(const WorkerSlowdowns& series, double iteration);

// Simulated workers replaying trace workers (traces/trace_mapping.h: in_order, random or
// explicit, where `chosen` lists trace worker ids); worker w's step k replays its trace
// worker's slowdown at iteration (the trace's first iteration) + offset + k.
class TraceReplay {
 public:
  TraceReplay(PaiTrace trace, const std::string& mapping, const std::vector<std::string>& chosen,
              double offset, int workers, uint64_t seed, double intensity = 1.0);
  // The trace's slowdown, scaled by the intensity: max(kMinSlowdown, 1 + intensity x (s - 1)).
  double slowdown(int worker, int64_t step) const;
  static constexpr double kMinSlowdown = 0.1;
  const std::vector<int>& assignment() const { return assignment_; }  // trace worker ids
  bool wraps() const { return wraps_; }  // some trace worker is replayed more than once

 private:
  PaiTrace trace_;
  std::vector<size_t> series_;  // index into trace_.workers, per simulated worker
  std::vector<int> assignment_;
  double start_ = 0.0;
  double intensity_ = 1.0;
  bool wraps_ = false;
};

// What a simulated worker replaying the trace will see.
struct TraceStats {
  struct Worker {
    int worker = 0;
    double q50 = 0.0, q90 = 0.0, q99 = 0.0, max = 0.0;  // of its slowdowns
  };
  struct Episode {
    int worker = 0;
    int64_t first_iteration = 0, last_iteration = 0;  // samples at or above the threshold
    int samples = 0;
    double mean = 0.0, peak = 0.0;
  };
  int64_t first_iteration = 0, last_iteration = 0;
  std::vector<Worker> workers;
  // Across workers at one iteration. Quantiles here take the lower of the two nearest ranks.
  double cv_median = 0.0, cv_p90 = 0.0;
  std::vector<Episode> episodes;  // runs of consecutive samples >= threshold
};

TraceStats trace_stats(const PaiTrace& trace, double episode_threshold);

}  // namespace gbasim
