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

// The model's costs on this machine: a gradient, an update and a global batch's merge, and
// what they make of the simulator's flop rates.
struct ModelTimings {
  double gradient_s = 0.0, update_s = 0.0, merge_s = 0.0;
  int64_t values = 0;  // a gradient's values (the update's work)
  int parts = 1;       // the gradients a global batch merges
  double flops_per_sample = 0.0;
  double speed = 0.0;  // flop/s, with cost.flops_scale = 1
  double update_flops_per_value = 0.0, merge_flops_per_value = 0.0;
};

int64_t values_of(const Gradient& g) {
  int64_t n = g.dense.size();
  for (const auto& t : g.tables) n += static_cast<int64_t>(t.values.size());
  return n;
}

ModelTimings time_model(const ExperimentSpec& spec) {
  std::cerr << "gbasim calibrate: timing the model (" << model_name(spec.model.kind) << ", batch "
            << spec.training.local_batch << ")\n";
  LoadedData data = load_data(spec.data);
  const Model model(spec.model, data.train.cardinalities, data.train.num_dense);
  Parameters params = model.init_parameters(spec.seed);
  ShardIterator shard(data.train, 0, 1, spec.seed);
  const Batch batch = shard.next(spec.training.local_batch);
  Gradient grad;
  ModelTimings t;
  t.gradient_s = median_seconds(50, [&] { model.forward_backward(params, batch, grad); });
  Optimizer optimizer(spec.optimizer, params);
  t.update_s = median_seconds(50, [&] { optimizer.apply(params, grad); });
  // Merging the gradients of a global batch (GBA's sum): M = G / b gradients of the spec.
  t.parts =
      std::max(1, static_cast<int>((spec.training.global_batch > 0
                                        ? spec.training.global_batch
                                        : spec.training.local_batch * spec.training.num_workers) /
                                   spec.training.local_batch));
  std::vector<Gradient> part_grads(static_cast<size_t>(t.parts));
  int64_t part_values = 0;
  for (auto& g : part_grads) {
    model.forward_backward(params, shard.next(spec.training.local_batch), g);
    part_values += values_of(g);
  }
  t.merge_s = median_seconds(50, [&] {
    GradientSum sum;
    for (const auto& g : part_grads) sum.add(g);
    const Gradient merged = sum.take(1.0f);
  });
  t.values = values_of(grad);
  t.flops_per_sample = model.flops_per_sample();
  const double flops = t.flops_per_sample * static_cast<double>(spec.training.local_batch);
  t.speed = flops / t.gradient_s;
  t.update_flops_per_value = t.speed * t.update_s / static_cast<double>(t.values);
  t.merge_flops_per_value = t.speed * t.merge_s / static_cast<double>(part_values);
  return t;
}

// gbasim-mpi's ping-pong between two ranks: the one-way latency and the bandwidth.
std::pair<double, double> mpi_pingpong(const CalibrationRequest& request) {
  std::cerr << "gbasim calibrate: MPI ping-pong between two ranks\n";
  const std::string pingpong = request.out_path + ".pingpong.tmp";
  const std::string command = "GBASIM_MPI='" + request.gbasim_mpi_exe +
                              "' bash '" GBASIM_MPIRUN "' 2 --pingpong --out '" + pingpong + "'";
  const int status = std::system(command.c_str());
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw InputError("the MPI ping-pong failed (" + command + ")");
  std::ifstream in(pingpong);
  const nlohmann::json link = nlohmann::json::parse(in);
  fs::remove(pingpong);
  return {link["latency_s"].get<double>(), link["bandwidth_bytes_per_s"].get<double>()};
}

// Bisection in log space for the x where f(x) = target (f increasing).
double bisect(double lo, double hi, double target, const std::function<double(double)>& f) {
  for (int i = 0; i < 14; ++i) {
    const double mid = std::sqrt(lo * hi);
    (f(mid) < target ? lo : hi) = mid;
  }
  return std::sqrt(lo * hi);
}

// The fit of the message latency and the server's work per push: short straggler-free runs,
// real (gbasim-mpi) and simulated, of the spec as placed here. The real ones take their
// snapshots as the spec says, as the runs compared with the simulator do.
class Fit {
 public:
  Fit(const CalibrationRequest& request, const ExperimentSpec& spec, const ModelTimings& t,
      const nlohmann::ordered_json& platform)
      : request_(request),
        spec_(spec),
        t_(t),
        platform_(platform),
        work_(request.out_path + ".fit") {
    straggler_free_ = request.overrides;
    for (const char* o :
         {"stragglers.persistent_fraction=0", "stragglers.noise_cv=0",
          "stragglers.transient_rate_per_s=0", "stragglers.network_rate_per_s=0",
          "stragglers.colocated_fraction=0", "stragglers.trace.format=", "stragglers.trace.path="})
      straggler_free_.emplace_back(o);
  }

  // Fits both and returns the report's "fit"; the platform's nic_latency and the override
  // of cost.server_flops_per_push are set to the fitted values.
  nlohmann::ordered_json run(double microbenchmark_latency, nlohmann::ordered_json& platform,
                             nlohmann::ordered_json& overrides) {
    fs::create_directories(work_);
    std::vector<double> sync_runs = request_.given_sync_s, async_runs = request_.given_async_s;
    if (sync_runs.empty()) {
      std::cerr << "gbasim calibrate: real sync and async runs with no stragglers ("
                << request_.fit_runs << " of each, after one to warm up)\n";
      real("sync");  // the first run after a quiet spell is slower than the ones that follow
      for (int k = 0; k < request_.fit_runs; ++k) {
        sync_runs.push_back(real("sync"));
        async_runs.push_back(real("async"));
      }
    }
    const double real_sync = median(sync_runs), real_async = median(async_runs);
    std::cerr << "gbasim calibrate: fitting the message latency to sync (" << real_sync << " s)\n";
    const double latency =
        bisect(1e-8, 1e-1, real_sync, [&](double l) { return simulated("sync", l, 0.0); });
    std::cerr << "gbasim calibrate: fitting the server's work per push to async (" << real_async
              << " s)\n";
    const double per_value = t_.speed * 1e-3;  // the bracket's scale: a millisecond of a core
    const double push = per_value * bisect(1e-4, 1e3, real_async, [&](double u) {
                          return simulated("async", latency, u * per_value);
                        });
    platform["nic_latency"] = latency;
    const double sim_sync = simulated("sync", latency, 0.0),
                 sim_async = simulated("async", latency, push);
    // At an end of the bracket the simulator cannot take the real time (for example a server
    // slower than the real one even with no work per push): say so rather than pretend.
    for (const auto& [mode, sim, real_s] :
         {std::tuple{"sync", sim_sync, real_sync}, std::tuple{"async", sim_async, real_async}}) {
      if (std::abs(sim - real_s) > 0.02 * real_s)
        std::cerr << "gbasim calibrate: warning: the fit cannot match real " << mode << ": " << sim
                  << " s simulated against " << real_s << " s real\n";
    }
    overrides.push_back("cost.server_flops_per_push=" + std::to_string(push));
    fs::remove_all(work_);
    return {{"method",
             "bisection on the simulator: the spec's sync and async runs with no stragglers, "
             "real (gbasim-mpi) against simulated"},
            {"real_sync_s", real_sync},
            {"real_async_s", real_async},
            {"real_sync_runs_s", sync_runs},
            {"real_async_runs_s", async_runs},
            {"sim_sync_s", sim_sync},
            {"sim_async_s", sim_async},
            {"nic_latency_microbenchmark", microbenchmark_latency},
            {"nic_latency", latency},
            {"server_flops_per_push", push},
            {"server_seconds_per_push", push / t_.speed}};
  }

 private:
  std::string sets(const std::vector<std::string>& extra) const {
    std::string text;
    for (const auto& o : straggler_free_) text += " --set '" + o + "'";
    for (const auto& o : extra) text += " --set '" + o + "'";
    return text;
  }

  // Runs `command` and reads `key` of its result's summary.
  double run_command(const std::string& command, const std::string& result, const char* key) const {
    const int rc = std::system((command + " >/dev/null 2>'" + work_ + "/log.txt'").c_str());
    if (!WIFEXITED(rc) || WEXITSTATUS(rc) != 0)
      throw InputError("calibration run failed (see " + work_ + "/log.txt): " + command);
    std::ifstream file(result);
    return nlohmann::json::parse(file)["summary"][key].get<double>();
  }

  double real(const std::string& mode) const {
    const int ranks = spec_.training.num_workers + (mode == "sync" ? 0 : 1);
    const std::string result = work_ + "/real-" + mode + ".json";
    return run_command("GBASIM_MPI='" + request_.gbasim_mpi_exe + "' bash '" GBASIM_MPIRUN "' " +
                           std::to_string(ranks) + " --spec '" + request_.spec_path + "'" +
                           sets({"training.mode=" + mode}) + " -q --out '" + result + "'",
                       result, "run_time");
  }

  double simulated(const std::string& mode, double nic_latency, double push_flops) const {
    nlohmann::ordered_json trial = platform_;
    trial["nic_latency"] = nic_latency;
    write_json_atomically(work_ + "/platform.json", trial);
    const std::string result = work_ + "/sim-" + mode + ".json";
    std::string command = "'";
    command += request_.gbasim_exe;
    command += "' run --spec '";
    command += request_.spec_path;
    command += "'";
    command += sets({"training.mode=" + mode,
                     "evaluation.interval_s=1000",  // costs no simulated time, only ours
                     "cluster.platform=" + fs::absolute(work_ + "/platform.json").string(),
                     "cost.flops_scale=1",
                     "cost.update_flops_per_value=" + std::to_string(t_.update_flops_per_value),
                     "cost.merge_flops_per_value=" + std::to_string(t_.merge_flops_per_value),
                     "cost.server_flops_per_push=" + std::to_string(push_flops)});
    command += " -q --out '";
    command += result;
    command += "'";
    return run_command(command, result, "simulated_time");
  }

  const CalibrationRequest& request_;
  const ExperimentSpec& spec_;
  const ModelTimings& t_;
  const nlohmann::ordered_json platform_;  // as measured: each trial sets its latency
  const std::string work_;
  std::vector<std::string> straggler_free_;
};

}  // namespace

Calibration calibrate(const CalibrationRequest& request) {
  const int cores = request.cores;
  const ExperimentSpec spec = load_spec(request.spec_path, request.overrides);
  const ModelTimings t = time_model(spec);
  std::cerr << "gbasim calibrate: the scheduler's time slice on " << cores << " cores\n";
  const double time_slice = measure_time_slice(cores);
  const auto [latency, bandwidth] = mpi_pingpong(request);

  // A message crosses the sender's link and the receiver's: each takes half the latency.
  nlohmann::ordered_json platform = {{"ps_shards", 1},
                                     {"worker_speed", t.speed},
                                     {"ps_speed", t.speed},
                                     {"ps_cores", 1},
                                     {"nic_bandwidth", bandwidth},
                                     {"nic_latency", latency / 2},
                                     {"network_model", "CM02"},
                                     {"shared_cores", cores},
                                     {"time_slice_s", time_slice},
                                     {"server_model", "one_queue"},
                                     {"ps_service_seed", 1}};
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  nlohmann::ordered_json report = {
      {"machine", host},
      {"spec", request.spec_path},
      {"model", model_name(spec.model.kind)},
      {"local_batch", spec.training.local_batch},
      {"gradient_s", t.gradient_s},
      {"update_s", t.update_s},
      {"updated_values", t.values},
      {"flops_per_sample", t.flops_per_sample},
      {"mpi_latency_s", latency},
      {"mpi_bandwidth_bytes_per_s", bandwidth},
      {"cores", cores},
      {"time_slice_s", time_slice},
      {"platform", request.out_path},
      {"merge_s", t.merge_s},
      {"merged_gradients", t.parts},
      {"overrides",
       {"cost.flops_scale=1",
        "cost.update_flops_per_value=" + std::to_string(t.update_flops_per_value),
        "cost.merge_flops_per_value=" + std::to_string(t.merge_flops_per_value)}}};
  if (request.fit) {
    Fit fit(request, spec, t, platform);
    report["fit"] = fit.run(latency / 2, platform, report["overrides"]);
  }
  return {platform, report};
}

}  // namespace gbasim
