// gbasim trace-stats: what a simulated worker replaying a trace will see.
#include <cmath>
#include <boost/algorithm/string/split.hpp>
#include <boost/program_options.hpp>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "base/error.h"
#include "base/files.h"
#include "cli/commands.h"
#include "experiment/result.h"
#include "experiment/trace_report.h"
#include "traces/usage_trace.h"

namespace gbasim {

namespace po = boost::program_options;

namespace {

// "pai" or "generic" from a header line; "" when the file has neither header.
std::string detect_format(const std::string& path) {
  std::ifstream in = open_input(path, "trace");
  std::string header;
  std::getline(in, header);
  if (header.find("batch_time_norm") != std::string::npos) return "pai";
  if (header.find("speed_factor") != std::string::npos) return "generic";
  return "";
}

}  // namespace

int run_trace_stats(const std::vector<std::string>& args) {
  std::string path, json_path, format = "auto", machine_list;
  double threshold = 1.5;
  UsageMapping mapping;
  po::options_description desc(
      "gbasim trace-stats FILE [options]\n\n"
      "What simulated workers replaying a trace will see. A PAI mini-batch-time trace: per-worker\n"
      "slowdowns (time over the median worker's at the same iteration). A machine-usage trace\n"
      "(Alibaba 2018 machine_usage, 2017 server_usage, generic host,time,speed_factor[,\n"
      "bandwidth_factor]): per-machine slowdowns (1 / the speed left by co-located load) and\n"
      "bandwidth factors over time. Both: their spread across workers and the slow episodes.\n\n"
      "Options");
  desc.add_options()("help,h", "show this help")("trace", po::value(&path)->value_name("FILE"),
                                                 "the trace (CSV)")(
      "format", po::value(&format)->default_value(format),
      "auto (pai or generic, from the header), pai, alibaba-v2018, alibaba-v2017 or generic; the "
      "Alibaba files have no header, so name their format")(
      "machines", po::value(&machine_list)->value_name("ID,ID,..."),
      "usage traces: only these machines (a full Alibaba file has thousands)")(
      "threshold", po::value(&threshold)->default_value(threshold),
      "an episode is a run of consecutive samples at or above this slowdown")(
      "load-share", po::value(&mapping.load_share)->default_value(mapping.load_share),
      "usage traces: speed = max(min-speed, 1 - load-share x cpu_util / 100)")(
      "min-speed", po::value(&mapping.min_speed)->default_value(mapping.min_speed),
      "usage traces: the least speed factor")(
      "net-share", po::value(&mapping.net_share)->default_value(mapping.net_share),
      "usage traces: bandwidth = max(min-bandwidth, 1 - net-share x max(net_in, net_out) / 100)")(
      "min-bandwidth", po::value(&mapping.min_bandwidth)->default_value(mapping.min_bandwidth),
      "usage traces: the least bandwidth factor")(
      "json", po::value(&json_path)->value_name("FILE"),
      "also write the statistics, and every worker's or machine's series, as JSON (plot it with "
      "scripts/plot_trace.py)");
  po::positional_options_description positional;
  positional.add("trace", 1);
  po::variables_map vm;
  po::store(po::command_line_parser(args).options(desc).positional(positional).run(), vm);
  if (vm.count("help")) {
    std::cout << desc << '\n';
    return 0;
  }
  po::notify(vm);
  if (path.empty()) throw po::error("a trace FILE is required");
  if (!json_path.empty()) check_output_file(json_path, "JSON");
  if (format == "auto") {
    format = detect_format(path);
    if (format.empty()) {
      throw InputError(path +
                       ": line 1 is neither a PAI header (batch_time_norm) nor a generic one "
                       "(speed_factor); give --format alibaba-v2018 or alibaba-v2017 for a "
                       "headerless Alibaba file");
    }
  }
  if (format != "pai" && !is_usage_format(format))
    throw po::error("--format must be auto, pai, alibaba-v2018, alibaba-v2017 or generic, not '" +
                    format + "'");
  if (!(mapping.min_speed > 0.0 && mapping.min_speed <= 1.0))
    throw po::error("--min-speed must lie in (0, 1]");
  if (!(mapping.min_bandwidth > 0.0 && mapping.min_bandwidth <= 1.0))
    throw po::error("--min-bandwidth must lie in (0, 1]");
  if (!(mapping.load_share >= 0.0 && std::isfinite(mapping.load_share)))
    throw po::error("--load-share must be a number, not negative");
  if (!(mapping.net_share >= 0.0 && std::isfinite(mapping.net_share)))
    throw po::error("--net-share must be a number, not negative");
  if (!(threshold >= 1.0 && std::isfinite(threshold)))
    throw po::error("--threshold must be a slowdown of at least 1 (a finite number)");
  if (format != "pai") {
    std::vector<std::string> machines;
    if (!machine_list.empty())
      boost::split(machines, machine_list, [](char ch) { return ch == ','; });
    report_usage_trace(path, format, mapping, machines, threshold, json_path);
    return 0;
  }

  report_pai_trace(path, threshold, json_path);
  return 0;
}

}  // namespace gbasim
