// gbasim workload: what a workload weighs (flops a sample, bytes a step by mode) and the step
// time it would have on a spec's cluster with nothing else running (docs/workload.md).
#include <boost/program_options.hpp>
#include <cstdio>
#include <iostream>
#include <string>

#include "base/error.h"
#include "base/files.h"
#include "cli/commands.h"
#include "cli/engine_args.h"
#include "experiment/workload.h"
#include "sim/workload_report.h"

namespace gbasim {

namespace po = boost::program_options;

int run_workload(int argc, char** argv) {
  EngineArgs started = start_engine(argc, argv);
  std::string spec_path, preset, out_path;
  std::vector<std::string> overrides;
  bool list = false;
  po::options_description desc(
      "gbasim workload --preset NAME [--spec FILE] [options]\n"
      "gbasim workload --spec FILE (a spec with a workload section)\n"
      "gbasim workload --list\n\n"
      "What a workload weighs, and its step time on a cluster with nothing else running:\n"
      "flops a sample, parameters, the distinct embedding rows a local batch touches, the\n"
      "bytes a worker's step sends in sync (all-reduce, embedding exchange) and in the server\n"
      "modes (request, pull and push per shard), and each phase's time simulated on the spec's\n"
      "cluster (without --spec, the default cluster of docs/spec.md). docs/workload.md\n"
      "defines every number and cites each preset's.\n\nOptions");
  desc.add_options()("help,h", "show this help")(
      "preset", po::value(&preset)->value_name("NAME"),
      "a workload preset (--list names them); over the spec's own workload keys' defaults")(
      "spec", po::value(&spec_path)->value_name("FILE"),
      "experiment spec (JSON): its cluster, training.workers and workload")(
      "set", po::value(&overrides)->composing()->value_name("KEY=VALUE"),
      "override a spec key, e.g. --set workload.local_batch=2048 (repeatable)")(
      "list", po::bool_switch(&list), "list the presets and their sources")(
      "out", po::value(&out_path)->value_name("FILE"), "also write the numbers as JSON");
  po::variables_map vm;
  if (!parse_options(started.args, desc, vm)) return 0;
  if (!out_path.empty()) check_output_file(out_path, "JSON");
  if (list) {
    if (!out_path.empty() || !preset.empty() || !spec_path.empty() || !overrides.empty())
      throw po::error("--list prints the presets and takes no other option");
    for (const std::string& name : workload_presets())
      std::printf("%-20s %s\n", name.c_str(), workload_preset(name).source.c_str());
    return 0;
  }
  if (!preset.empty()) {
    workload_preset(preset);  // an unknown name is an error of the option
    overrides.insert(overrides.begin(), "workload.preset=" + nlohmann::json(preset).dump());
  }
  const ExperimentSpec spec = spec_path.empty()
                                  ? spec_from_overrides(overrides, "(the default spec)")
                                  : load_spec(spec_path, overrides);
  if (!spec.workload)
    throw po::error("give --preset NAME, or a --spec with a workload section (docs/workload.md)");
  // Another preset named by the spec or a --set comes after --preset and wins: refuse both.
  if (!preset.empty() && spec.workload->preset != preset) {
    throw po::error("give the preset once: --preset " + preset + ", and the " +
                    (spec_path.empty() ? std::string("--set") : "spec or a --set") +
                    " names preset '" + spec.workload->preset + "'");
  }

  report_workload(spec, out_path);
  return 0;
}

}  // namespace gbasim
