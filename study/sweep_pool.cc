// The sweep's process pool: every point of a sweep as its own `gbasim run` process, J at a
// time; resumable (a finished point is never run again) and failure-tolerant (a failed point
// is recorded with its error; the others go on). The Slurm job array is sweep_array.cc's.
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

namespace gbasim {
namespace sweep_pool {

volatile sig_atomic_t interrupted = 0;
void on_signal(int) { interrupted = 1; }

void catch_interruptions() {
  struct sigaction action {};
  action.sa_handler = on_signal;  // no SA_RESTART: waitpid returns on a signal
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

std::string last_line(const fs::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last.empty() ? "no message (see " + log.string() + ")" : last;
}

std::string shell_quoted(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

int try_lock(const fs::path& path) {
  const int fd = ::open(path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) throw InputError(path.string() + ": cannot open: " + std::strerror(errno));
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  if (::fcntl(fd, F_SETLK, &lock) == 0) return fd;
  const int error = errno;
  ::close(fd);
  if (error == EACCES || error == EAGAIN) return -1;
  throw InputError(path.string() + ": cannot lock: " + std::strerror(error));
}

std::string duration(double seconds) {
  char text[32];
  if (seconds < 90)
    std::snprintf(text, sizeof text, "%.0f s", seconds);
  else if (seconds < 5400)
    std::snprintf(text, sizeof text, "%.0f min", seconds / 60);
  else
    std::snprintf(text, sizeof text, "%.1f h", seconds / 3600);
  return text;
}


void Sweep::check_point_files() const { check_points_folder((out_ / "points").string()); }

bool Sweep::lock(size_t i) {
  const int fd = try_lock(file(i, ".lock"));
  if (fd < 0) return false;
  locks_[i] = fd;
  return true;
}

void Sweep::unlock(size_t i) {
  const auto it = locks_.find(i);
  if (it == locks_.end()) return;
  ::close(it->second);
  locks_.erase(it);
}

bool Sweep::finished(size_t i) {
  const fs::path json = file(i, ".json");
  if (!fs::exists(json)) return false;
  const nlohmann::json doc = parse_json_or_discarded(read_text_or_empty(json.string()));
  if (doc.is_discarded() || !doc.contains("summary") || !doc.contains("spec")) return false;
  if (doc["spec"] != nlohmann::json::parse(spec_to_json(points_[i].spec).dump())) {
    std::cerr << "gbasim sweep: " << points_[i].name
              << ": its result is of another spec (the sweep changed); running it again\n";
    return false;
  }
  state_[i].status = "done";
  state_[i].summary = {{"summary", doc["summary"]}};
  const nlohmann::json wall = parse_json_or_discarded(read_text_or_empty(file(i, ".wall").string()));
  if (!wall.is_discarded() && wall.is_number()) state_[i].wall_s = wall.get<double>();
  return true;
}

pid_t Sweep::launch(size_t i) {
  const std::string exe = fs::read_symlink("/proc/self/exe").string();
  std::vector<std::string> args{exe, "run", "--spec", spec_.base};
  for (const auto& o : points_[i].overrides) {
    args.push_back("--set");
    args.push_back(o);
  }
  args.insert(args.end(), {"--out", file(i, ".json").string(), "--quiet"});
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0);
  const std::string log = file(i, ".log").string();
  posix_spawn_file_actions_addopen(&actions, 2, log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, exe.c_str(), &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc != 0) {
    throw InputError(std::string("cannot start gbasim run for point ") + points_[i].name + " (its log " +
                     log + "): " + std::strerror(rc));
  }
  return pid;
}

void Sweep::completed(size_t i, int status, double wall_s) {
  PointState& s = state_[i];
  std::error_code ec;
  const bool ok = WIFEXITED(status) && WEXITSTATUS(status) == 0 && finished(i);
  s.wall_s = wall_s;  // after finished(), which reads the wall time of an earlier run
  if (ok) {
    s.error.clear();
    write_text_atomically(file(i, ".wall").string(), std::to_string(wall_s) + "\n");
    fs::remove(file(i, ".error"), ec);
  } else {
    s.status = "failed";
    s.error = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                  : last_line(file(i, ".log"));
    write_text_atomically(file(i, ".error").string(), s.error + "\n");
  }
  unlock(i);
}

void Sweep::write_summary() const {
  std::string text = csv_line(summary_header(spec_));
  std::string wall = csv_line({"point", "status", "wall_s"});
  for (size_t i = 0; i < points_.size(); ++i) {
    const PointState& s = state_[i];
    text += csv_line(summary_row(spec_, points_[i], s.status, s.summary, s.error));
    wall += csv_line({points_[i].name, s.status, s.wall_s > 0.0 ? csv_number(s.wall_s) : ""});
  }
  write_text_atomically((out_ / "summary.csv").string(), text);
  write_text_atomically((out_ / "wall.csv").string(), wall);
}

int Sweep::run() {
  check_point_files();
  fs::create_directories(out_ / "points");
  std::vector<size_t> queue;
  for (size_t i = 0; i < points_.size(); ++i)
    if (!finished(i)) queue.push_back(i);
  const size_t total = points_.size(), already = total - queue.size();
  std::cerr << "gbasim sweep: " << total << " points, " << already << " already done, "
            << queue.size() << " to run, " << jobs_ << " at a time; results in " << out_.string()
            << "\n";
  write_summary();

  catch_interruptions();

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  std::map<pid_t, std::pair<size_t, Clock::time_point>> running;
  // However the loop below ends (an interruption, or an error such as a full disk), no point
  // it started runs on after it to write a result nobody waits for.
  auto stop_running = [&] {
    for (const auto& [pid, point] : running) ::kill(pid, SIGTERM);
    for (const auto& [pid, point] : running) ::waitpid(pid, nullptr, 0);
    for (const auto& [pid, point] : running) unlock(point.first);
    running.clear();
  };
  struct StopRunning {
    decltype(stop_running)& stop;
    ~StopRunning() { stop(); }
  } stop_on_exit{stop_running};
  size_t next = 0, finished_now = 0, failed = 0, elsewhere = 0;
  while ((next < queue.size() || !running.empty()) && !interrupted) {
    while (next < queue.size() && static_cast<int>(running.size()) < jobs_) {
      const size_t i = queue[next++];
      if (!lock(i)) {  // a Slurm task or another sweep runs it now
        std::cerr << "gbasim sweep: " << points_[i].name
                  << ": another process runs it now (its lock is held); left to it\n";
        ++elsewhere;
        continue;
      }
      if (finished(i)) {  // finished meanwhile by another process
        unlock(i);
        continue;
      }
      running[launch(i)] = {i, Clock::now()};
    }
    if (running.empty()) break;
    int status = 0;
    const pid_t pid = ::waitpid(-1, &status, 0);
    if (pid < 0) {
      if (errno == EINTR) continue;
      throw InputError(std::string("waitpid: ") + std::strerror(errno));
    }
    const auto it = running.find(pid);
    if (it == running.end()) continue;
    const auto [i, started] = it->second;
    running.erase(it);
    completed(i, status, since(started));
    write_summary();
    ++finished_now;
    failed += state_[i].status == "failed";
    report(i, already + finished_now, total);
    const size_t left = queue.size() - finished_now;
    if (left > 0)
      std::cerr << "gbasim sweep: about " << duration(since(start) / finished_now * left)
                << " left\n";
  }
  if (interrupted) {
    stop_running();
    write_summary();
    std::cerr << "gbasim sweep: interrupted; finished points are kept, run the same command "
                 "again to go on\n";
    return 130;
  }
  return ended(failed, elsewhere);
}

int Sweep::ended(size_t failed, size_t elsewhere) const {
  const size_t total = points_.size();
  std::cerr << "gbasim sweep: " << total - failed - elsewhere << " of " << total << " points done";
  if (failed) std::cerr << ", " << failed << " failed (their errors are in the summary)";
  if (elsewhere) std::cerr << ", " << elsewhere << " run by another process";
  std::cerr << "; summary: " << (out_ / "summary.csv").string() << "\n";
  return failed || elsewhere ? 1 : 0;
}

void Sweep::report(size_t i, size_t done, size_t total) const {
  const PointState& s = state_[i];
  char line[512];
  if (s.status == "done") {
    const auto& sum = s.summary["summary"];
    char tta[32] = "not reached";
    if (!sum["time_to_auc"].is_null())
      std::snprintf(tta, sizeof tta, "%.2f s", sum["time_to_auc"].get<double>());
    std::snprintf(line, sizeof line, "time-to-AUC %s, final AUC %s", tta,
                  sum["final_auc"].is_null()
                      ? "-"
                      : std::to_string(sum["final_auc"].get<double>()).substr(0, 6).c_str());
  } else {
    std::snprintf(line, sizeof line, "FAILED: %s", s.error.c_str());
  }
  std::cerr << "gbasim sweep: [" << done << "/" << total << "] " << points_[i].name << " ("
            << duration(s.wall_s) << "): " << line << "\n";
}

int Sweep::summarize() {
  std::vector<std::string> missing;
  size_t done = 0, failed = 0;
  for (size_t i = 0; i < points_.size(); ++i) {
    if (finished(i)) {
      ++done;
      continue;
    }
    state_[i] = PointState{};
    if (fs::exists(file(i, ".error"))) {
      state_[i].status = "failed";
      state_[i].error = last_line(file(i, ".error"));
      ++failed;
    }
    missing.push_back(points_[i].name);
  }
  fs::create_directories(out_ / "points");
  write_summary();
  if (done > 0) draw_convergence(out_.string(), "gbasim sweep");
  std::cerr << "gbasim sweep: " << done << " of " << points_.size() << " points done";
  if (failed) std::cerr << ", " << failed << " failed";
  std::cerr << "; summary: " << (out_ / "summary.csv").string() << "\n";
  if (!missing.empty()) {
    std::cerr << "gbasim sweep: without a result:";
    for (size_t k = 0; k < missing.size() && k < 20; ++k) std::cerr << " " << missing[k];
    if (missing.size() > 20) std::cerr << " and " << missing.size() - 20 << " more";
    std::cerr << "\n(run the same command again to run them)\n";
  }
  return missing.empty() ? 0 : 1;
}

}  // namespace sweep_pool

using sweep_pool::Sweep;
using sweep_pool::shell_quoted;
namespace fs = std::filesystem;

void check_points_folder(const std::string& folder) {
  std::error_code ec;
  if (!fs::is_directory(folder, ec)) return;  // nothing there yet, nothing in the way
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, ec)) {
    const fs::file_type type = entry.status(ec).type();
    if (type == fs::file_type::regular || type == fs::file_type::not_found) continue;
    throw InputError(entry.path().string() + ": in the points folder, where gbasim writes only "
                     "files, " + (type == fs::file_type::directory ? "a folder"
                                  : type == fs::file_type::fifo    ? "a named pipe"
                                                                    : "something not a file") +
                     " is in the way; move it away (nothing was run or written)");
  }
  if (ec) throw InputError(folder + ": cannot list: " + ec.message());
}

void draw_figure(const std::string& script, const std::vector<std::string>& args,
                 const std::string& who) {
  const std::string path = (fs::path(GBASIM_SCRIPTS) / script).string();
  std::string command = "/usr/bin/python3 " + shell_quoted(path);
  for (const std::string& a : args) {
    command += ' ';
    command += shell_quoted(a);
  }
  if (!fs::exists(path) || !fs::exists("/usr/bin/python3")) {
    std::cerr << who << ": no figure (" << path
              << " or /usr/bin/python3 not found); draw it with: " << command << "\n";
    return;
  }
  std::cerr << who << ": figures: " << command << "\n";
  if (std::system((command + " >/dev/null").c_str()) != 0)
    std::cerr << who << ": the figure failed (run the command above to see why)\n";
}

void draw_convergence(const std::string& out, const std::string& who) {
  draw_figure("plot_sweep.py", {"convergence", out, (fs::path(out) / "figures").string()}, who);
}

int run_points(const SweepSpec& sweep, std::vector<SweepPoint> points, const std::string& out,
               int jobs) {
  return Sweep(sweep, std::move(points), out.empty() ? fs::path(".") : fs::path(out), jobs).run();
}

int run_sweep_with(const SweepSpec& sweep, std::vector<SweepPoint> points, const std::string& out,
                   const SweepLaunch& launch) {
  Sweep s(sweep, std::move(points), out.empty() ? fs::path(".") : fs::path(out), launch.jobs);
  switch (launch.kind) {
    case SweepLaunch::Kind::kSubmit:
      return s.submit(launch.wait);
    case SweepLaunch::Kind::kTask:
      return s.run_task(launch.task_file);
    case SweepLaunch::Kind::kSummarize:
      return s.summarize();
    case SweepLaunch::Kind::kLocal:
      break;
  }
  return s.run();
}

}  // namespace gbasim
