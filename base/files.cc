#include "base/files.h"

#include <unistd.h>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <system_error>

#include "base/error.h"

namespace gbasim {

std::ifstream open_input(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec))
    throw InputError(path + ": is a folder, not a " + what);
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open the " + what);
  return in;
}

void write_text_atomically(const std::string& path, const std::string& text) {
  namespace fs = std::filesystem;
  const fs::path target(path);
  std::error_code ec;
  if (target.has_parent_path()) {
    fs::create_directories(target.parent_path(), ec);
    if (ec) throw InputError(path + ": cannot create folder: " + ec.message());
  }
  const std::string temporary = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temporary);
    if (!out) throw InputError(path + ": cannot write (" + temporary + ")");
    out << text;
    out.close();
    if (!out) {
      fs::remove(temporary, ec);
      throw InputError(path + ": write failed");
    }
  }
  fs::rename(temporary, target, ec);
  if (ec) {
    fs::remove(temporary, ec);
    throw InputError(path + ": cannot rename into place");
  }
}

}  // namespace gbasim
