// The sweep's process pool and its Slurm job array share one class (study/sweep_pool.cc, the
// local pool and the summary; study/sweep_array.cc, the array's submission and tasks). Not
// for use beyond study/: study/sweep.h is the interface.
#pragma once

#include <signal.h>
#include <sys/types.h>

#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "study/sweep.h"

namespace gbasim::sweep_pool {

namespace fs = std::filesystem;

extern volatile sig_atomic_t interrupted;  // set by on_signal

void on_signal(int);

// SIGINT and SIGTERM set `interrupted` (without SA_RESTART: waitpid returns on them).
void catch_interruptions();

// The last non-empty line of a run's log: gbasim's error message when it failed.
std::string last_line(const fs::path& log);

// Single-quoted for sh.
std::string shell_quoted(const std::string& s);

// Takes the lock of a point (OUT/points/<point>.lock, an fcntl lock, which NFS honours too):
// the descriptor that holds it, or -1 when another process holds it. It is released when the
// descriptor is closed or the process ends, however it ends.
int try_lock(const fs::path& path);

std::string duration(double seconds);

struct PointState {
  std::string status = "pending";  // done, failed, pending
  nlohmann::json summary;          // {"summary": ...} of a done point
  double wall_s = 0.0;
  std::string error;
};

class Sweep {
 public:
  Sweep(SweepSpec spec, std::vector<SweepPoint> points, fs::path out, int jobs)
      : spec_(std::move(spec)),
        points_(std::move(points)),
        out_(std::move(out)),
        jobs_(jobs),
        state_(points_.size()) {}

  // The local pool: every point without a result, J at a time.
  int run();
  // Writes the summary from the results there are and says what is missing; runs nothing.
  int summarize();
  // Submits the points without a result as a Slurm job array; with `wait`, follows it.
  int submit(bool wait);
  // One task of such an array: its points, one after the other.
  int run_task(const std::string& task_file);

 private:
  fs::path file(size_t i, const char* ext) const {
    return out_ / "points" / (points_[i].name + ext);
  }
  // check_points_folder on OUT/points.
  void check_point_files() const;
  // Whether point i has a result of this very spec, which is then loaded.
  bool finished(size_t i);
  // Takes point i's lock (false: another process runs it).
  bool lock(size_t i);
  void unlock(size_t i);
  pid_t launch(size_t i);
  void completed(size_t i, int status, double wall_s);
  void write_summary() const;
  // The points without a result that no other process runs, as array tasks of
  // slurm.points_per_task points each; `points` says how many.
  nlohmann::json tasks_to_submit(size_t& points);
  // Follows Slurm job `job` until no task of it is queued or running, then summarizes.
  int follow(const std::string& job);
  // The local pool's last line; its exit code (1 when some point failed or ran elsewhere).
  int ended(size_t failed, size_t elsewhere) const;
  // Writes one progress line for point i (done or failed).
  void report(size_t i, size_t done, size_t total) const;

  SweepSpec spec_;
  std::vector<SweepPoint> points_;
  fs::path out_;
  int jobs_;
  std::vector<PointState> state_;
  std::map<size_t, int> locks_;  // point -> the descriptor holding its lock
};

}  // namespace gbasim::sweep_pool
