#include "sim/training.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "base/clock.h"
#include "base/error.h"

namespace gbasim {

namespace {

std::optional<SwitchPolicy> switching_of(const ExperimentSpec& spec) {
  if (!spec.switching.enabled()) return std::nullopt;
  SwitchPolicy policy = switch_policy(spec.switching);
  policy.pools = worker_pools(spec);
  return policy;
}

}  // namespace

Training::Training(const ExperimentSpec& spec, SimulationCost& cost)
    : spec_(spec),
      cost_(cost),
      feed_(spec),
      trace_(load_trace(spec)),
      record_(spec, feed_.data()),
      state_(spec, feed_.data(), cost),
      rule_(spec.training, switching_of(spec)),
      n_(total_workers(spec)),
      timing_only_(spec.simulation.timing_only),
      stats_(n_),
      mutex_(sg4::Mutex::create()),
      updated_(sg4::ConditionVariable::create()) {
  LoadedData& data = feed_.data();
  if (spec.evaluation.test_samples > 0)
    data.test = first_rows(data.test, spec.evaluation.test_samples);
}

void Training::gradient_of(const Batch& batch, Gradient& grad) {
  if (!timing_only_) {
    state_.gradient_of(batch, grad);
    return;
  }
  feed_.batch_rows(batch, state_.table_dims().size(), grad);
}

void Training::next_gradient(int worker, Gradient& grad) {
  if (!timing_only_) {
    gradient_of(feed_.next_batch(worker), grad);
    return;
  }
  feed_.next_rows(worker, state_.table_dims().size(), state_.sizes().proxy(), grad);
}

bool Training::wait_for_admission(int worker, Admission& admission, Mode& mode) {
  const double start = sg4::Engine::get_clock();
  std::unique_lock lock(*mutex_);
  while (!stop_) {
    if (!state_.moving()) {
      admission = rule_.admit(worker);
      if (admission.admitted) break;
    }
    updated_->wait(lock);
  }
  mode = rule_.mode();
  const double end = sg4::Engine::get_clock();
  stats_[worker].wait_s += end - start;
  if (timeline_) timeline_->worker_span(worker, "wait for admission", start, end);
  return admission.admitted && !stop_;
}

std::optional<Gradient> Training::receive(int worker, int64_t token, Gradient gradient) {
  if (timeline_) {
    const double now = sg4::Engine::get_clock();
    timeline_->counter("staleness", now, static_cast<double>(rule_.global_step() - token));
    timeline_->counter("gradients waiting", now, static_cast<double>(++waiting_gradients_));
  }
  const auto start = WallClock::now();
  std::optional<Gradient> update = rule_.receive(worker, token, std::move(gradient));
  cost_.rule_s += seconds_since(start);
  hold_for_move();
  return update;
}

void Training::lose_token(int worker) {
  std::unique_lock lock(*mutex_);
  rule_.lose_token(worker);
  hold_for_move();
  updated_->notify_all();
}

void Training::hold_for_move() {
  if (auto move = rule_.take_model_move()) state_.owe(std::move(*move));
}

void Training::apply_update(const Gradient& update) {
  state_.apply(update);
  applied_samples_ += update.samples;
  if (timeline_) {
    const double now = sg4::Engine::get_clock();
    timeline_->update(now, rule_.global_step());
    timeline_->counter("gradients waiting", now, 0.0);
  }
  waiting_gradients_ = 0;
  stop_ = record_.budget().spent(applied_samples_, sg4::Engine::get_clock());
  updated_->notify_all();
}

void Training::end_run(const std::string& status, const std::string& detail) {
  record_.end(status, detail);
  stop_ = true;
  ended_at_ = sg4::Engine::get_clock();
  // The killed actors drop messages still in flight, and SimGrid prints a backtrace on standard
  // error for each ("freed before its completion"): noise about a run that ended as asked. So
  // standard error goes to /dev/null until the engine returns (restore_stderr).
  if (muted_stderr_ < 0) {
    std::fflush(stderr);
    const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) {
      muted_stderr_ = ::dup(STDERR_FILENO);
      if (muted_stderr_ >= 0) ::dup2(null, STDERR_FILENO);
      ::close(null);
    }
  }
  sg4::Actor::kill_all();
}

void Training::restore_stderr() {
  if (muted_stderr_ < 0) return;
  std::fflush(stderr);
  ::dup2(muted_stderr_, STDERR_FILENO);
  ::close(muted_stderr_);
  muted_stderr_ = -1;
}

// The model goes whole: from the first worker of the pool that ran sync (every all-reduce
// worker holds it) to the server shards, each taking its share; or from the shards to every
// worker of the pool that runs sync next; between two sync pools, both.
void Training::move_model(const ModelMove& move, const Cluster& cluster) {
  const StepSizes& sizes = state_.sizes();
  const double bytes = sizes.value_bytes() * sizes.model_values(state_.values());
  const double start = sg4::Engine::get_clock();
  const auto& servers = cluster.servers();
  const int shards = static_cast<int>(servers.size());
  using Direction = ModelMove::Direction;
  const bool up = move.direction != Direction::kToWorkers;
  const bool down = move.direction != Direction::kToParameterServers;
  double moved = 0.0;
  for (int leg = 0; leg < 2; ++leg) {
    if ((leg == 0 && !up) || (leg == 1 && !down)) continue;
    Network& network = cluster.network();
    std::vector<Transfer> comms;
    for (int p = 0; p < shards; ++p) {
      if (leg == 0) {
        comms.push_back(
            network.send(cluster.workers()[move.from.first].host, servers[p], bytes / shards));
      } else {
        for (int w = move.to.first; w < move.to.first + move.to.workers; ++w)
          comms.push_back(network.send(servers[p], cluster.workers()[w].host, bytes / shards));
      }
    }
    network.wait_all(comms);
    messages_ += static_cast<int64_t>(comms.size());
    moved += bytes * (leg == 0 ? 1 : move.to.workers);
  }
  const char* direction = move.direction == Direction::kToParameterServers ? "to_parameter_servers"
                          : move.direction == Direction::kToWorkers        ? "to_workers"
                                                                           : "between_pools";
  moves_.push_back({{"global_step", move.global_step},
                    {"direction", direction},
                    {"start", start},
                    {"end", sg4::Engine::get_clock()},
                    {"bytes", moved}});
  std::unique_lock lock(*mutex_);
  state_.moved();
  updated_->notify_all();
}

}  // namespace gbasim
