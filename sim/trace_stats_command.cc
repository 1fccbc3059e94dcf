// gbasim trace-stats: what a simulated worker replaying a mini-batch-time trace will see.
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>

#include "models/errors.h"
#include "sim/commands.h"
#include "sim/output.h"
#include "traces/pai_trace.h"

namespace gbasim {

namespace po = boost::program_options;

int run_trace_stats(const std::vector<std::string>& args) {
  std::string path, json_path;
  double threshold = 1.5;
  po::options_description desc(
      "gbasim trace-stats FILE [options]\n\n"
      "Per-worker slowdowns (time over the median worker at the same iteration) of an Alibaba\n"
      "PAI mini-batch-time trace, their spread across workers, and straggler episodes\n\nOptions");
  desc.add_options()("help,h", "show this help")("trace", po::value(&path)->value_name("FILE"),
                                                 "the trace (CSV)")(
      "threshold", po::value(&threshold)->default_value(threshold),
      "an episode is a run of a worker's consecutive samples at or above this slowdown")(
      "json", po::value(&json_path)->value_name("FILE"),
      "also write the statistics, and every worker's slowdown series, as JSON (plot it with "
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

  PaiTrace trace;
  try {
    trace = read_pai_trace(path);
  } catch (const TraceError& e) {
    throw InputError(e.what());
  }
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
      doc["series"].push_back({{"worker", w.worker}, {"iterations", w.iterations}, {"slowdowns", w.slowdowns}});
    }
    write_json_atomically(json_path, doc);
  }
  return 0;
}

}  // namespace gbasim
