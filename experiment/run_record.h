// The run record both drivers write: the budget and its stop rule, the replayed trace, the
// curve of evaluations with time-to-AUC, and the result document (docs/spec.md, "The
// result"). The simulator keeps it on simulated time, gbasim-mpi on wall time; what differs
// between them is named by the driver (its clock, its own summary keys, its workers).
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "experiment/data.h"
#include "experiment/spec.h"
#include "strategies/switching.h"
#include "strategies/update_rule.h"
#include "traces/pai_trace.h"
#include "traces/usage_trace.h"

namespace gbasim {

// budget.max_samples (0: one epoch of the training set) and budget.max_time_s (0: none).
class Budget {
 public:
  Budget(const BudgetSpec& budget, int64_t train_samples);
  int64_t max_samples() const { return max_samples_; }
  // Whether a run that has applied `samples` at `time` stops; checked after each update.
  bool spent(int64_t samples, double time) const {
    return samples >= max_samples_ || out_of_time(time);
  }
  bool out_of_time(double time) const { return max_time_s_ > 0.0 && time >= max_time_s_; }

 private:
  int64_t max_samples_;
  double max_time_s_;
};

// The trace a spec replays (stragglers.trace), loaded once for every worker: none, a PAI
// replay (slowdowns by step) or a usage replay (speed and bandwidth by time).
struct ReplayedTrace {
  std::optional<TraceReplay> pai;
  std::optional<UsageReplay> usage;
};
// Throws InputError prefixed with 'stragglers.trace'.
ReplayedTrace load_trace(const ExperimentSpec& spec);

struct EvaluationPoint {
  double time = 0.0;
  int64_t global_step = 0;
  int64_t samples = 0;
  double auc = 0.0, logloss = 0.0;
};

// What the driver adds to the summary: its clock ("simulated" or "wall", which also names
// the end time: simulated_time or run_time) and keys of its own, before and after the counts.
struct DriverSummary {
  std::string clock;
  double end_time = 0.0;
  nlohmann::ordered_json before_counts = nlohmann::ordered_json::object();
  nlohmann::ordered_json after_counts = nlohmann::ordered_json::object();
};

class RunRecord {
 public:
  RunRecord(const ExperimentSpec& spec, const LoadedData& data);

  const Budget& budget() const { return budget_; }
  // An evaluation; the first at or above evaluation.target_auc sets time-to-AUC.
  void add_point(const EvaluationPoint& point);
  const std::vector<EvaluationPoint>& curve() const { return curve_; }
  std::optional<double> time_to_auc() const { return time_to_auc_; }
  // How the run ended: "completed" (its budget spent) unless a driver ends it otherwise:
  // "diverged" (predictions that are not finite numbers), "stalled" or "time limit" (the
  // watchdog, simulation.*). `detail` says what happened, for the result and the user.
  void end(const std::string& status, const std::string& detail);
  const std::string& status() const { return status_; }
  const std::string& status_detail() const { return status_detail_; }

  // The result: spec, summary, curve, staleness histogram; the caller adds workers and the
  // rest. With no evaluation (timing-only runs) the AUC and log-loss are null.
  nlohmann::ordered_json result(const DriverSummary& driver, int64_t global_steps,
                                int64_t samples, const RuleMetrics& metrics) const;

 private:
  const ExperimentSpec& spec_;
  std::optional<double> bayes_auc_;
  Budget budget_;
  std::vector<EvaluationPoint> curve_;
  std::optional<double> time_to_auc_;
  std::string status_ = "completed", status_detail_;
};

// The switching section of a result: the initial and final modes, the switches made, the
// model moves (each {global_step, direction, start, end, bytes}), and, where the driver
// records it, the mode and straggler ratio at each evaluation ([time, mode, ratio]).
nlohmann::ordered_json switching_json(const ExperimentSpec& spec,
                                      const SwitchingController& controller,
                                      const nlohmann::ordered_json& moves,
                                      const nlohmann::ordered_json& status = nullptr);

// The trace section of a result: the file, which trace worker or machine each worker
// replays, whether some is replayed twice; null without a trace.
nlohmann::ordered_json trace_json(const ExperimentSpec& spec, const ReplayedTrace& trace);

}  // namespace gbasim
