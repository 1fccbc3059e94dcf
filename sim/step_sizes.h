// What a simulated step weighs: the proxy model's own batch (its rows, its dense part, its
// flops x cost.flops_scale), or with a workload in the spec the workload's (docs/workload.md).
// Every message and compute of a run takes its size from here.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "experiment/spec.h"
#include "experiment/workload.h"
#include "models/gradient.h"
#include "sim/messages.h"

namespace gbasim {

class StepSizes {
 public:
  // `dims`: the proxy's table columns; `dense_values`: its dense part; `proxy_flops`: its
  // flops a sample.
  StepSizes(const ExperimentSpec& spec, const std::vector<int64_t>& dims, int64_t dense_values,
            double proxy_flops);

  bool proxy() const { return !workload_; }
  // Values of the dense part the messages carry.
  int64_t dense_values() const;
  double value_bytes() const { return value_bytes_; }
  double id_bytes() const { return id_bytes_; }
  // Flops of a local batch of `proxy_batch` proxy samples (with a workload: the workload's
  // batch it stands for).
  double batch_flops(int64_t proxy_batch) const;
  // Flops of a sample the run times: the workload's, or the proxy's x cost.flops_scale.
  double flops_per_sample() const { return workload_ ? workload_->flops_per_sample() : proxy_flops_; }
  // The rows of a gradient, by owner: the proxy's own rows hashed to owners, or the
  // workload's expected distinct rows for the samples the gradient stands for, split evenly.
  RowsByOwner rows(const Gradient& g, int owners) const;
  // Values an update of this gradient writes (dense and rows).
  double updated_values(const Gradient& g) const;
  // Sync with the tables sharded over the workers: what w sends each owner (ids) and what
  // each owner answers (vectors; the backward all-to-all carries the same bytes of
  // gradients). The proxy: its distinct rows; a workload: its ids and pooled vectors
  // (TorchRec's input and output distributions), split evenly.
  std::vector<double> all_to_all_ids(const RowsByOwner& rows, const Gradient& g) const;
  std::vector<double> all_to_all_vectors(const RowsByOwner& rows, const Gradient& g) const;
  std::vector<double> all_to_all_gradients(const RowsByOwner& rows, const Gradient& g) const;
  // Values of the whole model and its optimizer state that a model move carries.
  double model_values(double proxy_values) const;

 private:
  double workload_samples(const Gradient& g) const;

  std::vector<int64_t> dims_;
  int64_t dense_values_;
  double proxy_flops_;
  std::optional<Workload> workload_;
  double batch_ratio_ = 1.0;  // workload samples a proxy sample stands for
  double value_bytes_ = kValueBytes, id_bytes_ = kRowIdBytes;
};

}  // namespace gbasim
