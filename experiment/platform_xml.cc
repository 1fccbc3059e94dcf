#include "experiment/platform_xml.h"

#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <sstream>

#include "base/error.h"
#include "base/files.h"

namespace gbasim {

namespace {

constexpr int kXmlDepthLimit = 64;

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' ||
         c == '-';
}

// The least a stochastic profile's law can draw ("DET x", "UNIF min max", "EXP rate",
// "NORM mean sd", SimGrid's four), or nothing when the words are not one of them. A normal law
// can draw any number: minus infinity.
std::optional<double> least_draw(std::istringstream& words) {
  std::string law;
  double a = 0.0, b = 0.0;
  if (!(words >> law >> a) || !std::isfinite(a)) return std::nullopt;
  if (law == "DET") return a;
  if (law == "EXP") return 0.0;
  if ((law == "UNIF" || law == "NORM") && (words >> b) && std::isfinite(b))
    return law == "UNIF" ? a : -INFINITY;
  return std::nullopt;
}

// A profile's values, which SimGrid reads only as the run reaches them (and aborts on one it
// cannot take, a negative bandwidth or speed): "DATE VALUE" lines, dates never decreasing;
// values positive for a speed or a bandwidth, at least 0 for the others (latency, state). A
// stochastic profile (its first line STOCHASTIC) has "LAW PARAMETERS LAW PARAMETERS" lines
// instead, for the time to the next event and its value: neither law may draw below those
// bounds. PERIODICITY and LOOPAFTER lines, comments (# or %) and blank lines are passed over.
void check_profile(const std::string& attribute, const std::filesystem::path& path,
                   const std::string& where) {
  std::ifstream in(path);
  const bool positive = attribute == "speed_file" || attribute == "bandwidth_file";
  std::string text;
  double last_date = 0.0;
  bool stochastic = false;
  for (long line = 1; std::getline(in, text); ++line) {
    const size_t first = text.find_first_not_of(" \t\r");
    if (first == std::string::npos || text[first] == '#' || text[first] == '%') continue;
    text = text.substr(first);
    auto fail = [&](const std::string& what) {
      throw InputError(where + path.string() + ": line " + std::to_string(line) + ": " + what);
    };
    auto check_value = [&](double value) {
      if (positive && !(value > 0.0))
        fail("the value must be positive (SimGrid cannot run on a speed or bandwidth of 0)");
      if (!(value >= 0.0)) fail("the value must not be negative");
    };
    if (text.rfind("STOCHASTIC", 0) == 0) {
      stochastic = true;
      continue;
    }
    if (text.rfind("PERIODICITY", 0) == 0 || text.rfind("LOOPAFTER", 0) == 0) {
      const size_t space = text.find_first_of(" \t");
      char* end = nullptr;
      const char* number = space == std::string::npos ? "" : text.c_str() + space;
      const double v = std::strtod(number, &end);
      if (end == number || !std::isfinite(v) || v < 0.0)
        fail("the delay must be a number, not negative");
      continue;
    }
    if (stochastic) {
      std::istringstream words(text);
      const std::optional<double> date = least_draw(words), value = least_draw(words);
      if (!date || !value)
        fail("not a 'LAW PARAMETERS LAW PARAMETERS' line (DET x, UNIF min max, EXP rate, NORM mean sd)");
      if (!(*date >= 0.0)) fail("the time to the next event may be drawn negative");
      if (*value == -INFINITY) fail("a normal law may draw a negative value, which SimGrid cannot take");
      check_value(*value);
      continue;
    }
    char* end = nullptr;
    const double date = std::strtod(text.c_str(), &end);
    char* end2 = nullptr;
    const double value = std::strtod(end, &end2);
    if (end == text.c_str() || end2 == end) fail("not a 'DATE VALUE' line");
    if (!std::isfinite(date) || !std::isfinite(value)) fail("a date or value that is not finite");
    if (date < last_date) fail("dates must not decrease");
    last_date = date;
    check_value(value);
  }
}

void check_value(const std::string& name, const std::string& value, long line,
                 const std::string& file) {
  if (name.size() > 5 && name.compare(name.size() - 5, 5, "_file") == 0) {
    // A profile file (speed_file, bandwidth_file, state_file, ...): SimGrid ends the process
    // on one it cannot open. It looks beside the platform file, then in the working folder.
    std::error_code ec;
    const std::filesystem::path beside = std::filesystem::path(file).parent_path() / value;
    const std::string where = file + ": line " + std::to_string(line) + ": " + name + "=\"" +
                              value + "\"";
    if (std::filesystem::is_regular_file(beside, ec))
      check_profile(name, beside, where + ": ");
    else if (std::filesystem::is_regular_file(value, ec))
      check_profile(name, value, where + ": ");
    else
      throw InputError(where + " names no file (beside the platform file or in the working folder)");
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
