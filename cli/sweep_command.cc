// gbasim sweep: runs every point of a sweep as its own `gbasim run` process, J at a time;
// resumable (a finished point is never run again) and failure-tolerant (a failed point is
// recorded with its error; the others go on).
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/program_options.hpp>
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
#include "cli/commands.h"
#include "base/files.h"
#include "cli/sweep.h"

extern char** environ;

namespace gbasim {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;

volatile sig_atomic_t interrupted = 0;
void on_signal(int) { interrupted = 1; }

std::string read_text(const fs::path& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

// The last non-empty line of a run's log: gbasim's error message when it failed.
std::string last_line(const fs::path& log) {
  std::ifstream in(log);
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  return last.empty() ? "no message (see " + log.string() + ")" : last;
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

  int run();

 private:
  fs::path file(size_t i, const char* ext) const {
    return out_ / "points" / (points_[i].name + ext);
  }
  // Whether point i has a result of this very spec, which is then loaded.
  bool finished(size_t i);
  pid_t launch(size_t i);
  void completed(size_t i, int status, double wall_s);
  void write_summary() const;

  SweepSpec spec_;
  std::vector<SweepPoint> points_;
  fs::path out_;
  int jobs_;
  std::vector<PointState> state_;
};

bool Sweep::finished(size_t i) {
  const fs::path json = file(i, ".json");
  if (!fs::exists(json)) return false;
  const nlohmann::json doc = nlohmann::json::parse(read_text(json), nullptr, false);
  if (doc.is_discarded() || !doc.contains("summary") || !doc.contains("spec")) return false;
  if (doc["spec"] != nlohmann::json::parse(spec_to_json(points_[i].spec).dump())) {
    std::cerr << "gbasim sweep: " << points_[i].name
              << ": its result is of another spec (the sweep changed); running it again\n";
    return false;
  }
  state_[i].status = "done";
  state_[i].summary = {{"summary", doc["summary"]}};
  const nlohmann::json wall = nlohmann::json::parse(read_text(file(i, ".wall")), nullptr, false);
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
  if (rc != 0) throw InputError(std::string("cannot start gbasim run: ") + std::strerror(rc));
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
    return;
  }
  s.status = "failed";
  s.error = WIFSIGNALED(status) ? "killed by signal " + std::to_string(WTERMSIG(status))
                                : last_line(file(i, ".log"));
  write_text_atomically(file(i, ".error").string(), s.error + "\n");
}

void Sweep::write_summary() const {
  std::string text = csv_line(summary_header(spec_));
  for (size_t i = 0; i < points_.size(); ++i) {
    const PointState& s = state_[i];
    text += csv_line(summary_row(spec_, points_[i], s.status, s.summary, s.wall_s, s.error));
  }
  write_text_atomically((out_ / "summary.csv").string(), text);
}

int Sweep::run() {
  fs::create_directories(out_ / "points");
  std::vector<size_t> queue;
  for (size_t i = 0; i < points_.size(); ++i)
    if (!finished(i)) queue.push_back(i);
  const size_t total = points_.size(), already = total - queue.size();
  std::cerr << "gbasim sweep: " << total << " points, " << already << " already done, "
            << queue.size() << " to run, " << jobs_ << " at a time; results in " << out_.string()
            << "\n";
  write_summary();

  struct sigaction action {};
  action.sa_handler = on_signal;  // no SA_RESTART: waitpid returns on a signal
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);

  using Clock = std::chrono::steady_clock;
  const auto start = Clock::now();
  auto since = [](Clock::time_point t) {
    return std::chrono::duration<double>(Clock::now() - t).count();
  };
  std::map<pid_t, std::pair<size_t, Clock::time_point>> running;
  size_t next = 0, finished_now = 0, failed = 0;
  while ((next < queue.size() || !running.empty()) && !interrupted) {
    while (next < queue.size() && static_cast<int>(running.size()) < jobs_) {
      const size_t i = queue[next++];
      running[launch(i)] = {i, Clock::now()};
    }
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
    const PointState& s = state_[i];
    failed += s.status == "failed";
    const size_t left = queue.size() - finished_now;
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
    std::cerr << "gbasim sweep: [" << already + finished_now << "/" << total << "] "
              << points_[i].name << " (" << duration(s.wall_s) << "): " << line;
    if (left > 0)
      std::cerr << "; about " << duration(since(start) / finished_now * left) << " left";
    std::cerr << "\n";
  }
  if (interrupted) {
    for (const auto& [pid, point] : running) ::kill(pid, SIGTERM);
    for (const auto& [pid, point] : running) ::waitpid(pid, nullptr, 0);
    write_summary();
    std::cerr << "gbasim sweep: interrupted; finished points are kept, run the same command "
                 "again to go on\n";
    return 130;
  }
  std::cerr << "gbasim sweep: " << total - failed << " of " << total << " points done";
  if (failed) std::cerr << ", " << failed << " failed (their errors are in the summary)";
  std::cerr << "; summary: " << (out_ / "summary.csv").string() << "\n";
  return failed ? 1 : 0;
}

}  // namespace

int run_points(const SweepSpec& sweep, std::vector<SweepPoint> points, const std::string& out,
               int jobs) {
  return Sweep(sweep, std::move(points), out.empty() ? fs::path(".") : fs::path(out), jobs).run();
}

int run_sweep(const std::vector<std::string>& args) {
  std::string spec_path, out_dir;
  int jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  bool dry_run = false;
  po::options_description desc(
      "gbasim sweep --spec SWEEP.json [options]\n\n"
      "Runs a base spec over axes of values and seeds (docs/sweep.md), one 'gbasim run'\n"
      "process per point, J at a time. Each point's result goes to OUT/points/<point>.json\n"
      "(its progress log beside it), and OUT/summary.csv gets a row per point. Run the same\n"
      "command again after an interruption: finished points are kept, failed and missing\n"
      "ones run.\n\nOptions");
  desc.add_options()("help,h", "show this help")("spec", po::value(&spec_path)->value_name("FILE"),
                                                 "the sweep file (JSON)")(
      "out", po::value(&out_dir)->value_name("DIR"),
      "where results go (default: the sweep file's folder)")(
      "jobs,j", po::value(&jobs)->default_value(jobs), "points run at once (default: the cores)")(
      "dry-run", po::bool_switch(&dry_run), "list the points and their overrides, run nothing");
  po::variables_map vm;
  if (!parse_options(args, desc, vm)) return 0;
  if (spec_path.empty()) throw po::error("--spec FILE is required");
  if (jobs < 1) throw po::error("--jobs must be at least 1");
  const SweepSpec sweep = load_sweep(spec_path);
  std::vector<SweepPoint> points = plan_sweep(sweep);
  if (dry_run) {
    for (const auto& p : points) {
      std::cout << p.name;
      for (const auto& o : p.overrides) std::cout << "  --set " << o;
      std::cout << "\n";
    }
    return 0;
  }
  const fs::path out = out_dir.empty() ? fs::path(spec_path).parent_path() : fs::path(out_dir);
  return run_points(sweep, std::move(points), out.string(), jobs);
}

}  // namespace gbasim
