// gbasim run: one simulated training run from an experiment spec.
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>
#include <optional>

#include "base/error.h"
#include "base/files.h"
#include "cli/commands.h"
#include "cli/engine_args.h"
#include "experiment/result.h"
#include "sim/simulation.h"
#include "sim/timeline.h"

namespace gbasim {

namespace po = boost::program_options;

namespace {

// The timeline's options: a file, a window "FROM:TO" of simulated seconds, a cap of events.
Timeline parse_timeline(const std::string& path, const std::string& window, int64_t events) {
  if (path.empty()) throw po::error("--timeline-window and --timeline-events need --timeline FILE");
  if (events < 1) throw po::error("--timeline-events must be at least 1");
  double from = 0.0, to = std::numeric_limits<double>::infinity();
  if (!window.empty()) {
    const size_t colon = window.find(':');
    char* end = nullptr;
    bool ok = colon != std::string::npos;
    if (ok) {
      const std::string a = window.substr(0, colon), b = window.substr(colon + 1);
      from = std::strtod(a.c_str(), &end);
      ok = !a.empty() && *end == '\0';
      to = std::strtod(b.c_str(), &end);
      ok = ok && !b.empty() && *end == '\0';
    }
    if (!ok || !std::isfinite(from) || !std::isfinite(to) || from < 0.0 || to <= from) {
      const std::string what = "simulated seconds with 0 <= FROM < TO, not '" + window + "'";
      throw po::error("--timeline-window must be FROM:TO, " + what);
    }
  }
  return Timeline(from, to, events);
}

}  // namespace

int run_run(int argc, char** argv) {
  // SimGrid's own log stays quiet unless --log= asks otherwise.
  EngineArgs started = start_engine(argc, argv);
  const std::vector<std::string>& args = started.args;

  std::string spec_path, out_path, timeline_path, window_text;
  std::vector<std::string> overrides, fragments;
  bool quiet = false, profile = false;
  double progress_every_s = 10.0;
  int64_t timeline_events = 1000000;
  po::options_description desc(
      "gbasim run --spec FILE [options]\n\n"
      "Simulates one training run on a SimGrid cluster and writes its JSON result.\n"
      "SimGrid's --cfg=key:value and --log=... arguments are accepted too.\n"
      "Environment: GBASIM_DATA_CACHE=DIR keeps generated synthetic data in DIR for later runs\n"
      "(docs/data.md).\n\nOptions");
  desc.add_options()("help,h", "show this help")(
      "spec", po::value(&spec_path)->value_name("FILE"),
      "experiment spec (JSON; docs/spec.md lists every key)")(
      "with", po::value(&fragments)->composing()->value_name("FILE"),
      "a spec fragment merged over the spec before --set, e.g. gbasim tune's tuned.json "
      "(repeatable)")(
      "set", po::value(&overrides)->composing()->value_name("KEY=VALUE"),
      "override a spec key, e.g. --set training.mode=gba --set training.workers=8 (repeatable)")(
      "out", po::value(&out_path)->value_name("FILE"),
      "result JSON (default: out/run-<mode>.json)")("quiet,q", po::bool_switch(&quiet),
                                                    "no progress lines on standard error")(
      "profile", po::bool_switch(&profile),
      "also print where the engine's wall time went: the model's math, evaluation and the "
      "simulator itself, and the messages a second (bench/sim_bench.sh reads it)")(
      "progress-every", po::value(&progress_every_s)->value_name("S")->default_value(10.0),
      "wall seconds after which a line without an evaluation says where the run stands "
      "(simulated time, steps, messages; timing-only runs have only these)")(
      "timeline", po::value(&timeline_path)->value_name("FILE"),
      "also write the run's activity as a Trace Event file that ui.perfetto.dev and "
      "chrome://tracing open: each worker's compute, pulls, pushes, collectives, waits and "
      "failures, the updates and snapshots, staleness and the gradients waiting for an update "
      "(docs/timeline.md); the result is the same with or without it")(
      "timeline-window", po::value(&window_text)->value_name("FROM:TO"),
      "only what overlaps these simulated seconds, e.g. 0:0.5 (default: the whole run)")(
      "timeline-events", po::value(&timeline_events)->value_name("N")->default_value(1000000),
      "at most N events (about 80 bytes each); recording stops there and the file says so");
  po::variables_map vm;
  if (!parse_options(args, desc, vm)) return 0;
  if (spec_path.empty()) throw po::error("--spec FILE is required");
  if (vm.count("out") && out_path.empty()) throw po::error("--out: the file name is empty");
  if (!(progress_every_s > 0.0 && std::isfinite(progress_every_s)))
    throw po::error("--progress-every must be a positive number of seconds");

  std::optional<Timeline> timeline;
  if (!timeline_path.empty() || vm.count("timeline-window") || !vm["timeline-events"].defaulted())
    timeline.emplace(parse_timeline(timeline_path, window_text, timeline_events));
  const ExperimentSpec spec = load_spec(spec_path, with_fragments(fragments, overrides));
  if (out_path.empty()) out_path = "out/run-" + mode_name(spec.training.mode) + ".json";
  check_output_file(out_path, "result");
  if (timeline) {
    if (std::filesystem::absolute(timeline_path).lexically_normal() ==
        std::filesystem::absolute(out_path).lexically_normal())
      throw po::error("--timeline " + timeline_path +
                      " is the result's file (--out): name another");
    check_output_file(timeline_path, "timeline");
  }
  const std::string mode = mode_name(spec.training.mode);
  const auto start = std::chrono::steady_clock::now();
  auto wall = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  if (!quiet)
    std::cerr << "gbasim run: " << mode << ", " << spec.training.num_workers << " workers, "
              << network_solver_name(spec.cluster.network_solver)
              << " network model, preparing data\n"
              << "gbasim run: " << timed_workload_line(spec) << "\n";
  SimulationCost cost;
  double last_line_s = 0.0;  // when the last progress or evaluation line was printed
  // A line of where the run stands: its mode, simulated time, global step and samples, then
  // `rest`, then the wall time.
  auto print_line = [&](double time, int64_t step, int64_t samples, const char* rest) {
    last_line_s = wall();
    char line[240];
    std::snprintf(line, sizeof line,
                  "  %-6s t=%9.3f s  step %7lld  samples %9lld  %s  (wall %.0f s)\n", mode.c_str(),
                  time, static_cast<long long>(step), static_cast<long long>(samples), rest,
                  last_line_s);
    std::cerr << line;
  };
  ProgressWatch progress;
  progress.every_s = progress_every_s;
  if (!quiet) {
    progress.report = [&](const Progress& p) {
      if (wall() - last_line_s < progress_every_s) return;  // an evaluation line said it
      char rest[80];
      std::snprintf(rest, sizeof rest, "worker steps %lld  messages %lld",
                    static_cast<long long>(p.worker_steps), static_cast<long long>(p.messages));
      print_line(p.time, p.global_step, p.samples, rest);
    };
  }
  const nlohmann::ordered_json result = run_simulation(
      spec,
      [&](const EvaluationPoint& p) {
        if (quiet) return;
        char rest[80];
        std::snprintf(rest, sizeof rest, "test AUC %.4f  log-loss %.4f", p.auc, p.logloss);
        print_line(p.time, p.global_step, p.samples, rest);
      },
      &cost, progress, timeline ? &*timeline : nullptr);
  write_json_atomically(out_path, result);
  if (timeline) {
    timeline->write(timeline_path, total_workers(spec));
    if (!quiet) {
      std::cerr << "gbasim run: timeline: " << timeline->events() << " events in " << timeline_path
                << (timeline->truncated() ? " (stopped at --timeline-events; later events left out)"
                                          : "")
                << "\n";
    }
  }
  if (result.contains("trace") && result["trace"]["wraps"].get<bool>()) {
    std::cerr << "gbasim run: note: some trace workers or machines are replayed by more than "
                 "one of the "
              << spec.training.num_workers
              << " simulated workers (too few in the trace, or listed twice; result: "
                 "trace.assignment)\n";
  }

  const auto& s = result["summary"];
  if (s["status"] != "completed") {
    std::cerr << "gbasim run: the run ended with status \"" << s["status"].get<std::string>()
              << "\": " << s["status_detail"].get<std::string>() << '\n';
  }
  char time_to_auc[32] = "not reached";
  if (!s["time_to_auc"].is_null())
    std::snprintf(time_to_auc, sizeof time_to_auc, "%.3f s", s["time_to_auc"].get<double>());
  char final_auc[32] = "-";
  if (s["final_auc"].is_number() && std::isfinite(s["final_auc"].get<double>()))
    std::snprintf(final_auc, sizeof final_auc, "%.4f", s["final_auc"].get<double>());
  std::printf("%-8s %-16s %-10s %-12s %-14s %-10s %s\n", "mode", "time-to-AUC", "final AUC",
              "global steps", "mean staleness", "dropped", "simulated time");
  std::printf("%-8s %-16s %-10s %-12lld %-14.3f %-10lld %.3f s\n", mode.c_str(), time_to_auc,
              final_auc, static_cast<long long>(s["global_steps"].get<int64_t>()),
              s["mean_staleness"].get<double>(),
              static_cast<long long>(s["gradients"]["dropped"].get<int64_t>()),
              s["simulated_time"].get<double>());
  if (profile) {
    // Wall-clock costs stay out of the result, which must not depend on the machine.
    const double simulator_s = cost.wall_s - cost.math_s - cost.evaluation_s;
    std::fprintf(stderr,
                 "gbasim run: wall %.3f s in the engine: model math %.3f s, evaluation %.3f s, "
                 "simulator %.3f s (update rule %.3f s of it) "
                 "(%lld messages, %.0f a second); overhead (math + simulator) / math = %.3f\n",
                 cost.wall_s, cost.math_s, cost.evaluation_s, simulator_s, cost.rule_s,
                 static_cast<long long>(cost.messages),
                 static_cast<double>(cost.messages) / cost.wall_s,
                 cost.math_s > 0.0 ? (cost.math_s + simulator_s) / cost.math_s : 0.0);
  }
  if (!quiet) {
    std::cerr << "gbasim run: target AUC " << spec.evaluation.target_auc << "; wall " << wall()
              << " s in all; wrote " << out_path << '\n';
  }
  return 0;
}

}  // namespace gbasim
