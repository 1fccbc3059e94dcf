// What every actor of a simulated run shares: the data (sim/data_feed.h), the model and its
// one authoritative copy of the parameters (sim/model_state.h), the rule in force, the run
// record, and the lock they are taken under. Actors are SimGrid's (one thread at a time), so the
// lock orders them in simulated time; it does not guard against threads.
#pragma once

#include <simgrid/s4u.hpp>

#include <optional>
#include <vector>

#include "experiment/run_record.h"
#include "experiment/spec.h"
#include "models/dataset.h"
#include "sim/batch_rows.h"
#include "sim/cluster.h"
#include "sim/data_feed.h"
#include "sim/messages.h"
#include "sim/model_state.h"
#include "sim/simulation.h"
#include "sim/step_sizes.h"
#include "sim/timeline.h"
#include "strategies/rule_in_force.h"

namespace gbasim {

struct WorkerStats {
  int64_t steps = 0;
  double compute_s = 0.0, comm_s = 0.0, wait_s = 0.0;
  // stragglers.failures: when the worker stopped for each failure, the compute it lost
  // (counted in compute_s too) and the time it was down, restarting.
  std::vector<double> failure_times;
  double lost_compute_s = 0.0, down_s = 0.0;
  std::vector<double> step_ends;
};

class Training {
 public:
  Training(const ExperimentSpec& spec, SimulationCost& cost);

  const ExperimentSpec& spec() const { return spec_; }
  int workers() const { return n_; }
  RunRecord& record() { return record_; }
  const RunRecord& record() const { return record_; }
  const ReplayedTrace& trace() const { return trace_; }
  const Model& model() const { return state_.model(); }
  const Parameters& parameters() const { return state_.parameters(); }
  LoadedData& data() { return feed_.data(); }
  RuleInForce& rule() { return rule_; }
  const RuleInForce& rule() const { return rule_; }
  WorkerStats& stats(int worker) { return stats_[worker]; }
  const std::vector<WorkerStats>& stats() const { return stats_; }
  // How many times each training sample was handed to a worker (every pool's reads).
  const std::vector<uint32_t>& reads() const { return feed_.reads(); }
  void count_messages(int64_t n) { messages_ += n; }
  int64_t messages() const { return messages_; }
  int64_t applied_samples() const { return applied_samples_; }
  // The budget is checked when an update is applied, so that all-reduce workers stop
  // together at a step boundary.
  bool stopped() const { return stop_; }
  sg4::MutexPtr mutex() const { return mutex_; }

  // Sizes: values of the dense part, columns of each embedding table (the proxy's).
  int64_t dense_values() const { return state_.dense_values(); }
  const std::vector<int64_t>& table_dims() const { return state_.table_dims(); }
  // What the messages and computes of a step weigh: the proxy's or the workload's.
  const StepSizes& sizes() const { return state_.sizes(); }

  // The pools of workers, the batches each worker reads (sim/data_feed.h).
  const std::vector<WorkerPool>& pools() const { return feed_.pools(); }
  int pool_of(int worker) const { return feed_.pool_of(worker); }
  int64_t local_batch(int worker) const { return feed_.local_batch(worker); }
  Batch next_batch(int worker) { return feed_.next_batch(worker); }
  // The real gradient of `batch` on the parameters now, or in timing-only mode just its rows
  // (the unique ids of each field, in the model's table order, in the order the batch first
  // reads them rather than sorted), which is all timing needs.
  void gradient_of(const Batch& batch, Gradient& grad);
  // gradient_of(next_batch(worker)), in timing-only mode read from the data set's rows
  // without copying them into a batch.
  void next_gradient(int worker, Gradient& grad);

  // Blocks until the rule in force admits `worker` or the run stops; false when it stopped.
  // `mode` is the mode in force at the admission.
  bool wait_for_admission(int worker, Admission& admission, Mode& mode);
  // Under the lock: the rule takes the gradient. A switch that it completes leaves a model
  // move owed (take_owed_move), which the calling actor makes before anyone is admitted again.
  std::optional<Gradient> receive(int worker, int64_t token, Gradient gradient);
  // Takes the lock: `worker` failed mid-step and its token is lost (the rule goes on without
  // it; waiting workers wake). A switch that this completes leaves a model move owed, as above.
  void lose_token(int worker);
  // Under the lock: the optimizer applies `update` to the parameters (not in timing-only
  // runs); the budget is checked; waiting workers wake.
  void apply_update(const Gradient& update);
  std::optional<ModelMove> take_owed_move() { return state_.take_owed(); }
  // Ends the run now, from an actor of its own (the evaluator, the watchdog): the status goes
  // to the record, and every other actor is killed, wherever it waits.
  // Ends the run now with `status` (killing every actor; standard error is muted until
  // restore_stderr, which the caller of the engine's run calls when it returns).
  void end_run(const std::string& status, const std::string& detail);
  void restore_stderr();
  // The simulated time, or once end_run has ended the run, the time it did (the engine may
  // still settle what the killed actors left behind).
  double now() const { return ended_at_ >= 0.0 ? ended_at_ : sg4::Engine::get_clock(); }
  // Moves the model between the all-reduce workers and the parameter servers, or from one
  // pool's all-reduce workers to another's through the servers (a switch), then lets
  // admissions go on.
  void move_model(const ModelMove& move, const Cluster& cluster);
  const nlohmann::ordered_json& moves() const { return moves_; }
  // Where the run's activity is recorded (gbasim run --timeline); null: nowhere.
  void set_timeline(Timeline* timeline) { timeline_ = timeline; }
  Timeline* timeline() const { return timeline_; }

 private:
  const ExperimentSpec& spec_;
  SimulationCost& cost_;
  DataFeed feed_;  // the data and what each worker reads of it
  ReplayedTrace trace_;
  RunRecord record_;
  ModelState state_;  // the model, its parameters and optimizer, a model move owed
  RuleInForce rule_;
  int n_;
  bool timing_only_;
  std::vector<WorkerStats> stats_;
  sg4::MutexPtr mutex_;
  sg4::ConditionVariablePtr updated_;
  bool stop_ = false;
  double ended_at_ = -1.0;  // end_run's time
  int muted_stderr_ = -1;   // standard error's own descriptor while end_run mutes it
  int64_t applied_samples_ = 0;
  int64_t messages_ = 0;
  Timeline* timeline_ = nullptr;
  int64_t waiting_gradients_ = 0;  // received since the last update (the timeline's counter)
  nlohmann::ordered_json moves_ = nlohmann::ordered_json::array();

  // A move the rule asks for (a switch it completed) holds every admission back until made.
  void hold_for_move();
};

}  // namespace gbasim
