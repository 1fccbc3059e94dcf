// Errors that bad user input (files, specs, command lines) turns into.
#pragma once

#include <stdexcept>
#include <string>

namespace gbasim {

// Raised for input a user can fix; the message names the file and the line or key.
class InputError : public std::runtime_error {
 public:
  explicit InputError(const std::string& message) : std::runtime_error(message) {}
};

}  // namespace gbasim
