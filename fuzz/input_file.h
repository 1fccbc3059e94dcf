// A fuzzer's input as a file, for the readers that take a path: one file a process in the
// temporary folder ($TMPDIR, else /tmp), rewritten for every input and removed when the
// process exits normally (libFuzzer's end of -max_total_time or -runs).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

namespace gbasim::fuzz {

struct InputFile {
  std::string path = (std::filesystem::temp_directory_path() /
                      ("gbasim-fuzz-" + std::to_string(getpid()) + ".input"))
                         .string();
  ~InputFile() { std::remove(path.c_str()); }
};

inline const std::string& input_path() {
  static const InputFile file;
  return file.path;
}

inline const std::string& write_input(const uint8_t* data, size_t size) {
  std::ofstream out(input_path(), std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(data), static_cast<std::streamsize>(size));
  return input_path();
}

}  // namespace gbasim::fuzz
