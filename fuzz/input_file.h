// A fuzzer's input as a file, for the readers that take a path: one file a process, rewritten
// for every input.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <fstream>
#include <string>

namespace gbasim::fuzz {

inline const std::string& input_path() {
  static const std::string path = "/tmp/gbasim-fuzz-" + std::to_string(getpid()) + ".input";
  return path;
}

inline const std::string& write_input(const uint8_t* data, size_t size) {
  std::ofstream out(input_path(), std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return input_path();
}

}  // namespace gbasim::fuzz
