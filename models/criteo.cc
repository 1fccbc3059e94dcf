#include "models/criteo.h"

#include <charconv>
#include <cmath>
#include <fstream>
#include <optional>
#include <string_view>
#include <vector>

#include "base/error.h"
#include "base/files.h"

namespace gbasim {
namespace {

constexpr int kColumns = 1 + kCriteoDense + kCriteoFields;

uint64_t mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

// Parses one line into the row; returns what is wrong with it, or nothing.
std::optional<std::string> parse_line(std::string_view line, int64_t table_size, float& label,
                                      float* dense, int32_t* ids) {
  std::string_view columns[kColumns];
  int count = 0;
  size_t start = 0;
  while (true) {
    const size_t tab = line.find('\t', start);
    if (count < kColumns)
      columns[count] = line.substr(start, tab == std::string_view::npos ? tab : tab - start);
    ++count;
    if (tab == std::string_view::npos) break;
    start = tab + 1;
  }
  if (count != kColumns) {
    return "expected " + std::to_string(kColumns) + " tab-separated columns, found " +
           std::to_string(count);
  }
  if (columns[0] != "0" && columns[0] != "1") {
    return "label must be 0 or 1, found '" + std::string(columns[0]) + "'";
  }
  label = columns[0] == "1" ? 1.0f : 0.0f;
  for (int d = 0; d < kCriteoDense; ++d) {
    const std::string_view text = columns[1 + d];
    if (text.empty()) {
      dense[d] = 0.0f;
      continue;
    }
    int64_t x = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), x);
    if (ec != std::errc() || end != text.data() + text.size()) {
      return "integer feature I" + std::to_string(d + 1) + " is not an integer: '" +
             std::string(text) + "'";
    }
    const double magnitude = std::log1p(std::abs(static_cast<double>(x)));
    dense[d] = static_cast<float>(x < 0 ? -magnitude : magnitude);
  }
  for (int f = 0; f < kCriteoFields; ++f) {
    const std::string_view text = columns[1 + kCriteoDense + f];
    if (text.empty()) {
      ids[f] = 0;
      continue;
    }
    uint64_t value = 0;
    const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value, 16);
    if (text.size() > 16 || ec != std::errc() || end != text.data() + text.size()) {
      return "categorical feature C" + std::to_string(f + 1) + " is not hexadecimal: '" +
             std::string(text) + "'";
    }
    ids[f] = criteo_hash(value, f, table_size);
  }
  return std::nullopt;
}

}  // namespace

int32_t criteo_hash(uint64_t value, int field, int64_t table_size) {
  const uint64_t h = mix64(value ^ mix64(static_cast<uint64_t>(field)));
  return static_cast<int32_t>(1 + h % static_cast<uint64_t>(table_size - 1));
}

CriteoFile parse_criteo(std::istream& in, const std::string& name, const CriteoOptions& options) {
  if (options.table_size < 2 || options.table_size >= (int64_t{1} << 31)) {
    throw InputError(name + ": table size must lie in [2, 2^31), got " +
                     std::to_string(options.table_size));
  }
  CriteoFile out;
  Dataset& data = out.data;
  data.num_fields = kCriteoFields;
  data.num_dense = kCriteoDense;
  data.cardinalities.assign(kCriteoFields, options.table_size);

  std::string line;
  float dense[kCriteoDense];
  int32_t ids[kCriteoFields];
  for (int64_t number = 1; std::getline(in, line); ++number) {
    if (options.max_samples >= 0 && data.size() >= options.max_samples) break;
    std::string_view view(line);
    if (!view.empty() && view.back() == '\r') view.remove_suffix(1);
    float label = 0.0f;
    if (auto error = parse_line(view, options.table_size, label, dense, ids)) {
      if (!options.skip_bad_lines)
        throw InputError(name + ":" + std::to_string(number) + ": " + *error);
      ++out.bad_lines;
      continue;
    }
    data.labels.push_back(label);
    data.dense.insert(data.dense.end(), dense, dense + kCriteoDense);
    data.ids.insert(data.ids.end(), ids, ids + kCriteoFields);
  }
  if (in.bad()) throw InputError(name + ": read error");
  if (data.size() == 0) throw InputError(name + ": no samples");
  return out;
}

CriteoFile read_criteo(const std::string& path, const CriteoOptions& options) {
  std::ifstream in = open_input(path, "data file");
  return parse_criteo(in, path, options);
}

}  // namespace gbasim
