#include "mpi/server.h"

#include "base/error.h"
#include "mpi/wire.h"

namespace gbasim::mpi {

namespace {

// The parameter server's loop: admissions and pushes from every worker, one at a time.
class PsServer {
 public:
  PsServer(Job& job, Holder& holder, ServerRecord& record)
      : job_(job),
        holder_(holder),
        record_(record),
        rule_(holder.rule),
        n_(job.size - 1),
        tables_(job.params.tables.size()),
        wanted_(static_cast<size_t>(n_)) {}

  bool run() {
    while (stopped_ + to_sync_ < n_) {
      int source = 0;
      const auto t = WallClock::now();
      Buffer m = receive(MPI_ANY_SOURCE, kToServer, &source, &record_.idle_s);
      record_.receive_s += seconds_since(t);
      const int w = source - 1;
      const auto kind = m.get<int32_t>();
      if (kind == kAdmit)
        take_request(w, m);
      else
        take_push(w, m);
    }
    return to_sync_ == n_;
  }

 private:
  void take_request(int w, Buffer& m) {
    wanted_[w].assign(tables_, {});
    for (size_t k = 0; k < tables_ && holder_.queues.empty(); ++k) {
      wanted_[w][k].resize(static_cast<size_t>(m.get<int64_t>()));
      m.get(wanted_[w][k].data(), wanted_[w][k].size());
    }
    if (!serve(w)) rule_.queue_refused(w);
  }

  void take_push(int w, Buffer& m) {
    const auto token = m.get<int64_t>();
    const auto compute_s = m.get<double>();
    Gradient g;
    g.samples = m.get<int64_t>();
    g.dense.resize(job_.params.dense.size());
    m.get(g.dense.data(), static_cast<size_t>(g.dense.size()));
    for (size_t k = 0; k < tables_; ++k) g.tables.push_back(get_rows(m));
    job_.maybe_fail(record_.pushes);  // the server's step K: its K-th push taken in
    ++record_.pushes;
    const auto t = WallClock::now();
    if (auto update = holder_.receive(w, token, std::move(g))) {
      holder_.optimizer.apply(job_.params, *update);
      job_.updated(*update);
      holder_.applied += update->samples;
      stop_ = job_.record.budget().spent(holder_.applied, job_.elapsed());
      job_.maybe_snapshot(rule_.global_step(), holder_.applied);
    }
    rule_.observe_step(w, compute_s, job_.elapsed());
    if (rule_.take_model_move()) move_start_ = job_.elapsed();  // made as each worker asks
    record_.update_s += seconds_since(t);
    rule_.serve_refused([this](int v) { return serve(v); });
  }

  // Stop, hand over to sync, grant, or leave waiting (false).
  bool serve(int w) {
    if (stop_) {
      Buffer b;
      b.put<int32_t>(kStop);
      send(b, w + 1, kToWorker);
      ++stopped_;
      return true;
    }
    if (rule_.mode() == Mode::kSync) {
      hand_over_to_sync(w);
      return true;
    }
    const Admission a = rule_.admit(w);
    if (!a.admitted) return false;
    holder_.admitted(w, a.token);
    grant(w, a.token);
    return true;
  }

  // The switch is complete: the model moves to the worker.
  void hand_over_to_sync(int w) {
    Buffer b;
    b.put<int32_t>(kSyncNow);
    b.put<int64_t>(rule_.global_step());
    b.put<int32_t>(holder_.pool());
    b.put<int64_t>(holder_.batches.empty() ? 0 : holder_.batches[holder_.pool()]);
    put_model(b, job_.params, &holder_.optimizer);
    send(b, w + 1, kToWorker);
    if (++to_sync_ == n_) {
      const double bytes = static_cast<double>(b.bytes().size()) * n_;
      const auto& [start, first_leg] = holder_.between_pools.value_or(std::pair{move_start_, 0.0});
      holder_.moves.push_back(
          {{"global_step", rule_.global_step()},
           {"direction", holder_.between_pools ? "between_pools" : "to_workers"},
           {"start", start},
           {"end", job_.elapsed()},
           {"bytes", first_leg + bytes}});
      holder_.between_pools.reset();
    }
  }

  void grant(int w, int64_t token) {
    Buffer b;
    b.put<int32_t>(kGrant);
    b.put<int64_t>(token);
    if (!holder_.queues.empty()) {  // the next batch of its pool's sequence goes to the worker
      const int p = job_.pool_of(w);
      const int64_t k = holder_.batches[p]++;
      wanted_[w] = rows_needed(holder_.queues[p].at(k, job_.pools[p].local_batch), tables_);
      b.put<int64_t>(k);
    }
    b.put(job_.params.dense.data(), static_cast<size_t>(job_.params.dense.size()));
    for (size_t k = 0; k < tables_; ++k) {
      const RowMatrixXf& table = job_.params.tables[k];
      for (int32_t row : wanted_[w][k])
        b.put(table.row(row).data(), static_cast<size_t>(table.cols()));
    }
    const auto sent = WallClock::now();
    send(b, w + 1, kToWorker);
    record_.grant_s += seconds_since(sent);
    ++record_.grants;
  }

  Job& job_;
  Holder& holder_;
  ServerRecord& record_;
  RuleInForce& rule_;
  const int n_;
  const size_t tables_;
  std::vector<std::vector<std::vector<int32_t>>> wanted_;  // each waiting worker's rows
  bool stop_ = false;
  int stopped_ = 0, to_sync_ = 0;
  double move_start_ = 0.0;
};

}  // namespace

bool run_ps_server(Job& job, Holder& holder, ServerRecord& record) {
  return PsServer(job, holder, record).run();
}

}  // namespace gbasim::mpi
