// The checks of a spec's values beyond their types (experiment/spec_check.cc): ranges, and
// what the sections allow together.
#pragma once

#include <string>

#include "experiment/spec.h"

namespace gbasim {

// Throws InputError naming `source` and the first key that fails a check.
void check_semantics(const ExperimentSpec& spec, const std::string& source);

}  // namespace gbasim
