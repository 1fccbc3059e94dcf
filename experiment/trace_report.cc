// gbasim trace-stats' reports of a trace (experiment/trace_report.h).
#include "experiment/trace_report.h"

#include <cstdio>

#include "base/files.h"
#include "experiment/result.h"
#include "traces/pai_trace.h"

namespace gbasim {

void report_usage_trace(const std::string& path, const std::string& format,
                       const UsageMapping& mapping, const std::vector<std::string>& machines,
                       double threshold, const std::string& json_path) {
  const UsageTrace trace = read_usage_trace(path, format, mapping, machines);
  const UsageStats stats = usage_stats(trace, threshold);
  std::printf("%s (%s): %zu machines, time %.0f..%.0f s, %lld rows, %lld invalid values (gaps)\n",
              path.c_str(), format.c_str(), stats.machines.size(), stats.first_time,
              stats.last_time, static_cast<long long>(trace.rows),
              static_cast<long long>(trace.invalid_values));
  std::printf(
      "slowdown = 1 / speed factor (speed = max(%.2f, 1 - %.2f x cpu%%)); bandwidth "
      "factor = max(%.2f, 1 - %.2f x net%%)\n",
      mapping.min_speed, mapping.load_share, mapping.min_bandwidth, mapping.net_share);
  std::printf(
      "coefficient of variation of slowdowns across machines at one time: median %.3f, "
      "p90 %.3f\n\n",
      stats.cv_median, stats.cv_p90);
  std::printf("%-16s %-8s %-8s %-8s %-8s %-10s %-10s\n", "machine", "samples", "p50", "p90", "max",
              "bw p50", "bw min");
  for (const auto& m : stats.machines) {
    std::printf("%-16s %-8lld %-8.3f %-8.3f %-8.3f %-10.3f %-10.3f\n", m.machine.c_str(),
                static_cast<long long>(m.speed_samples), m.slowdown_q50, m.slowdown_q90,
                m.slowdown_max, m.bandwidth_q50, m.bandwidth_min);
  }
  std::printf("\nslow episodes (slowdown >= %.2f): %zu\n", threshold, stats.episodes.size());
  if (!stats.episodes.empty())
    std::printf("%-16s %-24s %-8s %-8s %-8s\n", "machine", "time (s)", "samples", "mean", "peak");
  for (const auto& e : stats.episodes) {
    char span[48];
    std::snprintf(span, sizeof span, "%.0f..%.0f", e.first_time, e.last_time);
    std::printf("%-16s %-24s %-8lld %-8.3f %-8.3f\n", e.machine.c_str(), span,
                static_cast<long long>(e.samples), e.mean, e.peak);
  }
  if (json_path.empty()) return;
  nlohmann::ordered_json doc;
  doc["trace"] = path;
  doc["format"] = format;
  doc["rows"] = trace.rows;
  doc["invalid_values"] = trace.invalid_values;
  doc["time"] = {stats.first_time, stats.last_time};
  doc["cv_across_machines"] = {{"median", stats.cv_median}, {"p90", stats.cv_p90}};
  doc["machines"] = nlohmann::ordered_json::array();
  for (const auto& m : stats.machines) {
    doc["machines"].push_back({{"machine", m.machine},
                               {"speed_samples", m.speed_samples},
                               {"bandwidth_samples", m.bandwidth_samples},
                               {"p50", m.slowdown_q50},
                               {"p90", m.slowdown_q90},
                               {"max", m.slowdown_max},
                               {"bandwidth_p50", m.bandwidth_q50},
                               {"bandwidth_min", m.bandwidth_min}});
  }
  doc["episodes"] = nlohmann::ordered_json::array();
  for (const auto& e : stats.episodes) {
    doc["episodes"].push_back({{"machine", e.machine},
                               {"first_time", e.first_time},
                               {"last_time", e.last_time},
                               {"samples", e.samples},
                               {"mean", e.mean},
                               {"peak", e.peak}});
  }
  doc["series"] = nlohmann::ordered_json::array();
  for (const MachineUsage& m : trace.machines) {
    std::vector<double> slowdowns;
    for (double v : m.speed.values) slowdowns.push_back(1.0 / v);
    doc["series"].push_back({{"machine", m.machine},
                             {"times", m.speed.times},
                             {"slowdowns", slowdowns},
                             {"bandwidth_times", m.bandwidth.times},
                             {"bandwidth_factors", m.bandwidth.values}});
  }
  write_json_atomically(json_path, doc);
}

void report_pai_trace(const std::string& path, double threshold, const std::string& json_path) {
  const PaiTrace trace = read_pai_trace(path);
  const TraceStats stats = trace_stats(trace, threshold);
  std::printf("%s: %zu workers, iterations %lld..%lld, %lld samples, %lld invalid (gaps)\n",
              path.c_str(), stats.workers.size(), static_cast<long long>(stats.first_iteration),
              static_cast<long long>(stats.last_iteration), static_cast<long long>(trace.samples),
              static_cast<long long>(trace.invalid_samples));
  std::printf("coefficient of variation across workers at one iteration: median %.3f, p90 %.3f\n\n",
              stats.cv_median, stats.cv_p90);
  std::printf("%-8s %-8s %-8s %-8s %-8s\n", "worker", "p50", "p90", "p99", "max");
  for (const auto& w : stats.workers) {
    std::printf("%-8d %-8.3f %-8.3f %-8.3f %-8.3f\n", w.worker, w.q50, w.q90, w.q99, w.max);
  }
  std::printf("\nstraggler episodes (slowdown >= %.2f): %zu\n", threshold, stats.episodes.size());
  if (!stats.episodes.empty())
    std::printf("%-8s %-22s %-8s %-8s %-8s\n", "worker", "iterations", "samples", "mean", "peak");
  for (const auto& e : stats.episodes) {
    char span[40];
    std::snprintf(span, sizeof span, "%lld..%lld", static_cast<long long>(e.first_iteration),
                  static_cast<long long>(e.last_iteration));
    std::printf("%-8d %-22s %-8d %-8.3f %-8.3f\n", e.worker, span, e.samples, e.mean, e.peak);
  }
  if (json_path.empty()) return;
  nlohmann::ordered_json doc;
  doc["trace"] = path;
  doc["samples"] = trace.samples;
  doc["invalid_samples"] = trace.invalid_samples;
  doc["iterations"] = {stats.first_iteration, stats.last_iteration};
  doc["cv_across_workers"] = {{"median", stats.cv_median}, {"p90", stats.cv_p90}};
  for (const auto& w : stats.workers) {
    doc["workers"].push_back(
        {{"worker", w.worker}, {"p50", w.q50}, {"p90", w.q90}, {"p99", w.q99}, {"max", w.max}});
  }
  doc["episodes"] = nlohmann::ordered_json::array();
  for (const auto& e : stats.episodes) {
    doc["episodes"].push_back({{"worker", e.worker},
                               {"first_iteration", e.first_iteration},
                               {"last_iteration", e.last_iteration},
                               {"samples", e.samples},
                               {"mean", e.mean},
                               {"peak", e.peak}});
  }
  for (const WorkerSlowdowns& w : trace.workers) {
    doc["series"].push_back(
        {{"worker", w.worker}, {"iterations", w.iterations}, {"slowdowns", w.slowdowns}});
  }
  write_json_atomically(json_path, doc);
}

}  // namespace gbasim
