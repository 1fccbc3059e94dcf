// The one error type of gbasim: input a user can fix (a spec, a platform, a trace, a data
// file, a command line). Its message names the file and the key path or line, so that every
// entry point reports it the same way ("file: where: what") and exits 2.
#pragma once

#include <stdexcept>
#include <string>

namespace gbasim {

class InputError : public std::runtime_error {
 public:
  // A message that already says where (or that has no file, such as a command-line option).
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
  // `where`: a JSON key path ("'training.workers'") or a line ("12"); either may be empty.
  InputError(const std::string& file, const std::string& where, const std::string& what)
      : std::runtime_error(join(file, where, what)), file_(file) {}

  // The file named by the error ("" when the message names none or only names it inline).
  const std::string& file() const { return file_; }
  // The same error, found while reading `file`: its message is prefixed with the file unless
  // it already names one.
  InputError in_file(const std::string& path) const {
    if (!file_.empty()) return *this;
    InputError e(path + ": " + what());
    e.file_ = path;
    return e;
  }

 private:
  static std::string join(const std::string& file, const std::string& where,
                          const std::string& what) {
    std::string text = file;
    if (!where.empty()) text += (text.empty() ? "" : ": ") + where;
    return text + (text.empty() ? "" : ": ") + what;
  }

  std::string file_;
};

}  // namespace gbasim
