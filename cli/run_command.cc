// gbasim run: one simulated training run from an experiment spec.
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <optional>

#include "base/error.h"
#include "base/files.h"
#include "cli/commands.h"
#include "cli/engine_args.h"
#include "cli/run_report.h"
#include "experiment/result.h"
#include "sim/simulation.h"
#include "sim/timeline.h"

namespace gbasim {

namespace po = boost::program_options;

namespace {

// What `gbasim run`'s options set.
struct RunOptions {
  std::string spec_path, out_path, timeline_path, window_text;
  std::vector<std::string> overrides, fragments;
  bool quiet = false, profile = false;
  double progress_every_s = 10.0;
  int64_t timeline_events = 1000000;
};

// The options' table, writing into `o`.
po::options_description run_options(RunOptions& o) {
  po::options_description desc(
      "gbasim run --spec FILE [options]\n\n"
      "Simulates one training run on a SimGrid cluster and writes its JSON result.\n"
      "SimGrid's --cfg=key:value and --log=... arguments are accepted too.\n"
      "Environment: GBASIM_DATA_CACHE=DIR keeps generated synthetic data in DIR for later runs\n"
      "(docs/data.md).\n\nOptions");
  desc.add_options()("help,h", "show this help")(
      "spec", po::value(&o.spec_path)->value_name("FILE"),
      "experiment spec (JSON; docs/spec.md lists every key)")(
      "with", po::value(&o.fragments)->composing()->value_name("FILE"),
      "a spec fragment merged over the spec before --set, e.g. gbasim tune's tuned.json "
      "(repeatable)")(
      "set", po::value(&o.overrides)->composing()->value_name("KEY=VALUE"),
      "override a spec key, e.g. --set training.mode=gba --set training.workers=8 (repeatable)")(
      "out", po::value(&o.out_path)->value_name("FILE"),
      "result JSON (default: out/run-<mode>.json); with /dev/stdout, the summary table goes to "
      "standard error")("quiet,q", po::bool_switch(&o.quiet),
                        "no progress lines on standard error")(
      "profile", po::bool_switch(&o.profile),
      "also print where the engine's wall time went: the model's math, evaluation and the "
      "simulator itself, and the messages a second (bench/sim_bench.sh reads it)")(
      "progress-every", po::value(&o.progress_every_s)->value_name("S")->default_value(10.0),
      "wall seconds after which a line without an evaluation says where the run stands "
      "(simulated time, steps, messages; timing-only runs have only these)")(
      "timeline", po::value(&o.timeline_path)->value_name("FILE"),
      "also write the run's activity as a Trace Event file that ui.perfetto.dev and "
      "chrome://tracing open: each worker's compute, pulls, pushes, collectives, waits and "
      "failures, the updates and snapshots, staleness and the gradients waiting for an update "
      "(docs/timeline.md); the result is the same with or without it")(
      "timeline-window", po::value(&o.window_text)->value_name("FROM:TO"),
      "only what overlaps these simulated seconds, e.g. 0:0.5 (default: the whole run)")(
      "timeline-events", po::value(&o.timeline_events)->value_name("N")->default_value(1000000),
      "at most N events (about 80 bytes each); recording stops there and the file says so");
  return desc;
}

// Writes the result and the timeline, both or neither, and says where the timeline went.
void write_with_timeline(const nlohmann::ordered_json& result, const std::string& out_path,
                         Timeline& timeline, const std::string& path, const ExperimentSpec& spec,
                         bool quiet) {
  write_texts_atomically({{out_path, json_text(result)},
                          {path, timeline.text(total_workers(spec), spec.cluster.ps_shards)}});
  if (quiet) return;
  std::cerr << "gbasim run: timeline: " << timeline.events() << " events in " << path
            << (timeline.truncated() ? " (stopped at --timeline-events; later events left out)"
                                     : "")
            << "\n";
}

}  // namespace

int run_run(int argc, char** argv) {
  // SimGrid's own log stays quiet unless --log= asks otherwise.
  EngineArgs started = start_engine(argc, argv);
  RunOptions o;
  po::options_description desc = run_options(o);
  po::variables_map vm;
  if (!parse_options(started.args, desc, vm)) return 0;
  if (o.spec_path.empty()) throw po::error("--spec FILE is required");
  if (vm.count("out") && o.out_path.empty()) throw po::error("--out: the file name is empty");
  if (!(o.progress_every_s > 0.0 && std::isfinite(o.progress_every_s)))
    throw po::error("--progress-every must be a positive number of seconds");

  std::optional<Timeline> timeline;
  if (!o.timeline_path.empty() || vm.count("timeline-window") || !vm["timeline-events"].defaulted())
    timeline.emplace(parse_timeline(o.timeline_path, o.window_text, o.timeline_events));
  const ExperimentSpec spec = load_spec(o.spec_path, with_fragments(o.fragments, o.overrides));
  if (o.out_path.empty()) o.out_path = "out/run-" + mode_name(spec.training.mode) + ".json";
  check_output_file(o.out_path, "result");
  if (timeline) check_timeline_file(o.timeline_path, o.out_path);
  const std::string mode = mode_name(spec.training.mode);
  if (!o.quiet)
    std::cerr << "gbasim run: " << mode << ", " << spec.training.num_workers << " workers, "
              << network_solver_name(spec.cluster.network_solver)
              << " network model, preparing data\n"
              << "gbasim run: " << timed_workload_line(spec) << "\n";
  SimulationCost cost;
  ProgressLines lines(mode, o.progress_every_s);
  ProgressWatch progress;
  progress.every_s = o.progress_every_s;
  if (!o.quiet) progress.report = [&](const Progress& p) { lines.progress(p); };
  const nlohmann::ordered_json result = run_simulation(
      spec,
      [&](const EvaluationPoint& p) {
        if (!o.quiet) lines.evaluation(p);
      },
      &cost, progress, timeline ? &*timeline : nullptr);
  if (timeline)
    write_with_timeline(result, o.out_path, *timeline, o.timeline_path, spec, o.quiet);
  else
    write_json_atomically(o.out_path, result);
  print_result_notes(spec, result);
  print_summary_table(mode, result, table_stream(o.out_path));
  if (o.profile) print_profile(cost);
  if (!o.quiet) {
    std::cerr << "gbasim run: target AUC " << spec.evaluation.target_auc << "; wall "
              << lines.wall() << " s in all; wrote " << o.out_path << '\n';
  }
  return 0;
}

}  // namespace gbasim
