#include "sim/workers.h"

#include "sim/messages.h"

namespace gbasim {

Workers::Workers(Training& training, const Cluster& cluster, Server& server)
    : training_(training),
      cluster_(cluster),
      server_(server),
      collectives_(cluster, training.spec().cluster),
      sparse_bytes_(training.workers(), 0.0) {
  if (cluster.machine() != nullptr) {
    for (int w = 0; w < training.workers(); ++w)
      rank_slowdowns_.emplace_back(training.spec(), training.trace(), w);
  }
}

void Workers::start() {
  for (int w = 0; w < training_.workers(); ++w) {
    sg4::Actor::create("worker-" + std::to_string(w), cluster_.workers()[w].host,
                       [this, w] { run(w); });
  }
}

void Workers::start_tenants() {
  const std::vector<bool> colocated =
      colocated_workers(training_.spec().stragglers, training_.workers());
  for (int w = 0; w < training_.workers(); ++w) {
    if (colocated[w]) {
      sg4::Actor::create("tenant-" + std::to_string(w), cluster_.workers()[w].host, [this, w] {
        tenant(w);
      })->daemonize();
    }
  }
}

void Workers::run(int w) {
  WorkerStats& me = training_.stats(w);
  for (int64_t step = 0;; ++step) {
    const double compute_before = me.compute_s;
    if (!take_step(w, step)) break;
    ++me.steps;
    me.step_ends.push_back(sg4::Engine::get_clock());
    if (training_.rule().switching()) {
      std::unique_lock lock(*training_.mutex());
      training_.rule().observe_step(w, me.compute_s - compute_before, sg4::Engine::get_clock());
    }
  }
}

// In a server mode the gradient is computed at admission on the parameters of the token, since
// the pull returns exactly those parameters.
bool Workers::take_step(int w, int64_t step) {
  Admission admission;
  Mode mode;
  if (!server_.admit(w, admission, mode)) return false;
  if (mode == Mode::kSync) {
    sync_step(w, step, admission);
    return true;
  }
  Gradient grad = server_.pull(w, admission);
  spend_compute(w, step);
  server_.push(w, admission.token, std::move(grad));
  return true;
}

// Compute, the all-reduce of the dense gradient and the all-gather of the sparse rows,
// local optimizer work, then the step.
void Workers::sync_step(int w, int64_t step, const Admission& admission) {
  Gradient grad;
  training_.gradient_of(training_.next_batch(w), grad);
  sparse_bytes_[w] = total(shard_bytes(grad, 0, training_.table_dims(), 1, 4.0, 8.0));
  spend_compute(w, step);

  const double start = sg4::Engine::get_clock();
  if (training_.workers() > 1) {
    collectives_.step(w, 4.0 * static_cast<double>(training_.dense_values()), sparse_bytes_);
    training_.count_messages(collectives_.messages_per_step());
  }
  training_.stats(w).comm_s += sg4::Engine::get_clock() - start;
  cluster_.run_flops(
      training_.spec().cost.update_flops_per_value *
      static_cast<double>(updated_values(grad, training_.dense_values(), training_.table_dims())));
  std::optional<ModelMove> move;
  {
    std::unique_lock lock(*training_.mutex());
    if (auto update = training_.receive(w, admission.token, std::move(grad)))
      training_.apply_update(*update);
    move = training_.take_owed_move();
  }
  if (move) training_.move_model(*move, cluster_);  // the last gradient of the step before a switch
}

void Workers::spend_compute(int w, int64_t step) {
  const ExperimentSpec& spec = training_.spec();
  const double base = spec.cost.flops_scale * training_.model().flops_per_sample() *
                      static_cast<double>(spec.training.local_batch);
  const double start = sg4::Engine::get_clock();
  if (cluster_.machine() != nullptr) {
    // As a real rank: compute, then sleep (slowdown - 1) x the time it took.
    cluster_.run_flops(base);
    const double took = sg4::Engine::get_clock() - start;
    const double slowdown = rank_slowdowns_[w].factor(step, start);
    if (slowdown > 1.0) sg4::this_actor::sleep_for((slowdown - 1.0) * took);
  } else {
    const auto& pai = training_.trace().pai;
    sg4::this_actor::execute(base * step_noise(spec.stragglers, w, step) *
                             (pai ? pai->slowdown(w, step) : 1.0) *
                             cluster_.workers()[w].flops_factor);
  }
  training_.stats(w).compute_s += sg4::Engine::get_clock() - start;
}

void Workers::tenant(int w) {
  const StragglerConfig& g = training_.spec().stragglers;
  const double busy_flops = g.colocated_duty * g.colocated_period_s * cluster_.workers()[w].speed *
                            cluster_.workers()[w].flops_factor;
  while (true) {
    cluster_.run_flops(busy_flops);  // shares the host's core fairly with the worker
    sg4::this_actor::sleep_for((1.0 - g.colocated_duty) * g.colocated_period_s);
  }
}

}  // namespace gbasim
