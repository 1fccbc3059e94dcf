// The concrete update rules; build them through make_rule().
#pragma once

#include "strategies/update_rule.h"

namespace gbasim {

// Every worker computes on version k; the first `quorum` gradients of version k are
// averaged into one step, and a gradient of an older version is dropped. A worker that has
// contributed waits for the step. Sync is the quorum N (G = N x b; no gradient can then be
// late); backup workers (Hop-BW) the quorum N - k.
class QuorumRule : public UpdateRule {
 public:
  QuorumRule(const RuleConfig& config, int quorum);
  Admission admit(int worker) override;
  std::optional<Gradient> receive(int worker, int64_t token, Gradient gradient) override;

 private:
  int quorum_;
  std::vector<bool> contributed_;
  GradientSum sum_;
  int count_ = 0;
};

// Each gradient is applied as it arrives, as it is (a mean over b samples), with sync's
// optimizer and learning rate.
class AsyncRule : public UpdateRule {
 public:
  using UpdateRule::UpdateRule;
  Admission admit(int worker) override;
  std::optional<Gradient> receive(int worker, int64_t token, Gradient gradient) override;
};

// Global Batch gradients Aggregation: docs/gba.md.
class GbaRule : public UpdateRule {
 public:
  explicit GbaRule(const RuleConfig& config);
  Admission admit(int worker) override;
  std::optional<Gradient> receive(int worker, int64_t token, Gradient gradient) override;

  // The weight a gradient of this staleness gets.
  double weight(int64_t staleness) const;
  int64_t gradients_per_step() const { return m_; }

 private:
  std::optional<Gradient> aggregate(double divisor);

  int64_t m_;
  GradientSum sum_;
  double weight_sum_ = 0.0;
  int64_t counted_ = 0;  // gradients counted toward the M of this step
};

// Stale synchronous parallel (Hop-BS): gradients are applied as they arrive, but a worker
// may not start a step more than s steps ahead of the slowest worker.
class BoundedStalenessRule : public UpdateRule {
 public:
  explicit BoundedStalenessRule(const RuleConfig& config);
  Admission admit(int worker) override;
  std::optional<Gradient> receive(int worker, int64_t token, Gradient gradient) override;

  int64_t completed(int worker) const { return completed_.at(worker); }

 private:
  std::vector<int64_t> completed_;  // steps each worker has finished
  int64_t slowest_ = 0;             // the fewest of them
  int64_t at_slowest_ = 0;          // the workers that have finished that few
};

}  // namespace gbasim
