// Sweeps: a base spec, axes of values for any spec keys, and seeds; one `gbasim run` per
// point. The planner (sweep_plan.cc), the process pool (sweep_pool.cc) and the Slurm launcher
// (slurm.cc), which `gbasim sweep`, `tune` and `compare` share.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "experiment/spec.h"

namespace gbasim {

struct SweepAxis {
  std::string key;                     // a spec key path, e.g. "training.mode"
  std::vector<nlohmann::json> values;  // JSON values, as --set takes them
};

// How gbasim sweep --launcher slurm submits the sweep (docs/sweep.md, "On a cluster"): the
// sweep file's "slurm" object, over which the command line's options go.
struct SlurmSettings {
  std::string partition, account, time, mem;  // sbatch's --partition, --account, --time, --mem
  std::vector<std::string> options;           // more sbatch arguments, each one argument
  int points_per_task = 1;
};

struct SweepSpec {
  std::string path;                // the sweep file
  std::string base;                // the base spec, resolved against the sweep file's folder
  std::vector<std::string> fixed;  // "key=value" overrides applied to every point
  std::vector<SweepAxis> axes;     // in the file's order; the first varies slowest
  std::vector<uint64_t> seeds;     // empty: the base spec's seed
  std::string description;
  SlurmSettings slurm;
};

struct SweepPoint {
  // File-name safe and unique in the sweep: the axes' values, and a hash of the point's
  // overrides where two values would name alike or the name would be too long.
  std::string name;
  std::vector<nlohmann::json> values;  // one per axis
  std::optional<uint64_t> seed;
  std::vector<std::string> overrides;  // fixed, then axes, then seed
  ExperimentSpec spec;                 // resolved: a changed spec makes a new point
};

// Reads a sweep file (docs/sweep.md). Throws InputError naming the file and key.
SweepSpec load_sweep(const std::string& path);

// Every point, the first axis slowest and the seed fastest. Each point's spec is loaded and
// checked here, so that a bad axis value stops the sweep before anything runs; the error
// names the sweep file, the axis and the value.
std::vector<SweepPoint> plan_sweep(const SweepSpec& sweep);

// "value" as a file name part: numbers as JSON writes them, strings bare, lists and objects
// without brackets and quotes ("none" when that leaves nothing); characters other than
// letters, digits, '.', '+' and '-' become '-'.
std::string name_part(const nlohmann::json& value);

// Refuses, before anything is written, an entry of a points folder (OUT/points) that is not a
// regular file nor a link to one: gbasim writes only files there, and a folder, a pipe or a
// device in a point's place would fail its run half-way, after the summary was written.
void check_points_folder(const std::string& folder);

// The summary CSV's header and a point's row. `result` is the point's result JSON (null
// when it has none); `status` is "done", "failed" or "pending". The summary holds results
// only, so that a sweep run again writes it byte for byte; the points' wall-clock times go to
// OUT/wall.csv.
std::vector<std::string> summary_header(const SweepSpec& sweep);
std::vector<std::string> summary_row(const SweepSpec& sweep, const SweepPoint& point,
                                     const std::string& status, const nlohmann::json& result,
                                     const std::string& error);
// Runs the points that OUT/points does not hold a result of, as `gbasim sweep` does (one
// `gbasim run` process a point, `jobs` at a time, progress on standard error, OUT/summary.csv
// rewritten as they end). Returns 0 when every point is done, 1 when some failed, 130 when
// interrupted (SIGINT, SIGTERM). Defined in sweep_pool.cc.
int run_points(const SweepSpec& sweep, std::vector<SweepPoint> points, const std::string& out,
               int jobs);

// What `gbasim sweep` does beyond the local pool (sweep_pool.cc):
// - kSubmit: submits the points without a result as a Slurm job array and returns (with
//   `wait`, follows the array to its end and writes the summary);
// - kTask: runs the points of array task SLURM_ARRAY_TASK_ID of `task_file`;
// - kSummarize: writes the summary from the results there are, runs nothing.
struct SweepLaunch {
  enum class Kind { kLocal, kSubmit, kTask, kSummarize } kind = Kind::kLocal;
  int jobs = 1;           // kLocal: points at once
  bool wait = false;      // kSubmit
  std::string task_file;  // kTask
};
int run_sweep_with(const SweepSpec& sweep, std::vector<SweepPoint> points, const std::string& out,
                   const SweepLaunch& launch);

// Slurm's commands (slurm.cc). Submits `script` as an array of `tasks` tasks (one log
// file a task in `log_dir`) and returns the job id; throws InputError with sbatch's message.
std::string submit_array(const SlurmSettings& slurm, const std::string& script, int tasks,
                         const std::string& log_dir);
// Throws InputError for an sbatch option that gbasim sets itself (--array, --output,
// --job-name, --parsable, and their short forms).
void check_sbatch_options(const std::vector<std::string>& options);
// The command line's Slurm settings over the sweep file's: each one given replaces the file's,
// sbatch options add to them, and a `points_per_task` of 0 keeps the file's. Checks the options.
void merge_slurm_settings(SlurmSettings& file, const SlurmSettings& command_line,
                          int points_per_task);

// The number of tasks of job `job_id` still queued or running (squeue): 0 once the job has
// left the queue. Throws InputError with squeue's message when squeue itself fails (the
// controller cannot be reached): an unknown count is never taken for an empty queue.
int tasks_in_queue(const std::string& job_id);

// Draws the convergence figure of the sweep folder `out` into out/figures with the source
// tree's scripts/plot_sweep.py (bands over seeds), printing the command so that the user can
// run it again; a note (`who` says whose) where it cannot.
void draw_convergence(const std::string& out, const std::string& who);

// Runs the source tree's scripts/`script` with `args` under Debian's /usr/bin/python3, printing
// the command (after `who`) so that the user can run it again; a note where it cannot run.
void draw_figure(const std::string& script, const std::vector<std::string>& args,
                 const std::string& who);

// One CSV line: cells with a comma, quote or newline are quoted.
std::string csv_line(const std::vector<std::string>& cells);
// A number as the summaries write it: 6 significant digits.
std::string csv_number(double v);

}  // namespace gbasim
