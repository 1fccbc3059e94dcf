#include "sim/simulation.h"

#include <simgrid/s4u.hpp>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <memory>
#include <stdexcept>

#include "base/clock.h"
#include "base/error.h"
#include "sim/cluster.h"
#include "sim/server.h"
#include "sim/training.h"
#include "sim/workers.h"

namespace gbasim {
namespace {

// SimGrid ends the process (abort) on a state it cannot go on from, after printing its message
// and a backtrace: an input gbasim does not check, or a defect of gbasim. While the engine runs,
// the process then ends as any internal error does (exit 70) with a line saying so, rather than
// by the signal; no result was written.
void engine_abort(int) {
  static const char line[] =
      "gbasim: internal error (a defect of gbasim, or an input it does not check; please report "
      "it with the spec): SimGrid stopped the run with the message above; no result was written\n";
  (void)!::write(STDERR_FILENO, line, sizeof line - 1);
  ::_exit(70);
}

// Every actor has a stack of SimGrid's contexts/stack-size (gbasim's default 1 MiB, cli/
// engine_args.cc), reserved as address space when it starts. Under an address-space limit
// (ulimit -v) too small for them all, SimGrid would end the process ("Failed to allocate
// stack"); this says so first.
void check_actor_stacks(int actors) {
  struct rlimit limit {};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
  const double stack = actor_stack_kib() * 1024.0;
  const double need = actors * (stack + 65536.0);  // and a guard page or so each
  const double room = static_cast<double>(limit.rlim_cur);
  if (need <= 0.75 * room) return;  // the rest for the data, the model and the engine
  char what[320];
  std::snprintf(what, sizeof what,
                "'training.workers': %d actors (workers, servers, tenants) need %.2f GiB of "
                "stacks (SimGrid's contexts/stack-size, %.0f KiB each), more than three "
                "quarters of this process's address-space limit of %.2f GiB (ulimit -v): "
                "raise the limit, or give a smaller --cfg=contexts/stack-size (512 at least)",
                actors, need / 1073741824.0, stack / 1024.0, room / 1073741824.0);
  throw InputError(what);
}

// How the training samples were read: how many were handed out, how many distinct ones, and
// the most reads of one sample, per data.sharding (docs/spec.md, the result's "data_reads").
nlohmann::ordered_json data_reads_json(const ExperimentSpec& spec,
                                       const std::vector<uint32_t>& reads) {
  int64_t total = 0, distinct = 0;
  uint32_t most = 0;
  for (const uint32_t r : reads) {
    total += r;
    distinct += r > 0;
    most = std::max(most, r);
  }
  return {{"sharding", data_sharding_name(spec.data.sharding)},
          {"training_samples", static_cast<int64_t>(reads.size())},
          {"samples_read", total},
          {"distinct_samples_read", distinct},
          {"most_reads_of_a_sample", most}};
}

// The run: the cluster, the server, the workers and the evaluator, started in the engine;
// then the result.
class Simulation {
 public:
  Simulation(const ExperimentSpec& spec, const std::function<void(const EvaluationPoint&)>& on_point,
             SimulationCost& cost, const ProgressWatch& progress, Timeline* timeline)
      : spec_(spec),
        on_point_(on_point),
        cost_(cost),
        progress_(progress),
        training_(spec, cost),
        cluster_(spec, training_.trace()),
        server_(make_server(training_, cluster_)),
        workers_(training_, cluster_, *server_) {
    training_.set_timeline(timeline);
  }

  nlohmann::ordered_json run();

 private:
  // Snapshots the parameters every evaluation.interval_s, at no simulated cost; ends the run
  // when the model has diverged or, for simulation.stall_evaluations snapshots in a row,
  // nothing has been applied.
  void evaluator();
  // Ends the run at simulation.max_simulated_s.
  void watchdog();
  // Ends the run when the first parameter-server shard fails (stragglers.failures).
  void server_failure(const ServerFailure& failure);
  Evaluation evaluate_now();
  // The engine's clock advanced: a progress report if progress_.every_s have passed.
  void clock_advanced();
  nlohmann::ordered_json result() const;
  // stragglers.failures: the workers' failures, lost tokens, lost compute and down time, and
  // the server shard whose failure ended the run (null if none did).
  nlohmann::ordered_json failures_json() const;

  const ExperimentSpec& spec_;
  std::function<void(const EvaluationPoint&)> on_point_;
  SimulationCost& cost_;
  const ProgressWatch& progress_;
  WallClock::time_point engine_start_, last_report_;
  Training training_;
  Cluster cluster_;
  std::unique_ptr<Server> server_;
  Workers workers_;
  nlohmann::ordered_json status_ = nlohmann::ordered_json::array();  // [time, mode, ratio]
};

Evaluation Simulation::evaluate_now() {
  const auto start = WallClock::now();
  const Evaluation e = evaluate(training_.model(), training_.parameters(), training_.data().test);
  cost_.evaluation_s += seconds_since(start);
  const EvaluationPoint point{training_.now(), training_.rule().global_step(),
                         training_.applied_samples(), e.auc, e.logloss};
  if (Timeline* timeline = training_.timeline()) timeline->snapshot(point.time);
  if (const SwitchingController* s = training_.rule().switching())
    status_.push_back({point.time, mode_name(s->mode()), s->straggler_ratio()});
  training_.record().add_point(point);
  if (e.diverged) {
    training_.record().end("diverged", "the model's test predictions are not finite numbers at " +
                                           std::to_string(point.time) + " s (global step " +
                                           std::to_string(point.global_step) + ")");
  }
  if (on_point_) on_point_(point);
  return e;
}

void Simulation::clock_advanced() {
  const auto now = WallClock::now();
  if (std::chrono::duration<double>(now - last_report_).count() < progress_.every_s) return;
  last_report_ = now;
  int64_t worker_steps = 0;
  for (const WorkerStats& w : training_.stats()) worker_steps += w.steps;
  progress_.report({training_.now(), training_.rule().global_step(), training_.applied_samples(),
                    worker_steps, training_.messages()});
}

void Simulation::evaluator() {
  const int64_t stall = spec_.simulation.stall_evaluations;
  int64_t last_step = training_.rule().global_step(), still = 0;
  while (true) {
    sg4::this_actor::sleep_for(spec_.evaluation.interval_s);
    const Evaluation e = evaluate_now();
    const double now = sg4::Engine::get_clock();
    const int64_t step = training_.rule().global_step();
    if (e.diverged) {
      training_.end_run("diverged", "");  // the status is recorded already, with its detail
      return;
    }
    still = step == last_step ? still + 1 : 0;
    last_step = step;
    if (stall > 0 && still >= stall) {
      training_.end_run("stalled", "no update applied in " + std::to_string(stall) +
                                       " evaluations in a row, up to " + std::to_string(now) +
                                       " s (simulation.stall_evaluations): a worker or the "
                                       "server never finishes, or evaluation.interval_s is "
                                       "far shorter than a step");
      return;
    }
  }
}

void Simulation::watchdog() {
  sg4::this_actor::sleep_for(spec_.simulation.max_simulated_s);
  training_.end_run("time limit", "the simulated clock reached simulation.max_simulated_s = " +
                                      std::to_string(spec_.simulation.max_simulated_s) + " s");
}

void Simulation::server_failure(const ServerFailure& failure) {
  sg4::this_actor::sleep_until(failure.time);
  training_.end_run("server failed",
                    "parameter-server shard " + std::to_string(failure.shard) + " failed at " +
                        std::to_string(failure.time) +
                        " s (stragglers.failures.server_rate_per_s); gbasim models no recovery "
                        "from a checkpoint, so the run ends there");
}

nlohmann::ordered_json Simulation::run() {
  const bool allreduce = spec_.training.mode == Mode::kSync && !training_.rule().switching();
  const int workers = static_cast<int>(cluster_.workers().size());
  const bool tenants = spec_.stragglers.colocated_fraction > 0.0;
  check_actor_stacks(workers * (tenants ? 2 : 1) + static_cast<int>(cluster_.servers().size()) + 4);
  workers_.start();
  if (!allreduce) server_->start();
  workers_.start_tenants();
  const bool timing_only = spec_.simulation.timing_only;
  if (!timing_only) {
    sg4::Actor::create("evaluator", cluster_.servers()[0], [this] { evaluator(); })->daemonize();
    evaluate_now();
  }
  if (spec_.simulation.max_simulated_s > 0.0)
    sg4::Actor::create("watchdog", cluster_.servers()[0], [this] { watchdog(); })->daemonize();
  // Shards are there unless every step is an all-reduce with the rows on the workers.
  const bool shards =
      !allreduce || spec_.cluster.embedding_exchange == EmbeddingExchange::kHybrid;
  if (const ServerFailure failure =
          first_server_failure(spec_.stragglers, static_cast<int>(cluster_.servers().size()));
      shards && failure.shard >= 0) {
    sg4::Actor::create("server-failure", cluster_.servers()[failure.shard],
                       [this, failure] { server_failure(failure); })
        ->daemonize();
  }
  engine_start_ = last_report_ = WallClock::now();
  // The engine's signals cannot be disconnected: one connection a process, to the run going on.
  static Simulation* running = nullptr;
  static const bool connected = [] {
    sg4::Engine::on_time_advance_cb([](double) {
      if (running != nullptr) running->clock_advanced();
    });
    return true;
  }();
  (void)connected;
  running = progress_.report ? this : nullptr;
  struct Done {
    Simulation*& running;
    Training& training;
    ~Done() {
      running = nullptr;
      training.restore_stderr();
    }
  } done{running, training_};
  struct AbortHandler {  // engine_abort while the engine runs, however run() returns
    struct sigaction before {};
    AbortHandler() {
      struct sigaction action {};
      action.sa_handler = engine_abort;
      ::sigaction(SIGABRT, &action, &before);
    }
    ~AbortHandler() { ::sigaction(SIGABRT, &before, nullptr); }
  } abort_handler;
  sg4::Engine::get_instance()->run();
  cost_.wall_s = seconds_since(engine_start_);
  cost_.messages = training_.messages();
  const auto& curve = training_.record().curve();
  if (!timing_only && (curve.back().time < training_.now() ||
                       curve.back().global_step != training_.rule().global_step())) {
    evaluate_now();
  }
  const bool completed = training_.record().status() == "completed";
  for (const WorkerStats& w : training_.stats()) {
    if (completed && allreduce && w.steps != training_.stats()[0].steps)
      throw std::logic_error("simulation: workers ended out of step");
  }
  return result();
}

nlohmann::ordered_json Simulation::result() const {
  const double end = training_.now();
  DriverSummary driver{"simulated", end};
  driver.after_counts = {
      {"flops_per_sample", training_.sizes().flops_per_sample()}};
  const RuleInForce& rule = training_.rule();
  nlohmann::ordered_json doc =
      training_.record().result(driver, rule.global_step(), training_.applied_samples(),
                                rule.metrics());
  nlohmann::ordered_json workers = nlohmann::ordered_json::array();
  auto listed = [&](const std::vector<Episode>& episodes) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const Episode& e : episodes) list.push_back({e.start, e.end, e.slowdown});
    return list;
  };
  const std::vector<bool> colocated = colocated_workers(spec_.stragglers, training_.workers());
  const bool failing = spec_.stragglers.failure_rate_per_s > 0.0 ||
                       spec_.stragglers.server_failure_rate_per_s > 0.0;
  for (int w = 0; w < training_.workers(); ++w) {
    const WorkerHost& h = cluster_.workers()[w];
    const WorkerStats& s = training_.stats()[w];
    workers.push_back(
        {{"worker", w},
         {"speed", h.speed},
         // One step's compute on this host undisturbed (no noise, episodes or trace).
         {"nominal_step_s", training_.sizes().batch_flops(training_.local_batch(w)) / h.speed},
         {"pool", training_.pool_of(w)},
         {"persistent_slowdown", h.persistent},
         {"colocated", static_cast<bool>(colocated[w])},
         {"steps", s.steps},
         {"compute_s", s.compute_s},
         {"comm_s", s.comm_s},
         {"wait_s", s.wait_s},
         {"transient_episodes", listed(transient_episodes(spec_.stragglers, w, end))},
         {"network_episodes", listed(network_episodes(spec_.stragglers, w, end))},
         {"step_ends", s.step_ends}});
    if (failing) {
      workers.back()["failure_times"] = s.failure_times;
      workers.back()["lost_compute_s"] = s.lost_compute_s;
      workers.back()["down_s"] = s.down_s;
    }
  }
  doc["workers"] = workers;
  if (failing) doc["failures"] = failures_json();
  doc["data_reads"] = data_reads_json(spec_, training_.reads());
  if (auto trace = trace_json(spec_, training_.trace()); !trace.is_null()) doc["trace"] = trace;
  if (const SwitchingController* s = rule.switching())
    doc["switching"] = switching_json(spec_, *s, training_.moves(), status_);
  return doc;
}

nlohmann::ordered_json Simulation::failures_json() const {
  int64_t failures = 0;
  double lost = 0.0, down = 0.0;
  for (const WorkerStats& s : training_.stats()) {
    failures += static_cast<int64_t>(s.failure_times.size());
    lost += s.lost_compute_s;
    down += s.down_s;
  }
  nlohmann::ordered_json doc = {{"worker_failures", failures},
                                {"tokens_lost", training_.rule().metrics().tokens_lost},
                                {"lost_compute_s", lost},
                                {"down_s", down},
                                {"server", nullptr}};
  if (training_.record().status() == "server failed") {
    const ServerFailure f =
        first_server_failure(spec_.stragglers, static_cast<int>(cluster_.servers().size()));
    doc["server"] = {{"shard", f.shard}, {"time", f.time}};
  }
  return doc;
}

}  // namespace

nlohmann::ordered_json run_simulation(const ExperimentSpec& spec,
                                      const std::function<void(const EvaluationPoint&)>& on_point,
                                      SimulationCost* cost, const ProgressWatch& progress,
                                      Timeline* timeline) {
  configure_network(spec.cluster);
  SimulationCost ignored;
  Simulation simulation(spec, on_point, cost != nullptr ? *cost : ignored, progress, timeline);
  return simulation.run();
}

}  // namespace gbasim
