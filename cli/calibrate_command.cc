// gbasim calibrate: measures this machine for a spec and writes a platform file (cluster
// keys) on which the simulator runs the spec's ranks as gbasim-mpi runs them here.
#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "base/files.h"
#include "cli/commands.h"
#include "experiment/result.h"
#include "mpi/calibration.h"

namespace gbasim {

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

// What the measurements and the fit found, and how to run with them.
void print_calibration(const nlohmann::json& platform, const nlohmann::json& report,
                       const std::string& out_path, const std::string& report_path, int cores) {
  std::printf("gradient of a batch of %lld: %.3f ms (%.3g flop/s); optimizer update: %.3f ms\n",
              static_cast<long long>(report["local_batch"].get<int64_t>()),
              report["gradient_s"].get<double>() * 1e3, platform["worker_speed"].get<double>(),
              report["update_s"].get<double>() * 1e3);
  const double latency = report["mpi_latency_s"].get<double>();
  std::printf(
      "MPI between two ranks: latency %.2f us, bandwidth %.2f GB/s; %d cores shared, a "
      "computation keeps one for %.2f ms when others wait (0: never had to wait)\n",
      latency * 1e6, report["mpi_bandwidth_bytes_per_s"].get<double>() / 1e9, cores,
      report["time_slice_s"].get<double>() * 1e3);
  std::string settings;
  for (const auto& o : report["overrides"]) settings += " --set " + o.get<std::string>();
  std::printf("platform: %s\nreport: %s\nrun with: --set cluster.platform=%s%s\n", out_path.c_str(),
              report_path.c_str(), fs::absolute(out_path).c_str(), settings.c_str());
  if (report.contains("fit")) {
    const auto& f = report["fit"];
    const double push = f["server_flops_per_push"].get<double>();
    std::printf(
        "fitted to real straggler-free runs: message latency %.3g s per link (ping-pong: "
        "%.3g); the server's work per push %.3g ms (--set cost.server_flops_per_push=%g)\n",
        f["nic_latency"].get<double>(), latency / 2,
        f["server_seconds_per_push"].get<double>() * 1e3, push);
  }
}

// --real-sync-s and --real-async-s: both or neither, positive numbers of seconds.
void check_given_times(const std::vector<double>& sync, const std::vector<double>& async) {
  if (sync.empty() != async.empty())
    throw po::error("--real-sync-s and --real-async-s go together");
  for (const auto& [times, option] :
       {std::pair{&sync, "--real-sync-s"}, {&async, "--real-async-s"}})
    for (double t : *times)
      if (!(t > 0.0) || !std::isfinite(t))
        throw po::error(std::string(option) + ": run times must be positive numbers of seconds");
}

}  // namespace

int run_calibrate(const std::vector<std::string>& args) {
  std::string spec_path, out_path = "out/calibrated-platform.json", report_path;
  std::vector<std::string> overrides;
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool fit = true;
  int fit_runs = 5;
  std::vector<double> given_sync, given_async;  // real run times measured elsewhere
  po::options_description desc(
      "gbasim calibrate --spec FILE [options]\n\n"
      "Measures this machine for the spec's model and batch: one local batch's gradient and\n"
      "one optimizer update and the merge of a global batch's gradients (medians of 50 runs,\n"
      "single-threaded), MPI's point-to-point latency and bandwidth between two gbasim-mpi\n"
      "ranks (scripts/mpirun.sh), and the scheduler's time slice (how long a computation\n"
      "keeps a core while others wait). Writes a platform file (cluster keys; name it in a\n"
      "spec's cluster.platform) that places every rank on one machine of this many cores,\n"
      "taken a slice at a time as real ranks take them, with a server that serves admissions\n"
      "and pushes in one queue as gbasim-mpi's does, and a report with the measurements and\n"
      "the cost settings to run with it:\n"
      "  --set cost.flops_scale=1 --set cost.update_flops_per_value=<reported>\n"
      "Then (unless --no-fit) it runs the spec for real with no stragglers, in sync and in\n"
      "async, taking snapshots as the spec says (one run to warm the machine up, then\n"
      "--fit-runs runs of each, alternating; their medians; or the run times given with\n"
      "--real-sync-s and --real-async-s), and fits two numbers by bisection on the\n"
      "simulator: the message latency, so that simulated sync takes the real time, and the\n"
      "server's work per push, so that simulated async does. What is left to predict is\n"
      "everything else: "
      "stragglers, other modes, other budgets.\n\nOptions");
  desc.add_options()("help,h", "show this help")("spec", po::value(&spec_path)->value_name("FILE"),
                                                 "experiment spec")(
      "set", po::value(&overrides)->composing()->value_name("KEY=VALUE"), "override a spec key")(
      "out", po::value(&out_path)->default_value(out_path), "the platform file to write")(
      "report", po::value(&report_path)->value_name("FILE"),
      "the measurements and cost settings (default: the platform file's name + .report.json)")(
      "cores", po::value(&cores)->default_value(cores), "cores the ranks share")(
      "fit-runs", po::value(&fit_runs)->default_value(fit_runs)->value_name("K"),
      "real runs of each mode whose median the fit aims at")(
      "real-sync-s", po::value(&given_sync)->multitoken()->value_name("S..."),
      "fit to these run times of the spec's straggler-free sync, measured already (with "
      "--real-async-s; no real runs then): scripts/sim_vs_real.sh measures them between "
      "the runs it compares, so that both see the machine in the same state")(
      "real-async-s", po::value(&given_async)->multitoken()->value_name("S..."),
      "the same for async")(
      "no-fit",
      "only the microbenchmarks: skip fitting the message latency and the update cost "
      "to short real runs");
  po::variables_map vm;
  if (!parse_options(args, desc, vm)) return 0;
  fit = !vm.count("no-fit");
  if (spec_path.empty()) throw po::error("--spec FILE is required");
  const int machine = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  if (cores < 1 || cores > machine)
    throw po::error("--cores must lie in [1, " + std::to_string(machine) +
                    "], this machine's hardware threads, which the measurements use");
  if (fit_runs < 1 || fit_runs > 1000) throw po::error("--fit-runs must lie in [1, 1000]");
  check_given_times(given_sync, given_async);
  if (report_path.empty())
    report_path = fs::path(out_path).replace_extension(".report.json").string();
  check_output_file(out_path, "platform");
  check_output_file(report_path, "report");
  const fs::path bin = fs::read_symlink("/proc/self/exe").parent_path();  // gbasim-mpi is beside us
  const CalibrationRequest request{spec_path,
                                   overrides,
                                   out_path,
                                   cores,
                                   fit,
                                   fit_runs,
                                   given_sync,
                                   given_async,
                                   (bin / "gbasim").string(),
                                   (bin / "gbasim-mpi").string()};
  const auto [platform, report] = calibrate(request);
  write_json_atomically(out_path, platform);
  write_json_atomically(report_path, report);
  print_calibration(platform, report, out_path, report_path, cores);
  return 0;
}

}  // namespace gbasim
