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
  explicit InputError(const std::string& message)
      : std::runtime_error(message), detail_(message) {}
  // An error of the JSON key path `key` ("training.workers") of `file`:
  // "file: 'training.workers' must be an integer".
  InputError(const std::string& file, const std::string& key, const std::string& what)
      : std::runtime_error((file.empty() ? "" : file + ": ") + "'" + key + "' " + what),
        file_(file),
        key_(key),
        detail_("'" + key + "' " + what) {}
  // "file: unknown key 'training.wrkers'".
  static InputError unknown_key(const std::string& file, const std::string& key) {
    InputError e(file + ": unknown key '" + key + "'");
    e.file_ = file;
    e.key_ = key;
    e.detail_ = "unknown key '" + key + "'";
    return e;
  }

  // The file named by the error ("" when the message names none or only names it inline).
  const std::string& file() const { return file_; }
  // The key path, when the error names one.
  const std::string& key() const { return key_; }
  // The same error, found while reading `file`: its message is prefixed with the file unless
  // it already names one.
  InputError in_file(const std::string& path) const {
    if (!file_.empty()) return *this;
    return told_of(path);
  }
  // The same error, of `path` instead of the file it named: for a key that came from another
  // file than the one read (a cluster file under a spec).
  InputError told_of(const std::string& path) const {
    InputError e(path + ": " + detail_);
    e.file_ = path;
    e.key_ = key_;
    e.detail_ = detail_;
    return e;
  }

 private:
  std::string file_, key_;
  std::string detail_;  // the message without the file
};

}  // namespace gbasim
