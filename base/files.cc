#include "base/files.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <system_error>
#include <utility>
#include <vector>

#include "base/error.h"

namespace gbasim {

namespace fs = std::filesystem;

namespace {

const char* const kKept = "; nothing was written (an earlier file there is untouched)";

// Whether `path` names a process's open file (/dev/stdout, /dev/fd/N, /proc/self/fd/N): the
// file the shell opened, which is appended to, never replaced.
bool is_open_file(const fs::path& path) {
  const std::string s = path.string();
  return s.rfind("/dev/std", 0) == 0 || s.rfind("/dev/fd/", 0) == 0 ||
         (s.rfind("/proc/", 0) == 0 && s.find("/fd/") != std::string::npos);
}

// The path a write to `path` lands on: symbolic links followed (40 at most, as the kernel
// does), relative targets read from the link's folder. A path that is not a link comes back
// as given.
fs::path follow_links(const std::string& path) {
  fs::path at(path);
  for (int hops = 0; hops < 40; ++hops) {
    std::error_code ec;
    if (is_open_file(at)) return at;
    if (!fs::is_symlink(fs::symlink_status(at, ec))) return at;
    const fs::path to = fs::read_symlink(at, ec);
    if (ec) return at;
    at = to.is_absolute() ? to : at.parent_path() / to;
  }
  throw InputError(path + ": too many levels of symbolic links");
}

// Writes all of `text` to the open descriptor; returns 0 or the errno of the failure.
int write_all(int fd, const std::string& text) {
  const char* data = text.data();
  size_t left = text.size();
  while (left > 0) {
    const ssize_t n = ::write(fd, data, left);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && errno == EAGAIN) {
      // A pipe whose reader is slow: wait for room rather than spin.
      ::usleep(1000);
      continue;
    }
    if (n <= 0) return n < 0 ? errno : EIO;
    data += n;
    left -= static_cast<size_t>(n);
  }
  return 0;
}

// Pipes given as outputs, opened when check_output_file looked at them (a pipe nobody reads is
// found then, before any work) and kept open for every write: closing one would tell its
// reader the output has ended.
std::map<std::string, int>& held_pipes() {
  static std::map<std::string, int> pipes;
  return pipes;
}

std::string no_reader_or(int error) {
  return error == ENXIO ? std::string("a pipe that nobody reads") : std::string(std::strerror(error));
}

// A character device (/dev/null, a terminal), a pipe or a file the process has open
// (/dev/stdout) is written in place, at its end: replacing it with a regular file would
// destroy it. A pipe nobody reads is refused rather than waited on.
void write_in_place(const std::string& path, const std::string& text) {
  if (const auto held = held_pipes().find(path); held != held_pipes().end()) {
    const int error = write_all(held->second, text);
    if (error != 0) throw InputError(path + ": write failed: " + no_reader_or(error));
    return;
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    const int error = errno;
    throw InputError(path + ": cannot write: " + no_reader_or(error));
  }
  int error = write_all(fd, text);
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) throw InputError(path + ": write failed: " + std::strerror(error));
}

std::string kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a folder";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISREG(mode)) return "a file";
  return "not a regular file";
}

// Throws unless the nearest existing folder on the way to `file` is a folder this process can
// add entries to (missing folders below it are made when the file is written).
void check_folder_takes(const fs::path& file, const std::string& path, const std::string& doing) {
  fs::path folder = file;
  struct stat st{};
  for (;;) {
    folder = folder.has_relative_path() && folder.has_parent_path() ? folder.parent_path()
                                                                     : fs::path(".");
    if (folder.empty()) folder = ".";
    if (::stat(folder.c_str(), &st) == 0) break;
    if (errno != ENOENT || folder == "." || folder == folder.root_path())
      throw InputError(path + ": cannot " + doing + ": " + folder.string() + ": " +
                       std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode))
    throw InputError(path + ": cannot " + doing + ": " + folder.string() + " is not a folder");
  if (::access(folder.c_str(), W_OK | X_OK) != 0)
    throw InputError(path + ": cannot " + doing + " in " + folder.string() + ": " +
                     std::strerror(errno));
}

}  // namespace

std::ifstream open_input(const std::string& path, const std::string& what) {
  std::error_code ec;
  if (fs::is_directory(path, ec)) throw InputError(path + ": is a folder, not a " + what);
  // A named pipe nobody writes to would block the open for ever. A pipe the shell made
  // (--spec <(...), /dev/fd/N) has its writer, and is read as a file.
  struct stat st{};
  if (::stat(path.c_str(), &st) == 0 && S_ISFIFO(st.st_mode) && !is_open_file(path))
    throw InputError(path + ": is a named pipe, not a " + what + " (give a file)");
  std::ifstream in(path);
  if (!in) throw InputError(path + ": cannot open the " + what);
  return in;
}

std::string read_text_or_empty(const std::string& path) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec)) return "";  // a folder, or a pipe that would block
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

void check_output_file(const std::string& path, const std::string& what) {
  if (path.empty()) throw InputError("the " + what + " has an empty file name");
  struct stat st{};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISFIFO(st.st_mode) && !held_pipes().count(path)) {  // its reader must be there now
      const int fd = ::open(path.c_str(), O_WRONLY | O_NONBLOCK | O_CLOEXEC);
      if (fd < 0) throw InputError(path + ": cannot write the " + what + ": " + no_reader_or(errno));
      held_pipes()[path] = fd;
    }
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return;  // written in place
    if (S_ISREG(st.st_mode) && is_open_file(follow_links(path))) return;
    if (!S_ISREG(st.st_mode))
      throw InputError(path + ": is " + kind_of(st.st_mode) + ", not a file to write the " +
                       what + " to");
  } else if (errno != ENOENT) {
    throw InputError(path + ": cannot write the " + what + ": " + std::strerror(errno));
  }
  // A new or replaced file: its folder (the nearest one that exists) must take a new entry.
  check_folder_takes(follow_links(path), path, "write the " + what);
}

void check_output_folder(const std::string& path, const std::string& what) {
  if (path.empty()) throw InputError("the " + what + " has an empty folder name");
  struct stat st{};
  if (::stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode))
    throw InputError(path + ": is " + kind_of(st.st_mode) + ", where the " + what +
                     " should be a folder");
  check_folder_takes(fs::path(path) / "x", path, "write the " + what);
}

namespace {

// A file written to its temporary, not yet renamed into place (or, for a device or a pipe,
// not yet written: those are written in place).
struct Staged {
  std::string path;
  fs::path target;
  std::string temporary;  // "" for one written in place
  const std::string* text = nullptr;
};

Staged stage(const std::string& path, const std::string& text) {
  Staged s{path, {}, "", &text};
  struct stat st{};
  const bool exists = ::stat(path.c_str(), &st) == 0;
  if (exists && !S_ISREG(st.st_mode)) {
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return s;
    throw InputError(path + ": is " + kind_of(st.st_mode) + ", not a file" + kKept);
  }
  // A link is kept and what it points to is replaced.
  s.target = follow_links(path);
  if (exists && is_open_file(s.target)) return s;
  std::error_code ec;
  if (s.target.has_parent_path()) {
    fs::create_directories(s.target.parent_path(), ec);
    if (ec) throw InputError(path + ": cannot create folder: " + ec.message());
  }
  const std::string temporary = s.target.string() + ".tmp." + std::to_string(::getpid());
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError(path + ": cannot write: " + std::strerror(errno) + kKept);
  // The whole text, then fsync, then the rename: a kill or a crash at any moment leaves either
  // the earlier file or the new one, never a part.
  int error = write_all(fd, text);
  if (error == 0 && ::fsync(fd) != 0 && errno != EINVAL) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error != 0) {
    fs::remove(temporary, ec);
    throw InputError(path + ": write failed: " + std::strerror(error) + kKept);
  }
  s.temporary = temporary;
  return s;
}

void commit(const Staged& s) {
  if (s.temporary.empty()) return write_in_place(s.path, *s.text);
  std::error_code ec;
  fs::rename(s.temporary, s.target, ec);
  if (ec) {
    const std::string why = ec.message();  // before remove() overwrites ec
    fs::remove(s.temporary, ec);
    throw InputError(s.path + ": cannot rename into place: " + why + kKept);
  }
}

}  // namespace

void write_text_atomically(const std::string& path, const std::string& text) {
  commit(stage(path, text));
}

void write_texts_atomically(const std::vector<std::pair<std::string, std::string>>& files) {
  std::vector<Staged> staged;
  try {
    for (const auto& [path, text] : files) staged.push_back(stage(path, text));
  } catch (const InputError&) {
    std::error_code ec;
    for (const Staged& s : staged)
      if (!s.temporary.empty()) fs::remove(s.temporary, ec);
    throw;
  }
  for (const Staged& s : staged) commit(s);
}

std::FILE* table_stream(const std::string& path) {
  struct stat out = {};
  struct stat given = {};
  if (path.empty() || ::fstat(STDOUT_FILENO, &out) != 0 || ::stat(path.c_str(), &given) != 0)
    return stdout;
  // A terminal or /dev/null shows or drops both alike.
  const bool same = out.st_dev == given.st_dev && out.st_ino == given.st_ino;
  return same && !S_ISCHR(out.st_mode) ? stderr : stdout;
}

}  // namespace gbasim
