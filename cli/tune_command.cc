// gbasim tune: the command line of the sync tuner (study/tune.h).
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "base/error.h"
#include "base/files.h"
#include "cli/commands.h"
#include "study/sweep.h"
#include "study/tune.h"

namespace gbasim {

namespace fs = std::filesystem;
namespace po = boost::program_options;

int run_tune(const std::vector<std::string>& args) {
  TuneOptions o;
  std::vector<std::string> fragments, sets;
  o.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  po::options_description desc(
      "gbasim tune --spec FILE [options]\n\n"
      "Tunes sync, as the paper's protocol does before any switch: finds the value of one\n"
      "optimizer setting (the learning rate by default) that gives sync the best mean final\n"
      "test AUC over K seeds on the spec's model, data and global batch. A log-spaced grid,\n"
      "widened while the best is at its edge, then refined around the best; each run is a\n"
      "point of a sweep in OUT/points, so running the same command again resumes. A run that\n"
      "diverges (or stalls) counts as the worst score. Prints the table; writes OUT/tune.json\n"
      "and the spec fragment (--fragment) that gbasim run, sweep and compare take with --with.\n"
      "\nOptions");
  desc.add_options()("help,h", "show this help")(
      "spec", po::value(&o.spec)->value_name("FILE"), "experiment spec (JSON)")(
      "with", po::value(&fragments)->composing()->value_name("FILE"),
      "a spec fragment merged over the spec before --set (repeatable)")(
      "set", po::value(&sets)->composing()->value_name("KEY=VALUE"),
      "override a spec key (repeatable); training.mode is sync whatever is set")(
      "key", po::value(&o.key)->default_value(o.key),
      "the positive numeric spec key tuned (e.g. optimizer.l2)")(
      "from", po::value(&o.from)->default_value(o.from), "the grid's lowest value")(
      "to", po::value(&o.to)->default_value(o.to), "the grid's highest value")(
      "per-decade", po::value(&o.per_decade)->default_value(o.per_decade),
      "grid values a decade (2: 1e-4, 3.16e-4, 1e-3, ...)")(
      "refine", po::value(&o.refine)->default_value(o.refine),
      "refinements around the best, each halving the grid's step (2: an eighth of a decade)")(
      "seeds", po::value(&o.seeds)->default_value(o.seeds), "seeds a value (1, 2, ..., K)")(
      "tie", po::value(&o.tie)->default_value(o.tie),
      "mean AUCs within this of the best tie; the soonest to the target wins")(
      "jobs,j", po::value(&o.jobs)->default_value(o.jobs), "runs at once (default: the cores)")(
      "out", po::value(&o.out)->value_name("DIR"), "work folder (default: out/tune-<spec name>)")(
      "fragment", po::value(&o.fragment)->value_name("FILE"),
      "the spec fragment written (default: OUT/tuned.json)");
  po::variables_map vm;
  if (!parse_options(args, desc, vm)) return 0;
  if (o.spec.empty()) throw po::error("--spec FILE is required");
  if (!(o.from > 0.0) || !std::isfinite(o.from) || !(o.to >= o.from) || !std::isfinite(o.to))
    throw po::error("--from and --to must be finite, positive, and --from <= --to");
  if (o.to / o.from > 1e12) throw po::error("--from and --to span more than 12 decades");
  if (o.per_decade < 1 || o.per_decade > 20) throw po::error("--per-decade must lie in [1, 20]");
  if (o.refine < 0 || o.refine > 6) throw po::error("--refine must lie in [0, 6]");
  if (o.seeds < 1 || o.seeds > 100) throw po::error("--seeds must lie in [1, 100]");
  if (o.jobs < 1) throw po::error("--jobs must be at least 1");
  if (!(o.tie >= 0.0) || o.tie > 0.1) throw po::error("--tie must lie in [0, 0.1]");
  o.overrides = with_fragments(fragments, sets);
  o.overrides.push_back("training.mode=sync");
  // The spec and the key are checked before anything runs.
  std::vector<std::string> probe = o.overrides;
  char from[32];
  std::snprintf(from, sizeof from, "%.17g", o.from);
  probe.push_back(o.key + "=" + from);
  load_spec(o.spec, probe);
  if (o.out.empty()) o.out = "out/tune-" + fs::path(o.spec).stem().string();
  if (o.fragment.empty()) o.fragment = (fs::path(o.out) / "tuned.json").string();
  check_output_folder(o.out, "work folder");
  check_output_folder((fs::path(o.out) / "points").string(), "points folder");
  check_points_folder((fs::path(o.out) / "points").string());
  for (const char* name : {"tune.json", "summary.csv"})
    check_output_file((fs::path(o.out) / name).string(), "tuning record");
  check_output_file(o.fragment, "fragment");
  return tune_sync(o) ? 0 : 130;
}

}  // namespace gbasim
