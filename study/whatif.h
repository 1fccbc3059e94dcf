// What the stragglers cost (`gbasim whatif`): the spec as given, then the same seeds with each
// straggler source removed in turn, then all of them removed; every other part of the
// realisation stays as it was, since each source draws from its own stream
// (traces/straggler_models.h). Per mode and source: the time to the target AUC and the final
// AUC the source costs, with paired 95% intervals over the seeds, and its share of what all of
// them cost together.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "base/stats.h"
#include "study/compare.h"

namespace gbasim {

// A class of stragglers the spec can hold, and the spec keys that remove it.
struct StragglerSource {
  std::string name;                  // "persistent", as --sources and the tables name it
  std::string what;                  // what it is, with its spec keys
  std::vector<std::string> removal;  // "key=value" overrides that remove it
};

// Every source gbasim models: persistent slow workers, per-step noise, transient episodes,
// network episodes, co-located tenants, failures, the replayed trace.
const std::vector<StragglerSource>& straggler_sources();

// What one source costs one mode. Each loss is paired by seed: the run as given minus the run
// without the source for time (seconds lost), the run without it minus the run as given for
// final AUC (AUC lost). A source the spec does not hold was not run: its losses are exactly 0.
struct SourceLoss {
  std::string source;  // a source's name, or "all" (every source the spec holds, together)
  bool present = false;
  int reached = 0;     // seeds that reached the target without the source
  Interval time_lost;  // to the target, over the seeds where both runs reached it
  Interval run_lost;   // simulated time to the end of the run (its budget)
  Interval auc_lost;   // final AUC, over the seeds where both runs completed
  // The loss's mean over the whole loss's ("all"): of the time to the target where every
  // source's loss to it is defined, else of the run's time; NaN where the whole is 0.
  double share = 0.0;
  bool share_of_time_to_target = true;
};

// The losses of each run in `without` (by source name, in order, "all" last) against `given`;
// `present[i]` says whether the spec holds source i (an absent one's runs are `given`'s).
std::vector<SourceLoss> source_losses(const ModeRuns& given,
                                      const std::vector<std::pair<std::string, ModeRuns>>& without,
                                      const std::vector<bool>& present);

struct WhatifOptions {
  std::string spec, out;
  std::vector<std::string> overrides;
  std::vector<std::string> modes{"sync", "gba"};
  std::vector<std::string> sources;  // empty: every source
  int seeds = 5, jobs = 1;
  bool summarize = false;  // write the tables from the runs there are; run nothing
};

// Runs the spec as given and without each source (those it holds) over the seeds, every mode,
// in OUT/points (resumable); prints the tables, writes OUT/whatif.md, OUT/whatif.json and the
// figure. Returns 0, 1 when some run failed, 130 when interrupted.
int run_whatif(const WhatifOptions& options);

}  // namespace gbasim
