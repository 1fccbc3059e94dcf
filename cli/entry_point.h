// The one place where an exception becomes a message and an exit code, for every entry point
// of gbasim and gbasim-mpi.
#pragma once

#include <functional>
#include <string>

namespace gbasim {

// Runs `body` and returns its exit code. An exception never escapes: an input error (ours, a
// command line's, malformed JSON, or a file-system error on a path given) prints "<who>: error: <message>" and returns 2; anything
// else is a defect of gbasim, reported as an internal error with exit code 70. With `message`
// the line is kept there instead of printed (gbasim-mpi's ranks agree on who prints it).
int run_guarded(const std::string& who, const std::function<int()>& body,
                std::string* message = nullptr);

}  // namespace gbasim
