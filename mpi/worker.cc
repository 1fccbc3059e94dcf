#include "mpi/worker.h"

#include "mpi/wire.h"

namespace gbasim::mpi {

WorkerPhase run_ps_worker(Job& job, WorkerRecord& me, BatchSource& source, RankSlowdown& slow,
                          Optimizer* optimizer, std::optional<Batch>& carried, int64_t& step) {
  const size_t tables = job.params.tables.size();
  const int64_t b = job.pools[job.pool_of(job.rank - 1)].local_batch;
  Gradient grad;
  for (;; ++step) {
    job.maybe_fail(step);
    std::optional<Batch> drawn;
    std::vector<std::vector<int32_t>> needed;
    if (!source.queue()) {  // a batch drawn for a request that was not granted comes first
      drawn = carried ? std::move(carried) : source.next(b);
      carried.reset();
      needed = rows_needed(*drawn, tables);
    }
    auto c = WallClock::now();
    Buffer ask;
    ask.put<int32_t>(kAdmit);
    for (const auto& r : needed) {
      ask.put<int64_t>(static_cast<int64_t>(r.size()));
      ask.put(r.data(), r.size());
    }
    send(ask, 0, kToServer);
    Buffer answer = receive(0, kToWorker);
    const auto kind = answer.get<int32_t>();
    if (kind == kStop) return {};
    if (kind == kSyncNow) {
      const auto global_step = answer.get<int64_t>();
      const auto pool = answer.get<int32_t>();
      const auto queue_base = answer.get<int64_t>();
      get_model(answer, job.params, optimizer);
      me.comm_s += seconds_since(c);
      if (drawn) carried = std::move(drawn);
      return {true, global_step, queue_base, pool};
    }
    const auto token = answer.get<int64_t>();
    if (source.queue()) {
      drawn = source.at(answer.get<int64_t>(), b);
      needed = rows_needed(*drawn, tables);
    }
    const Batch& batch = *drawn;
    answer.get(job.params.dense.data(), static_cast<size_t>(job.params.dense.size()));
    for (size_t k = 0; k < tables; ++k) {
      RowMatrixXf& table = job.params.tables[k];
      for (int32_t row : needed[k])
        answer.get(table.row(row).data(), static_cast<size_t>(table.cols()));
    }
    me.comm_s += seconds_since(c);

    const double compute_before = me.compute_s;
    compute_step(job, slow, step, batch, grad, me);

    c = WallClock::now();
    Buffer push;
    push.put<int32_t>(kPush);
    push.put<int64_t>(token);
    push.put<double>(me.compute_s - compute_before);  // this step's work, for switching
    push.put<int64_t>(grad.samples);
    push.put(grad.dense.data(), static_cast<size_t>(grad.dense.size()));
    for (const SparseRows& s : grad.tables) put_rows(push, s);
    send(push, 0, kToServer);  // ordered before this worker's next request
    me.comm_s += seconds_since(c);
    ++me.steps;
    me.step_ends.push_back(job.elapsed());
  }
}

}  // namespace gbasim::mpi
