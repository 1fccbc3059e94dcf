#include "cli/engine_args.h"

#include <simgrid/engine.h>
#include <xbt/log.h>
#include <cstdio>
#include <cstdlib>

#include <algorithm>
#include <map>
#include <regex>
#include <sstream>

#include "base/error.h"
#include "sim/cluster.h"

namespace gbasim {
namespace {

// Each --log= setting is "category.key:value" (the keys and levels of SimGrid's log control)
// or "no_loc".
void check_log_settings(int argc, char** argv) {
  static const std::regex setting(
      R"(([\w-]+\.)+(thres|threshold|add|additivity|app|appender|fmt|format|layout)[:=]\S+|no_loc)");
  static const std::regex level(R"(.*\.thres(hold)?[:=](trace|debug|verbose|info|warning|error|critical))");
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--log=", 0) != 0) continue;
    std::istringstream words(arg.substr(6));
    for (std::string word; words >> word;) {
      const bool threshold = word.find(".thres") != std::string::npos;
      if (!std::regex_match(word, setting) || (threshold && !std::regex_match(word, level))) {
        throw InputError(arg + ": '" + word +
                         "' is not a SimGrid log setting (category.thres:LEVEL with LEVEL "
                         "trace, debug, verbose, info, warning, error or critical; .fmt:, .app:)");
      }
    }
  }
}

// The --cfg= settings, in order: "--cfg=key:value", several to an argument when separated by
// spaces, as SimGrid reads them.
std::vector<std::pair<std::string, std::string>> cfg_settings(int argc, char** argv) {
  std::vector<std::pair<std::string, std::string>> settings;
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--cfg=", 0) != 0) continue;
    std::istringstream words(arg.substr(6));
    for (std::string word; words >> word;) {
      const size_t colon = word.find(':');
      if (colon != std::string::npos)
        settings.emplace_back(word.substr(0, colon), word.substr(colon + 1));
    }
  }
  return settings;
}

// SimGrid 3.32 ends the process (xbt_die, an assertion or a crash) rather than throwing on
// these: a model, an update mode or a context factory it lacks or that cannot run gbasim's
// clusters, and lazy updates without selective ones. Each key's values are the ones that run
// a gbasim cluster: SimGrid's own lists (printed when it refuses) less the network models
// ns-3 and Constant (neither takes a platform with gbasim's links), the ptask_L07 host model
// (it crashes in the engine) and TI CPU updates (they need repeating speed profiles, and a
// straggler's are not). A key SimGrid does not know at all it refuses itself.
void check_cfg_settings(int argc, char** argv) {
  static const std::map<std::string, std::vector<std::string>> choices = {
      {"network/model", {"LV08", "CM02", "IB", "SMPI"}},
      {"cpu/model", {"Cas01"}},
      {"host/model", {"default", "compound"}},
      {"disk/model", {"default"}},
      {"network/optim", {"Lazy", "Full"}},
      {"cpu/optim", {"Lazy", "Full"}},
      {"contexts/factory", {"raw", "thread", "ucontext", "boost"}},
  };
  // Numbers (SimGrid reads them; a value that is not one it refuses itself): a factor of 0 or
  // a precision below 0 ends the process, a latency factor of 1e308 never ends, a negative one
  // times a transfer at 0.
  static const std::map<std::string, std::pair<double, double>> kRanges = {
      {"network/latency-factor", {0.0, 1e3}},   {"network/bandwidth-factor", {1e-6, 1e3}},
      {"network/weight-S", {0.0, 1e9}},         {"network/TCP-gamma", {1.0, 1e15}},
      {"network/loopback-bw", {1e3, 1e15}},     {"network/loopback-lat", {0.0, 1.0}},
      {"maxmin/precision", {1e-15, 0.1}},       {"surf/precision", {1e-15, 0.1}},
      {"maxmin/concurrency-limit", {1.0, 1e9}},  // or -1: no limit
  };
  std::map<std::string, std::string> value{{"network/optim", "Lazy"}, {"cpu/optim", "Lazy"}};
  std::map<std::string, std::string> arg_of;
  for (const auto& [key, v] : cfg_settings(argc, argv)) {
    const std::string arg = "--cfg=" + key + ":" + v;
    if (const auto c = choices.find(key); c != choices.end()) {
      if (std::find(c->second.begin(), c->second.end(), v) == c->second.end()) {
        std::string list;
        for (size_t k = 0; k < c->second.size(); ++k)
          list += (k == 0 ? "" : k + 1 == c->second.size() ? " or " : ", ") + c->second[k];
        throw InputError(arg + ": '" + v + "' is not a " + key + " that gbasim runs on (" + list +
                         ")");
      }
    }
    if (const auto r = kRanges.find(key); r != kRanges.end()) {
      char* end = nullptr;
      const double x = std::strtod(v.c_str(), &end);
      const auto [lo, hi] = r->second;
      const bool unlimited = key == "maxmin/concurrency-limit" && x == -1.0;
      if (end != v.c_str() && *end == '\0' && !(x >= lo && x <= hi) && !unlimited) {
        char range[64];
        std::snprintf(range, sizeof range, "[%g, %g]", lo, hi);
        throw InputError(arg + ": must " + (key == "maxmin/concurrency-limit" ? "be -1 or " : "") +
                         "lie in " + range +
                         " (beyond it SimGrid ends the process, never ends, or times nothing)");
      }
    }
    if (key == "contexts/stack-size") {
      char* end = nullptr;
      const long kib = std::strtol(v.c_str(), &end, 10);
      if (end == v.c_str() || *end != '\0' || kib < 512 || kib > 1048576)
        throw InputError(arg + ": gbasim's actors need a stack of 512 to 1048576 KiB (about 256 "
                               "KiB used; docs/cluster.md)");
      set_actor_stack_kib(static_cast<int>(kib));
    }
    value[key] = v;
    arg_of[key] = arg;
  }
  for (const char* name : {"network", "cpu"}) {
    const std::string part = name, selective = part + "/maxmin-selective-update";
    const auto off = value.find(selective);
    if (off == value.end() || value[part + "/optim"] != "Lazy") continue;
    if (off->second == "no" || off->second == "off" || off->second == "false" ||
        off->second == "0") {
      throw InputError(
          arg_of[selective] + ": SimGrid's lazy updates (" + part +
          "/optim:Lazy, its default) need selective updates: turn these off only with --cfg=" +
          part + "/optim:Full");
    }
  }
}

}  // namespace

EngineArgs start_engine(int argc, char** argv) {
  xbt_log_control_set("root.thres:critical");
  sg_config_continue_after_help();
  check_log_settings(argc, argv);
  set_actor_stack_kib(1024);
  check_cfg_settings(argc, argv);
  // --help is ours: SimGrid would print every one of its configuration keys first.
  std::vector<char*> engine_argv;
  bool help = false;
  for (int i = 0; i < argc; ++i) {
    const std::string a = argv[i];
    if (i > 0 && (a == "--help" || a == "-h"))
      help = true;
    else
      engine_argv.push_back(argv[i]);
  }
  if (const char* context = engine_context_arg(); context != nullptr)
    engine_argv.insert(engine_argv.begin() + 1, const_cast<char*>(context));
  // Actors' stacks: 1 MiB rather than SimGrid's 8, so that thousands of workers fit in the
  // address space. An actor needs about 256 KiB (Eigen keeps temporaries of up to 128 KiB on
  // the stack); a --cfg=contexts/stack-size of the user's comes later, so it wins.
  static char stack_arg[] = "--cfg=contexts/stack-size:1024";
  engine_argv.insert(engine_argv.begin() + 1, stack_arg);
  int engine_argc = static_cast<int>(engine_argv.size());
  engine_argv.push_back(nullptr);
  EngineArgs e;
  try {
    e.engine = std::make_unique<simgrid::s4u::Engine>(&engine_argc, engine_argv.data());
  } catch (const std::exception& ex) {
    const std::string what = ex.what();  // its first line; the rest lists every key
    throw InputError("SimGrid refused its arguments (--cfg=, --log=): " +
                     what.substr(0, what.find('\n')) + " ('--cfg=help' lists its keys)");
  }
  e.args.assign(engine_argv.begin() + 1, engine_argv.begin() + engine_argc);
  if (help) e.args.insert(e.args.begin(), "--help");
  return e;
}

}  // namespace gbasim
