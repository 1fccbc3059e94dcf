// In-memory CTR data sets and the batches workers train on.
#pragma once

#include <Eigen/Core>
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

#include "base/random.h"

namespace gbasim {

using RowMatrixXf = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
using RowMatrixXi = Eigen::Matrix<int32_t, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

// n samples of F categorical fields (ids in [0, cardinality[f])) and D dense features,
// stored row-major. Dense features are model-ready (already log-transformed).
struct Dataset {
  int num_fields = 0;
  int num_dense = 0;
  std::vector<int64_t> cardinalities;  // F: rows of each field's embedding table
  std::vector<int32_t> ids;            // n x F
  std::vector<float> dense;            // n x D
  std::vector<float> labels;           // n, 0 or 1
  std::vector<float> true_prob;        // n for synthetic data (P(label = 1)), else empty

  int64_t size() const { return static_cast<int64_t>(labels.size()); }
  double positive_rate() const;
};

// One batch: b rows copied out of a data set.
struct Batch {
  RowMatrixXf dense;       // b x D
  RowMatrixXi ids;         // b x F
  Eigen::VectorXf labels;  // b

  int64_t size() const { return labels.size(); }
};

// Asks the kernel to back [data, data + bytes) with huge pages (a hint: where it is not
// taken, or off Linux, only speed differs). For a data set's arrays, before they are first
// written: a batch's samples lie scattered over them, and each sample read from a page of
// its own otherwise costs a page walk.
void advise_huge_pages(void* data, size_t bytes);

// v.reserve(n), its storage then advised as above.
template <typename T>
void reserve_on_huge_pages(std::vector<T>& v, size_t n) {
  v.reserve(n);
  advise_huge_pages(v.data(), v.capacity() * sizeof(T));
}

// The last `test_fraction` of the rows become the test set (Criteo files are in time order,
// so this tests on the latest samples); the rest is the training set.
std::pair<Dataset, Dataset> split_train_test(const Dataset& data, double test_fraction);

// The first `count` rows of `data` (all of them when it has fewer).
Dataset first_rows(const Dataset& data, int64_t count);

// Copies the given rows of `data` into a batch, in that order.
Batch gather(const Dataset& data, std::span<const int64_t> rows);
// Rows [begin, end) of `data`.
Batch slice(const Dataset& data, int64_t begin, int64_t end);

// Worker `worker` of `num_workers` reads the disjoint shard {i : i mod num_workers == worker},
// reshuffled at every epoch from (seed, worker, epoch). Batches wrap across epochs, so every
// batch has exactly the requested size.
class ShardIterator {
 public:
  ShardIterator(const Dataset& data, int worker, int num_workers, uint64_t seed);

  Batch next(int64_t batch_size);
  // The rows of data() the next batch reads, in its order (next() gathers these): valid until
  // the next call.
  std::span<const int64_t> next_rows(int64_t batch_size);
  const Dataset& data() const { return data_; }
  // Counts every sample handed out from now on in (*reads)[row] (sized to the data set);
  // nullptr stops counting.
  void count_reads(std::vector<uint32_t>* reads) { reads_ = reads; }
  int64_t epoch() const { return epoch_; }
  int64_t shard_size() const { return static_cast<int64_t>(order_.size()); }
  int64_t samples_read() const { return samples_read_; }

 private:
  void reshuffle();

  const Dataset& data_;
  int worker_;
  uint64_t seed_;
  std::vector<int64_t> order_;
  int64_t position_ = 0;
  int64_t epoch_ = 0;
  int64_t samples_read_ = 0;
  std::vector<uint32_t>* reads_ = nullptr;
  std::vector<int64_t> rows_;  // next_rows's
};

}  // namespace gbasim
