// gbasim calibrate: measures this machine for a spec and writes a platform file (cluster
// keys) on which the simulator runs the spec's ranks as gbasim-mpi runs them here.
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <thread>
#include <tuple>

#include "models/errors.h"
#include "models/gradient.h"
#include "models/optimizer.h"
#include "models/stats.h"
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
  return median(times);
}

// How long the scheduler lets a computation keep a core when more want one than there are
// cores: cores + 1 threads spin for 0.4 s reading the clock, a gap of over 50 us is a turn
// lost, and the median run between two gaps is the slice (0 when no turn was lost).
double measure_time_slice(int cores) {
  using Clock = std::chrono::steady_clock;
  std::vector<std::vector<double>> runs(static_cast<size_t>(cores + 1));
  std::vector<std::thread> threads;
  for (auto& mine : runs) {
    threads.emplace_back([&mine] {
      const auto start = Clock::now();
      auto last = start, since = start;
      while (last - start < std::chrono::milliseconds(400)) {
        const auto now = Clock::now();
        if (now - last > std::chrono::microseconds(50)) {
          if (since != start) mine.push_back(std::chrono::duration<double>(last - since).count());
          since = now;
        }
        last = now;
      }
    });
  }
  for (auto& t : threads) t.join();
  std::vector<double> all;
  for (const auto& r : runs) all.insert(all.end(), r.begin(), r.end());
  return all.empty() ? 0.0 : median(all);
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
  if (cores < 1) throw po::error("--cores must be at least 1");
  if (fit_runs < 1) throw po::error("--fit-runs must be at least 1");
  if (given_sync.empty() != given_async.empty())
    throw po::error("--real-sync-s and --real-async-s go together");
  for (double t : given_sync)
    if (!(t > 0.0)) throw po::error("--real-sync-s: run times must be positive");
  for (double t : given_async)
    if (!(t > 0.0)) throw po::error("--real-async-s: run times must be positive");
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
      median_seconds(50, [&] { model.forward_backward(params, batch, grad); });
  Optimizer optimizer(spec.optimizer, params);
  const double update_s = median_seconds(50, [&] { optimizer.apply(params, grad); });
  // Merging the gradients of a global batch (GBA's sum): M = G / b gradients of the spec.
  const int parts =
      std::max(1, static_cast<int>((spec.training.global_batch > 0
                                        ? spec.training.global_batch
                                        : spec.training.local_batch * spec.training.num_workers) /
                                   spec.training.local_batch));
  std::vector<Gradient> part_grads(static_cast<size_t>(parts));
  int64_t part_values = 0;
  for (auto& g : part_grads) {
    model.forward_backward(params, shard.next(spec.training.local_batch), g);
    part_values += g.dense.size();
    for (const auto& t : g.tables) part_values += static_cast<int64_t>(t.values.size());
  }
  const double merge_s = median_seconds(50, [&] {
    GradientSum sum;
    for (const auto& g : part_grads) sum.add(g);
    const Gradient merged = sum.take(1.0f);
  });
  int64_t values = grad.dense.size();
  for (const auto& t : grad.tables) values += static_cast<int64_t>(t.values.size());
  const double flops = model.flops_per_sample() * static_cast<double>(spec.training.local_batch);
  const double speed = flops / gradient_s;  // with cost.flops_scale = 1
  const double update_flops_per_value = speed * update_s / static_cast<double>(values);
  const double merge_flops_per_value = speed * merge_s / static_cast<double>(part_values);

  std::cerr << "gbasim calibrate: the scheduler's time slice on " << cores << " cores\n";
  const double time_slice = measure_time_slice(cores);

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
      {"network_model", "CM02"}, {"shared_cores", cores},      {"time_slice_s", time_slice},
      {"ps_one_queue", true},    {"ps_service_seed", 1}};
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
      {"time_slice_s", time_slice},
      {"platform", out_path},
      {"merge_s", merge_s},
      {"merged_gradients", parts},
      {"overrides",
       {"cost.flops_scale=1",
        "cost.update_flops_per_value=" + std::to_string(update_flops_per_value),
        "cost.merge_flops_per_value=" + std::to_string(merge_flops_per_value)}}};
  double server_push = 0.0;
  if (fit) {
    // Short straggler-free runs, real and simulated, of the spec as placed here. The real ones
    // take their snapshots as the spec says, as the runs compared with the simulator do.
    const std::string work = out_path + ".fit";
    fs::create_directories(work);
    std::vector<std::string> quiet_runs = overrides;
    for (const char* o : {"stragglers.persistent_fraction=0", "stragglers.noise_cv=0",
                          "stragglers.transient_rate_per_s=0", "stragglers.network_rate_per_s=0",
                          "stragglers.colocated_fraction=0", "stragglers.trace.format="})
      quiet_runs.emplace_back(o);
    auto sets = [&](const std::vector<std::string>& extra) {
      std::string text;
      for (const auto& o : quiet_runs) text += " --set '" + o + "'";
      for (const auto& o : extra) text += " --set '" + o + "'";
      return text;
    };
    auto run = [&](const std::string& command, const std::string& result, const char* key) {
      const int rc = std::system((command + " >/dev/null 2>'" + work + "/log.txt'").c_str());
      if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 0)
        throw InputError("calibration run failed (see " + work + "/log.txt): " + command);
      std::ifstream file(result);
      return nlohmann::json::parse(file)["summary"][key].get<double>();
    };
    auto real = [&](const std::string& mode) {
      const int ranks = spec.training.num_workers + (mode == "sync" ? 0 : 1);
      const std::string result = work + "/real-" + mode + ".json";
      return run("GBASIM_MPI='" + mpi.string() +
                     "' bash '" GBASIM_SOURCE_DIR "/scripts/mpirun.sh' " + std::to_string(ranks) +
                     " --spec '" + spec_path + "'" + sets({"training.mode=" + mode}) +
                     " -q --out '" + result + "'",
                 result, "run_time");
    };
    auto simulated = [&](const std::string& mode, double nic_latency, double push_flops) {
      nlohmann::ordered_json trial = platform;
      trial["nic_latency"] = nic_latency;
      write_json_atomically(work + "/platform.json", trial);
      const std::string result = work + "/sim-" + mode + ".json";
      std::string command = "'";
      command += exe.string();
      command += "' run --spec '";
      command += spec_path;
      command += "'";
      command += sets({"training.mode=" + mode,
                       "evaluation.interval_s=1000",  // costs no simulated time, only ours
                       "cluster.platform=" + fs::absolute(work + "/platform.json").string(),
                       "cost.flops_scale=1",
                       "cost.update_flops_per_value=" + std::to_string(update_flops_per_value),
                       "cost.merge_flops_per_value=" + std::to_string(merge_flops_per_value),
                       "cost.server_flops_per_push=" + std::to_string(push_flops)});
      command += " -q --out '";
      command += result;
      command += "'";
      return run(command, result, "simulated_time");
    };
    // Bisection in log space for the x where f(x) = target (f increasing).
    auto solve = [](double lo, double hi, double target, const std::function<double(double)>& f) {
      for (int i = 0; i < 14; ++i) {
        const double mid = std::sqrt(lo * hi);
        (f(mid) < target ? lo : hi) = mid;
      }
      return std::sqrt(lo * hi);
    };
    std::vector<double> sync_runs = given_sync, async_runs = given_async;
    if (sync_runs.empty()) {
      std::cerr << "gbasim calibrate: real sync and async runs with no stragglers (" << fit_runs
                << " of each, after one to warm up)\n";
      real("sync");  // the first run after a quiet spell is slower than the ones that follow
      for (int k = 0; k < fit_runs; ++k) {
        sync_runs.push_back(real("sync"));
        async_runs.push_back(real("async"));
      }
    }
    const double real_sync = median(sync_runs), real_async = median(async_runs);
    std::cerr << "gbasim calibrate: fitting the message latency to sync (" << real_sync << " s)\n";
    const double fitted_latency =
        solve(1e-8, 1e-1, real_sync, [&](double l) { return simulated("sync", l, 0.0); });
    std::cerr << "gbasim calibrate: fitting the server's work per push to async (" << real_async
              << " s)\n";
    const double per_value = speed * 1e-3;  // the bracket's scale: a millisecond of a core
    const double fitted_push = per_value * solve(1e-4, 1e3, real_async, [&](double u) {
                                 return simulated("async", fitted_latency, u * per_value);
                               });
    platform["nic_latency"] = fitted_latency;
    const double sim_sync = simulated("sync", fitted_latency, 0.0),
                 sim_async = simulated("async", fitted_latency, fitted_push);
    // At an end of the bracket the simulator cannot take the real time (for example a server
    // slower than the real one even with no work per push): say so rather than pretend.
    for (const auto& [mode, sim, real_s] :
         {std::tuple{"sync", sim_sync, real_sync}, std::tuple{"async", sim_async, real_async}}) {
      if (std::abs(sim - real_s) > 0.02 * real_s)
        std::cerr << "gbasim calibrate: warning: the fit cannot match real " << mode << ": " << sim
                  << " s simulated against " << real_s << " s real\n";
    }
    report["fit"] = {
        {"method",
         "bisection on the simulator: the spec's sync and async runs with no stragglers, "
         "real (gbasim-mpi) against simulated"},
        {"real_sync_s", real_sync},
        {"real_async_s", real_async},
        {"real_sync_runs_s", sync_runs},
        {"real_async_runs_s", async_runs},
        {"sim_sync_s", sim_sync},
        {"sim_async_s", sim_async},
        {"nic_latency_microbenchmark", latency / 2},
        {"nic_latency", fitted_latency},
        {"server_flops_per_push", fitted_push},
        {"server_seconds_per_push", fitted_push / speed}};
    report["overrides"].push_back("cost.server_flops_per_push=" + std::to_string(fitted_push));
    server_push = fitted_push;
    fs::remove_all(work);
  }
  write_json_atomically(out_path, platform);
  write_json_atomically(report_path, report);
  std::printf("gradient of a batch of %lld: %.3f ms (%.3g flop/s); optimizer update: %.3f ms\n",
              static_cast<long long>(spec.training.local_batch), gradient_s * 1e3, speed,
              update_s * 1e3);
  std::printf(
      "MPI between two ranks: latency %.2f us, bandwidth %.2f GB/s; %d cores shared, a "
      "computation keeps one for %.2f ms when others wait (0: never had to wait)\n",
      latency * 1e6, bandwidth / 1e9, cores, time_slice * 1e3);
  std::string settings;
  for (const auto& o : report["overrides"]) settings += " --set " + o.get<std::string>();
  std::printf("platform: %s\nreport: %s\nrun with: --set cluster.platform=%s%s\n", out_path.c_str(),
              report_path.c_str(), fs::absolute(out_path).c_str(), settings.c_str());
  if (report.contains("fit")) {
    std::printf(
        "fitted to real straggler-free runs: message latency %.3g s per link (ping-pong: "
        "%.3g); the server's work per push %.3g ms (--set cost.server_flops_per_push=%g)\n",
        platform["nic_latency"].get<double>(), latency / 2, server_push / speed * 1e3, server_push);
  }
  return 0;
}

}  // namespace gbasim
