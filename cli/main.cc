// gbasim: time-to-AUC of synchronous, asynchronous and GBA training on a simulated cluster.
#include <iostream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/entry_point.h"

namespace {

constexpr const char* kUsage = R"(usage: gbasim <command> [options]

Commands:
  run      one simulated training run (sync, async, gba, ssp or backup) on a
           SimGrid cluster with stragglers, from a JSON experiment spec
  train    single-process training of one model on synthetic or Criteo data; writes a
           JSON result with the test AUC / log-loss curve
  collective  time one collective (all-reduce, all-gather, all-to-all) at a few sizes
           on a spec's cluster, as nccl-tests time NCCL's: time, algorithm and bus
           bandwidth
  workload  what a production workload weighs (flops a sample, bytes a step by
           mode) and its step time on a spec's cluster; presets from published jobs
  sweep    a base spec over axes of values and seeds, points in parallel processes,
           resumable; a result per point and a summary CSV
  compare  sync, async or GBA on this cluster? tunes sync, runs every mode over paired
           seeds; intervals, paired differences, resources, a recommendation
  whatif   what are the stragglers costing this job? each straggler source removed in
           turn, over paired seeds: time to AUC and final AUC lost, and its share
  map      where does each mode win? a grid of straggler settings (fraction x slowdown),
           every mode over paired seeds at each cell; the crossover where GBA overtakes sync
  tune     the paper's protocol, step one: sync's best learning rate (or another
           optimizer setting) for a spec, over seeds; writes a spec fragment for --with
  trace-stats  what simulated workers replaying a trace (PAI mini-batch times,
           Alibaba machine usage, generic) see: slowdowns, spread, slow episodes
  calibrate  measure this machine (model compute, MPI latency and bandwidth, cores)
           and write a platform file for comparing the simulator with gbasim-mpi
  data     describe a data set: sizes, click-through rate, field cardinalities and, for
           synthetic data, the Bayes-optimal test AUC

'gbasim <command> --help' lists a command's options.
)";

}  // namespace

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    std::cout << kUsage;
    return args.empty() ? 2 : 0;
  }
  const std::string command = args[0];
  args.erase(args.begin());
  return gbasim::run_guarded("gbasim " + command, [&] {
    if (command == "run") return gbasim::run_run(argc - 1, argv + 1);
    if (command == "collective") return gbasim::run_collective(argc - 1, argv + 1);
    if (command == "workload") return gbasim::run_workload(argc - 1, argv + 1);
    if (command == "train") return gbasim::run_train(args);
    if (command == "data") return gbasim::run_data(args);
    if (command == "trace-stats") return gbasim::run_trace_stats(args);
    if (command == "sweep") return gbasim::run_sweep(args);
    if (command == "tune") return gbasim::run_tune(args);
    if (command == "compare") return gbasim::run_compare(args);
    if (command == "whatif") return gbasim::run_whatif(args);
    if (command == "map") return gbasim::run_map(args);
    if (command == "calibrate") return gbasim::run_calibrate(args);
    std::cerr << "gbasim: unknown command '" << command << "'\n\n" << kUsage;
    return 2;
  });
}
