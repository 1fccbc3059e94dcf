// What a simulated run's workers read: the data set, the pools of workers, each worker's
// shard or its pool's one shared sequence, how often each sample was read, and in timing-only
// runs a batch's rows without its gradient (sim/training.h holds the model's side).
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "experiment/data.h"
#include "experiment/spec.h"
#include "models/dataset.h"
#include "models/gradient.h"
#include "sim/batch_rows.h"
#include "strategies/switching.h"

namespace gbasim {

class DataFeed {
 public:
  // Loads the spec's data. Throws InputError when a data file holds fewer training samples
  // than one global batch of a pool (synthetic data is checked with the spec).
  explicit DataFeed(const ExperimentSpec& spec);

  LoadedData& data() { return data_; }
  const LoadedData& data() const { return data_; }
  // The pools of workers (one without cluster.pools) and the one `worker` belongs to.
  const std::vector<WorkerPool>& pools() const { return pools_; }
  int pool_of(int worker) const { return pool_of_[worker]; }
  int64_t local_batch(int worker) const { return pools_[pool_of_[worker]].local_batch; }
  // The next batch `worker` reads: from its own shard (data.sharding "static") or from its
  // pool's one shared sequence ("queue").
  Batch next_batch(int worker) { return shards_[shard_of_[worker]].next(local_batch(worker)); }
  // How many times each training sample was handed to a worker (every pool's reads).
  const std::vector<uint32_t>& reads() const { return reads_; }

  // Timing-only: `grad` holds the rows of `batch` in `tables` tables (the unique ids of each
  // field, in the model's table order, in the order the batch first reads them rather than
  // sorted), which is all timing needs.
  void batch_rows(const Batch& batch, size_t tables, Gradient& grad);
  // Timing-only: the same for the next batch of `worker`, read from the data set's rows
  // without copying them into a batch; with `rows` false, only its sample count (a
  // workload's sizes need no more).
  void next_rows(int worker, size_t tables, bool rows, Gradient& grad);

 private:
  // Each table's unique ids of a batch of b samples, sample i's ids (one a field) at sample(i).
  template <typename Sample>
  void rows_of(int64_t b, Sample sample, size_t tables, Gradient& grad);

  LoadedData data_;
  std::vector<WorkerPool> pools_;
  std::vector<int> pool_of_;
  std::vector<ShardIterator> shards_;
  std::vector<int> shard_of_;  // a worker's entry of shards_
  std::vector<uint32_t> reads_;
  std::optional<BatchRows> batch_rows_;  // timing-only
};

}  // namespace gbasim
