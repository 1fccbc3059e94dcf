// A worker of the server modes on a real rank.
#pragma once

#include <cstdint>
#include <optional>

#include "mpi/job.h"

namespace gbasim::mpi {

// How a worker's server phase ended: stopped, or (a switching job) on to sync at this step,
// with this many batches of the queue handed out before it.
struct WorkerPhase {
  bool to_sync = false;
  int64_t global_step = 0;
  int64_t queue_base = 0;  // the batches of the pool's sequence handed out so far
  int pool = 0;            // the pool that runs sync next
};

// A worker of the server modes (rank w + 1). Each step reads admit, pull, compute, push. With
// static shards the batch is drawn first and its rows go with the request; with the queue the
// grant names the batch (its number in the shared sequence) and brings its rows. The grant
// brings the token and those parameters. Returns on the server's stop, or (a switching job)
// when the server says the run goes on in sync: the model and the optimizer's state have
// arrived then, and a batch drawn for the request is left in `carried` for the worker's next
// step, in sync or (its pool not in force for sync) in the next server phase.
WorkerPhase run_ps_worker(Job& job, WorkerRecord& me, BatchSource& source, RankSlowdown& slow,
                          Optimizer* optimizer, std::optional<Batch>& carried, int64_t& step);

}  // namespace gbasim::mpi
