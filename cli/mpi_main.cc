// gbasim-mpi: one training run on real ranks, started with mpirun (scripts/mpirun.sh adds
// the settings a single machine or root needs). Same spec and result layout as gbasim run.
#include <mpi.h>

#include <boost/program_options.hpp>
#include <iostream>
#include <memory>

#include "base/error.h"
#include "base/files.h"
#include "cli/commands.h"
#include "cli/entry_point.h"
#include "experiment/result.h"
#include "experiment/slowdown.h"
#include "mpi/mpi_runtime.h"

namespace po = boost::program_options;

namespace {

// Called once by every rank, having prepared its part of the job (`code` 0) or not. Returns
// the largest exit code of all ranks, 0 when every one is ready. The lowest rank that failed
// prints its message: rank 0's when every rank failed alike (the usual bad spec), the one rank's
// when it alone failed (its copy of a file missing on its node).
int agree_to_start(int code, const std::string& message, int rank, int size) {
  int worst = 0;
  MPI_Allreduce(&code, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (worst == 0) return 0;
  int mine = code != 0 ? rank : size, first = size;
  MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == first) std::cerr << message << '\n';
  return worst;
}

// The ranks on this machine: those that share its memory.
int ranks_on_this_machine() {
  int ranks = 1;
  MPI_Comm here;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &here);
  MPI_Comm_size(here, &ranks);
  MPI_Comm_free(&here);
  return ranks;
}

// gbasim-mpi's command line, and its options bound to it.
struct CommandLine {
  std::string spec_path, out_path;
  std::vector<std::string> overrides;
  gbasim::MpiOptions options;
  std::string fail_how = "abort";
};

po::options_description describe(CommandLine& c) {
  po::options_description desc(
      "mpirun -np P gbasim-mpi --spec FILE [options]   (or: scripts/mpirun.sh P --spec FILE "
      "...)\n\n"
      "Trains for real over MPI with the update rules of the simulator: sync uses N ranks\n"
      "(MPI_Allreduce of dense gradients, MPI_Allgatherv of sparse rows); async, gba, ssp and\n"
      "backup use N + 1 (rank 0 the parameter server), and so does a run that switches modes\n"
      "(training.switching: rank 0 holds the rule in force in every phase, and the model moves\n"
      "between the workers and rank 0 at each switch); with cluster.pools, a rank for every\n"
      "worker of every pool and rank 0. Stragglers from the spec's models and\n"
      "trace are injected as sleeps of (slowdown - 1) x the measured compute. Parameter\n"
      "snapshots are taken every evaluation.interval_s of wall time and evaluated after\n"
      "training. Writes the result JSON of gbasim run, in wall-clock seconds.\n\nOptions");
  desc.add_options()("help,h", "show this help")(
      "spec", po::value(&c.spec_path)->value_name("FILE"), "experiment spec (docs/spec.md)")(
      "set", po::value(&c.overrides)->composing()->value_name("KEY=VALUE"),
      "override a spec key (repeatable)")("out", po::value(&c.out_path)->value_name("FILE"),
                                          "result JSON (default: out/mpi-<mode>.json)")(
      "params-out", po::value(&c.options.params_out)->value_name("FILE"),
      "also write the final parameters (raw 32-bit floats: dense, then each table)")(
      "quiet,q", po::bool_switch(&c.options.quiet), "no progress lines")(
      "rule-log", po::value(&c.options.rule_log)->value_name("FILE"),
      "server modes and switching: write each admission granted and each gradient taken in "
      "by the rule, a line each, in order (for tests that replay them)")(
      "fail-rank", po::value(&c.options.fail_rank)->value_name("R"),
      "fault injection for tests: rank R fails ...")(
      "fail-step", po::value(&c.options.fail_step)->value_name("K"),
      "... at its step K (-1: while it prepares the job) ...")(
      "fail-how", po::value(&c.fail_how)->value_name("HOW"),
      "... by HOW: abort (the default: a crash) or error (bad input on that rank alone)")(
      "pingpong", po::bool_switch(),
      "measure latency and bandwidth between ranks 0 and 1, write "
      "them to --out (for gbasim calibrate), train nothing");
  return desc;
}

// Throws InputError when the job has not the ranks the spec needs.
void check_ranks(const gbasim::ExperimentSpec& spec, const std::string& spec_path, int size) {
  const int needed = gbasim::ranks_needed(spec);
  if (size == needed) return;
  throw gbasim::InputError(
      spec_path + ": " + gbasim::mode_name(spec.training.mode) + " with " +
      std::to_string(gbasim::total_workers(spec)) +
      (spec.cluster.pools.empty() ? "" : " workers in all its pools") +
      (spec.cluster.pools.empty() ? " workers needs " : " needs ") + std::to_string(needed) +
      " ranks (" +
      (needed == spec.training.num_workers ? "one per worker" : "a server and one per worker") +
      "), not " + std::to_string(size));
}

// Rank 0's progress lines: the job as it starts, the result as it ends.
void print_start(const gbasim::ExperimentSpec& spec, int size) {
  std::cerr << "gbasim-mpi: " << gbasim::mode_name(spec.training.mode) << ", "
            << spec.training.num_workers << " workers"
            << (spec.cluster.pools.empty()
                    ? std::string()
                    : " (pool 0; " + std::to_string(gbasim::total_workers(spec)) + " in all " +
                          std::to_string(spec.cluster.pools.size() + 1) + " pools)")
            << " on " << size << " ranks\n";
}

void print_result(const nlohmann::ordered_json& result, const std::string& out_path) {
  const auto& s = result["summary"];
  std::cerr << "gbasim-mpi: " << s["mode"].get<std::string>() << ": time-to-AUC "
            << (s["time_to_auc"].is_null() ? std::string("not reached")
                                           : std::to_string(s["time_to_auc"].get<double>()) + " s")
            << ", final AUC " << s["final_auc"].get<double>() << ", " << s["run_time"].get<double>()
            << " s; result: " << out_path << "\n";
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const int ranks_here = ranks_on_this_machine();  // before any rank can fail
  CommandLine command;
  std::string& spec_path = command.spec_path;
  std::string& out_path = command.out_path;
  gbasim::MpiOptions& options = command.options;
  const po::options_description desc = describe(command);
  // Every rank first prepares, without communicating: the command line, the spec, and the
  // job's data, model and trace. They then agree that all of them did before any trains.
  gbasim::ExperimentSpec spec;  // outlives the job, which refers to it
  std::unique_ptr<gbasim::MpiJob> job;
  bool pingpong = false;
  std::string message;
  int code = gbasim::run_guarded(
      rank == 0 ? "gbasim-mpi" : "gbasim-mpi: rank " + std::to_string(rank),
      [&] {
        po::variables_map vm;
        if (!gbasim::parse_options({argv + 1, argv + argc}, desc, vm)) {
          return 0;
        }
        if (command.fail_how != "abort" && command.fail_how != "error")
          throw po::error("--fail-how must be abort or error, not '" + command.fail_how + "'");
        options.fail_with_error = command.fail_how == "error";
        if (vm["pingpong"].as<bool>()) {
          if (size < 2) throw po::error("--pingpong needs 2 ranks");
          if (out_path.empty()) throw po::error("--pingpong needs --out FILE");
          if (rank == 0) gbasim::check_output_file(out_path, "measurement");
          pingpong = true;
          return 0;
        }
        if (spec_path.empty()) throw po::error("--spec FILE is required");
        spec = gbasim::load_spec(spec_path, command.overrides);
        check_ranks(spec, spec_path, size);
        gbasim::check_memory_on_this_machine(spec, spec_path, ranks_here);
        if (out_path.empty())
          out_path = "out/mpi-" + gbasim::mode_name(spec.training.mode) + ".json";
        if (rank == 0) gbasim::check_output_file(out_path, "result");
        const std::string left = gbasim::RankSlowdown::not_injected(spec);
        if (rank == 0 && !left.empty() && !options.quiet)
          std::cerr << "gbasim-mpi: note: real ranks do not inject:" << left
                    << " the run goes on without them\n";
        if (rank == 0 && spec.workload && !options.quiet)
          std::cerr << "gbasim-mpi: note: real ranks compute and send the proxy model's own batch; "
                       "the workload is timed by the simulator only\n";
        job = std::make_unique<gbasim::MpiJob>(spec, options);
        return 0;
      },
      &message);
  code = agree_to_start(code, message, rank, size);
  if (code == 0 && (job || pingpong)) {
    // A rank that fails from here on ends the whole job: the others would wait for it forever.
    code = gbasim::run_guarded(
        "gbasim-mpi: rank " + std::to_string(rank),
        [&] {
          if (pingpong) {
            const nlohmann::ordered_json result = gbasim::measure_pingpong();
            if (rank == 0) gbasim::write_json_atomically(out_path, result);
            return 0;
          }
          if (rank == 0 && !options.quiet) print_start(spec, size);
          const nlohmann::ordered_json result = job->run();
          if (rank == 0) {
            gbasim::write_json_atomically(out_path, result);
            if (!options.quiet) print_result(result, out_path);
          }
          return 0;
        },
        &message);
    if (code != 0) {
      std::cerr << message << "\n(gbasim-mpi: ending every rank of the job)" << std::endl;
      MPI_Abort(MPI_COMM_WORLD, code);
    }
  }
  MPI_Finalize();
  return code;
}
