// The update rules on real ranks over MPI. Sync: every rank a worker; dense gradients are
// summed with MPI_Allreduce, sparse rows gathered with MPI_Allgatherv, and each rank feeds
// the same strategies/ rule and optimizer, so all hold the same parameters. Server modes
// (async, GBA, bounded staleness, backup workers): rank 0 is the parameter server running
// the strategies/ rule, ranks 1..N the workers, talking point to point.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "experiment/spec.h"

namespace gbasim {

struct MpiOptions {
  bool quiet = false;
  std::string params_out;  // rank 0 writes the final parameters here (raw floats)
  // Rank 0 writes each call of the rule in force here, a line each, in order: "admit WORKER
  // TOKEN" for an admission granted, "receive WORKER TOKEN" for a gradient taken in. A test
  // replays them in one process. Server modes and switching jobs only.
  std::string rule_log;
  // Fault injection for tests: this rank fails at this step of its own (-1: while it
  // prepares the job, before training; a server's step K is the K-th push it takes in), by aborting or, with fail_with_error, by throwing an
  // input error as bad input on that rank alone would.
  int fail_rank = -1;
  int64_t fail_step = -1;
  bool fail_with_error = false;
};

// The ranks a spec needs: N for sync, N + 1 for the server modes and for a run that switches
// modes (training.switching: rank 0 is then the server in the server modes and holds the rule
// in force through the sync phases too).
int ranks_needed(const ExperimentSpec& spec);

// Every rank holds the whole data set (synthetic data: about 4 bytes a sparse field, a dense
// feature and the label, a sample). Throws InputError, naming data.train_samples, when the
// `ranks_here` ranks on this machine would need more than 90% of the memory it has available
// (/proc/meminfo's MemAvailable), rather than leave the kernel to kill one of them while they
// prepare. Criteo files are not estimated.
void check_memory_on_this_machine(const ExperimentSpec& spec, const std::string& spec_path,
                                  int ranks_here);

// One job on this rank. The constructor prepares it without communicating (the data, the
// model, the trace and, on rank 0 of a server job, the rule in force and its log) and throws
// on bad input, so that every rank can agree that all of them started before any trains
// (cli/mpi_main.cc). `spec` must outlive the job.
class MpiJob {
 public:
  MpiJob(const ExperimentSpec& spec, const MpiOptions& options);
  ~MpiJob();
  // Trains on MPI_COMM_WORLD (MPI initialised; every rank calls it). Returns the result on
  // rank 0, in the layout of `gbasim run`'s with wall-clock seconds (summary.clock = "wall"),
  // and null on the other ranks. Evaluation never runs during training: parameter snapshots
  // are taken every evaluation.interval_s of wall time and evaluated by rank 0 afterwards.
  nlohmann::ordered_json run();

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Point-to-point latency and bandwidth between ranks 0 and 1 (gbasim calibrate runs this):
// half the best round trip of 8-byte messages, and of 4 MiB ones beyond that latency. Every
// rank calls it; ranks above 1 only take part in the barriers.
nlohmann::ordered_json measure_pingpong();

// The parameters file of --params-out: the dense vector, then each table row by row, as
// little-endian 32-bit floats, nothing else.
void write_parameters(const std::string& path, const Eigen::VectorXf& dense,
                      const std::vector<RowMatrixXf>& tables);

}  // namespace gbasim
