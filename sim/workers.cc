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
  Gradient grad = server_.pull(w, admission);
  if (!spend_compute(w, step)) {
    training_.lose_token(w);
    if (auto move = training_.take_owed_move()) training_.move_model(*move, cluster_);
    down(w);
    return StepEnd::kLost;
  }
  server_.push(w, admission.token, std::move(grad));
  return StepEnd::kDone;
}

// The rows' exchange before the compute (all_to_all: the ids to their owners, the vectors
// back; hybrid: the pull from the shards), the compute, the rows' exchange after it (the
// all-gather, or the row gradients to their owners or the shards), the all-reduce of the dense
// gradient, local optimizer work, then the step.
void Workers::sync_step(int w, int64_t step, const Admission& admission) {
  Gradient grad;
  training_.next_gradient(w, grad);
  const EmbeddingExchange exchange = training_.spec().cluster.embedding_exchange;
  const StepSizes& sizes = training_.sizes();
  // The collectives are those of w's pool, w its rank i there.
  const int pool = training_.pool_of(w);
  const int i = w - training_.pools()[pool].first;
  const int n = training_.pools()[pool].workers;
  Collectives& collectives = collectives_[pool];
  std::vector<double>& sparse_bytes = sparse_bytes_[pool];
  std::vector<std::vector<double>>& lookups = lookups_[pool];
  // Bytes of w's rows by owner (a worker, or a server shard): ids, vectors and gradients
  // (sizes.h: the proxy's rows, 8 bytes an id and 4 a value, or the workload's).
  const int owners = exchange == EmbeddingExchange::kHybrid
                         ? static_cast<int>(cluster_.servers().size())
                         : n;
  const bool gather = exchange == EmbeddingExchange::kAllGather;
  const RowsByOwner counts = sizes.rows(grad, gather ? 1 : owners);
  const bool to_workers = exchange == EmbeddingExchange::kAllToAll;
  const std::vector<double> ids =
      gather       ? std::vector<double>{}
      : to_workers ? sizes.all_to_all_ids(counts, grad)
                   : owner_bytes(counts, 0, 0.0, sizes.id_bytes());
  const std::vector<double> rows = to_workers
                                       ? sizes.all_to_all_gradients(counts, grad)
                                       : owner_bytes(counts, 0, sizes.value_bytes(), sizes.id_bytes());
  if (gather) sparse_bytes[i] = total(rows);
  double comm_s = 0.0;
  auto timed = [&](const std::function<void()>& part) {
    const double start = sg4::Engine::get_clock();
    part();
    comm_s += sg4::Engine::get_clock() - start;
  };
  if (exchange == EmbeddingExchange::kAllToAll && n > 1) {
    timed([&] {
      lookups[i] = sizes.all_to_all_vectors(counts, grad);  // the owners are the n workers
      collectives.all_to_all(i, ids);
      collectives.barrier();  // every worker's lookups are known and its ids have arrived
      std::vector<double> answers(n);
      for (int v = 0; v < n; ++v) answers[v] = lookups[v][i];
      collectives.all_to_all(i, answers);
      collectives.barrier();
    });
    training_.count_messages(3 * collectives.messages_per_all_to_all());  // and the gradients
  } else if (exchange == EmbeddingExchange::kHybrid) {
    timed([&] { exchange_with_servers(w, ids, owner_bytes(counts, 0, sizes.value_bytes(), 0.0)); });
    training_.count_messages(3 * owners);  // with the push below
  }
  // A worker that fails stalls the step until it is back and has computed it again.
  while (!spend_compute(w, step)) down(w);

  const double dense = sizes.value_bytes() * static_cast<double>(sizes.dense_values());
  if (n > 1 || exchange == EmbeddingExchange::kHybrid) {
    timed([&] {
      if (exchange == EmbeddingExchange::kAllGather) {
        collectives.step(i, dense, sparse_bytes);
      } else {
        if (exchange == EmbeddingExchange::kAllToAll && n > 1) {
          collectives.all_to_all(i, rows);
          collectives.barrier();
        } else if (exchange == EmbeddingExchange::kHybrid) {
          exchange_with_servers(w, rows, {});
          charge_servers(counts);
        }
        collectives.all_reduce(i, dense);
      }
    });
    training_.count_messages(gather ? collectives.messages_per_step(i, dense)
                                    : collectives.messages_per_all_reduce(i, dense));
  }
  training_.stats(w).comm_s += comm_s;
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
      work.push_back(sg4::this_actor::exec_init(training_.spec().cost.update_flops_per_value *
                                                values[p])
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
    training_.end_run("stalled", "worker " + std::to_string(w) + " failed " +
                                     std::to_string(kFailuresInARow) +
                                     " times in a row without finishing a step "
                                     "(stragglers.failures.rate_per_s = " +
                                     std::to_string(g.failure_rate_per_s) +
                                     " is too high for its steps)");
    sg4::this_actor::exit();
  }
  sg4::this_actor::sleep_for(g.failure_restart_s);
  training_.stats(w).down_s += g.failure_restart_s;
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
