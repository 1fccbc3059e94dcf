#include "experiment/json_file.h"

#include <fstream>
#include <iterator>

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

std::string read_json_text(const std::string& path, const std::string& what) {
  std::ifstream in = open_input(path, what);
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) throw InputError(path + ": cannot read the " + what);
  check_json_depth(text, path);
  return text;
}

}  // namespace gbasim
