#include "models/dataset.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>

#include "base/error.h"

#ifdef __linux__
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace gbasim {

void advise_huge_pages(void* data, size_t bytes) {
#ifdef __linux__
  const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  const auto begin = reinterpret_cast<uintptr_t>(data);
  const uintptr_t first = (begin + page - 1) / page * page;
  const uintptr_t last = (begin + bytes) / page * page;
  if (last > first) madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)data;
  (void)bytes;
#endif
}

double Dataset::positive_rate() const {
  if (labels.empty()) return 0.0;
  double sum = std::accumulate(labels.begin(), labels.end(), 0.0);
  return sum / static_cast<double>(labels.size());
}

namespace {

Dataset copy_rows(const Dataset& data, int64_t begin, int64_t end) {
  Dataset out;
  out.num_fields = data.num_fields;
  out.num_dense = data.num_dense;
  out.cardinalities = data.cardinalities;
  reserve_on_huge_pages(out.ids, static_cast<size_t>((end - begin) * data.num_fields));
  reserve_on_huge_pages(out.dense, static_cast<size_t>((end - begin) * data.num_dense));
  out.ids.assign(data.ids.begin() + begin * data.num_fields,
                 data.ids.begin() + end * data.num_fields);
  out.dense.assign(data.dense.begin() + begin * data.num_dense,
                   data.dense.begin() + end * data.num_dense);
  out.labels.assign(data.labels.begin() + begin, data.labels.begin() + end);
  if (!data.true_prob.empty()) {
    out.true_prob.assign(data.true_prob.begin() + begin, data.true_prob.begin() + end);
  }
  return out;
}

}  // namespace

Dataset first_rows(const Dataset& data, int64_t count) {
  return copy_rows(data, 0, std::clamp<int64_t>(count, 0, data.size()));
}

std::pair<Dataset, Dataset> split_train_test(const Dataset& data, double test_fraction) {
  if (!(test_fraction > 0.0 && test_fraction < 1.0)) {
    throw InputError("the test fraction must lie in (0, 1), not " + std::to_string(test_fraction));
  }
  const int64_t n = data.size();
  const int64_t test = std::max<int64_t>(1, std::llround(test_fraction * static_cast<double>(n)));
  if (test >= n) {
    throw InputError("the data set has " + std::to_string(n) +
                     " samples: too few to split off a test set");
  }
  return {copy_rows(data, 0, n - test), copy_rows(data, n - test, n)};
}

Batch gather(const Dataset& data, std::span<const int64_t> rows) {
  const int64_t b = static_cast<int64_t>(rows.size());
  Batch batch;
  batch.dense.resize(b, data.num_dense);
  batch.ids.resize(b, data.num_fields);
  batch.labels.resize(b);
  for (int64_t r = 0; r < b; ++r) {
    const int64_t i = rows[r];
    std::copy_n(&data.dense[i * data.num_dense], data.num_dense, batch.dense.row(r).data());
    std::copy_n(&data.ids[i * data.num_fields], data.num_fields, batch.ids.row(r).data());
    batch.labels[r] = data.labels[i];
  }
  return batch;
}

Batch slice(const Dataset& data, int64_t begin, int64_t end) {
  std::vector<int64_t> rows(end - begin);
  std::iota(rows.begin(), rows.end(), begin);
  return gather(data, rows);
}

ShardIterator::ShardIterator(const Dataset& data, int worker, int num_workers, uint64_t seed)
    : data_(data), worker_(worker), seed_(seed) {
  if (num_workers < 1 || worker < 0 || worker >= num_workers) {
    throw std::invalid_argument("ShardIterator: worker must lie in [0, num_workers)");
  }
  for (int64_t i = worker; i < data.size(); i += num_workers) order_.push_back(i);
  if (order_.empty()) {
    throw InputError("worker " + std::to_string(worker) + " of " + std::to_string(num_workers) +
                     " has no training samples (the training set has " +
                     std::to_string(data.size()) + ")");
  }
  reshuffle();
}

void ShardIterator::reshuffle() {
  Rng rng = make_rng(seed_, kStreamShuffle, (static_cast<uint64_t>(worker_) << 32) | epoch_);
  std::shuffle(order_.begin(), order_.end(), rng);
  position_ = 0;
}

std::span<const int64_t> ShardIterator::next_rows(int64_t batch_size) {
  rows_.clear();
  rows_.reserve(batch_size);
  while (static_cast<int64_t>(rows_.size()) < batch_size) {
    if (position_ == shard_size()) {
      ++epoch_;
      reshuffle();
    }
    const int64_t take =
        std::min(batch_size - static_cast<int64_t>(rows_.size()), shard_size() - position_);
    rows_.insert(rows_.end(), order_.begin() + position_, order_.begin() + position_ + take);
    position_ += take;
  }
  samples_read_ += batch_size;
  if (reads_ != nullptr)
    for (const int64_t row : rows_) ++(*reads_)[static_cast<size_t>(row)];
  return rows_;
}

Batch ShardIterator::next(int64_t batch_size) { return gather(data_, next_rows(batch_size)); }

}  // namespace gbasim
