// Which trace worker or machine each simulated worker replays.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace gbasim {

// Simulated worker w takes series result[w] (an index into `ids`, the trace's workers or
// machines in the order they are listed): "in_order" (w mod T), "random" (a seeded shuffle of
// the T series, then wrapping), or "explicit" (`chosen`, ids of the trace, in turn). Throws
// InputError for an unknown mapping, an empty choice, or an id the trace does not have.
std::vector<size_t> assign_trace_series(const std::vector<std::string>& ids,
                                        const std::string& mapping,
                                        const std::vector<std::string>& chosen, int workers,
                                        uint64_t seed);

}  // namespace gbasim
