// Small CSV helpers shared by the trace readers.
#pragma once

#include <charconv>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

namespace gbasim::csv {

// Splits on commas; no quoting (the traces read here have none). A trailing comma gives a
// trailing empty cell.
inline std::vector<std::string> split(const std::string& line) {
  std::vector<std::string> cells;
  size_t start = 0;
  for (;;) {
    const size_t comma = line.find(',', start);
    if (comma == std::string::npos) {
      cells.push_back(line.substr(start));
      return cells;
    }
    cells.push_back(line.substr(start, comma - start));
    start = comma + 1;
  }
}

// The whole text as a finite number; false for anything else (empty text, "inf", "nan", and
// values beyond a double's range included).
template <class T>
bool parse_number(const std::string& text, T& out) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, out);
  if constexpr (std::is_floating_point_v<T>) {
    if (ec == std::errc() && !std::isfinite(out)) return false;
  }
  return ec == std::errc() && ptr == end;
}

// Drops a trailing carriage return (files written on Windows).
inline void chomp(std::string& line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
}

}  // namespace gbasim::csv
