// What a workload weighs and its step time on a spec's cluster with nothing else running, as
// `gbasim workload` prints it (docs/workload.md defines every number).
#pragma once

#include <string>

#include "experiment/spec.h"

namespace gbasim {

// Prints the report of the spec's workload (which it must have): flops a sample, parameters,
// the distinct rows a local batch touches, the bytes a worker's step sends by mode, and each
// phase's time simulated on the spec's cluster. With `out_path`, also writes them as JSON.
void report_workload(const ExperimentSpec& spec, const std::string& out_path);

}  // namespace gbasim
