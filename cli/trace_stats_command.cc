// gbasim trace-stats: what a simulated worker replaying a trace will see.
#include <cmath>
#include <boost/algorithm/string/split.hpp>
#include <boost/program_options.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "base/error.h"
#include "base/files.h"
#include "cli/commands.h"
#include "experiment/result.h"
#include "traces/pai_trace.h"
#include "traces/usage_trace.h"

namespace gbasim {

namespace po = boost::program_options;

namespace {

// "pai" or "generic" from a header line; "" when the file has neither header.
std::string detect_format(const std::string& path) {
  std::ifstream in = open_input(path, "trace");
  std::string header;
  std::getline(in, header);
  if (header.find("batch_time_norm") != std::string::npos) return "pai";
  if (header.find("speed_factor") != std::string::npos) return "generic";
  return "";
}

void usage_trace_stats(const std::string& path, const std::string& format,
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

}  // namespace

int run_trace_stats(const std::vector<std::string>& args) {
  std::string path, json_path, format = "auto", machine_list;
  double threshold = 1.5;
  UsageMapping mapping;
  po::options_description desc(
      "gbasim trace-stats FILE [options]\n\n"
      "What simulated workers replaying a trace will see. A PAI mini-batch-time trace: per-worker\n"
      "slowdowns (time over the median worker's at the same iteration). A machine-usage trace\n"
      "(Alibaba 2018 machine_usage, 2017 server_usage, generic host,time,speed_factor[,\n"
      "bandwidth_factor]): per-machine slowdowns (1 / the speed left by co-located load) and\n"
      "bandwidth factors over time. Both: their spread across workers and the slow episodes.\n\n"
      "Options");
  desc.add_options()("help,h", "show this help")("trace", po::value(&path)->value_name("FILE"),
                                                 "the trace (CSV)")(
      "format", po::value(&format)->default_value(format),
      "auto (pai or generic, from the header), pai, alibaba-v2018, alibaba-v2017 or generic; the "
      "Alibaba files have no header, so name their format")(
      "machines", po::value(&machine_list)->value_name("ID,ID,..."),
      "usage traces: only these machines (a full Alibaba file has thousands)")(
      "threshold", po::value(&threshold)->default_value(threshold),
      "an episode is a run of consecutive samples at or above this slowdown")(
      "load-share", po::value(&mapping.load_share)->default_value(mapping.load_share),
      "usage traces: speed = max(min-speed, 1 - load-share x cpu_util / 100)")(
      "min-speed", po::value(&mapping.min_speed)->default_value(mapping.min_speed),
      "usage traces: the least speed factor")(
      "net-share", po::value(&mapping.net_share)->default_value(mapping.net_share),
      "usage traces: bandwidth = max(min-bandwidth, 1 - net-share x max(net_in, net_out) / 100)")(
      "min-bandwidth", po::value(&mapping.min_bandwidth)->default_value(mapping.min_bandwidth),
      "usage traces: the least bandwidth factor")(
      "json", po::value(&json_path)->value_name("FILE"),
      "also write the statistics, and every worker's or machine's series, as JSON (plot it with "
      "scripts/plot_trace.py)");
  po::positional_options_description positional;
  positional.add("trace", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(desc).positional(positional).run(), vm);
  if (vm.count("help")) {
    std::cout << desc << '\n';
    return 0;
  }
  po::notify(vm);
  if (path.empty()) throw po::error("a trace FILE is required");
  if (!json_path.empty()) check_output_file(json_path, "JSON");
  if (format == "auto") {
    format = detect_format(path);
    if (format.empty()) {
      throw InputError(path +
                       ": line 1 is neither a PAI header (batch_time_norm) nor a generic one "
                       "(speed_factor); give --format alibaba-v2018 or alibaba-v2017 for a "
                       "headerless Alibaba file");
    }
  }
  if (format != "pai" && !is_usage_format(format))
    throw po::error("--format must be auto, pai, alibaba-v2018, alibaba-v2017 or generic, not '" +
                    format + "'");
  if (!(mapping.min_speed > 0.0 && mapping.min_speed <= 1.0))
    throw po::error("--min-speed must lie in (0, 1]");
  if (!(mapping.min_bandwidth > 0.0 && mapping.min_bandwidth <= 1.0))
    throw po::error("--min-bandwidth must lie in (0, 1]");
  if (!(mapping.load_share >= 0.0 && std::isfinite(mapping.load_share)))
    throw po::error("--load-share must be a number, not negative");
  if (!(mapping.net_share >= 0.0 && std::isfinite(mapping.net_share)))
    throw po::error("--net-share must be a number, not negative");
  if (!(threshold >= 1.0 && std::isfinite(threshold)))
    throw po::error("--threshold must be a slowdown of at least 1 (a finite number)");
  if (format != "pai") {
    std::vector<std::string> machines;
    if (!machine_list.empty())
      boost::split(machines, machine_list, [](char ch) { return ch == ','; });
    usage_trace_stats(path, format, mapping, machines, threshold, json_path);
    return 0;
  }

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
  if (!json_path.empty()) {
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
  return 0;
}

}  // namespace gbasim
