#include "base/files.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
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
  const std::string kept = "; nothing was written (an earlier file there is untouched)";
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError(path + ": cannot write: " + std::strerror(errno) + kept);
  // The whole text, then fsync, then the rename: a kill or a crash at any moment leaves either
  // the earlier file or the new one, never a part.
  const char* data = text.data();
  size_t left = text.size();
  int error = 0;
  while (left > 0 && error == 0) {
    const ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      error = n < 0 ? errno : EIO;
    } else {
      data += n;
      left -= static_cast<size_t>(n);
    }
  }
  if (error == 0 && ::fsync(fd) != 0 && errno != EINVAL) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    fs::remove(temporary, ec);
    throw InputError(path + ": write failed: " + std::strerror(error) + kept);
  }
  fs::rename(temporary, target, ec);
  if (ec) {
    fs::remove(temporary, ec);
    throw InputError(path + ": cannot rename into place: " + ec.message() + kept);
  }
}

}  // namespace gbasim
