// gbasim collective: one collective at a few sizes on a spec's cluster, timed as nccl-tests
// time NCCL's (docs/cluster.md, "Collectives").
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <sstream>

#include "base/error.h"
#include "base/files.h"
#include "cli/commands.h"
#include "cli/engine_args.h"
#include "experiment/result.h"
#include "sim/collective_timing.h"

namespace gbasim {

namespace po = boost::program_options;

namespace {

// "1M,16M,1e3": sizes in bytes, with K, M or G (powers of 1024, as nccl-tests read them).
std::vector<double> parse_sizes(const std::string& text) {
  std::vector<double> sizes;
  if (!text.empty() &&
      (text.back() == ',' || text.front() == ',' || text.find(",,") != std::string::npos))
    throw po::error("--sizes: '" + text + "' has an empty item");
  std::stringstream list(text);
  for (std::string item; std::getline(list, item, ',');) {
    double scale = 1.0;
    std::string number = item;
    if (!item.empty()) {
      const char unit = item.back();
      if (unit == 'K' || unit == 'k') scale = 1024.0;
      if (unit == 'M' || unit == 'm') scale = 1024.0 * 1024.0;
      if (unit == 'G' || unit == 'g') scale = 1024.0 * 1024.0 * 1024.0;
      if (scale > 1.0) number.pop_back();
    }
    size_t used = 0;
    double value = 0.0;
    try {
      value = std::stod(number, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    // Decimal only (std::stod would take hexadecimal and leading spaces), a whole byte count.
    const bool decimal = number.find_first_not_of("0123456789.eE+-") == std::string::npos;
    if (!decimal || used == 0 || used != number.size() || !std::isfinite(value) ||
        !(value * scale >= 1.0) || value * scale > 1e12 ||
        value * scale != std::floor(value * scale)) {
      throw po::error("--sizes: '" + item +
                      "' is not a whole number of bytes from 1 to 1e12 (a decimal number, with "
                      "K, M or G)");
    }
    sizes.push_back(value * scale);
  }
  if (sizes.empty()) throw po::error("--sizes: give at least one size");
  return sizes;
}

}  // namespace

int run_collective(int argc, char** argv) {
  EngineArgs started = start_engine(argc, argv);
  std::string spec_path, out_path, op_name = "allreduce", sizes_text = "1K,64K,1M,16M,128M";
  std::vector<std::string> overrides;
  po::options_description desc(
      "gbasim collective --spec FILE [options]\n\n"
      "Times one collective on the spec's cluster (training.workers ranks, one a worker host;\n"
      "the all-reduce's cluster.allreduce and cluster.ring_model), at each size, as NVIDIA's\n"
      "nccl-tests time NCCL's. Prints size, time, algorithm bandwidth (size / time), bus\n"
      "bandwidth (algorithm bandwidth x 2(n - 1) / n for an all-reduce, (n - 1) / n for the\n"
      "others) and the algorithm modelled (with cluster.allreduce \"nccl\", the algorithm and\n"
      "protocol NCCL's tuner picks, e.g. tree/LL128). SimGrid's --cfg=key:value and --log=... "
      "arguments are accepted too.\n\nOptions");
  desc.add_options()("help,h", "show this help")(
      "spec", po::value(&spec_path)->value_name("FILE"),
      "experiment spec (JSON; its cluster section is read, docs/spec.md)")(
      "set", po::value(&overrides)->composing()->value_name("KEY=VALUE"),
      "override a spec key, e.g. --set cluster.allreduce=hierarchical (repeatable)")(
      "op", po::value(&op_name)->value_name("NAME"),
      "allreduce (default), allgather or reducescatter (on the ring of every worker, or "
      "NCCL's ring with cluster.allreduce \"nccl\") or alltoall (every pair at once; inside a "
      "node at NCCL's NVLink rate with \"nccl\")")(
      "sizes", po::value(&sizes_text)->value_name("LIST"),
      "whole sizes in bytes, comma-separated, with K, M, G for powers of 1024: a rank's buffer "
      "(allreduce, alltoall, reducescatter) or the gathered buffer (allgather); default "
      "1K,64K,1M,16M,128M")(
      "out", po::value(&out_path)->value_name("FILE"),
      "also write the table as JSON (with /dev/stdout, the table itself goes to "
      "standard error)");
  po::variables_map vm;
  if (!parse_options(started.args, desc, vm)) return 0;
  if (spec_path.empty()) throw po::error("--spec FILE is required");
  if (!out_path.empty()) check_output_file(out_path, "JSON");
  CollectiveOp op;
  try {
    op = parse_collective(op_name);
  } catch (const InputError& e) {
    throw po::error(std::string("--op ") + e.what());
  }
  const std::vector<double> sizes = parse_sizes(sizes_text);
  const ExperimentSpec spec = load_spec(spec_path, overrides);
  if (spec.training.num_workers < 2) {
    throw InputError(spec_path, "training.workers",
                     "is " + std::to_string(spec.training.num_workers) +
                         ": a collective needs at least 2 workers");
  }

  const std::vector<CollectiveTiming> timings = time_collectives(spec, op, sizes);
  const int n = spec.training.num_workers;
  const double factor = bus_factor(op, n);
  std::FILE* const to = out_path.empty() ? stdout : table_stream(out_path);
  std::fprintf(to, "# %s on %d ranks (%s, %s ring model, %d per node)\n",
               collective_name(op).c_str(), n, allreduce_name(spec.cluster.allreduce).c_str(),
               ring_model_name(spec.cluster.ring_model).c_str(),
               spec.cluster.gpu_node.gpus_per_node);
  std::fprintf(to, "%14s %14s %14s %14s  %s\n", "size (B)", "time (us)", "algbw (GB/s)",
               "busbw (GB/s)", "algorithm");
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  for (const CollectiveTiming& t : timings) {
    const double algbw = t.bytes / t.time_s / 1e9;
    std::fprintf(to, "%14.0f %14.2f %14.3f %14.3f  %s\n", t.bytes, t.time_s * 1e6, algbw,
                 algbw * factor, t.algorithm.c_str());
    rows.push_back({{"bytes", t.bytes},
                    {"time_s", t.time_s},
                    {"algbw_gb_s", algbw},
                    {"busbw_gb_s", algbw * factor},
                    {"algorithm", t.algorithm}});
  }
  if (!out_path.empty()) {
    nlohmann::ordered_json doc = {{"op", collective_name(op)},
                                  {"ranks", n},
                                  {"allreduce", allreduce_name(spec.cluster.allreduce)},
                                  {"ring_model", ring_model_name(spec.cluster.ring_model)},
                                  {"spec", spec_to_json(spec)["cluster"]},
                                  {"timings", rows}};
    write_json_atomically(out_path, doc);
  }
  return 0;
}

}  // namespace gbasim
