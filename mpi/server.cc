#include "mpi/server.h"

#include "base/error.h"
#include "mpi/wire.h"

namespace gbasim::mpi {

bool run_ps_server(Job& job, Holder& holder, ServerRecord& record) {
  const int n = job.size - 1;
  RuleInForce& rule = holder.rule;
  const size_t tables = job.params.tables.size();
  std::vector<std::vector<std::vector<int32_t>>> wanted(n);  // each waiting worker's rows
  bool stop = false;
  int stopped = 0, to_sync = 0;
  double move_start = 0.0;
  auto grant = [&](int w, int64_t token) {
    Buffer b;
    b.put<int32_t>(kGrant);
    b.put<int64_t>(token);
    if (!holder.queues.empty()) {  // the next batch of its pool's sequence goes to the worker
      const int p = job.pool_of(w);
      const int64_t k = holder.batches[p]++;
      wanted[w] = rows_needed(holder.queues[p].at(k, job.pools[p].local_batch), tables);
      b.put<int64_t>(k);
    }
    b.put(job.params.dense.data(), static_cast<size_t>(job.params.dense.size()));
    for (size_t k = 0; k < tables; ++k) {
      const RowMatrixXf& table = job.params.tables[k];
      for (int32_t row : wanted[w][k])
        b.put(table.row(row).data(), static_cast<size_t>(table.cols()));
    }
    const auto sent = WallClock::now();
    send(b, w + 1, kToWorker);
    record.grant_s += seconds_since(sent);
    ++record.grants;
  };
  // Stop, hand over to sync, grant, or leave waiting (false).
  auto serve = [&](int w) {
    Buffer b;
    if (stop) {
      b.put<int32_t>(kStop);
      send(b, w + 1, kToWorker);
      ++stopped;
      return true;
    }
    if (rule.mode() == Mode::kSync) {  // the switch is complete: the model moves to the worker
      b.put<int32_t>(kSyncNow);
      b.put<int64_t>(rule.global_step());
      b.put<int32_t>(holder.pool());
      b.put<int64_t>(holder.batches.empty() ? 0 : holder.batches[holder.pool()]);
      put_model(b, job.params, &holder.optimizer);
      send(b, w + 1, kToWorker);
      if (++to_sync == n) {
        const double bytes = static_cast<double>(b.bytes().size()) * n;
        const auto& [start, first_leg] = holder.between_pools.value_or(std::pair{move_start, 0.0});
        holder.moves.push_back({{"global_step", rule.global_step()},
                                {"direction", holder.between_pools ? "between_pools" : "to_workers"},
                                {"start", start},
                                {"end", job.elapsed()},
                                {"bytes", first_leg + bytes}});
        holder.between_pools.reset();
      }
      return true;
    }
    const Admission a = rule.admit(w);
    if (!a.admitted) return false;
    holder.admitted(w, a.token);
    grant(w, a.token);
    return true;
  };
  while (stopped + to_sync < n) {
    int source = 0;
    auto t = WallClock::now();
    Buffer m = receive(MPI_ANY_SOURCE, kToServer, &source, &record.idle_s);
    record.receive_s += seconds_since(t);
    const int w = source - 1;
    const auto kind = m.get<int32_t>();
    if (kind == kAdmit) {
      wanted[w].assign(tables, {});
      for (size_t k = 0; k < tables && holder.queues.empty(); ++k) {
        wanted[w][k].resize(static_cast<size_t>(m.get<int64_t>()));
        m.get(wanted[w][k].data(), wanted[w][k].size());
      }
      if (!serve(w)) rule.queue_refused(w);
      continue;
    }
    // A push.
    const auto token = m.get<int64_t>();
    const auto compute_s = m.get<double>();
    Gradient g;
    g.samples = m.get<int64_t>();
    g.dense.resize(job.params.dense.size());
    m.get(g.dense.data(), static_cast<size_t>(g.dense.size()));
    for (size_t k = 0; k < tables; ++k) g.tables.push_back(get_rows(m));
    job.maybe_fail(record.pushes);  // the server's step K: its K-th push taken in
    ++record.pushes;
    t = WallClock::now();
    if (auto update = holder.receive(w, token, std::move(g))) {
      holder.optimizer.apply(job.params, *update);
      job.updated(*update);
      holder.applied += update->samples;
      stop = job.record.budget().spent(holder.applied, job.elapsed());
      job.maybe_snapshot(rule.global_step(), holder.applied);
    }
    rule.observe_step(w, compute_s, job.elapsed());
    if (rule.take_model_move()) move_start = job.elapsed();  // made as each worker asks
    record.update_s += seconds_since(t);
    rule.serve_refused(serve);
  }
  return to_sync == n;
}

}  // namespace gbasim::mpi
