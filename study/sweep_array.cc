// A sweep as a Slurm job array (docs/sweep.md, "On a cluster"): the points without a result
// submitted as one array, followed to its end, and each array task's points run in turn.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <thread>

#include "base/error.h"
#include "base/files.h"
#include "study/sweep.h"
#include "study/sweep_pool.h"
#include "experiment/json_file.h"

extern char** environ;

namespace gbasim::sweep_pool {

nlohmann::json Sweep::tasks_to_submit(size_t& points) {
  std::vector<std::string> pending;
  const bool had_points = fs::exists(out_ / "points");
  for (size_t i = 0; i < points_.size(); ++i) {
    if (finished(i)) continue;
    if (had_points && !lock(i)) continue;  // another process runs it now
    unlock(i);
    pending.push_back(points_[i].name);
  }
  const size_t per_task = static_cast<size_t>(std::max(1, spec_.slurm.points_per_task));
  nlohmann::json tasks = nlohmann::json::array();
  for (size_t k = 0; k < pending.size(); k += per_task) {
    nlohmann::json task = nlohmann::json::array();
    for (size_t j = k; j < std::min(pending.size(), k + per_task); ++j) task.push_back(pending[j]);
    tasks.push_back(task);
  }
  points = pending.size();
  return tasks;
}

int Sweep::submit(bool wait) {
  check_point_files();
  const fs::path slurm = out_ / "slurm";
  const fs::path job_file = slurm / "job";
  if (fs::exists(job_file)) {
    const std::string job = last_line(job_file);
    if (job.empty() || job.find_first_not_of("0123456789") != std::string::npos) {
      throw InputError(job_file.string() + ": not a Slurm job id ('" + job +
                       "'), so gbasim cannot tell whether this sweep's job still runs: check "
                       "with squeue, then remove the file to submit again");
    }
    if (const int queued = tasks_in_queue(job); queued > 0) {
      if (wait) {
        std::cerr << "gbasim sweep: Slurm job " << job << " of this sweep still has " << queued
                  << " tasks queued or running; following it\n";
        return follow(job);
      }
      throw InputError("Slurm job " + job + " of this sweep (" + job_file.string() + ") still has " +
                       std::to_string(queued) +
                       " tasks queued or running: follow it with --wait, or cancel it (scancel " +
                       job + ") before submitting again");
    }
  }
  size_t pending = 0;
  const nlohmann::json tasks = tasks_to_submit(pending);
  if (pending == 0) {
    std::cerr << "gbasim sweep: every point has its result; nothing to submit\n";
    return summarize();
  }
  // What is created here goes again if sbatch refuses: a failed submission leaves nothing.
  std::vector<fs::path> created;
  for (const fs::path& dir : {out_, out_ / "points", slurm}) {
    if (!fs::exists(dir)) created.push_back(dir);
    fs::create_directories(dir);
  }
  int n = 1;
  while (fs::exists(slurm / ("tasks-" + std::to_string(n) + ".json"))) ++n;
  const fs::path task_file = slurm / ("tasks-" + std::to_string(n) + ".json");
  const fs::path script = slurm / ("task-" + std::to_string(n) + ".sh");
  write_text_atomically(task_file.string(), nlohmann::json({{"tasks", tasks}}).dump(1) + "\n");
  const std::string exe = fs::read_symlink("/proc/self/exe").string();
  write_text_atomically(
      script.string(),
      "#!/bin/sh\n# One task of a Slurm job array of gbasim sweep --launcher slurm: the points of\n"
      "# array task SLURM_ARRAY_TASK_ID in " + task_file.string() + ", as the local launcher "
      "runs them.\ncd " + shell_quoted(fs::current_path().string()) + " || exit 1\nexec " + shell_quoted(exe) +
          " sweep --spec " + shell_quoted(spec_.path) + " --out " + shell_quoted(out_.string()) +
          " --slurm-task " + shell_quoted(task_file.string()) + "\n");
  std::string job;
  try {
    job = submit_array(spec_.slurm, script.string(), static_cast<int>(tasks.size()),
                       slurm.string());
  } catch (const InputError&) {  // nothing was submitted: leave nothing of it behind
    std::error_code ec;
    fs::remove(task_file, ec);
    fs::remove(script, ec);
    for (auto dir = created.rbegin(); dir != created.rend(); ++dir) fs::remove(*dir, ec);
    throw;
  }
  write_summary();
  write_text_atomically(job_file.string(), job + "\n");
  std::cerr << "gbasim sweep: submitted " << pending << " points as Slurm job " << job
            << " (" << tasks.size() << " array tasks; their logs in " << slurm.string() << ")\n";
  std::cout << job << "\n";
  if (wait) return follow(job);
  std::cerr << "gbasim sweep: follow it with squeue -j " << job
            << " or this command with --wait; when it ends, --summarize writes the summary and "
               "this command again submits what is missing\n";
  return 0;
}

int Sweep::follow(const std::string& job) {
  catch_interruptions();
  std::string last;
  int failures = 0;  // squeue's in a row: a controller that is restarting is waited for
  while (!interrupted) {
    int queued = 0;
    try {
      queued = tasks_in_queue(job);
      failures = 0;
    } catch (const InputError& e) {
      if (++failures >= 5) {
        throw InputError(std::string(e.what()) + " (5 times in a row; Slurm job " + job +
                         " goes on: follow it again with --wait)");
      }
      std::cerr << "gbasim sweep: " << e.what() << "; trying again\n";
      for (int k = 0; k < 20 && !interrupted; ++k)
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      continue;
    }
    size_t done = 0;
    for (size_t i = 0; i < points_.size(); ++i) done += fs::exists(file(i, ".json"));
    const std::string line = std::to_string(done) + " of " + std::to_string(points_.size()) +
                             " points have a result, " + std::to_string(queued) +
                             " tasks queued or running";
    if (line != last) std::cerr << "gbasim sweep: Slurm job " << job << ": " << line << "\n";
    last = line;
    if (queued == 0) return summarize();
    for (int k = 0; k < 20 && !interrupted; ++k)
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  std::cerr << "gbasim sweep: stopped following; Slurm job " << job << " goes on\n";
  return 130;
}

int Sweep::run_task(const std::string& task_file) {
  check_point_files();
  const char* id_text = std::getenv("SLURM_ARRAY_TASK_ID");
  if (id_text == nullptr)
    throw InputError("--slurm-task: SLURM_ARRAY_TASK_ID is not set (this runs inside a Slurm array task)");
  const std::string task_id = id_text;
  size_t task = 0;
  try {
    if (task_id.empty() || task_id.find_first_not_of("0123456789") != std::string::npos)
      throw std::invalid_argument(task_id);
    task = std::stoul(task_id);
  } catch (const std::exception&) {
    throw InputError("SLURM_ARRAY_TASK_ID '" + task_id + "' is not a task number");
  }
  const nlohmann::json doc = parse_json_or_discarded(read_json_text(task_file, "task file"));
  if (doc.is_discarded() || !doc.contains("tasks") || !doc["tasks"].is_array())
    throw InputError(task_file + ": not a task file of gbasim sweep");
  if (task >= doc["tasks"].size())
    throw InputError(task_file + ": no task " + task_id + " (it has " +
                     std::to_string(doc["tasks"].size()) + ")");
  std::map<std::string, size_t> index;
  for (size_t i = 0; i < points_.size(); ++i) index[points_[i].name] = i;
  catch_interruptions();
  const auto& names = doc["tasks"][task];
  if (!names.is_array())
    throw InputError(task_file + ": task " + task_id + " is not a list of point names");
  for (const auto& n : names) {
    if (!n.is_string()) throw InputError(task_file + ": task " + task_id + " lists a point name that is not a string");
    if (index.count(n.get<std::string>()) == 0)
      throw InputError(task_file + ": point '" + n.get<std::string>() + "' is not a point of " +
                       spec_.path + " (the sweep changed since it was submitted)");
  }
  fs::create_directories(out_ / "points");
  int failed = 0;
  for (size_t k = 0; k < names.size() && !interrupted; ++k) {
    const std::string name = names[k].get<std::string>();
    const size_t i = index.at(name);  // every name was found above
    if (!lock(i)) {
      std::cerr << "gbasim sweep: " << name << ": another process runs it now; left to it\n";
      continue;
    }
    if (finished(i)) {
      unlock(i);
      std::cerr << "gbasim sweep: " << name << ": has its result already\n";
      continue;
    }
    const auto start = std::chrono::steady_clock::now();
    const pid_t pid = launch(i);
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0) {
      if (errno != EINTR) throw InputError(std::string("waitpid: ") + std::strerror(errno));
      if (interrupted) ::kill(pid, SIGTERM);
    }
    if (interrupted) {  // Slurm's time limit, a preemption, scancel: the point has no result
      write_text_atomically(file(i, ".error").string(),
                            "stopped by a signal (a Slurm time limit, preemption or scancel) "
                            "before it finished\n");
      unlock(i);
      break;
    }
    completed(i, status,
              std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    failed += state_[i].status == "failed";
    report(i, k + 1, names.size());
  }
  if (interrupted) {
    std::cerr << "gbasim sweep: task " << task_id << " stopped by a signal; its unfinished points "
                 "run again when the sweep is submitted again\n";
    return 130;
  }
  return failed ? 1 : 0;
}

}  // namespace gbasim::sweep_pool
