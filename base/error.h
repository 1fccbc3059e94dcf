// The one error type of gbasim: input a user can fix (a spec, a platform, a trace, a data
// file, a command line). Its message names the file and the key path or line, and every entry
// point reports it the same way (cli/entry_point.h) and exits 2.
#pragma once

#include <stdexcept>
#include <string>

namespace gbasim {

class InputError : public std::runtime_error {
 public:
  // A message that already says where (or that has no file, such as a command-line option).
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
  // An error of the JSON key path `key` ("training.workers") of `file`:
  // "file: 'training.workers' must be an integer".
  InputError(const std::string& file, const std::string& key, const std::string& what)
      : std::runtime_error((file.empty() ? "" : file + ": ") + "'" + key + "' " + what),
        file_(file),
        key_(key) {}

  // The file named by the error ("" when the message names none or only names it inline).
  const std::string& file() const { return file_; }
  // The key path, when the error names one.
  const std::string& key() const { return key_; }
  // The same error, found while reading `file`: its message is prefixed with the file unless
  // it already names one.
  InputError in_file(const std::string& path) const {
    if (!file_.empty()) return *this;
    InputError e(path + ": " + what());
    e.file_ = path;
    e.key_ = key_;
    return e;
  }

 private:
  std::string file_, key_;
};

}  // namespace gbasim
