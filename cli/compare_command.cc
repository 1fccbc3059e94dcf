// gbasim compare: the command line of the comparison (study/compare.h): sync is tuned (or
// given its learning rate), then every mode runs with those same settings over K paired seeds,
// and the table, the intervals and a recommendation come out.
#include <boost/program_options.hpp>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "base/files.h"
#include "cli/commands.h"
#include "strategies/update_rule.h"
#include "study/compare.h"
#include "study/sweep.h"

namespace gbasim {

namespace fs = std::filesystem;
namespace po = boost::program_options;

int run_compare(const std::vector<std::string>& args) {
  CompareOptions o;
  std::vector<std::string> fragments, sets;
  std::string modes;
  double learning_rate = 0.0;
  bool no_tune = false;
  o.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  po::options_description desc(
      "gbasim compare --spec FILE [options]\n\n"
      "Sync, async or GBA on this cluster? Tunes sync's learning rate (gbasim tune), then\n"
      "runs every mode with those settings, without re-tuning, over K paired seeds; prints\n"
      "and writes (OUT/compare.md, OUT/compare.json) each mode's time-to-AUC and final AUC\n"
      "with 95% intervals, paired differences against sync and GBA, the worker-hours and\n"
      "server core-hours spent to reach the target, a one-line recommendation, and the\n"
      "convergence figure (OUT/figures). Resumes where it stopped.\n\nOptions");
  desc.add_options()("help,h", "show this help")(
      "spec", po::value(&o.spec)->value_name("FILE"), "experiment spec (JSON)")(
      "with", po::value(&fragments)->composing()->value_name("FILE"),
      "a spec fragment merged over the spec before --set (repeatable)")(
      "set", po::value(&sets)->composing()->value_name("KEY=VALUE"),
      "override a spec key (repeatable)")(
      "seeds", po::value(&o.seeds)->default_value(o.seeds), "paired seeds (1, 2, ..., K)")(
      "modes", po::value(&modes)->value_name("LIST"),
      "modes compared, comma-separated (default: sync,async,gba,ssp,backup)")(
      "learning-rate", po::value(&learning_rate)->value_name("X"),
      "sync's learning rate, not tuned")(
      "no-tune", po::bool_switch(&no_tune), "keep the spec's own learning rate")(
      "tune-seeds", po::value(&o.tune_seeds)->default_value(o.tune_seeds),
      "seeds a value while tuning")(
      "tolerance", po::value(&o.tolerance)->default_value(o.tolerance),
      "final AUC below sync's by at most this still counts as not worse")(
      "jobs,j", po::value(&o.jobs)->default_value(o.jobs), "runs at once (default: the cores)")(
      "out", po::value(&o.out)->value_name("DIR"),
      "work folder (default: out/compare-<spec name>)");
  po::variables_map vm;
  if (!parse_options(args, desc, vm)) return 0;
  if (o.spec.empty()) throw po::error("--spec FILE is required");
  if (o.seeds < 2 || o.seeds > 100) throw po::error("--seeds must lie in [2, 100] (intervals need 2)");
  if (o.tune_seeds < 1 || o.tune_seeds > 100) throw po::error("--tune-seeds must lie in [1, 100]");
  if (o.jobs < 1) throw po::error("--jobs must be at least 1");
  if (!(o.tolerance >= 0.0) || o.tolerance > 0.5) throw po::error("--tolerance must lie in [0, 0.5]");
  if (vm.count("learning-rate")) {
    if (!(learning_rate > 0.0) || !std::isfinite(learning_rate))
      throw po::error("--learning-rate must be a positive number");
    if (no_tune) throw po::error("--learning-rate and --no-tune: choose one");
    o.learning_rate = learning_rate;
  }
  o.tune = !no_tune;
  if (!modes.empty()) o.modes = parse_mode_list(modes, "--modes");
  o.overrides = with_fragments(fragments, sets);
  // A fragment that sets the learning rate counts as given.
  for (const std::string& s : o.overrides)
    if (s.rfind("optimizer.learning_rate=", 0) == 0 && !o.learning_rate) {
      o.tune = false;
      o.given_by_override = true;
    }
  load_spec(o.spec, o.overrides);  // checked before anything runs
  if (o.out.empty()) o.out = "out/compare-" + fs::path(o.spec).stem().string();
  check_output_folder(o.out, "output folder");
  check_output_folder((fs::path(o.out) / "points").string(), "points folder");
  check_points_folder((fs::path(o.out) / "points").string());
  check_points_folder((fs::path(o.out) / "tune" / "points").string());
  for (const char* name : {"compare.json", "compare.md", "summary.csv"})
    check_output_file((fs::path(o.out) / name).string(), "comparison");
  return run_comparison(o);
}

}  // namespace gbasim
