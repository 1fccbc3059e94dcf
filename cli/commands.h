// The gbasim subcommands. Each takes the arguments after its name and returns the exit code.
#pragma once

#include <boost/program_options.hpp>
#include <functional>
#include <string>
#include <vector>

namespace gbasim {

int run_train(const std::vector<std::string>& args);
int run_data(const std::vector<std::string>& args);
int run_trace_stats(const std::vector<std::string>& args);
int run_sweep(const std::vector<std::string>& args);
int run_tune(const std::vector<std::string>& args);
int run_compare(const std::vector<std::string>& args);
int run_whatif(const std::vector<std::string>& args);
int run_map(const std::vector<std::string>& args);
int run_calibrate(const std::vector<std::string>& args);
// Takes the raw arguments after "run": SimGrid removes its own --cfg= and --log= ones.
int run_run(int argc, char** argv);
int run_collective(int argc, char** argv);
int run_workload(int argc, char** argv);

// Parses `args` against `desc` into `vm`; on --help prints `desc` and returns false.
bool parse_options(const std::vector<std::string>& args,
                   const boost::program_options::options_description& desc,
                   boost::program_options::variables_map& vm);

// Parses a comma-separated list of positive integers ("128,64"); `option` names the
// option in the error.
std::vector<int> parse_widths(const std::string& text, const std::string& option);

// Parses a comma-separated list of names, each named once and each passing `check` (which
// throws InputError); `option` names the option in the error.
std::vector<std::string> parse_name_list(const std::string& text, const std::string& option,
                                         const std::function<void(const std::string&)>& check);

// Parses a comma-separated list of modes ("sync,gba"), each named once; `option` names the
// option in the error.
std::vector<std::string> parse_mode_list(const std::string& text, const std::string& option);

}  // namespace gbasim
