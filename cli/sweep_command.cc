// gbasim sweep: the command line of a sweep (docs/sweep.md); the pool and the Slurm launcher
// are study/'s.
#include <algorithm>
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>
#include <thread>

#include "base/error.h"
#include "base/files.h"
#include "cli/commands.h"
#include "study/sweep.h"
#include "study/sweep_table.h"

namespace gbasim {

namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace {

// What `gbasim sweep`'s options set.
struct SweepOptions {
  std::string spec_path, out_dir, launcher = "local", task_file;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool dry_run = false, wait = false, summarize = false, table = false;
  std::vector<std::string> against;
  SlurmSettings slurm;
  int points_per_task = 0;
};

// The options' table, writing into `o`.
po::options_description sweep_options(SweepOptions& o) {
  po::options_description desc(
      "gbasim sweep --spec SWEEP.json [options]\n"
      "gbasim sweep --table --out DIR [--against KEY=VALUE ...]\n\n"
      "Runs a base spec over axes of values and seeds (docs/sweep.md), one 'gbasim run'\n"
      "process per point, J at a time, or as a Slurm job array (--launcher slurm). Each\n"
      "point's result goes to OUT/points/<point>.json (its progress log beside it), and\n"
      "OUT/summary.csv gets a row per point. Run the same command again after an\n"
      "interruption: finished points are kept, failed and missing ones run.\n\nOptions");
  desc.add_options()("help,h", "show this help")(
      "spec", po::value(&o.spec_path)->value_name("FILE"), "the sweep file (JSON)")(
      "out", po::value(&o.out_dir)->value_name("DIR"),
      "where results go (default: the sweep file's folder)")(
      "jobs,j", po::value(&o.jobs)->default_value(o.jobs),
      "points run at once (default: the cores)")(
      "dry-run", po::bool_switch(&o.dry_run), "list the points and their overrides, run nothing")(
      "summarize", po::bool_switch(&o.summarize),
      "write OUT/summary.csv from the results there are and list the points without one; run "
      "nothing")(
      "table", po::bool_switch(&o.table),
      "print Markdown tables of OUT/summary.csv (each combination's metrics over seeds with 95% "
      "intervals; each mode's paired differences against sync and GBA); run nothing")(
      "against", po::value(&o.against)->multitoken()->value_name("KEY=VALUE"),
      "--table: also each combination's paired differences against the one these axis values "
      "name (e.g. --against training.gba.decay=none)")(
      "launcher", po::value(&o.launcher)->value_name("NAME"),
      "local (the default: a process pool here) or slurm (submit the points without a result as "
      "one job array, sbatch --array; OUT must be on a file system the nodes share)")(
      "points-per-task", po::value(&o.points_per_task)->value_name("K"),
      "slurm: points an array task runs, one after the other (default 1, or the sweep file's "
      "slurm.points_per_task)")("partition", po::value(&o.slurm.partition)->value_name("P"),
                                "slurm: sbatch --partition")(
      "account", po::value(&o.slurm.account)->value_name("A"), "slurm: sbatch --account")(
      "time", po::value(&o.slurm.time)->value_name("T"),
      "slurm: sbatch --time, each task's limit (e.g. 30:00)")(
      "mem", po::value(&o.slurm.mem)->value_name("M"), "slurm: sbatch --mem (e.g. 4G)")(
      "sbatch-option", po::value(&o.slurm.options)->composing()->value_name("ARG"),
      "slurm: one more sbatch argument, e.g. --sbatch-option=--qos=low (repeatable)")(
      "wait", po::bool_switch(&o.wait),
      "slurm: follow the array until it ends (squeue), then write the summary")(
      "slurm-task", po::value(&o.task_file)->value_name("FILE"),
      "internal: run array task SLURM_ARRAY_TASK_ID of FILE (what the submitted script calls)");
  return desc;
}

// --table: prints the tables of the sweep's summary.
int print_table(const SweepOptions& o) {
  if (o.out_dir.empty() && o.spec_path.empty())
    throw po::error("--table needs --out DIR (or --spec)");
  std::vector<std::pair<std::string, std::string>> reference;
  for (const std::string& pair : o.against) {
    const size_t eq = pair.find('=');
    if (eq == std::string::npos || eq == 0)
      throw po::error("--against takes KEY=VALUE pairs, not '" + pair + "'");
    reference.push_back({pair.substr(0, eq), pair.substr(eq + 1)});
  }
  const fs::path folder =
      o.out_dir.empty() ? fs::path(o.spec_path).parent_path() : fs::path(o.out_dir);
  std::cout << sweep_table(folder.empty() ? "." : folder.string(), reference);
  return 0;
}

}  // namespace

int run_sweep(const std::vector<std::string>& args) {
  SweepOptions o;
  po::options_description desc = sweep_options(o);
  po::variables_map vm;
  if (!parse_options(args, desc, vm)) return 0;
  if (!o.against.empty() && !o.table) throw po::error("--against is for --table");
  if (o.table) return print_table(o);
  if (o.spec_path.empty()) throw po::error("--spec FILE is required");
  if (o.jobs < 1) throw po::error("--jobs must be at least 1");
  if (o.launcher != "local" && o.launcher != "slurm")
    throw po::error("--launcher must be local or slurm, not '" + o.launcher + "'");
  const bool slurm_options = !o.slurm.partition.empty() || !o.slurm.account.empty() ||
                             !o.slurm.time.empty() || !o.slurm.mem.empty() ||
                             !o.slurm.options.empty() || vm.count("points-per-task") || o.wait;
  if (slurm_options && o.launcher != "slurm")
    throw po::error(
        "--points-per-task, --partition, --account, --time, --mem, --sbatch-option "
        "and --wait are for --launcher slurm");
  if (vm.count("points-per-task") && (o.points_per_task < 1 || o.points_per_task > 100000))
    throw po::error("--points-per-task must lie in [1, 100000]");
  SweepSpec sweep = load_sweep(o.spec_path);
  merge_slurm_settings(sweep.slurm, o.slurm, o.points_per_task);
  std::vector<SweepPoint> points = plan_sweep(sweep);
  if (o.dry_run) {
    for (const auto& p : points) {
      std::cout << p.name;
      for (const auto& set : p.overrides) std::cout << "  --set " << set;
      std::cout << "\n";
    }
    return 0;
  }
  const fs::path out =
      o.out_dir.empty() ? fs::path(o.spec_path).parent_path() : fs::path(o.out_dir);
  const fs::path folder = out.empty() ? fs::path(".") : out;
  check_output_folder(folder.string(), "sweep's output folder");
  check_output_folder((folder / "points").string(), "points folder");
  check_points_folder((folder / "points").string());
  check_output_file((folder / "summary.csv").string(), "summary");
  check_output_file((folder / "wall.csv").string(), "wall times");
  if (o.launcher == "slurm") check_output_folder((folder / "slurm").string(), "Slurm folder");
  SweepLaunch launch;
  launch.jobs = o.jobs;
  launch.wait = o.wait;
  launch.task_file = o.task_file;
  launch.kind = !o.task_file.empty()    ? SweepLaunch::Kind::kTask
                : o.summarize           ? SweepLaunch::Kind::kSummarize
                : o.launcher == "slurm" ? SweepLaunch::Kind::kSubmit
                                        : SweepLaunch::Kind::kLocal;
  return run_sweep_with(sweep, std::move(points), out.string(), launch);
}

}  // namespace gbasim
