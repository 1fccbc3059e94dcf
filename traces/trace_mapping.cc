#include "traces/trace_mapping.h"

#include <algorithm>
#include <random>

#include "base/random.h"

#include "traces/pai_trace.h"

namespace gbasim {

std::vector<size_t> assign_trace_series(const std::vector<std::string>& ids,
                                        const std::string& mapping,
                                        const std::vector<std::string>& chosen, int workers,
                                        uint64_t seed) {
  if (ids.empty()) throw InputError("the trace has no workers or machines");
  std::vector<size_t> order;
  if (mapping == "explicit") {
    if (chosen.empty()) throw InputError("an explicit mapping needs the trace's machines listed");
    for (size_t i = 0; i < chosen.size(); ++i) {
      const auto it = std::find(ids.begin(), ids.end(), chosen[i]);
      if (it == ids.end())
        throw InputError("", "stragglers.trace.machines[" + std::to_string(i) + "]",
                         "no '" + chosen[i] + "' among the trace's workers or machines");
      order.push_back(static_cast<size_t>(it - ids.begin()));
    }
  } else {
    order.resize(ids.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    if (mapping == "random") {
      Rng rng = trace_mapping_rng(seed);
      std::shuffle(order.begin(), order.end(), rng);
    } else if (mapping != "in_order") {
      throw InputError("trace mapping must be in_order, random or explicit, got '" + mapping + "'");
    }
  }
  std::vector<size_t> result;
  for (int w = 0; w < workers; ++w) result.push_back(order[static_cast<size_t>(w) % order.size()]);
  return result;
}

}  // namespace gbasim
