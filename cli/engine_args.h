// The SimGrid engine of a simulating command: built from the raw arguments, it takes its own
// --cfg= and --log= ones (checked first, since SimGrid ends the process on a --log= it
// cannot parse and on some --cfg= values: engine_args.cc); --help stays ours, and the rest
// is left for Boost.Program_options.
#pragma once

#include <simgrid/s4u.hpp>

#include <memory>
#include <string>
#include <vector>

namespace gbasim {

struct EngineArgs {
  std::unique_ptr<simgrid::s4u::Engine> engine;
  std::vector<std::string> args;  // the arguments SimGrid left, --help among them
};

// Quiets SimGrid's log (unless a --log= asks otherwise) and creates the engine; throws
// InputError for arguments SimGrid refuses.
EngineArgs start_engine(int argc, char** argv);

}  // namespace gbasim
