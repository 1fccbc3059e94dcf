#include "sim/workers.h"

#include "sim/messages.h"

namespace gbasim {

Workers::Workers(Training& training, const Cluster& cluster, Server& server)
    : training_(training),
      cluster_(cluster),
      server_(server),
      sparse_bytes_(training.pools().size()),
      lookups_(training.pools().size()) {
  collectives_.reserve(training.pools().size());
  for (size_t p = 0; p < training.pools().size(); ++p) {
    const WorkerPool& pool = training.pools()[p];
    collectives_.emplace_back(cluster, training.spec().cluster, pool.first, pool.workers,
                              p == 0 ? "" : "pool-" + std::to_string(p) + "-");
    sparse_bytes_[p].assign(pool.workers, 0.0);
    lookups_[p].resize(pool.workers);
  }
  if (cluster.machine() != nullptr) {
    for (int w = 0; w < training.workers(); ++w)
      rank_slowdowns_.emplace_back(training.spec(), training.trace(), w);
  }
  for (int w = 0; w < training.workers(); ++w)
    failures_.emplace_back(training.spec().stragglers, w);
  failures_in_a_row_.assign(training.workers(), 0);
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
    const StepEnd end = take_step(w, step);
    if (end == StepEnd::kStopped) break;
    if (end == StepEnd::kLost) continue;
    failures_in_a_row_[w] = 0;
    ++me.steps;
    me.step_ends.push_back(sg4::Engine::get_clock());
    if (training_.rule().switching()) {
      std::unique_lock lock(*training_.mutex());
      training_.rule().observe_step(w, me.compute_s - compute_before, sg4::Engine::get_clock());
    }
  }
}

// In a server mode the gradient is computed at admission on the parameters of the token, since
// the pull returns exactly those parameters. A worker that fails during its compute loses the
// gradient and the token (the GBA paper's recovery: it starts afresh on a new batch).
Workers::StepEnd Workers::take_step(int w, int64_t step) {
  Admission admission;
  Mode mode;
  if (!server_.admit(w, admission, mode)) return StepEnd::kStopped;
  if (mode == Mode::kSync) {
    sync_step(w, step, admission);
    return StepEnd::kDone;
  }
  Timeline* timeline = training_.timeline();
  const double pull_start = sg4::Engine::get_clock();
  Gradient grad = server_.pull(w, admission);
  if (timeline) timeline->worker_span(w, "pull", pull_start, sg4::Engine::get_clock());
  if (!spend_compute(w, step)) {
    training_.lose_token(w);
    if (auto move = training_.take_owed_move()) training_.move_model(*move, cluster_);
    down(w);
    return StepEnd::kLost;
  }
  const double push_start = sg4::Engine::get_clock();
  server_.push(w, admission.token, std::move(grad));
  if (timeline) timeline->worker_span(w, "push", push_start, sg4::Engine::get_clock());
  return StepEnd::kDone;
}

// The rows' exchange before the compute, the compute, the rows' exchange after it with the
// all-reduce of the dense gradient, local optimizer work, then the step.
void Workers::sync_step(int w, int64_t step, const Admission& admission) {
  Gradient grad;
  training_.next_gradient(w, grad);
  const SyncBytes bytes = sync_bytes(w, grad);
  double comm_s = exchange_before(w, bytes, grad);
  // A worker that fails stalls the step until it is back and has computed it again.
  while (!spend_compute(w, step)) down(w);
  comm_s += exchange_after(w, bytes);
  training_.stats(w).comm_s += comm_s;
  const StepSizes& sizes = training_.sizes();
  cluster_.run_flops(training_.spec().cost.update_flops_per_value * sizes.updated_values(grad));
  // A timing-only update is never applied, and each worker's own optimizer work is charged
  // above: the step's sum needs the samples alone, not the union of every worker's rows.
  if (training_.spec().simulation.timing_only) grad.tables.clear();
  std::optional<ModelMove> move;
  {
    std::unique_lock lock(*training_.mutex());
    if (auto update = training_.receive(w, admission.token, std::move(grad)))
      training_.apply_update(*update);
    move = training_.take_owed_move();
  }
  if (move) training_.move_model(*move, cluster_);  // the last gradient of the step before a switch
}

Workers::SyncBytes Workers::sync_bytes(int w, const Gradient& grad) {
  SyncBytes b;
  b.exchange = training_.spec().cluster.embedding_exchange;
  const StepSizes& sizes = training_.sizes();
  // The collectives are those of w's pool, w its rank i there.
  b.pool = training_.pool_of(w);
  b.i = w - training_.pools()[b.pool].first;
  b.n = training_.pools()[b.pool].workers;
  b.owners =
      b.exchange == EmbeddingExchange::kHybrid ? static_cast<int>(cluster_.servers().size()) : b.n;
  const bool gather = b.exchange == EmbeddingExchange::kAllGather;
  b.counts = sizes.rows(grad, gather ? 1 : b.owners);
  const bool to_workers = b.exchange == EmbeddingExchange::kAllToAll;
  b.ids = gather       ? std::vector<double>{}
          : to_workers ? sizes.all_to_all_ids(b.counts, grad)
                       : owner_bytes(b.counts, 0, 0.0, sizes.id_bytes());
  b.rows = to_workers ? sizes.all_to_all_gradients(b.counts, grad)
                      : owner_bytes(b.counts, 0, sizes.value_bytes(), sizes.id_bytes());
  if (gather) sparse_bytes_[b.pool][b.i] = total(b.rows);
  return b;
}

double Workers::exchange_before(int w, const SyncBytes& b, const Gradient& grad) {
  const double start = sg4::Engine::get_clock();
  const StepSizes& sizes = training_.sizes();
  Collectives& collectives = collectives_[b.pool];
  if (b.exchange == EmbeddingExchange::kAllToAll && b.n > 1) {
    std::vector<std::vector<double>>& lookups = lookups_[b.pool];
    lookups[b.i] = sizes.all_to_all_vectors(b.counts, grad);  // the owners are the n workers
    collectives.all_to_all(b.i, b.ids);
    collectives.barrier();  // every worker's lookups are known and its ids have arrived
    std::vector<double> answers(b.n);
    for (int v = 0; v < b.n; ++v) answers[v] = lookups[v][b.i];
    collectives.all_to_all(b.i, answers);
    collectives.barrier();
    training_.count_messages(3 * collectives.messages_per_all_to_all());  // and the gradients
  } else if (b.exchange == EmbeddingExchange::kHybrid) {
    exchange_with_servers(w, b.ids, owner_bytes(b.counts, 0, sizes.value_bytes(), 0.0));
    training_.count_messages(3 * b.owners);  // with the push below
  }
  if (Timeline* timeline = training_.timeline())
    timeline->worker_span(w, "fetch rows", start, sg4::Engine::get_clock());
  return sg4::Engine::get_clock() - start;
}

double Workers::exchange_after(int w, const SyncBytes& b) {
  if (b.n <= 1 && b.exchange != EmbeddingExchange::kHybrid) return 0.0;
  const double start = sg4::Engine::get_clock();
  const StepSizes& sizes = training_.sizes();
  Collectives& collectives = collectives_[b.pool];
  const double dense = sizes.value_bytes() * static_cast<double>(sizes.dense_values());
  if (b.exchange == EmbeddingExchange::kAllGather) {
    collectives.step(b.i, dense, sparse_bytes_[b.pool]);
  } else {
    if (b.exchange == EmbeddingExchange::kAllToAll && b.n > 1) {
      collectives.all_to_all(b.i, b.rows);
      collectives.barrier();
    } else if (b.exchange == EmbeddingExchange::kHybrid) {
      exchange_with_servers(w, b.rows, {});
      charge_servers(b.counts);
    }
    collectives.all_reduce(b.i, dense);
  }
  const double waited = sg4::Engine::get_clock() - start;
  if (Timeline* timeline = training_.timeline())
    timeline->worker_span(w, "all-reduce", start, start + waited);
  training_.count_messages(b.exchange == EmbeddingExchange::kAllGather
                               ? collectives.messages_per_step(b.i, dense)
                               : collectives.messages_per_all_reduce(b.i, dense));
  return waited;
}

void Workers::exchange_with_servers(int w, const std::vector<double>& to_servers,
                                    const std::vector<double>& from_servers) {
  const auto& servers = cluster_.servers();
  sg4::Host* me = cluster_.workers()[w].host;
  Network& network = cluster_.network();
  std::vector<Transfer> comms;
  for (size_t p = 0; p < servers.size(); ++p)
    if (to_servers[p] > 0.0) comms.push_back(network.send(me, servers[p], to_servers[p]));
  network.wait_all(comms);
  comms.clear();
  for (size_t p = 0; p < from_servers.size(); ++p)
    if (from_servers[p] > 0.0) comms.push_back(network.send(servers[p], me, from_servers[p]));
  network.wait_all(comms);
}

void Workers::charge_servers(const RowsByOwner& rows) {
  // The shards' optimizer work on the rows they hold (counted by shard with the step's
  // messages), on their cores, before the push returns.
  const auto& servers = cluster_.servers();
  const std::vector<double>& values = rows.values;
  std::vector<sg4::ExecPtr> work;
  for (size_t p = 0; p < servers.size(); ++p) {
    if (values[p] > 0.0) {
      work.push_back(
          sg4::this_actor::exec_init(training_.spec().cost.update_flops_per_value * values[p])
              ->set_host(servers[p])
              ->start());
    }
  }
  for (auto& e : work) e->wait();
}

bool Workers::spend_compute(int w, int64_t step) {
  const ExperimentSpec& spec = training_.spec();
  const double base = training_.sizes().batch_flops(training_.local_batch(w));
  const double start = sg4::Engine::get_clock();
  bool done = true;
  if (cluster_.machine() != nullptr) {
    // As a real rank: compute, then sleep (slowdown - 1) x the time it took.
    cluster_.run_flops(base);
    const double took = sg4::Engine::get_clock() - start;
    const double slowdown = rank_slowdowns_[w].factor(step, start);
    if (slowdown > 1.0) sg4::this_actor::sleep_for((slowdown - 1.0) * took);
  } else {
    const auto& pai = training_.trace().pai;
    const double flops = base * step_noise(spec.stragglers, w, step) *
                         (pai ? pai->slowdown(w, step) : 1.0) * cluster_.workers()[w].flops_factor;
    const double fails_at = failures_[w].next();
    if (fails_at == std::numeric_limits<double>::infinity()) {
      sg4::this_actor::execute(flops);
    } else if (fails_at <= start) {
      done = false;  // it failed while it communicated or waited: it stops as it would compute
    } else {
      const sg4::ExecPtr exec = sg4::this_actor::exec_init(flops)->start();
      try {
        exec->wait_for(fails_at - start);
      } catch (const simgrid::TimeoutException&) {
        exec->cancel();
        done = false;
      }
    }
  }
  WorkerStats& me = training_.stats(w);
  const double spent = sg4::Engine::get_clock() - start;
  if (Timeline* timeline = training_.timeline()) {
    timeline->worker_span(w, done ? "compute" : "compute (lost)", start, start + spent);
    if (!done) timeline->worker_instant(w, "failed", start + spent);
  }
  me.compute_s += spent;
  if (!done) {
    me.failure_times.push_back(sg4::Engine::get_clock());
    me.lost_compute_s += spent;
  }
  return done;
}

void Workers::down(int w) {
  const StragglerConfig& g = training_.spec().stragglers;
  if (++failures_in_a_row_[w] >= kFailuresInARow) {
    // It will never finish a step: end the run rather than fail forever.
    training_.end_run("stalled",
                      "worker " + std::to_string(w) + " failed " + std::to_string(kFailuresInARow) +
                          " times in a row without finishing a step "
                          "(stragglers.failures.rate_per_s = " +
                          std::to_string(g.failure_rate_per_s) + " is too high for its steps)");
    sg4::this_actor::exit();
  }
  const double start = sg4::Engine::get_clock();
  sg4::this_actor::sleep_for(g.failure_restart_s);
  training_.stats(w).down_s += g.failure_restart_s;
  if (Timeline* timeline = training_.timeline())
    timeline->worker_span(w, "down", start, sg4::Engine::get_clock());
  failures_[w].back(sg4::Engine::get_clock());
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
