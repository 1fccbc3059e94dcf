#include "mpi/job.h"

#include <mpi.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "base/error.h"

namespace gbasim::mpi {

namespace {

void sleep_for(double seconds) {
  if (seconds > 0.0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

}  // namespace

void compute_step(Job& job, RankSlowdown& slow, int64_t step, const Batch& batch, Gradient& grad,
                  WorkerRecord& me) {
  const auto t = WallClock::now();
  job.model.forward_backward(job.params, batch, grad);
  const double compute = seconds_since(t);
  const double extra = (slow.factor(step, job.elapsed() - compute) - 1.0) * compute;
  if (extra > 0.0) {  // the sleep asked for, and the one had: waking up may take longer
    const auto slept = WallClock::now();
    sleep_for(extra);
    me.injected_s += extra;
    me.slept_s += seconds_since(slept);
  }
  me.compute_s += compute;
}

std::vector<std::vector<int32_t>> rows_needed(const Batch& batch, size_t tables) {
  const FieldGroups groups(batch.ids);
  std::vector<std::vector<int32_t>> rows(tables);
  for (size_t k = 0; k < tables; ++k) rows[k] = groups.unique_ids[k % groups.unique_ids.size()];
  return rows;
}

}  // namespace gbasim::mpi
