#include "mpi/sync.h"

#include <mpi.h>

#include <memory>

#include "mpi/wire.h"
#include "strategies/update_rule.h"

namespace gbasim::mpi {

std::vector<Gradient> exchange_gradients(const Job& job, const Gradient& mine, int first,
                                         int workers, int64_t local_batch, float& flag) {
  const size_t tables = job.params.tables.size();
  const int ranks = job.size;
  std::vector<float> dense(mine.dense.data(), mine.dense.data() + mine.dense.size());
  dense.push_back(flag);
  MPI_Allreduce(MPI_IN_PLACE, dense.data(), static_cast<int>(dense.size()), MPI_FLOAT, MPI_SUM,
                MPI_COMM_WORLD);
  flag = dense.back();
  dense.pop_back();
  // Every rank's rows of every table, in three collectives: the row counts per table, then
  // all row ids, then all values, each rank's tables one after another.
  std::vector<int> counts(tables), all_counts(tables * ranks);
  std::vector<int32_t> my_rows;
  std::vector<float> my_values;
  for (size_t k = 0; k < tables; ++k) {
    const SparseRows& rows = mine.tables[k];
    counts[k] = static_cast<int>(rows.rows.size());
    my_rows.insert(my_rows.end(), rows.rows.begin(), rows.rows.end());
    my_values.insert(my_values.end(), rows.values.data(), rows.values.data() + rows.values.size());
  }
  MPI_Allgather(counts.data(), static_cast<int>(tables), MPI_INT, all_counts.data(),
                static_cast<int>(tables), MPI_INT, MPI_COMM_WORLD);
  std::vector<int> row_counts(ranks, 0), row_offsets(ranks, 0), value_counts(ranks, 0),
      value_offsets(ranks, 0);
  for (int r = 0, rows_total = 0, values_total = 0; r < ranks; ++r) {
    for (size_t k = 0; k < tables; ++k) {
      const int c_k = all_counts[r * tables + k];
      row_counts[r] += c_k;
      value_counts[r] += c_k * static_cast<int>(job.params.tables[k].cols());
    }
    row_offsets[r] = rows_total;
    value_offsets[r] = values_total;
    rows_total += row_counts[r];
    values_total += value_counts[r];
  }
  std::vector<int32_t> all_rows(
      static_cast<size_t>(row_offsets[ranks - 1] + row_counts[ranks - 1]));
  std::vector<float> all_values(
      static_cast<size_t>(value_offsets[ranks - 1] + value_counts[ranks - 1]));
  MPI_Allgatherv(my_rows.data(), static_cast<int>(my_rows.size()), MPI_INT32_T, all_rows.data(),
                 row_counts.data(), row_offsets.data(), MPI_INT32_T, MPI_COMM_WORLD);
  MPI_Allgatherv(my_values.data(), static_cast<int>(my_values.size()), MPI_FLOAT,
                 all_values.data(), value_counts.data(), value_offsets.data(), MPI_FLOAT,
                 MPI_COMM_WORLD);
  std::vector<Gradient> grads(static_cast<size_t>(workers));
  for (int v = 0; v < workers; ++v) {
    const int r = first + v;
    Gradient& g = grads[v];
    g.dense = v == 0 ? Eigen::Map<Eigen::VectorXf>(dense.data(),
                                                   static_cast<Eigen::Index>(dense.size()))
                           .eval()
                     : Eigen::VectorXf::Zero(static_cast<Eigen::Index>(dense.size()));
    g.samples = local_batch;
    size_t row = static_cast<size_t>(row_offsets[r]), value = static_cast<size_t>(value_offsets[r]);
    for (size_t k = 0; k < tables; ++k) {
      const int count = all_counts[r * tables + k];
      const int dim = static_cast<int>(job.params.tables[k].cols());
      SparseRows rows;
      rows.rows.assign(all_rows.begin() + static_cast<ptrdiff_t>(row),
                       all_rows.begin() + static_cast<ptrdiff_t>(row) + count);
      rows.values = Eigen::Map<RowMatrixXf>(all_values.data() + value, count, dim);
      g.tables.push_back(std::move(rows));
      row += static_cast<size_t>(count);
      value += static_cast<size_t>(count) * static_cast<size_t>(dim);
    }
  }
  return grads;
}

RuleMetrics run_sync(Job& job, WorkerRecord& me, int64_t& applied) {
  const ExperimentSpec& spec = job.spec;
  const int n = job.size, w = job.rank;
  auto rule = make_rule(spec.training);
  Optimizer optimizer(spec.optimizer, job.params);
  BatchSource source(job.data.train, w, n, spec.seed, spec.data.sharding);
  RankSlowdown slow(spec, job.trace, w);
  Gradient grad;
  std::vector<int64_t> tokens(n);
  for (int64_t step = 0;; ++step) {
    job.maybe_fail(step);
    for (int v = 0; v < n; ++v) tokens[v] = rule->admit(v).token;
    const int64_t b = spec.training.local_batch;
    const Batch batch = source.queue() ? source.at(step * n + w, b) : source.next(b);
    compute_step(job, slow, step, batch, grad, me);
    const auto c = WallClock::now();
    float out_of_time = w == 0 && job.out_of_time() ? 1.0f : 0.0f;  // rank 0's clock decides
    std::vector<Gradient> grads =
        exchange_gradients(job, grad, 0, n, spec.training.local_batch, out_of_time);
    me.comm_s += seconds_since(c);
    for (int v = 0; v < n; ++v) {
      if (auto update = rule->receive(v, tokens[v], std::move(grads[v]))) {
        optimizer.apply(job.params, *update);
        if (w == 0) job.updated(*update);
        applied += update->samples;
      }
    }
    ++me.steps;
    me.step_ends.push_back(job.elapsed());
    if (w == 0) job.maybe_snapshot(rule->global_step(), applied);
    if (applied >= job.record.budget().max_samples() || out_of_time > 0.0f) break;
  }
  if (w == 0) job.maybe_snapshot(rule->global_step(), applied, true);
  return rule->metrics();
}

namespace {

// What a rank outside the pool contributes to the pool's collectives: nothing, in the shapes of
// the parameters.
Gradient zero_gradient(const Job& job) {
  Gradient grad;
  grad.dense = Eigen::VectorXf::Zero(job.params.dense.size());
  grad.tables.resize(job.params.tables.size());
  for (size_t k = 0; k < grad.tables.size(); ++k)
    grad.tables[k].values.resize(0, job.params.tables[k].cols());
  return grad;
}

// Rank 0, holding the controller: applies the pool's gradients of one sync step, snapshots, and
// says what comes next (kNextStep, kStopNow, or kToServerModes with `between` set when the move
// is to another sync pool).
int32_t apply_at_holder(Job& job, Holder& holder, int pool, const std::vector<int64_t>& tokens,
                        std::vector<Gradient>& grads, const std::vector<double>& computes,
                        bool& between) {
  const WorkerPool& p = job.pools[pool];
  const int n = p.workers;
  if (!holder.batches.empty()) holder.batches[pool] += n;
  for (int v = 0; v < n; ++v) {
    if (auto update = holder.receive(p.first + v, tokens[v], std::move(grads[v]))) {
      holder.optimizer.apply(job.params, *update);
      job.updated(*update);
      holder.applied += update->samples;
    }
  }
  for (int v = 0; v < n; ++v)
    holder.rule.observe_step(p.first + v, computes[1 + p.first + v], job.elapsed());
  job.maybe_snapshot(holder.rule.global_step(), holder.applied);
  if (job.record.budget().spent(holder.applied, job.elapsed())) return kStopNow;
  if (const auto move = holder.rule.take_model_move()) {
    between = move->direction == ModelMove::Direction::kBetweenPools;
    return kToServerModes;
  }
  return kNextStep;
}

// The pool's first worker (`first_worker`) moves the model to the server (rank 0), which holds
// the optimizer's state already; rank 0 records the move.
void move_model_to_server(Job& job, Holder* holder, int first_rank, bool first_worker,
                          bool between) {
  const double start = job.elapsed();
  Buffer model;
  if (first_worker) {
    put_model(model, job.params, nullptr);
    send(model, 0, kToServer);
  } else if (job.rank == 0) {
    model = receive(first_rank, kToServer);
    get_model(model, job.params, nullptr);
    const double bytes = static_cast<double>(model.bytes().size());
    if (between) {  // recorded once the model is on the next pool's workers
      holder->between_pools.emplace(start, bytes);
    } else {
      holder->moves.push_back({{"global_step", holder->rule.global_step()},
                               {"direction", "to_parameter_servers"},
                               {"start", start},
                               {"end", job.elapsed()},
                               {"bytes", bytes}});
    }
  }
}

}  // namespace

bool run_sync_phase(Job& job, Holder* holder, WorkerRecord& me, BatchSource* source,
                    RankSlowdown* slow, Optimizer* optimizer, std::optional<Batch>& carried,
                    int64_t global_step, int pool, int64_t queue_base, int64_t& step) {
  const ExperimentSpec& spec = job.spec;
  const WorkerPool& p = job.pools[pool];
  const int n = p.workers, i = job.rank - 1 - p.first;  // i: this rank's place in the pool
  const bool working = holder == nullptr && i >= 0 && i < n;
  std::unique_ptr<UpdateRule> local;
  if (working) {
    RuleConfig sync_config = spec.training;  // the pool's sync rule, as the controller's
    sync_config.mode = Mode::kSync;
    sync_config.num_workers = n;
    sync_config.local_batch = p.local_batch;
    sync_config.global_batch = int64_t{n} * p.local_batch;
    local = make_rule(sync_config);
    local->resume_at(global_step);
  }
  std::vector<int64_t> tokens(n);
  Gradient grad;
  std::vector<double> computes(job.rank == 0 ? job.size : 0);  // one a rank, rank 0's first
  bool between = false;  // rank 0: the move is to another sync pool
  for (int64_t phase_step = 0;; ++phase_step) {
    for (int v = 0; v < n; ++v) {
      if (holder != nullptr) {
        tokens[v] = holder->rule.admit(p.first + v).token;
        holder->admitted(p.first + v, tokens[v]);
      } else if (working) {
        tokens[v] = local->admit(v).token;
      }
    }
    double compute_s = 0.0;
    if (working) {
      job.maybe_fail(step);
      const Batch batch = carried          ? *carried
                          : source->queue() ? source->at(queue_base + phase_step * n + i,
                                                         p.local_batch)
                                            : source->next(p.local_batch);
      carried.reset();
      const double before = me.compute_s;
      compute_step(job, *slow, step, batch, grad, me);
      compute_s = me.compute_s - before;
    } else {
      grad = zero_gradient(job);
    }
    const auto c = WallClock::now();
    float unused = 0.0f;
    std::vector<Gradient> grads =
        exchange_gradients(job, grad, 1 + p.first, n, p.local_batch, unused);
    MPI_Gather(&compute_s, 1, MPI_DOUBLE, computes.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int32_t next = kNextStep;
    if (holder != nullptr) {
      next = apply_at_holder(job, *holder, pool, tokens, grads, computes, between);
    } else if (working) {
      for (int v = 0; v < n; ++v) {
        if (auto update = local->receive(v, tokens[v], std::move(grads[v])))
          optimizer->apply(job.params, *update);
      }
      ++me.steps;
      ++step;
      me.step_ends.push_back(job.elapsed());
    }
    MPI_Bcast(&next, 1, MPI_INT32_T, 0, MPI_COMM_WORLD);
    if (working) me.comm_s += seconds_since(c);
    if (next == kStopNow) return false;
    if (next == kToServerModes) {
      move_model_to_server(job, holder, 1 + p.first, working && i == 0, between);
      return true;
    }
  }
}

}  // namespace gbasim::mpi
