#include "cli/engine_args.h"

#include <simgrid/engine.h>
#include <xbt/log.h>

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

}  // namespace

EngineArgs start_engine(int argc, char** argv) {
  xbt_log_control_set("root.thres:critical");
  sg_config_continue_after_help();
  check_log_settings(argc, argv);
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
