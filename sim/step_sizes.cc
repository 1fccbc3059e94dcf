#include "sim/step_sizes.h"

namespace gbasim {

StepSizes::StepSizes(const ExperimentSpec& spec, const std::vector<int64_t>& dims,
                     int64_t dense_values, double proxy_flops)
    : dims_(dims), dense_values_(dense_values), proxy_flops_(proxy_flops) {
  if (spec.workload) {
    workload_.emplace(*spec.workload);
    batch_ratio_ = static_cast<double>(spec.workload->local_batch) /
                   static_cast<double>(spec.training.local_batch);
    value_bytes_ = spec.workload->value_bytes;
    id_bytes_ = spec.workload->id_bytes;
  } else {
    proxy_flops_ *= spec.cost.flops_scale;
  }
}

int64_t StepSizes::dense_values() const {
  return workload_ ? workload_->dense_params() : dense_values_;
}

double StepSizes::batch_flops(int64_t proxy_batch) const {
  const double flops = workload_ ? workload_->flops_per_sample() : proxy_flops_;
  return flops * static_cast<double>(proxy_batch) * batch_ratio_;
}

double StepSizes::workload_samples(const Gradient& g) const {
  return static_cast<double>(g.samples) * batch_ratio_;
}

RowsByOwner StepSizes::rows(const Gradient& g, int owners) const {
  if (!workload_) return rows_by_owner(g, dims_, owners);
  const Workload::Rows& d = workload_->distinct(std::llround(workload_samples(g)));
  const double n = static_cast<double>(owners);
  return RowsByOwner{std::vector<double>(owners, d.rows / n),
                     std::vector<double>(owners, d.values / n)};
}

double StepSizes::updated_values(const Gradient& g) const {
  if (!workload_) return static_cast<double>(gbasim::updated_values(g, dense_values_, dims_));
  return static_cast<double>(workload_->dense_params()) +
         workload_->distinct(std::llround(workload_samples(g))).values;
}

namespace {
std::vector<double> even(double total, size_t owners) {
  return std::vector<double>(owners, total / static_cast<double>(owners));
}
}  // namespace

std::vector<double> StepSizes::all_to_all_ids(const RowsByOwner& rows, const Gradient& g) const {
  if (!workload_) return owner_bytes(rows, 0, 0.0, id_bytes_);
  return even(workload_samples(g) * workload_->ids_per_sample() * id_bytes_, rows.rows.size());
}

std::vector<double> StepSizes::all_to_all_vectors(const RowsByOwner& rows,
                                                  const Gradient& g) const {
  if (!workload_) return owner_bytes(rows, 0, value_bytes_, 0.0);
  return even(workload_samples(g) * workload_->pooled_values_per_sample() * value_bytes_,
              rows.rows.size());
}

std::vector<double> StepSizes::all_to_all_gradients(const RowsByOwner& rows,
                                                    const Gradient& g) const {
  if (!workload_) return owner_bytes(rows, 0, value_bytes_, id_bytes_);
  return all_to_all_vectors(rows, g);
}

double StepSizes::model_values(double proxy_values) const {
  if (!workload_) return proxy_values;
  return (static_cast<double>(workload_->dense_params()) + workload_->embedding_values()) *
         (1.0 + workload_->spec().optimizer_state);
}

}  // namespace gbasim
