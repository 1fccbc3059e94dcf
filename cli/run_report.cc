// What `gbasim run` prints and parses beside the run itself (run_report.h).
#include "cli/run_report.h"

#include <boost/program_options.hpp>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <iostream>
#include <limits>

#include "base/files.h"

namespace gbasim {

namespace po = boost::program_options;

Timeline parse_timeline(const std::string& path, const std::string& window, int64_t events) {
  if (path.empty()) throw po::error("--timeline-window and --timeline-events need --timeline FILE");
  if (events < 1) throw po::error("--timeline-events must be at least 1");
  double from = 0.0, to = std::numeric_limits<double>::infinity();
  if (!window.empty()) {
    const size_t colon = window.find(':');
    char* end = nullptr;
    bool ok = colon != std::string::npos;
    if (ok) {
      const std::string a = window.substr(0, colon), b = window.substr(colon + 1);
      from = std::strtod(a.c_str(), &end);
      ok = !a.empty() && *end == '\0';
      to = std::strtod(b.c_str(), &end);
      ok = ok && !b.empty() && *end == '\0';
    }
    if (!ok || !std::isfinite(from) || !std::isfinite(to) || from < 0.0 || to <= from) {
      const std::string what = "simulated seconds with 0 <= FROM < TO, not '" + window + "'";
      throw po::error("--timeline-window must be FROM:TO, " + what);
    }
  }
  return Timeline(from, to, events);
}

void check_timeline_file(const std::string& timeline_path, const std::string& out_path) {
  // The same file by another name (a link, "./"): where each path leads.
  std::error_code ec;
  auto where = [&ec](const std::string& path) {
    const std::filesystem::path p = std::filesystem::weakly_canonical(path, ec);
    return ec ? std::filesystem::absolute(path).lexically_normal() : p;
  };
  if (where(timeline_path) == where(out_path))
    throw po::error("--timeline " + timeline_path + " is the result's file (--out): name another");
  check_output_file(timeline_path, "timeline");
}

double ProgressLines::wall() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void ProgressLines::evaluation(const EvaluationPoint& p) {
  char rest[80];
  std::snprintf(rest, sizeof rest, "test AUC %.4f  log-loss %.4f", p.auc, p.logloss);
  line(p.time, p.global_step, p.samples, rest);
}

void ProgressLines::progress(const Progress& p) {
  if (wall() - last_line_s_ < every_s_) return;  // an evaluation line said it
  char rest[80];
  std::snprintf(rest, sizeof rest, "worker steps %lld  messages %lld",
                static_cast<long long>(p.worker_steps), static_cast<long long>(p.messages));
  line(p.time, p.global_step, p.samples, rest);
}

void ProgressLines::line(double time, int64_t step, int64_t samples, const char* rest) {
  last_line_s_ = wall();
  char text[240];
  std::snprintf(text, sizeof text,
                "  %-6s t=%9.3f s  step %7lld  samples %9lld  %s  (wall %.0f s)\n", mode_.c_str(),
                time, static_cast<long long>(step), static_cast<long long>(samples), rest,
                last_line_s_);
  std::cerr << text;
}

void print_result_notes(const ExperimentSpec& spec, const nlohmann::ordered_json& result) {
  if (result.contains("trace") && result["trace"]["wraps"].get<bool>()) {
    std::cerr << "gbasim run: note: some trace workers or machines are replayed by more than "
                 "one of the "
              << spec.training.num_workers
              << " simulated workers (too few in the trace, or listed twice; result: "
                 "trace.assignment)\n";
  }
  const auto& s = result["summary"];
  if (s["status"] != "completed") {
    std::cerr << "gbasim run: the run ended with status \"" << s["status"].get<std::string>()
              << "\": " << s["status_detail"].get<std::string>() << '\n';
  }
}

void print_summary_table(const std::string& mode, const nlohmann::ordered_json& result,
                         std::FILE* to) {
  const auto& s = result["summary"];
  char time_to_auc[32] = "not reached";
  if (!s["time_to_auc"].is_null())
    std::snprintf(time_to_auc, sizeof time_to_auc, "%.3f s", s["time_to_auc"].get<double>());
  char final_auc[32] = "-";
  if (s["final_auc"].is_number() && std::isfinite(s["final_auc"].get<double>()))
    std::snprintf(final_auc, sizeof final_auc, "%.4f", s["final_auc"].get<double>());
  std::fprintf(to, "%-8s %-16s %-10s %-12s %-14s %-10s %s\n", "mode", "time-to-AUC", "final AUC",
               "global steps", "mean staleness", "dropped", "simulated time");
  std::fprintf(to, "%-8s %-16s %-10s %-12lld %-14.3f %-10lld %.3f s\n", mode.c_str(), time_to_auc,
               final_auc, static_cast<long long>(s["global_steps"].get<int64_t>()),
               s["mean_staleness"].get<double>(),
               static_cast<long long>(s["gradients"]["dropped"].get<int64_t>()),
               s["simulated_time"].get<double>());
}

void print_profile(const SimulationCost& cost) {
  const double simulator_s = cost.wall_s - cost.math_s - cost.evaluation_s;
  std::fprintf(stderr,
               "gbasim run: wall %.3f s in the engine: model math %.3f s, evaluation %.3f s, "
               "simulator %.3f s (update rule %.3f s of it) "
               "(%lld messages, %.0f a second); overhead (math + simulator) / math = %.3f\n",
               cost.wall_s, cost.math_s, cost.evaluation_s, simulator_s, cost.rule_s,
               static_cast<long long>(cost.messages),
               static_cast<double>(cost.messages) / cost.wall_s,
               cost.math_s > 0.0 ? (cost.math_s + simulator_s) / cost.math_s : 0.0);
}

}  // namespace gbasim
