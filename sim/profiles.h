// Speed and bandwidth profiles: a host's speed or a link's bandwidth as a piecewise-constant
// function of simulated time, the product of several sources of change (transient episodes,
// network episodes, a replayed usage trace).
#pragma once

#include <simgrid/kernel/ProfileBuilder.hpp>

#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "traces/straggler_models.h"

namespace gbasim {

// A piecewise-constant factor of simulated time, as its changes (time, new value) in time
// order: at least those at or after `from` and before `until`; later ones may come too.
using ChangeSource =
    std::function<std::vector<std::pair<double, double>>(double from, double until)>;

// Episodes: 1 / slowdown inside them, 1 outside.
ChangeSource episode_source(std::function<std::vector<Episode>(double)> episodes);

// Changes known in advance (a replayed trace), the first one at time 0.
ChangeSource fixed_source(std::vector<std::pair<double, double>> changes);

// A profile of `normal` times the product of the sources' factors (a host's speed profile
// takes multiples of its peak speed, a link's bandwidth profile bytes/s). SimGrid asks for
// more events as the run goes, so no horizon is fixed in advance: each call covers a window
// twice as long as the last, starting with `window_s`. An event dated 0 does not reach an
// activity started at 0, so changes at time 0 make no event: the resource must be created
// with the value they give (initial_factor).
simgrid::kernel::profile::Profile* product_profile(const std::string& name,
                                                   std::vector<ChangeSource> sources, double normal,
                                                   double window_s);

// The factor in force at time 0 of `worker`'s replayed changes (each replayed trace's first
// change is at 0); 1 without a trace.
double initial_factor(const std::vector<std::vector<std::pair<double, double>>>& changes,
                      int worker);

}  // namespace gbasim
