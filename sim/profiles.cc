#include "sim/profiles.h"

#include <algorithm>
#include <cstdint>
#include <memory>
#include <tuple>

namespace gbasim {

ChangeSource episode_source(std::function<std::vector<Episode>(double)> episodes) {
  return [episodes = std::move(episodes)](double from, double until) {
    std::vector<std::pair<double, double>> changes;
    for (const Episode& e : episodes(until)) {
      if (e.start < from) continue;
      changes.emplace_back(e.start, 1.0 / e.slowdown);
      changes.emplace_back(e.end, 1.0);
    }
    return changes;
  };
}

ChangeSource fixed_source(std::vector<std::pair<double, double>> changes) {
  return [changes = std::move(changes)](double from, double until) {
    std::vector<std::pair<double, double>> window;
    for (const auto& c : changes)
      if (c.first >= from && c.first < until) window.push_back(c);
    return window;
  };
}

simgrid::kernel::profile::Profile* product_profile(const std::string& name,
                                                   std::vector<ChangeSource> sources, double normal,
                                                   double window_s) {
  using simgrid::kernel::profile::DatedValue;
  struct State {
    std::vector<ChangeSource> sources;
    std::vector<double> factors;
    // Changes read but not yet emitted: (time, order read, source, value).
    std::vector<std::tuple<double, int64_t, size_t, double>> pending;
    int64_t read = 0;
    double generated_until = 0.0, last_event = 0.0, length = 0.0, value = 0.0;
  };
  auto state = std::make_shared<State>();
  state->factors.assign(sources.size(), 1.0);
  state->sources = std::move(sources);
  state->length = window_s;
  state->value = normal;
  auto more = [state, normal](std::vector<DatedValue>& events) {
    State& st = *state;
    const double until = st.generated_until + st.length;
    for (size_t i = 0; i < st.sources.size(); ++i) {
      for (const auto& [t, v] : st.sources[i](st.generated_until, until))
        st.pending.emplace_back(t, st.read++, i, v);
    }
    std::sort(st.pending.begin(), st.pending.end());
    size_t used = 0;
    // Dates are delays since the previous event; changes at one time make one event.
    while (used < st.pending.size() && std::get<0>(st.pending[used]) < until) {
      const double t = std::get<0>(st.pending[used]);
      for (; used < st.pending.size() && std::get<0>(st.pending[used]) == t; ++used)
        st.factors[std::get<2>(st.pending[used])] = std::get<3>(st.pending[used]);
      double value = normal;
      for (double f : st.factors) value *= f;
      if (t == 0.0) st.value = value;  // the resource was created with it
      if (value == st.value) continue;
      events.emplace_back(t - st.last_event, value);
      st.last_event = t;
      st.value = value;
    }
    st.pending.erase(st.pending.begin(), st.pending.begin() + static_cast<ptrdiff_t>(used));
    if (st.last_event < until) {
      events.emplace_back(until - st.last_event, st.value);
      st.last_event = until;
    }
    st.generated_until = until;
    st.length *= 2.0;
  };
  return simgrid::kernel::profile::ProfileBuilder::from_callback(name, more, -1);
}

double initial_factor(const std::vector<std::vector<std::pair<double, double>>>& changes,
                      int worker) {
  return changes.empty() ? 1.0 : changes[worker].front().second;
}

}  // namespace gbasim
