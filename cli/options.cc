// Command-line helpers shared by the gbasim commands and gbasim-mpi.
#include <algorithm>
#include <boost/program_options.hpp>
#include <functional>
#include <iostream>
#include <sstream>

#include "base/error.h"
#include "cli/commands.h"
#include "strategies/update_rule.h"

namespace gbasim {

namespace po = boost::program_options;

bool parse_options(const std::vector<std::string>& args, const po::options_description& desc,
                   po::variables_map& vm) {
  const po::parsed_options parsed = po::command_line_parser(args).options(desc).run();
  for (const std::string& stray : po::collect_unrecognized(parsed.options, po::include_positional))
    throw InputError("unexpected argument '" + stray + "' (options start with --)");
  // An empty value ("--out ''") is a mistake of the shell or a script, never a choice.
  for (const po::option& o : parsed.options) {
    for (const std::string& text : o.value)
      if (text.empty()) throw InputError("--" + o.string_key + " needs a value, got an empty one");
  }
  // Boost reads "-1" for an unsigned option as 2^64 - 1.
  for (const po::option& o : parsed.options) {
    const po::option_description* d = desc.find_nothrow(o.string_key, false);
    if (d == nullptr || !dynamic_cast<const po::typed_value<uint64_t>*>(d->semantic().get()))
      continue;
    for (const std::string& text : o.value) {
      if (!text.empty() && text[0] == '-')
        throw InputError("--" + o.string_key + " must not be negative, got '" + text + "'");
    }
  }
  po::store(parsed, vm);
  if (vm.count("help")) {
    std::cout << desc << '\n';
    return false;
  }
  po::notify(vm);
  return true;
}

std::vector<int> parse_widths(const std::string& text, const std::string& option) {
  std::vector<int> widths;
  std::stringstream in(text);
  std::string item;
  while (std::getline(in, item, ',')) {
    size_t used = 0;
    int width = 0;
    try {
      width = std::stoi(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != item.size() || used == 0 || width < 1) {
      throw InputError("--" + option +
                       " must be a comma-separated list of positive integers, got '" + text + "'");
    }
    widths.push_back(width);
  }
  return widths;
}

std::vector<std::string> parse_name_list(const std::string& text, const std::string& option,
                                         const std::function<void(const std::string&)>& check) {
  if (text.empty() || text.front() == ',' || text.back() == ',' ||
      text.find(",,") != std::string::npos)
    throw po::error(option + ": '" + text + "' has an empty item");
  std::vector<std::string> names;
  std::stringstream in(text);
  for (std::string name; std::getline(in, name, ',');) {
    try {
      check(name);
    } catch (const InputError& e) {
      throw po::error(option + ": an item " + e.what());
    }
    if (std::find(names.begin(), names.end(), name) != names.end())
      throw po::error(option + ": '" + name + "' is named twice");
    names.push_back(name);
  }
  return names;
}

std::vector<std::string> parse_mode_list(const std::string& text, const std::string& option) {
  return parse_name_list(text, option, [](const std::string& m) { parse_mode(m); });
}

}  // namespace gbasim
