// Pieces of a run's result JSON that the simulator and gbasim-mpi write alike.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "strategies/update_rule.h"

namespace gbasim {

// Writes `doc` (indented, with a final newline) whole or not at all (base/files.h).
void write_json_atomically(const std::string& path, const nlohmann::ordered_json& doc);

// Appends the rule's counts to a result's summary: mean_staleness, gradients (received,
// full, decayed, dropped), admissions, waits.
void put_rule_metrics(const RuleMetrics& metrics, nlohmann::ordered_json& summary);

// [staleness, gradients] pairs, by increasing staleness.
nlohmann::ordered_json staleness_histogram(const RuleMetrics& metrics);

}  // namespace gbasim
