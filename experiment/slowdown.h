// The slowdowns a real rank injects, from the same straggler models, trace and seed as the
// simulator: a worker whose current slowdown is k sleeps (k - 1) x its measured compute.
#pragma once

#include <optional>
#include <vector>

#include "experiment/run_record.h"
#include "experiment/spec.h"

namespace gbasim {

class RankSlowdown {
 public:
  // `trace`: the spec's, loaded once (load_trace); it must outlive this.
  RankSlowdown(const ExperimentSpec& spec, const ReplayedTrace& trace, int worker);

  // The slowdown of step `step`, started `elapsed_s` seconds into the run: persistent x
  // per-step noise x transient episode in force x trace (PAI by step; usage by time,
  // 1 / speed factor).
  double factor(int64_t step, double elapsed_s);

  // What the real ranks cannot inject (network episodes, co-located tenants, bandwidth
  // factors of a usage trace): "" when nothing is left out.
  static std::string not_injected(const ExperimentSpec& spec);

 private:
  const ExperimentSpec& spec_;
  int worker_;
  double persistent_ = 1.0;
  std::vector<Episode> episodes_;
  double horizon_ = 0.0;
  const ReplayedTrace& trace_;
};

}  // namespace gbasim
