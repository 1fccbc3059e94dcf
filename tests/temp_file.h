// A file a test writes for itself, removed when the test ends. Its name carries the process
// id: CTest runs tests in parallel processes, each counting its files from 1.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <string>

namespace gbasim {

class TempFile {
 public:
  explicit TempFile(const std::string& text)
      : path_(testing::TempDir() + "gbasim_test_" + std::to_string(getpid()) + "_" +
              std::to_string(++count_) + ".csv") {
    std::ofstream(path_) << text;
  }
  ~TempFile() { std::remove(path_.c_str()); }
  TempFile(const TempFile&) = delete;
  TempFile& operator=(const TempFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  static inline int count_ = 0;
  std::string path_;
};

}  // namespace gbasim
