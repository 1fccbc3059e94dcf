#include "mpi/mpi_runtime.h"

#include <mpi.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <iostream>
#include <optional>

#include "base/error.h"
#include "base/files.h"
#include "base/system.h"
#include "mpi/job.h"
#include "mpi/server.h"
#include "mpi/switching.h"
#include "mpi/sync.h"
#include "mpi/wire.h"

namespace gbasim {

using namespace mpi;

int ranks_needed(const ExperimentSpec& spec) {
  const bool sync_only = spec.training.mode == Mode::kSync && !spec.switching.enabled();
  return total_workers(spec) + (sync_only ? 0 : 1);
}

void check_memory_on_this_machine(const ExperimentSpec& spec, const std::string& spec_path,
                                  int ranks_here) {
  if (!spec.data.criteo_path.empty()) return;
  const SyntheticConfig& d = spec.data.synthetic;
  const double sample = 4.0 * (d.num_fields + d.num_dense + 1);
  const double rank_bytes = sample * static_cast<double>(d.train_samples + d.test_samples);
  const double available = available_memory_bytes();
  if (available <= 0.0 || ranks_here * rank_bytes <= 0.9 * available) return;
  char what[400];
  std::snprintf(what, sizeof what,
                "'data.train_samples': the %d ranks on this machine each hold the whole data set "
                "(%.2f GiB a rank), %.1f GiB in all, more than the %.1f GiB this machine has "
                "available: give fewer ranks a machine (a host file) or fewer samples",
                ranks_here, rank_bytes / 1073741824.0, ranks_here * rank_bytes / 1073741824.0,
                available / 1073741824.0);
  throw InputError(spec_path + ": " + what);
}

void write_parameters(const std::string& path, const Eigen::VectorXf& dense,
                      const std::vector<RowMatrixXf>& tables) {
  std::string bytes(reinterpret_cast<const char*>(dense.data()), dense.size() * sizeof(float));
  for (const auto& t : tables)
    bytes.append(reinterpret_cast<const char*>(t.data()), t.size() * sizeof(float));
  write_text_atomically(path, bytes);
}

struct MpiJob::State {
  State(const ExperimentSpec& spec, const MpiOptions& options) : job(spec, options) {
    if (job.rank == 0 && spec.evaluation.test_samples > 0)
      job.data.test = first_rows(job.data.test, spec.evaluation.test_samples);
    if (!all_workers && job.rank == 0) {
      holder.emplace(spec, job.params, options.rule_log);
      if (spec.data.sharding == DataSharding::kQueue) {
        for (size_t p = 0; p < job.pools.size(); ++p)
          holder->queues.emplace_back(job.data.train, 0, 1, spec.seed, DataSharding::kQueue);
        holder->batches.assign(job.pools.size(), 0);
      }
    }
    job.maybe_fail(-1);
  }
  Job job;
  // Sync without switching: every rank a worker. Otherwise rank 0 holds the rule in force.
  const bool all_workers = ranks_needed(job.spec) == total_workers(job.spec);
  std::optional<Holder> holder;
};

MpiJob::MpiJob(const ExperimentSpec& spec, const MpiOptions& options)
    : state_(std::make_unique<State>(spec, options)) {}

MpiJob::~MpiJob() = default;

namespace {

// Every rank's worker record, gathered on rank 0 with each rank's host name.
struct GatheredRecords {
  std::vector<char> bytes;  // rank r's record at offsets[r], sizes[r] bytes long
  std::vector<int> sizes, offsets;
  std::vector<char> hosts;  // 256 bytes a rank
};

GatheredRecords gather_records(const Job& job, const WorkerRecord& me) {
  Buffer mine;
  mine.put<int64_t>(me.steps);
  mine.put(me.compute_s);
  mine.put(me.injected_s);
  mine.put(me.slept_s);
  mine.put(me.comm_s);
  mine.put(me.step_ends.data(), me.step_ends.size());
  GatheredRecords g;
  int size = static_cast<int>(mine.bytes().size());
  g.sizes.resize(job.size);
  g.offsets.resize(job.size);
  MPI_Gather(&size, 1, MPI_INT, g.sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < job.size; ++r) {
    g.offsets[r] = total;
    total += g.sizes[r];
  }
  g.bytes.resize(static_cast<size_t>(total));
  MPI_Gatherv(mine.bytes().data(), size, MPI_BYTE, g.bytes.data(), g.sizes.data(), g.offsets.data(),
              MPI_BYTE, 0, MPI_COMM_WORLD);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  g.hosts.resize(job.rank == 0 ? 256 * job.size : 0);
  MPI_Gather(host, 256, MPI_CHAR, g.hosts.data(), 256, MPI_CHAR, 0, MPI_COMM_WORLD);
  return g;
}

// Rank 0, after training: each snapshot evaluated on the test set, into the job's record.
void evaluate_snapshots(Job& job) {
  Parameters replayed = job.model.init_parameters(job.spec.seed);
  for (const Snapshot& s : job.snapshots) {
    replayed.dense = s.dense;
    for (size_t k = 0; k < s.rows.size(); ++k) {
      for (size_t i = 0; i < s.rows[k].size(); ++i)
        replayed.tables[k].row(s.rows[k][i]) = s.values[k].row(static_cast<Eigen::Index>(i));
    }
    const Evaluation e = evaluate(job.model, replayed, job.data.test);
    job.record.add_point({s.time, s.global_step, s.samples, e.auc, e.logloss});
    if (e.diverged) {  // found after training, which went on to its budget
      job.record.end("diverged", "the model's test predictions are not finite numbers at " +
                                     std::to_string(s.time) + " s (global step " +
                                     std::to_string(s.global_step) + ")");
    }
  }
}

// The result's "workers": each worker rank's record.
nlohmann::ordered_json workers_json(const Job& job, const GatheredRecords& g, bool all_workers) {
  nlohmann::ordered_json workers = nlohmann::ordered_json::array();
  for (int r = all_workers ? 0 : 1; r < job.size; ++r) {
    Buffer b;
    b.bytes().assign(g.bytes.begin() + g.offsets[r], g.bytes.begin() + g.offsets[r] + g.sizes[r]);
    const auto steps = b.get<int64_t>();
    const auto compute = b.get<double>(), injected = b.get<double>(), slept = b.get<double>(),
               comm = b.get<double>();
    std::vector<double> ends(static_cast<size_t>(steps));
    b.get(ends.data(), ends.size());
    const int w = all_workers ? r : r - 1;
    workers.push_back({{"worker", w},
                       {"pool", job.pool_of(w)},
                       {"rank", r},
                       {"host", std::string(g.hosts.data() + 256 * r)},
                       {"steps", steps},
                       {"compute_s", compute},
                       {"injected_slowdown_s", injected},
                       {"slept_s", slept},
                       {"comm_s", comm},
                       {"step_ends", ends}});
  }
  return workers;
}

}  // namespace

nlohmann::ordered_json MpiJob::run() {
  Job& job = state_->job;
  const ExperimentSpec& spec = job.spec;
  const MpiOptions& options = job.options;
  const bool all_workers = state_->all_workers;
  std::optional<Holder>& holder = state_->holder;
  WorkerRecord me;
  ServerRecord server;
  int64_t applied = 0;
  RuleMetrics metrics;
  MPI_Barrier(MPI_COMM_WORLD);
  job.start = WallClock::now();
  if (job.rank == 0) job.maybe_snapshot(0, 0, true);
  if (all_workers) {
    metrics = run_sync(job, me, applied);
  } else {
    metrics = run_switching(job, holder ? &*holder : nullptr, me, server);
    if (holder) applied = holder->applied;
  }
  const double run_time = job.elapsed();
  const GatheredRecords records = gather_records(job, me);
  if (job.rank != 0) return nullptr;

  if (!options.params_out.empty())
    write_parameters(options.params_out, job.params.dense, job.params.tables);
  if (!options.quiet)
    std::cerr << "gbasim-mpi: trained in " << run_time << " s; evaluating " << job.snapshots.size()
              << " snapshots\n";
  evaluate_snapshots(job);
  DriverSummary driver{"wall", run_time};
  driver.before_counts = {{"snapshots", job.snapshots.size()}, {"snapshot_s", job.snapshot_s}};
  driver.after_counts = {{"ranks", job.size}};
  nlohmann::ordered_json doc = job.record.result(driver, metrics.global_steps, applied, metrics);
  doc["workers"] = workers_json(job, records, all_workers);
  if (holder && holder->rule.switching())
    doc["switching"] = switching_json(spec, *holder->rule.switching(), holder->moves);
  if (!all_workers) {
    doc["server"] = {{"idle_s", server.idle_s},     {"receive_s", server.receive_s},
                     {"update_s", server.update_s}, {"grant_s", server.grant_s},
                     {"pushes", server.pushes},     {"grants", server.grants}};
  }
  return doc;
}

nlohmann::ordered_json measure_pingpong() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  auto round_trip = [rank](size_t bytes, int reps) {
    std::vector<char> buffer(bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    double best = 1e300;
    for (int r = 0; r < reps; ++r) {
      const double start = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 1, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 0, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 0, 0, MPI_COMM_WORLD);
      }
      best = std::min(best, MPI_Wtime() - start);
    }
    return best;
  };
  round_trip(8, 50);  // warm up
  const double small = round_trip(8, 2000);
  const size_t big_bytes = size_t{4} << 20;
  const double big = round_trip(big_bytes, 30);
  const double latency = small / 2;
  return {{"latency_s", latency},
          {"bandwidth_bytes_per_s", static_cast<double>(big_bytes) / (big / 2 - latency)},
          {"method", "best of 2000 round trips of 8 B, and of 30 of 4 MiB, between ranks 0 and 1"}};
}

}  // namespace gbasim
