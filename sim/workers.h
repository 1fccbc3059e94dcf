// The workers of a simulated run, one SimGrid actor each on its host, taking steps in the
// mode in force at each admission: in a server mode admit, pull, compute, push; in sync
// compute, then the all-reduce and the all-gather (sim/collectives.h). Co-located tenants share
// some hosts.
#pragma once

#include <vector>

#include "experiment/slowdown.h"
#include "sim/cluster.h"
#include "sim/collectives.h"
#include "sim/messages.h"
#include "sim/server.h"
#include "sim/training.h"

namespace gbasim {

class Workers {
 public:
  Workers(Training& training, const Cluster& cluster, Server& server);
  // Creates each worker's actor.
  void start();
  // Creates the co-located tenants' actors (daemons).
  void start_tenants();

 private:
  void run(int w);
  enum class StepEnd { kDone, kLost, kStopped };
  // One step in the mode in force at its admission: admit, pull, compute, push; or, in
  // sync, admit and sync_step. kLost: in a server mode the worker failed during the step and
  // lost its batch and token (stragglers.failures); kStopped: the run has stopped.
  StepEnd take_step(int w, int64_t step);
  void sync_step(int w, int64_t step, const Admission& admission);
  // What w moves in a sync step: its rank in its pool, and its rows' bytes by owner (a worker,
  // or a server shard): ids, vectors and gradients (sizes.h).
  struct SyncBytes {
    int pool = 0, i = 0, n = 0, owners = 0;
    EmbeddingExchange exchange = EmbeddingExchange::kAllToAll;
    RowsByOwner counts;
    std::vector<double> ids, rows;
  };
  SyncBytes sync_bytes(int w, const Gradient& grad);
  // The rows' exchange before the compute (all_to_all: the ids to their owners, the vectors
  // back; hybrid: the pull from the shards), and after it (the all-gather, or the row gradients
  // to their owners or the shards) with the all-reduce of the dense gradient. Each returns the
  // seconds it waited on the network.
  double exchange_before(int w, const SyncBytes& b, const Gradient& grad);
  double exchange_after(int w, const SyncBytes& b);
  // cluster.embedding_exchange "hybrid": w sends each server shard its bytes, then each shard
  // sends w its bytes (the shards' messages at once).
  void exchange_with_servers(int w, const std::vector<double>& to_servers,
                             const std::vector<double>& from_servers);
  // The server shards' optimizer work on the rows of a gradient they hold (`rows`, by shard).
  void charge_servers(const RowsByOwner& rows);
  // Spends the simulated time of one local batch's compute on the worker's host: its flops
  // at the host's speed (under its speed profile), times the step's noise and replayed trace
  // slowdown; on a shared machine, the compute and then the sleep of a real rank. False when
  // the worker fails before it is done (stragglers.failures): it stops there, and down(w)
  // brings it back.
  bool spend_compute(int w, int64_t step);
  // The failed worker restarts: stragglers.failures.restart_s of down time. The
  // kFailuresInARow-th failure in a row without a finished step ends the run ("stalled").
  void down(int w);
  static constexpr int kFailuresInARow = 1000;
  // Another tenant's work on `w`'s host: it computes for duty x period of every period.
  void tenant(int w);

  Training& training_;
  const Cluster& cluster_;
  Server& server_;
  // By pool: its collectives, and (sync) each of its workers' sparse block this step.
  std::vector<Collectives> collectives_;
  std::vector<std::vector<double>> sparse_bytes_;
  // By pool, all_to_all: the vector bytes each worker asks of each owner this step
  std::vector<std::vector<std::vector<double>>> lookups_;
  std::vector<RankSlowdown> rank_slowdowns_;  // shared machine: each worker's, as ranks sleep
  std::vector<WorkerFailures> failures_;      // each worker's next failure
  std::vector<int> failures_in_a_row_;        // since its last finished step
};

}  // namespace gbasim
