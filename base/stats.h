// Small statistics shared by the trace readers, the switching policy, calibration, and the
// comparisons of `gbasim tune` and `gbasim compare`: medians, and Student's t confidence
// intervals of a mean and of a paired difference.
#pragma once

#include <algorithm>
#include <boost/math/distributions/students_t.hpp>
#include <cmath>
#include <limits>
#include <vector>

namespace gbasim {

// The median of `values` (the mean of the two middle ones for an even count); 0 when empty.
inline double median(std::vector<double> values) {
  if (values.empty()) return 0.0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : 0.5 * (values[n / 2 - 1] + values[n / 2]);
}

// A sample's mean and its two-sided confidence interval at `level` from Student's t with
// n - 1 degrees of freedom. With fewer than 2 values the interval is NaN (no spread to
// estimate); with none the mean is NaN too.
struct Interval {
  int n = 0;
  double mean = std::numeric_limits<double>::quiet_NaN();
  double low = std::numeric_limits<double>::quiet_NaN();
  double high = std::numeric_limits<double>::quiet_NaN();
  double half_width() const { return 0.5 * (high - low); }
  // Whether the interval excludes 0: a difference that is not within the noise.
  bool excludes_zero() const { return n >= 2 && (low > 0.0 || high < 0.0); }
};

inline Interval mean_interval(const std::vector<double>& values, double level = 0.95) {
  Interval r;
  r.n = static_cast<int>(values.size());
  if (r.n == 0) return r;
  double sum = 0.0;
  for (const double v : values) sum += v;
  r.mean = sum / r.n;
  if (r.n < 2) return r;
  double squares = 0.0;
  for (const double v : values) squares += (v - r.mean) * (v - r.mean);
  const double standard_error = std::sqrt(squares / (r.n - 1) / r.n);
  const boost::math::students_t t(r.n - 1);
  const double q = boost::math::quantile(t, 0.5 + 0.5 * level);
  r.low = r.mean - q * standard_error;
  r.high = r.mean + q * standard_error;
  return r;
}

// The paired difference a[i] - b[i] (same seed, two modes): its mean and interval. The two
// must be of one length.
inline Interval paired_difference(const std::vector<double>& a, const std::vector<double>& b,
                                  double level = 0.95) {
  std::vector<double> d;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) d.push_back(a[i] - b[i]);
  return mean_interval(d, level);
}

}  // namespace gbasim
