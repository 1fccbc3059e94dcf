#include "mpi/switching.h"

#include <optional>

#include "mpi/sync.h"
#include "mpi/worker.h"

namespace gbasim::mpi {

RuleMetrics run_switching(Job& job, Holder* holder, WorkerRecord& me, ServerRecord& server) {
  const ExperimentSpec& spec = job.spec;
  const int w = job.rank - 1;
  std::optional<BatchSource> source;
  std::optional<RankSlowdown> slow;
  std::optional<Optimizer> optimizer;
  if (job.rank != 0) {
    const WorkerPool& p = job.pools[job.pool_of(w)];
    source.emplace(job.data.train, w - p.first, p.workers, spec.seed, spec.data.sharding);
    slow.emplace(spec, job.trace, w);
    if (spec.switching.enabled()) optimizer.emplace(spec.optimizer, job.params);
  }
  std::optional<Batch> carried;
  bool sync = spec.training.mode == Mode::kSync;
  int64_t global_step = 0, step = 0, queue_base = 0;
  int pool = 0;
  while (true) {
    if (sync) {
      if (!run_sync_phase(job, holder, me, source ? &*source : nullptr, slow ? &*slow : nullptr,
                          optimizer ? &*optimizer : nullptr, carried, global_step, pool,
                          queue_base, step))
        break;
      sync = false;
    } else if (holder != nullptr) {
      if (!run_ps_server(job, *holder, server)) break;
      pool = holder->pool();  // the pool the next sync phase runs on, as told the workers
      sync = true;
    } else {
      const WorkerPhase phase =
          run_ps_worker(job, me, *source, *slow, optimizer ? &*optimizer : nullptr, carried, step);
      if (!phase.to_sync) break;
      global_step = phase.global_step;
      queue_base = phase.queue_base;
      pool = phase.pool;
      sync = true;
    }
  }
  if (holder == nullptr) return {};
  job.maybe_snapshot(holder->rule.global_step(), holder->applied, true);
  return holder->rule.metrics();
}

}  // namespace gbasim::mpi
