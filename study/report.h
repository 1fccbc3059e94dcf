// What the comparisons of modes write about their runs (study/compare.cc, study/whatif.cc,
// study/map.cc): means and paired differences over seeds where they are defined, and numbers
// as Markdown cells and JSON.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/stats.h"

namespace gbasim {

// The finite values of `v`, in order.
std::vector<double> finite(const std::vector<double>& v);

// The paired difference a - b over the seeds where both are finite.
Interval paired(const std::vector<double>& a, const std::vector<double>& b);

// `x` by the printf `format`; "-" when not finite.
std::string fmt(double x, const char* format);

// "mean [low, high]"; the mean alone with one value; "-" with none. `sign` prints "+" too.
std::string text(const Interval& i, const char* format, bool sign = false);

// {"n", "mean", "low", "high"}, null where not finite.
nlohmann::ordered_json interval_json(const Interval& i);

}  // namespace gbasim
