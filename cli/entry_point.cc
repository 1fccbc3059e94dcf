#include "cli/entry_point.h"

#include <boost/program_options/errors.hpp>
#include <filesystem>
#include <iostream>
#include <nlohmann/json.hpp>

#include "base/error.h"

namespace gbasim {

int run_guarded(const std::string& who, const std::function<int()>& body, std::string* message) {
  auto report = [&](const std::string& what, int code) {
    const std::string line = who + ": " + what;
    if (message != nullptr) {
      *message = line;
    } else {
      std::cerr << line << '\n';
    }
    return code;
  };
  try {
    return body();
  } catch (const InputError& e) {
    return report(std::string("error: ") + e.what(), 2);
  } catch (const boost::program_options::error& e) {
    return report(std::string("error: ") + e.what() + "\n(see '" + who + " --help')", 2);
  } catch (const nlohmann::json::exception& e) {
    return report(std::string("error: ") + e.what(), 2);
  } catch (const std::filesystem::filesystem_error& e) {  // a path of the user's: it names it
    return report(std::string("error: ") + e.what(), 2);
  } catch (const std::exception& e) {
    return report(std::string("internal error (a defect of gbasim, please report it): ") + e.what(),
                  70);
  }
}

}  // namespace gbasim
