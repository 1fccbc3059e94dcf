// Means and paired differences as cells and JSON (study/report.h).
#include "study/report.h"

#include <cmath>
#include <cstdio>

namespace gbasim {

std::vector<double> finite(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v)
    if (std::isfinite(x)) out.push_back(x);
  return out;
}

Interval paired(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> x, y;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (std::isfinite(a[i]) && std::isfinite(b[i])) {
      x.push_back(a[i]);
      y.push_back(b[i]);
    }
  }
  return paired_difference(x, y);
}

std::string fmt(double x, const char* format) {
  if (!std::isfinite(x)) return "-";
  char text[48];
  std::snprintf(text, sizeof text, format, x);
  return text;
}

std::string text(const Interval& i, const char* format, bool sign) {
  if (i.n == 0) return "-";
  std::string f = sign ? std::string("%+") + (format + 1) : format;
  if (i.n < 2) return fmt(i.mean, f.c_str());
  return fmt(i.mean, f.c_str()) + " [" + fmt(i.low, f.c_str()) + ", " + fmt(i.high, f.c_str()) +
         "]";
}

nlohmann::ordered_json interval_json(const Interval& i) {
  using Json = nlohmann::ordered_json;
  auto num = [](double x) { return std::isfinite(x) ? Json(x) : Json(); };
  return {{"n", i.n}, {"mean", num(i.mean)}, {"low", num(i.low)}, {"high", num(i.high)}};
}

}  // namespace gbasim
