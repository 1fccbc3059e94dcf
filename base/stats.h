// Small order statistics shared by the trace readers, the switching policy and calibration.
#pragma once

#include <algorithm>
#include <vector>

namespace gbasim {

// The median of `values` (the mean of the two middle ones for an even count); 0 when empty.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

}  // namespace gbasim
