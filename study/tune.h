// The sync tuner behind `gbasim tune` and `gbasim compare` (study/tune.cc).
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace gbasim {

struct TuneOptions {
  std::string spec, out, fragment, key = "optimizer.learning_rate";
  std::vector<std::string> overrides;  // --with fragments, then --set; training.mode=sync last
  double from = 1e-4, to = 1e-1, tie = 5e-4;
  int per_decade = 2, refine = 2, seeds = 3, jobs = 1;
};

// Runs the search (resuming from OUT/points), prints the table, writes OUT/tune.json and the
// fragment; returns the chosen value, or nothing when interrupted.
std::optional<double> tune_sync(const TuneOptions& options);

}  // namespace gbasim
