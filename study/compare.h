// The comparison behind `gbasim compare`: every mode over paired seeds with the same settings,
// each mode's runs read back, paired intervals against sync and GBA, and the recommendation.
#pragma once

#include <cmath>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "study/sweep.h"

namespace gbasim {

// One mode's K seeds, in seed order; NaN where a seed did not reach the target (time) or did
// not complete (AUC).
struct ModeRuns {
  std::string mode;
  std::vector<double> time_to_auc, final_auc, worker_hours, server_core_hours;
  std::vector<double> simulated_time;  // when the run ended (its budget, or its status)
  std::vector<std::string> not_completed;
  int reached() const {
    int n = 0;
    for (double t : time_to_auc) n += std::isfinite(t);
    return n;
  }
};

// One mode's runs from OUT/points, in the order of `points` (those of `mode`).
ModeRuns read_mode(const std::string& mode, const std::vector<SweepPoint>& points,
                   const std::filesystem::path& out);

// The recommendation and the sentence that gives its evidence.
struct Recommendation {
  std::string pick;  // empty: no mode reached the target on every seed
  std::string why;
};

// Among the modes that reached the target on every seed and whose final AUC is, on average
// over the pairs, not below sync's by more than `tolerance`, the fastest; sync unless that one
// is faster than sync beyond the noise (the paired interval's high end below 0). Without sync
// among `modes`, the fastest that reached the target on every seed. The sentence also names a
// faster mode the tolerance ruled out. `runs` holds every mode of `modes`.
Recommendation recommend(const std::vector<std::string>& modes,
                         const std::map<std::string, ModeRuns>& runs, int seeds, double tolerance,
                         double target);

struct CompareOptions {
  std::string spec, out;
  std::vector<std::string> overrides, modes{"sync", "async", "gba", "ssp", "backup"};
  std::optional<double> learning_rate;
  bool tune = true;
  bool given_by_override = false;  // --with or --set names optimizer.learning_rate
  int seeds = 5, tune_seeds = 3, jobs = 1;
  double tolerance = 1e-3;
};

// Tunes sync (unless told the rate), runs every mode over the seeds in OUT/points, prints the
// Markdown table, writes OUT/compare.md and OUT/compare.json and the figure. Returns the
// sweep's status (0, 1 when some run failed, 130 when interrupted).
int run_comparison(CompareOptions options);

}  // namespace gbasim
