// Sync on real ranks: the gradients' exchange, a sync run, and a switching job's sync phases.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "mpi/job.h"
#include "mpi/server.h"

namespace gbasim::mpi {

// What rank 0 tells the ranks after each sync step of a switching job.
enum SyncNext : int32_t { kNextStep = 0, kToServerModes = 1, kStopNow = 2 };

// Every worker's gradient of one sync step, in worker order: the dense parts summed
// (MPI_Allreduce, with `flag` summed alongside), the sparse rows gathered (MPI_Allgatherv).
// The workers are ranks first..first + workers - 1 of MPI_COMM_WORLD, each with a local batch
// of `local_batch`; every other rank (the server of a switching job, the workers of the pools
// not in force) contributes `mine` empty. Worker 0's gradient carries the dense sum and the
// others a zero dense part, so that the rule's average is the average over workers.
std::vector<Gradient> exchange_gradients(const Job& job, const Gradient& mine, int first,
                                         int workers, int64_t local_batch, float& flag);

// Sync without switching: rank r is worker r. Each step every rank computes its batch's
// gradient, the gradients are exchanged, and every rank feeds the N gradients to its copy of
// the rule in worker order and applies the update, so all hold the same parameters.
RuleMetrics run_sync(Job& job, WorkerRecord& me, int64_t& applied);

// One sync phase of a switching job on every rank: the workers of pool `pool` (ranks
// 1 + first .. first + N') compute and exchange their gradients; rank 0, and the workers of
// the other pools, take part in the exchange with nothing of their own. Rank 0 feeds the
// gradients to the rule in force; each worker of the pool applies them through a sync rule of
// its own, which gives the same updates. After each step rank 0 says whether the next one
// follows, the run goes on in a server mode (the pool's first worker's model then moves to
// rank 0; between two sync pools it goes on from there), or it stops. Returns true for the
// server modes.
bool run_sync_phase(Job& job, Holder* holder, WorkerRecord& me, BatchSource* source,
                    RankSlowdown* slow, Optimizer* optimizer, std::optional<Batch>& carried,
                    int64_t global_step, int pool, int64_t queue_base, int64_t& step);

}  // namespace gbasim::mpi
