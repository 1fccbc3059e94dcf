// Calibration of this machine for a spec: what the simulator needs to run the spec's ranks as
// gbasim-mpi runs them here (a platform of cluster keys, and the cost settings to run with).
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

namespace gbasim {

struct CalibrationRequest {
  std::string spec_path;
  std::vector<std::string> overrides;  // "key=value", as --set takes them
  std::string out_path;                // the platform file (its name places the fit's work files)
  int cores = 1;                       // cores the ranks share
  bool fit = true;                     // fit latency and server work to real runs
  int fit_runs = 5;                    // real runs of each mode whose median the fit aims at
  // Real straggler-free run times measured elsewhere: the fit aims at their medians and
  // runs nothing real itself.
  std::vector<double> given_sync_s, given_async_s;
  // The programs the measurements start: gbasim (for `gbasim run`) and gbasim-mpi.
  std::string gbasim_exe, gbasim_mpi_exe;
};

struct Calibration {
  nlohmann::ordered_json platform;  // cluster keys
  nlohmann::ordered_json report;    // the measurements and the settings to run with
};

// Measures (progress lines on standard error): one local batch's gradient, one optimizer
// update and the merge of a global batch's gradients (medians of 50 single-threaded runs),
// the scheduler's time slice, MPI's point-to-point latency and bandwidth between two
// gbasim-mpi ranks; then, with `fit`, the message latency and the server's work per push by
// bisection on the simulator against real straggler-free sync and async runs. Throws
// InputError when a measurement run fails.
Calibration calibrate(const CalibrationRequest& request);

}  // namespace gbasim
