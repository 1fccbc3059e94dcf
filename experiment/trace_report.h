// What a simulated worker replaying a trace will see (gbasim trace-stats).
#pragma once

#include <string>
#include <vector>

#include "traces/usage_trace.h"

namespace gbasim {

// Reads the usage trace `path` in `format`, mapped to slowdowns and bandwidth factors by
// `mapping` (only `machines`, when given), and prints its statistics: the slowdowns' spread
// across machines, each machine's quantiles, and its episodes at or above `threshold`. With
// `json_path`, also writes them and each machine's series there as JSON.
void report_usage_trace(const std::string& path, const std::string& format,
                        const UsageMapping& mapping, const std::vector<std::string>& machines,
                        double threshold, const std::string& json_path);

// The same for a PAI trace of per-worker slowdowns: their spread across workers at one
// iteration, each worker's quantiles, and its straggler episodes at or above `threshold`.
void report_pai_trace(const std::string& path, double threshold, const std::string& json_path);

}  // namespace gbasim
