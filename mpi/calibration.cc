#include "mpi/calibration.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <functional>
#include <iostream>
#include <thread>
#include <tuple>

#include "base/clock.h"
#include "base/error.h"
#include "base/stats.h"
#include "experiment/result.h"
#include "experiment/spec.h"
#include "models/gradient.h"
#include "models/optimizer.h"

namespace gbasim {

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

Calibration calibrate(const CalibrationRequest& request) {
  const std::string& spec_path = request.spec_path;
  const std::vector<std::string>& overrides = request.overrides;
  const std::string& out_path = request.out_path;
  const int cores = request.cores, fit_runs = request.fit_runs;
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
  const std::string pingpong = out_path + ".pingpong.tmp";
  const std::string command =
      "GBASIM_MPI='" + request.gbasim_mpi_exe +
      "' bash '" GBASIM_MPIRUN "' 2 --pingpong --out '" + pingpong + "'";
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
      {"server_model", "one_queue"}, {"ps_service_seed", 1}};
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
  if (request.fit) {
    // Short straggler-free runs, real and simulated, of the spec as placed here. The real ones
    // take their snapshots as the spec says, as the runs compared with the simulator do.
    const std::string work = out_path + ".fit";
    fs::create_directories(work);
    std::vector<std::string> straggler_free = overrides;
    for (const char* o : {"stragglers.persistent_fraction=0", "stragglers.noise_cv=0",
                          "stragglers.transient_rate_per_s=0", "stragglers.network_rate_per_s=0",
                          "stragglers.colocated_fraction=0", "stragglers.trace.format=",
                          "stragglers.trace.path="})
      straggler_free.emplace_back(o);
    auto sets = [&](const std::vector<std::string>& extra) {
      std::string text;
      for (const auto& o : straggler_free) text += " --set '" + o + "'";
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
      return run("GBASIM_MPI='" + request.gbasim_mpi_exe + "' bash '" GBASIM_MPIRUN "' " +
                     std::to_string(ranks) +
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
      command += request.gbasim_exe;
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
    std::vector<double> sync_runs = request.given_sync_s, async_runs = request.given_async_s;
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
    fs::remove_all(work);
  }
  return {platform, report};
}

}  // namespace gbasim
