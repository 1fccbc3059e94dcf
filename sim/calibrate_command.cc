// gbasim calibrate: measures this machine for a spec and writes a platform file (cluster
// keys) on which the simulator runs the spec's ranks as gbasim-mpi runs them here.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <thread>

#include "models/errors.h"
#include "models/optimizer.h"
#include "sim/commands.h"
#include "sim/output.h"
#include "spec/spec.h"

namespace gbasim {

namespace po = boost::program_options;
namespace fs = std::filesystem;

namespace {

// The median of `reps` timings of `f`, after two runs to warm up.
template <class F>
double median_seconds(int reps, F f) {
  f();
  f();
  std::vector<double> times;
  for (int r = 0; r < reps; ++r) {
    const auto start = std::chrono::steady_clock::now();
    f();
    times.push_back(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
  }
  std::sort(times.begin(), times.end());
  return times[times.size() / 2];
}

}  // namespace

int run_calibrate(const std::vector<std::string>& args) {
  std::string spec_path, out_path = "out/calibrated-platform.json", report_path;
  std::vector<std::string> overrides;
  int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  po::options_description desc(
      "gbasim calibrate --spec FILE [options]\n\n"
      "Measures this machine for the spec's model and batch: one local batch's gradient and\n"
      "one optimizer update (medians of 20 runs, single-threaded), and MPI's point-to-point\n"
      "latency and bandwidth between two gbasim-mpi ranks (scripts/mpirun.sh). Writes a\n"
      "platform file (cluster keys; name it in a spec's cluster.platform) that places every\n"
      "rank on one machine of this many cores, sharing them as real ranks do, and a report\n"
      "with the measurements and the cost settings to run with it:\n"
      "  --set cost.flops_scale=1 --set cost.update_flops_per_value=<reported>\n\nOptions");
  desc.add_options()("help,h", "show this help")("spec", po::value(&spec_path)->value_name("FILE"),
                                                 "experiment spec")(
      "set", po::value(&overrides)->composing()->value_name("KEY=VALUE"), "override a spec key")(
      "out", po::value(&out_path)->default_value(out_path), "the platform file to write")(
      "report", po::value(&report_path)->value_name("FILE"),
      "the measurements and cost settings (default: the platform file's name + .report.json)")(
      "cores", po::value(&cores)->default_value(cores), "cores the ranks share");
  po::variables_map vm;
  if (!parse_options(args, desc, vm)) return 0;
  if (spec_path.empty()) throw po::error("--spec FILE is required");
  if (cores < 1) throw po::error("--cores must be at least 1");
  if (report_path.empty())
    report_path = fs::path(out_path).replace_extension(".report.json").string();
  const ExperimentSpec spec = load_spec(spec_path, overrides);

  std::cerr << "gbasim calibrate: timing the model (" << model_name(spec.model.kind) << ", batch "
            << spec.training.local_batch << ")\n";
  LoadedData data = load_data(spec.data);
  const Model model(spec.model, data.train.cardinalities, data.train.num_dense);
  Parameters params = model.init_parameters(spec.seed);
  ShardIterator shard(data.train, 0, 1, spec.seed);
  const Batch batch = shard.next(spec.training.local_batch);
  Gradient grad;
  const double gradient_s =
      median_seconds(20, [&] { model.forward_backward(params, batch, grad); });
  Optimizer optimizer(spec.optimizer, params);
  const double update_s = median_seconds(20, [&] { optimizer.apply(params, grad); });
  int64_t values = grad.dense.size();
  for (const auto& t : grad.tables) values += static_cast<int64_t>(t.values.size());
  const double flops = model.flops_per_sample() * static_cast<double>(spec.training.local_batch);
  const double speed = flops / gradient_s;  // with cost.flops_scale = 1
  const double update_flops_per_value = speed * update_s / static_cast<double>(values);

  std::cerr << "gbasim calibrate: MPI ping-pong between two ranks\n";
  const fs::path exe = fs::read_symlink("/proc/self/exe");
  const fs::path mpi = exe.parent_path().parent_path() / "hw" / "gbasim-mpi";
  const std::string pingpong = out_path + ".pingpong.tmp";
  const std::string command =
      "GBASIM_MPI='" + mpi.string() +
      "' bash '" GBASIM_SOURCE_DIR "/scripts/mpirun.sh' 2 --pingpong --out '" + pingpong + "'";
  const int status = std::system(command.c_str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw InputError("the MPI ping-pong failed (" + command + ")");
  std::ifstream in(pingpong);
  const nlohmann::json link = nlohmann::json::parse(in);
  fs::remove(pingpong);
  const double latency = link["latency_s"].get<double>(),
               bandwidth = link["bandwidth_bytes_per_s"].get<double>();

  // A message crosses the sender's link and the receiver's: each takes half the latency.
  nlohmann::ordered_json platform = {
      {"ps_shards", 1},          {"worker_speed", speed},      {"ps_speed", speed},
      {"ps_cores", 1},           {"nic_bandwidth", bandwidth}, {"nic_latency", latency / 2},
      {"network_model", "CM02"}, {"shared_cores", cores}};
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  nlohmann::ordered_json report = {
      {"machine", host},
      {"spec", spec_path},
      {"model", model_name(spec.model.kind)},
      {"local_batch", spec.training.local_batch},
      {"gradient_s", gradient_s},
      {"update_s", update_s},
      {"updated_values", values},
      {"flops_per_sample", model.flops_per_sample()},
      {"mpi_latency_s", latency},
      {"mpi_bandwidth_bytes_per_s", bandwidth},
      {"cores", cores},
      {"platform", out_path},
      {"overrides",
       {"cost.flops_scale=1",
        "cost.update_flops_per_value=" + std::to_string(update_flops_per_value)}}};
  write_json_atomically(out_path, platform);
  write_json_atomically(report_path, report);
  std::printf("gradient of a batch of %lld: %.3f ms (%.3g flop/s); optimizer update: %.3f ms\n",
              static_cast<long long>(spec.training.local_batch), gradient_s * 1e3, speed,
              update_s * 1e3);
  std::printf("MPI between two ranks: latency %.2f us, bandwidth %.2f GB/s; %d cores shared\n",
              latency * 1e6, bandwidth / 1e9, cores);
  std::printf(
      "platform: %s\nreport: %s\nrun with: --set cluster.platform=%s --set cost.flops_scale=1 "
      "--set cost.update_flops_per_value=%g\n",
      out_path.c_str(), report_path.c_str(), fs::absolute(out_path).c_str(),
      update_flops_per_value);
  return 0;
}

}  // namespace gbasim
