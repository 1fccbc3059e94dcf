#include "experiment/json_file.h"

#include <cmath>
#include <cstdint>
#include <fstream>
#include <iterator>
#include <set>
#include <vector>

#include "base/error.h"
#include "base/files.h"

namespace gbasim {

int json_depth(std::string_view text, long* at_line) {
  int depth = 0, deepest = 0;
  long line = 1;
  bool in_string = false;
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '\n') ++line;
    if (in_string) {
      if (c == '\\') ++i;  // the escaped character cannot end the string
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      if (++depth > deepest) {
        deepest = depth;
        if (at_line) *at_line = line;
        if (deepest > kJsonDepthLimit) break;
      }
    } else if (c == ']' || c == '}') {
      --depth;
    }
  }
  return deepest;
}

void check_json_depth(std::string_view text, const std::string& source) {
  long line = 1;
  if (json_depth(text, &line) > kJsonDepthLimit) {
    throw InputError(source + ": line " + std::to_string(line) + ": JSON nested more than " +
                     std::to_string(kJsonDepthLimit) + " levels deep");
  }
}

nlohmann::json parse_json_or_discarded(std::string_view text) {
  if (json_depth(text) > kJsonDepthLimit) return nlohmann::json(nlohmann::json::value_t::discarded);
  return nlohmann::json::parse(text, nullptr, false);
}

void check_unique_keys(std::string_view text, const std::string& source) {
  // Each open object's keys so far, and the path of keys down to it.
  std::vector<std::set<std::string>> keys;
  std::vector<std::string> path;
  auto callback = [&](int, nlohmann::json::parse_event_t event, nlohmann::json& parsed) {
    using Event = nlohmann::json::parse_event_t;
    if (event == Event::object_start) {
      keys.emplace_back();
      path.emplace_back();
    } else if (event == Event::object_end && !keys.empty()) {
      keys.pop_back();
      path.pop_back();
    } else if (event == Event::key && !keys.empty()) {
      const std::string key = parsed.get<std::string>();
      path.back() = key;
      if (!keys.back().insert(key).second) {
        std::string where;
        for (const std::string& k : path) where += (where.empty() ? "" : ".") + k;
        throw InputError(source + ": key '" + where +
                         "' comes twice in one object (JSON would keep only the last)");
      }
    }
    return true;
  };
  // A syntax error is the caller's to report.
  const nlohmann::json parsed = nlohmann::json::parse(text, callback, false);
  (void)parsed;
}

std::string read_json_text(const std::string& path, const std::string& what) {
  std::ifstream in = open_input(path, what);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError(path + ": cannot read the " + what);
  check_json_depth(text, path);
  check_unique_keys(text, path);
  return text;
}

nlohmann::json whole_numbers(const nlohmann::json& j) {
  if (j.is_number_float()) {
    const double v = j.get<double>();
    if (std::isfinite(v) && v == std::trunc(v) && std::fabs(v) < 9.2e18) {
      return v >= 0 ? nlohmann::json(static_cast<uint64_t>(v))
                    : nlohmann::json(static_cast<int64_t>(v));
    }
    return j;
  }
  if (j.is_array() || j.is_object()) {
    nlohmann::json out = j;
    for (auto& e : out) e = whole_numbers(e);
    return out;
  }
  return j;
}

}  // namespace gbasim
