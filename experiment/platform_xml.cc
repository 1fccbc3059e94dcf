#include "experiment/platform_xml.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "base/error.h"
#include "base/files.h"

namespace gbasim {

namespace {

constexpr int kXmlDepthLimit = 64;

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

void check_value(const std::string& name, const std::string& value, long line,
                 const std::string& file) {
  if (name.size() > 5 && name.compare(name.size() - 5, 5, "_file") == 0) {
    // A profile file (speed_file, bandwidth_file, state_file, ...): SimGrid ends the process
    // on one it cannot open. It looks beside the platform file, then in the working folder.
    std::error_code ec;
    const std::filesystem::path beside = std::filesystem::path(file).parent_path() / value;
    if (!std::filesystem::is_regular_file(beside, ec) &&
        !std::filesystem::is_regular_file(value, ec))
      throw InputError(file + ": line " + std::to_string(line) + ": " + name + "=\"" + value +
                       "\" names no file (beside the platform file or in the working folder)");
    return;
  }
  const bool core = name == "core", speed = name == "speed";
  const bool bandwidth = name == "bandwidth" || name == "bw" || name == "bw_in" ||
                         name == "bw_out" || name == "bb_bw";
  const bool latency = name == "lat" || name == "latency" || name == "bb_lat";
  if (!core && !speed && !bandwidth && !latency) return;
  auto fail = [&](const std::string& what) {
    throw InputError(file + ": line " + std::to_string(line) + ": " + name + "=\"" + value +
                     "\" " + what);
  };
  size_t start = 0;
  do {  // a speed may list power states: "1Gf,500Mf"
    const size_t comma = speed ? value.find(',', start) : std::string::npos;
    const std::string part = value.substr(start, comma == std::string::npos ? comma : comma - start);
    start = comma == std::string::npos ? comma : comma + 1;
    char* end = nullptr;
    const double v = std::strtod(part.c_str(), &end);
    if (end == part.c_str() || !std::isfinite(v)) fail("is not a number SimGrid reads");
    if (core && !(v >= 1.0)) fail("must be at least 1 (a host needs a core)");
    if ((speed || bandwidth) && !(v > 0.0))
      fail("must be positive (SimGrid cannot run on a speed or bandwidth of 0)");
    if (latency && v < 0.0) fail("must not be negative");
  } while (start != std::string::npos);
}

}  // namespace

void check_platform_xml_numbers(std::string_view text, const std::string& file) {
  long line = 1;
  size_t i = 0;
  int depth = 0;  // of elements: SimGrid's reader corrupts its heap on thousands of zones
  while (i < text.size()) {
    const char c = text[i];
    if (c == '\n') {
      ++line;
      ++i;
    } else if (c == '<' && i + 1 < text.size() && is_name_char(text[i + 1])) {
      if (++depth > kXmlDepthLimit) {
        throw InputError(file + ": line " + std::to_string(line) + ": elements nested more than " +
                         std::to_string(kXmlDepthLimit) + " deep");
      }
      ++i;
    } else if (c == '<' && i + 1 < text.size() && text[i + 1] == '/') {
      --depth;
      i += 2;
    } else if (c == '/' && i + 1 < text.size() && text[i + 1] == '>') {
      --depth;
      i += 2;
    } else if (text.compare(i, 4, "<!--") == 0) {  // a comment, to its end
      const size_t end = text.find("-->", i + 4);
      const size_t stop = end == std::string_view::npos ? text.size() : end + 3;
      for (size_t k = i; k < stop; ++k) line += text[k] == '\n';
      i = stop;
    } else if (c == '"' || c == '\'') {  // a quoted value: its name is before the '='
      const size_t close = text.find(c, i + 1);
      const size_t stop = close == std::string_view::npos ? text.size() : close;
      size_t k = i;
      while (k > 0 && (text[k - 1] == ' ' || text[k - 1] == '\t' || text[k - 1] == '\n')) --k;
      if (k > 0 && text[k - 1] == '=') {
        --k;
        while (k > 0 && (text[k - 1] == ' ' || text[k - 1] == '\t' || text[k - 1] == '\n')) --k;
        size_t first = k;
        while (first > 0 && is_name_char(text[first - 1])) --first;
        check_value(std::string(text.substr(first, k - first)),
                    std::string(text.substr(i + 1, stop - i - 1)), line, file);
      }
      for (size_t k2 = i; k2 < stop; ++k2) line += text[k2] == '\n';
      i = stop + 1;
    } else {
      ++i;
    }
  }
}

void check_platform_xml_file(const std::string& path) {
  // Read twice, here and by SimGrid, so a regular file: a pipe would hang or be empty.
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  if (!ec && std::filesystem::exists(status) && !std::filesystem::is_regular_file(status) &&
      !std::filesystem::is_directory(status))
    throw InputError(path + ": not a regular file (SimGrid reads a platform file by its name)");
  std::ifstream in = open_input(path, "SimGrid platform file");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  check_platform_xml_numbers(text, path);
}

}  // namespace gbasim
