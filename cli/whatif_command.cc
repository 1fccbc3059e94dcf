// gbasim whatif: the command line of the what-if analysis (study/whatif.h): what each straggler
// source costs each mode in time to the target AUC and in final AUC.
#include <boost/program_options.hpp>
#include <filesystem>
#include <thread>

#include "base/error.h"
#include "base/files.h"
#include "cli/commands.h"
#include "study/sweep.h"
#include "study/whatif.h"

namespace gbasim {

namespace fs = std::filesystem;
namespace po = boost::program_options;

int run_whatif(const std::vector<std::string>& args) {
  WhatifOptions o;
  std::vector<std::string> fragments, sets;
  std::string modes, sources;
  o.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string source_names;
  for (const StragglerSource& s : straggler_sources())
    source_names += (source_names.empty() ? "" : ",") + s.name;
  po::options_description desc(
      "gbasim whatif --spec FILE [options]\n\n"
      "What are the stragglers costing this job, and which of them? Runs the spec as given,\n"
      "then the same seeds with each straggler source removed in turn, then all of them\n"
      "removed (every other part of each seed's realisation stays the same), in every mode\n"
      "of --modes. Prints and writes (OUT/whatif.md, OUT/whatif.json) the time to the\n"
      "target AUC, the simulated run time and the final AUC each source costs, with paired\n"
      "95% intervals, its share of what all cost together, and a figure (OUT/figures).\n"
      "Sources the spec does not hold are not run: their loss is exactly 0. Resumes where\n"
      "it stopped.\n\nOptions");
  desc.add_options()("help,h", "show this help")("spec", po::value(&o.spec)->value_name("FILE"),
                                                 "experiment spec (JSON)")(
      "with", po::value(&fragments)->composing()->value_name("FILE"),
      "a spec fragment merged over the spec before --set, e.g. gbasim tune's tuned.json "
      "(repeatable)")("set", po::value(&sets)->composing()->value_name("KEY=VALUE"),
                      "override a spec key (repeatable)")(
      "seeds", po::value(&o.seeds)->default_value(o.seeds), "paired seeds (1, 2, ..., K)")(
      "modes", po::value(&modes)->value_name("LIST"), "modes, comma-separated (default: sync,gba)")(
      "sources", po::value(&sources)->value_name("LIST"),
      ("straggler sources removed, comma-separated (default: all of " + source_names + ")")
          .c_str())("jobs,j", po::value(&o.jobs)->default_value(o.jobs),
                    "runs at once (default: the cores)")(
      "out", po::value(&o.out)->value_name("DIR"), "work folder (default: out/whatif-<spec name>)")(
      "summarize", po::bool_switch(&o.summarize),
      "write the tables from the runs there are in OUT/points, run nothing (a run missing "
      "counts as failed)");
  po::variables_map vm;
  if (!parse_options(args, desc, vm)) return 0;
  if (o.spec.empty()) throw po::error("--spec FILE is required");
  if (o.seeds < 2 || o.seeds > 100)
    throw po::error("--seeds must lie in [2, 100] (intervals need 2)");
  if (o.jobs < 1) throw po::error("--jobs must be at least 1");
  if (!modes.empty()) o.modes = parse_mode_list(modes, "--modes");
  if (vm.count("sources")) {
    o.sources = parse_name_list(sources, "--sources", [&](const std::string& name) {
      for (const StragglerSource& s : straggler_sources())
        if (s.name == name) return;
      throw InputError("must be one of " + source_names + ", not '" + name + "'");
    });
  }
  o.overrides = with_fragments(fragments, sets);
  load_spec(o.spec, o.overrides);  // checked before anything runs
  if (o.out.empty()) o.out = "out/whatif-" + fs::path(o.spec).stem().string();
  check_output_folder(o.out, "output folder");
  check_output_folder((fs::path(o.out) / "points").string(), "points folder");
  check_points_folder((fs::path(o.out) / "points").string());
  for (const char* name : {"whatif.json", "whatif.md", "summary.csv"})
    check_output_file((fs::path(o.out) / name).string(), "what-if analysis");
  return run_whatif(o);
}

}  // namespace gbasim
