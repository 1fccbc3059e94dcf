// gbasim map: the command line of the map of where each mode wins (study/map.h). The map is a
// sweep file that `gbasim sweep` runs (locally, or as a Slurm array); its running options are
// passed on to it unchanged.
#include <boost/program_options.hpp>
#include <filesystem>
#include <iostream>

#include "base/error.h"
#include "base/files.h"
#include "cli/commands.h"
#include "study/map.h"

namespace gbasim {

namespace fs = std::filesystem;
namespace po = boost::program_options;

namespace {

// "KEY=v1,v2,..." as an axis; each value is JSON where it parses, else a string.
SweepAxis parse_axis(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size())
    throw po::error("--axes takes KEY=V1,V2,..., not '" + text + "'");
  SweepAxis axis{text.substr(0, eq), {}};
  for (const std::string& v :
       parse_name_list(text.substr(eq + 1), "--axes " + axis.key, [](const std::string&) {})) {
    const nlohmann::json value = nlohmann::json::parse(v, nullptr, false);
    axis.values.push_back(value.is_discarded() ? nlohmann::json(v) : value);
  }
  if (axis.key == "training.mode" || axis.key == "seed")
    throw po::error("--axes: " + axis.key + " is the map's own (--modes, --seeds)");
  return axis;
}

// Writes the map's sweep file and runs it with gbasim sweep and the `running` options; on a
// failure to start, nothing of this command is left (an earlier sweep file is put back).
int run_map_sweep(const MapOptions& o, const std::vector<std::string>& running) {
  const std::string sweep_file = (fs::path(o.out) / "sweep.json").string();
  const bool had_sweep = fs::exists(sweep_file);
  const std::string earlier = had_sweep ? read_text_or_empty(sweep_file) : std::string();
  // The outermost folder this command creates, removed again if the sweep refuses to start.
  fs::path created;
  for (fs::path p = fs::absolute(o.out).lexically_normal(); !p.empty() && !fs::exists(p);
       p = p.parent_path())
    created = p;
  const std::string sweep = write_map_sweep(o);
  std::vector<std::string> sweep_args{"--spec", sweep, "--out", o.out};
  sweep_args.insert(sweep_args.end(), running.begin(), running.end());
  std::cerr << "gbasim map: the sweep " << sweep << ", run as: gbasim sweep";
  for (const std::string& a : sweep_args) std::cerr << ' ' << a;
  std::cerr << "\n";
  try {
    return run_sweep(sweep_args);
  } catch (...) {  // a bad running option or grid value: nothing of this command is left
    std::error_code ec;
    if (!created.empty())
      fs::remove_all(created, ec);
    else if (had_sweep)
      write_text_atomically(sweep_file, earlier);  // the earlier map's, as it was
    else
      fs::remove(sweep_file, ec);
    throw;
  }
}

// Whether the map can be drawn after the sweep ended with `status`: not after a plan, a Slurm
// submission left to run, or an interruption.
bool map_ready(const std::vector<std::string>& running, int status) {
  bool dry_run = false, slurm = false, follow = false;
  for (size_t i = 0; i < running.size(); ++i) {
    const std::string& a = running[i];
    dry_run = dry_run || a == "--dry-run";
    slurm = slurm || a == "--launcher=slurm" ||
            (a == "--launcher" && i + 1 < running.size() && running[i + 1] == "slurm");
    follow = follow || a == "--wait" || a == "--summarize";
  }
  return !(dry_run || (slurm && !follow) || status == 130);
}

}  // namespace

int run_map(const std::vector<std::string>& args) {
  MapOptions o;
  std::vector<std::string> fragments, sets, axes;
  std::string modes;
  po::options_description desc(
      "gbasim map --spec FILE [options] [gbasim sweep's running options]\n\n"
      "At what straggler severity does GBA overtake sync on this cluster? Runs every mode of\n"
      "--modes over paired seeds at each cell of a grid of straggler settings (default: the\n"
      "fraction of persistently slow workers, 0.125, 0.25 and 0.5, by their slowdown, 1.25,\n"
      "1.5, 2 and 3, which bracket the Alibaba PAI jobs), as the sweep OUT/sweep.json. Prints\n"
      "and writes (OUT/map.md, OUT/map.json) the mode gbasim compare's rule picks at each cell,\n"
      "GBA's paired time-to-AUC difference against sync, the crossover where GBA overtakes\n"
      "sync beyond the noise, and a figure (OUT/figures/map). Resumes where it stopped.\n\n"
      "gbasim sweep's running options pass through: --jobs J, --dry-run, --summarize,\n"
      "--launcher slurm [--partition P --account A --time T --mem M --sbatch-option ARG\n"
      "--points-per-task K --wait] (gbasim sweep --help). After a Slurm array ends, run the\n"
      "same command with --summarize to draw the map.\n\nOptions");
  desc.add_options()("help,h", "show this help")("spec", po::value(&o.spec)->value_name("FILE"),
                                                 "experiment spec (JSON)")(
      "with", po::value(&fragments)->composing()->value_name("FILE"),
      "a spec fragment merged over the spec before --set (repeatable)")(
      "set", po::value(&sets)->composing()->value_name("KEY=VALUE"),
      "override a spec key in every cell (repeatable)")(
      "axes", po::value(&axes)->composing()->value_name("KEY=V1,V2"),
      "a grid axis: a spec key and its values; once or twice, the crossover runs along the last "
      "(default: stragglers.persistent_fraction=0.125,0.25,0.5 and "
      "stragglers.persistent_slowdown=1.25,1.5,2,3)")(
      "seeds", po::value(&o.seeds)->default_value(o.seeds), "paired seeds (1, 2, ..., K)")(
      "modes", po::value(&modes)->value_name("LIST"), "modes, comma-separated (default: sync,gba)")(
      "tolerance", po::value(&o.tolerance)->default_value(o.tolerance),
      "final AUC below sync's by at most this still counts as not worse (gbasim compare's)")(
      "out", po::value(&o.out)->value_name("DIR"), "work folder (default: out/map-<spec name>)");
  po::variables_map vm;
  const po::parsed_options parsed =
      po::command_line_parser(args).options(desc).allow_unregistered().run();
  std::vector<std::string> running =
      po::collect_unrecognized(parsed.options, po::include_positional);
  po::store(parsed, vm);
  if (vm.count("help")) {
    std::cout << desc << '\n';
    return 0;
  }
  po::notify(vm);
  if (o.spec.empty()) throw po::error("--spec FILE is required");
  if (o.seeds < 2 || o.seeds > 100)
    throw po::error("--seeds must lie in [2, 100] (intervals need 2)");
  if (!(o.tolerance >= 0.0) || o.tolerance > 0.5)
    throw po::error("--tolerance must lie in [0, 0.5]");
  if (!modes.empty()) o.modes = parse_mode_list(modes, "--modes");
  for (const std::string& a : axes) o.axes.push_back(parse_axis(a));
  if (o.axes.empty()) o.axes = default_map_axes();
  if (o.axes.size() > 2) throw po::error("--axes: a map has one or two axes");
  if (o.axes.size() == 2 && o.axes[0].key == o.axes[1].key)
    throw po::error("--axes: " + o.axes[0].key + " is named twice");
  o.overrides = with_fragments(fragments, sets);
  load_spec(o.spec, o.overrides);  // checked before anything is written
  if (o.out.empty()) o.out = "out/map-" + fs::path(o.spec).stem().string();
  check_output_folder(o.out, "output folder");
  for (const char* name : {"sweep.json", "map.json", "map.md"})
    check_output_file((fs::path(o.out) / name).string(), "map");

  const int status = run_map_sweep(o, running);
  if (map_ready(running, status)) write_map(o);
  return status;
}

}  // namespace gbasim
