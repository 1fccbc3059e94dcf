// Per-machine usage over time, replayed by simulated time: Alibaba cluster-trace-v2018
// machine_usage.csv, cluster-trace-v2017 server_usage.csv, or a generic CSV. Each machine's
// rows become two step functions of the trace's clock: the speed left to a worker on that
// machine and its link's bandwidth, both as factors of the undisturbed value.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "traces/straggler_models.h"

namespace gbasim {

// How utilisation becomes the factors (the co-located load takes its share of the host):
//   speed     = max(min_speed,     1 - load_share x cpu_util / 100)
//   bandwidth = max(min_bandwidth, 1 - net_share  x max(net_in, net_out) / 100)
struct UsageMapping {
  double load_share = 1.0;
  double min_speed = 0.05;
  double net_share = 1.0;
  double min_bandwidth = 0.05;
};

// The formats read: "alibaba-v2018" (no header: machine_id, time_stamp, cpu_util_percent,
// mem_util_percent, mem_gps, mkpi, net_in, net_out, disk_io_percent), "alibaba-v2017"
// (no header: timestamp, machine id, cpu %, memory %, disk %, load1, load5, load15; no
// network columns, so bandwidth stays 1), and "generic" (a header naming host, time,
// speed_factor and optionally bandwidth_factor, in any order, factors given directly).
bool is_usage_format(const std::string& format);

// A step function: values[i] holds from times[i] until times[i + 1]; times increase.
struct StepSeries {
  std::vector<double> times, values;
};

// The value at `t`: the last sample at or before t, the first sample before the first,
// 1 when there is no sample at all.
double value_at(const StepSeries& series, double t);

struct MachineUsage {
  std::string machine;
  StepSeries speed, bandwidth;
};

struct UsageTrace {
  std::vector<MachineUsage> machines;  // the machines read, in order of first appearance
  double first_time = 0.0;             // the earliest valid time stamp in the whole file
  int64_t rows = 0;
  // Values that are missing or out of range (Alibaba: empty, -1, 101, outside [0, 100]; a
  // generic empty factor): gaps, skipped, so the previous value holds.
  int64_t invalid_values = 0;
};

// The machines of a file in order of first appearance, and its earliest time stamp (a first
// pass over a file too large to hold).
struct UsageIndex {
  std::vector<std::string> machines;
  double first_time = 0.0;
};
UsageIndex index_usage_trace(const std::string& path, const std::string& format);

// Reads the machines in `only` (all when empty). A row of the wrong width, a non-numeric
// value or time, or a non-positive generic factor is a InputError naming file:line. Rows of
// a machine may come in any order; of two rows with the same time stamp the later one wins.
UsageTrace read_usage_trace(const std::string& path, const std::string& format,
                            const UsageMapping& mapping, const std::vector<std::string>& only = {});

// A step function of the trace's clock as changes in simulated time: trace time
// first_time + offset + t x time_scale is simulated time t. The first change is at 0 (the
// value in force then); the others follow at increasing times, each differing from the last.
std::vector<std::pair<double, double>> replay_changes(const StepSeries& series, double first_time,
                                                      double offset, double time_scale);

// A usage trace as `workers` simulated workers replay it (the config's format, path,
// mapping, offset, time scale and utilisation mapping): each worker's machine and its speed
// and bandwidth changes in simulated time (replay_changes). Throws InputError.
struct UsageReplay {
  std::vector<std::string> machines;                                     // per worker
  std::vector<std::vector<std::pair<double, double>>> speed, bandwidth;  // per worker
  bool wraps = false;  // some machine is replayed by more than one worker
};
UsageReplay plan_usage_replay(const StragglerConfig& config, int workers, uint64_t seed);

// What simulated workers replaying the trace will see. Slowdown here is 1 / speed factor: a
// step's time over its time on an undisturbed host.
struct UsageStats {
  struct Machine {
    std::string machine;
    int64_t speed_samples = 0, bandwidth_samples = 0;
    double slowdown_q50 = 1.0, slowdown_q90 = 1.0, slowdown_max = 1.0;  // of its samples
    double bandwidth_q50 = 1.0, bandwidth_min = 1.0;
  };
  struct Episode {
    std::string machine;
    double first_time = 0.0, last_time = 0.0;  // samples at or above the threshold
    int64_t samples = 0;
    double mean = 0.0, peak = 0.0;
  };
  double first_time = 0.0, last_time = 0.0;
  std::vector<Machine> machines;
  // Of the slowdowns across machines at each time stamp of any machine, values held;
  // quantiles take the lower of the two nearest ranks.
  double cv_median = 0.0, cv_p90 = 0.0;
  std::vector<Episode> episodes;  // runs of consecutive speed samples with slowdown >= threshold
};

UsageStats usage_stats(const UsageTrace& trace, double episode_threshold);

}  // namespace gbasim
