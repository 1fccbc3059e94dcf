#include "sim/data_feed.h"

#include <span>
#include <string>

#include "base/error.h"

namespace gbasim {

DataFeed::DataFeed(const ExperimentSpec& spec)
    : data_(load_data(spec.data)), pools_(worker_pools(spec)) {
  // A data file too small for one global step (synthetic data is checked with the spec).
  for (const WorkerPool& pool : pools_) {
    const int64_t batch = int64_t{pool.workers} * pool.local_batch;
    if (data_.train.size() < batch) {
      throw InputError(spec.data.criteo_path + ": its training part holds " +
                       std::to_string(data_.train.size()) +
                       " samples, fewer than one global batch (" + std::to_string(pool.workers) +
                       " workers x " + std::to_string(pool.local_batch) + ")");
    }
  }
  // Each pool's workers share the whole training set among them: a shard each, or one
  // sequence the pool's workers take batches from in the order they ask.
  const bool queue = spec.data.sharding == DataSharding::kQueue;
  for (int p = 0; p < static_cast<int>(pools_.size()); ++p) {
    if (queue) shards_.emplace_back(data_.train, 0, 1, spec.seed);
    for (int i = 0; i < pools_[p].workers; ++i) {
      if (!queue) shards_.emplace_back(data_.train, i, pools_[p].workers, spec.seed);
      shard_of_.push_back(static_cast<int>(shards_.size()) - 1);
      pool_of_.push_back(p);
    }
  }
  reads_.assign(static_cast<size_t>(data_.train.size()), 0);
  for (ShardIterator& shard : shards_) shard.count_reads(&reads_);
  if (spec.simulation.timing_only) batch_rows_.emplace(data_.train.cardinalities);
}

// Each field's unique ids in the order they first appear, without a sort: the rows' order
// matters to nothing timing reads. Every model's tables are a field's each, once (embeddings
// or first-order weights) or twice (both; the second set holds the same rows).
template <typename Sample>
void DataFeed::rows_of(int64_t b, Sample sample, size_t tables, Gradient& grad) {
  grad = Gradient{};
  grad.samples = b;
  grad.tables.resize(tables);
  const auto fields = static_cast<size_t>(data_.train.num_fields);
  if (grad.tables.size() >= fields && fields > 0) batch_rows_->take(b, sample, grad.tables);
  for (size_t t = 0; t < tables; ++t) {
    if (t >= fields) grad.tables[t].rows = grad.tables[t % fields].rows;
    grad.tables[t].values.resize(static_cast<Eigen::Index>(grad.tables[t].rows.size()), 0);
  }
}

void DataFeed::batch_rows(const Batch& batch, size_t tables, Gradient& grad) {
  rows_of(batch.ids.rows(), [&](int64_t i) { return &batch.ids(i, 0); }, tables, grad);
}

void DataFeed::next_rows(int worker, size_t tables, bool rows, Gradient& grad) {
  // The rows the batch would copy, read where they are.
  ShardIterator& shard = shards_[shard_of_[worker]];
  const std::span<const int64_t> picked = shard.next_rows(local_batch(worker));
  if (!rows) {
    grad = Gradient{};
    grad.samples = static_cast<int64_t>(picked.size());
    return;
  }
  const Dataset& data = shard.data();
  const int32_t* ids = data.ids.data();
  const int64_t fields = data.num_fields;
  rows_of(static_cast<int64_t>(picked.size()),
          [&](int64_t i) { return ids + picked[i] * fields; }, tables, grad);
}

}  // namespace gbasim
