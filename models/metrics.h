// Test metrics of a CTR model.
#pragma once

#include <span>

namespace gbasim {

// Exact area under the ROC curve: the probability that a random positive scores above a
// random negative, ties counting one half. Sort-based, O(n log n). NaN when the labels
// hold only one class.
double roc_auc(std::span<const float> scores, std::span<const float> labels);

// Mean binary cross-entropy of probabilities against 0/1 labels, with probabilities
// clamped to [1e-7, 1 - 1e-7] so a confident mistake costs a finite amount.
double log_loss(std::span<const float> probabilities, std::span<const float> labels);

}  // namespace gbasim
