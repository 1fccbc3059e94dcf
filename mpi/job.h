// What every rank of a gbasim-mpi job holds (the data, the model, the parameters, the clock,
// the pools), the records it keeps, a step's computation and the batches it reads.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "base/clock.h"
#include "experiment/run_record.h"
#include "experiment/slowdown.h"
#include "experiment/spec.h"
#include "mpi/mpi_runtime.h"
#include "models/layers.h"
#include "models/model.h"
#include "strategies/switching.h"

namespace gbasim::mpi {

// A snapshot keeps only what changed since the one before: the dense vector and the table
// rows updated since (their new values), so that taking it costs what an update costs, not a
// copy of every table. Evaluation replays them in order onto the initial parameters.
struct Snapshot {
  double time;
  int64_t global_step, samples;
  Eigen::VectorXf dense;
  std::vector<std::vector<int32_t>> rows;  // per table
  std::vector<RowMatrixXf> values;         // per table, one row per entry of rows
};

// Where the parameter server's time goes (seconds).
struct ServerRecord {
  double idle_s = 0.0, receive_s = 0.0, update_s = 0.0, grant_s = 0.0;
  int64_t pushes = 0, grants = 0;
};

struct WorkerRecord {
  int64_t steps = 0;
  double compute_s = 0.0, injected_s = 0.0, slept_s = 0.0, comm_s = 0.0;
  std::vector<double> step_ends;
};

// What every rank holds: the data, the model, the parameters, the clock.
struct Job {
  const ExperimentSpec& spec;
  const MpiOptions& options;
  int rank = 0, size = 1;
  LoadedData data;
  Model model;
  Parameters params;
  WallClock::time_point start;
  ReplayedTrace trace;
  RunRecord record;
  // The pools of workers (one without cluster.pools); worker w is rank w + 1 in a job with a
  // server, every pool's workers one after the other.
  std::vector<WorkerPool> pools;
  // Parameter holder (rank 0) only.
  std::vector<Snapshot> snapshots;
  double next_snapshot = 0.0;
  double snapshot_s = 0.0;  // what taking them cost training (seconds)

  Job(const ExperimentSpec& s, const MpiOptions& o)
      : spec(s),
        options(o),
        data(load_data(s.data)),
        model(s.model, data.train.cardinalities, data.train.num_dense),
        params(model.init_parameters(s.seed)),
        trace(load_trace(s)),
        record(s, data),
        pools(worker_pools(s)) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  }
  double elapsed() const { return seconds_since(start); }
  // The pool worker `w` belongs to.
  int pool_of(int w) const {
    int p = 0;
    while (w >= pools[p].first + pools[p].workers) ++p;
    return p;
  }
  bool out_of_time() const { return record.budget().out_of_time(elapsed()); }
  // The holder applies `update` to its parameters: the rows it touches become dirty. A row
  // is dirty when its mark is the number of the next snapshot, so taking one clears every
  // mark at once by counting up.
  void updated(const Gradient& update) {
    if (marks.empty()) {
      for (const auto& t : params.tables) marks.emplace_back(static_cast<size_t>(t.rows()), -1);
      dirty_rows.resize(params.tables.size());
    }
    const auto next = static_cast<int32_t>(snapshots.size());
    for (size_t k = 0; k < update.tables.size(); ++k) {
      for (int32_t row : update.tables[k].rows) {
        int32_t& mark = marks[k][static_cast<size_t>(row)];
        if (mark != next) {
          mark = next;
          dirty_rows[k].push_back(row);
        }
      }
    }
  }
  // Takes a snapshot when one is due (or `force`): the dense vector and the dirty rows, in
  // the order first touched (replay needs no other: each row appears once).
  void maybe_snapshot(int64_t global_step, int64_t samples, bool force = false) {
    const double now = elapsed();
    if (!force && now < next_snapshot) return;
    const auto t = WallClock::now();
    Snapshot s{now, global_step, samples, params.dense, {}, {}};
    for (size_t k = 0; k < dirty_rows.size(); ++k) {
      const RowMatrixXf& table = params.tables[k];
      RowMatrixXf values(static_cast<Eigen::Index>(dirty_rows[k].size()), table.cols());
      for (size_t i = 0; i < dirty_rows[k].size(); ++i)
        values.row(static_cast<Eigen::Index>(i)) = table.row(dirty_rows[k][i]);
      s.rows.push_back(std::move(dirty_rows[k]));
      s.values.push_back(std::move(values));
      dirty_rows[k] = {};
      dirty_rows[k].reserve(s.rows.back().size());
    }
    snapshots.push_back(std::move(s));
    snapshot_s += seconds_since(t);
    while (next_snapshot <= now) next_snapshot += spec.evaluation.interval_s;
  }
  std::vector<std::vector<int32_t>> marks;       // per table, per row: see updated()
  std::vector<std::vector<int32_t>> dirty_rows;  // per table, in the order first touched
  void maybe_fail(int64_t step) const {
    if (rank != options.fail_rank || step != options.fail_step) return;
    const std::string when =
        step < 0 ? "while preparing the job" : "at step " + std::to_string(step);
    if (options.fail_with_error)
      throw InputError("failing on purpose " + when + " (--fail-rank, --fail-how error)");
    std::fprintf(stderr, "gbasim-mpi: rank %d: failing on purpose %s (--fail-rank)\n", rank,
                 when.c_str());
    std::abort();
  }
};

// The gradient of the batch, then the straggler's sleep: (slowdown - 1) x the compute.
void compute_step(Job& job, RankSlowdown& slow, int64_t step, const Batch& batch, Gradient& grad,
                  WorkerRecord& me);

// The batches a rank reads. data.sharding "static": its own shard of its pool's, in order.
// "queue": the one sequence of the whole training set that every rank of a pool rebuilds from
// the seed (the simulator's shared queue of that pool), each batch named by its number in it:
// the server hands the numbers out with the grants, in the order it grants (the server modes),
// and sync step s gives the pool's worker i batch s x N' + i (as if the workers asked in rank
// order).
class BatchSource {
 public:
  BatchSource(const Dataset& data, int worker, int workers, uint64_t seed, DataSharding sharding)
      : queue_(sharding == DataSharding::kQueue),
        it_(data, queue_ ? 0 : worker, queue_ ? 1 : workers, seed) {}
  bool queue() const { return queue_; }
  // "static": the next batch of the rank's shard.
  Batch next(int64_t batch_size) { return it_.next(batch_size); }
  // "queue": batch number `k` of the sequence; k grows from call to call.
  Batch at(int64_t k, int64_t batch_size) {
    if (k < taken_) throw std::logic_error("BatchSource: batch numbers must grow");
    for (; taken_ < k; ++taken_) it_.next_rows(batch_size);
    ++taken_;
    return it_.next(batch_size);
  }

 private:
  bool queue_;
  ShardIterator it_;
  int64_t taken_ = 0;  // batches of the sequence passed so far
};

// The unique ids of the batch for each table (table k belongs to field k mod F).
std::vector<std::vector<int32_t>> rows_needed(const Batch& batch, size_t tables);

}  // namespace gbasim::mpi
