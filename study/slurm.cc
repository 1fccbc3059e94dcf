// gbasim sweep's Slurm commands: sbatch to submit a job array, squeue to follow it. Each is
// run without a shell (its arguments as given), its standard output and error read back.
#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <sstream>

#include "base/error.h"
#include "study/sweep.h"

extern char** environ;

namespace gbasim {
namespace {

struct Output {
  int exit_code = -1;  // -1: killed by a signal
  std::string text;    // standard output and error together
};

Output run_command(const std::vector<std::string>& args) {
  int pipe_fds[2];
  if (::pipe(pipe_fds) != 0) throw InputError(std::string("pipe: ") + std::strerror(errno));
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 1);
  posix_spawn_file_actions_adddup2(&actions, pipe_fds[1], 2);
  posix_spawn_file_actions_addclose(&actions, pipe_fds[0]);
  std::vector<std::string> copy = args;
  std::vector<char*> argv;
  for (auto& a : copy) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawnp(&pid, argv[0], &actions, nullptr, argv.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  ::close(pipe_fds[1]);
  if (rc != 0) {
    ::close(pipe_fds[0]);
    throw InputError("cannot run " + args[0] + ": " + std::strerror(rc) +
                     " (is Slurm installed and on PATH?)");
  }
  Output out;
  char buffer[4096];
  ssize_t n = 0;
  while ((n = ::read(pipe_fds[0], buffer, sizeof buffer)) > 0 || (n < 0 && errno == EINTR))
    if (n > 0) out.text.append(buffer, static_cast<size_t>(n));
  ::close(pipe_fds[0]);
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0 && errno == EINTR) {
  }
  out.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

std::string trimmed(std::string s) {
  while (!s.empty() && (s.back() == '\n' || s.back() == ' ')) s.pop_back();
  return s;
}

}  // namespace

void check_sbatch_options(const std::vector<std::string>& options) {
  for (const std::string& o : options) {
    for (const char* own : {"--array", "--output", "--job-name", "--parsable", "-a", "-o", "-J"}) {
      const std::string name = own;
      const bool long_form = name.size() > 2;
      if (o == name || (long_form && o.rfind(name + "=", 0) == 0) ||
          (!long_form && o.rfind(name, 0) == 0)) {
        throw InputError("sbatch option '" + o +
                         "' is one gbasim sets itself (--array, --output, --job-name, "
                         "--parsable): leave it out");
      }
    }
  }
}

void merge_slurm_settings(SlurmSettings& file, const SlurmSettings& command_line,
                          int points_per_task) {
  for (auto field : {&SlurmSettings::partition, &SlurmSettings::account, &SlurmSettings::time,
                     &SlurmSettings::mem})
    if (!(command_line.*field).empty()) file.*field = command_line.*field;
  file.options.insert(file.options.end(), command_line.options.begin(), command_line.options.end());
  check_sbatch_options(file.options);
  if (points_per_task > 0) file.points_per_task = points_per_task;
}

std::string submit_array(const SlurmSettings& slurm, const std::string& script, int tasks,
                         const std::string& log_dir) {
  std::vector<std::string> args{"sbatch", "--parsable", "--job-name=gbasim-sweep",
                                "--array=0-" + std::to_string(tasks - 1),
                                "--output=" + log_dir + "/%A_%a.log"};
  if (!slurm.partition.empty()) args.push_back("--partition=" + slurm.partition);
  if (!slurm.account.empty()) args.push_back("--account=" + slurm.account);
  if (!slurm.time.empty()) args.push_back("--time=" + slurm.time);
  if (!slurm.mem.empty()) args.push_back("--mem=" + slurm.mem);
  args.insert(args.end(), slurm.options.begin(), slurm.options.end());
  args.push_back(script);
  const Output out = run_command(args);
  // --parsable prints "jobid" or "jobid;cluster" as its last line; warnings may come before.
  std::istringstream lines(out.text);
  std::string line, id;
  while (std::getline(lines, line)) {
    const std::string first = line.substr(0, line.find(';'));
    if (!first.empty() && first.find_first_not_of("0123456789") == std::string::npos) id = first;
  }
  if (out.exit_code != 0 || id.empty()) {
    std::string command;
    for (const auto& a : args) command += (command.empty() ? "" : " ") + a;
    throw InputError("sbatch failed (" + command + "): " + trimmed(out.text));
  }
  return id;
}

int tasks_in_queue(const std::string& job_id) {
  const Output out =
      run_command({"squeue", "--noheader", "--array", "--jobs=" + job_id, "--format=%i"});
  if (out.exit_code != 0) {
    // A job that has left the queue is "invalid" to squeue; anything else is a failure.
    if (out.text.find("Invalid job id") != std::string::npos) return 0;
    throw InputError("squeue failed (squeue --jobs=" + job_id + "): " + trimmed(out.text));
  }
  int tasks = 0;
  std::istringstream lines(out.text);
  std::string line;
  while (std::getline(lines, line))
    if (line == job_id || line.rfind(job_id + "_", 0) == 0) ++tasks;
  return tasks;
}

}  // namespace gbasim
