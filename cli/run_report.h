// What `gbasim run` prints and parses beside the run itself: the timeline's options, the
// summary table, the engine's costs (--profile) and notes on the result.
#pragma once

#include <chrono>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>

#include "experiment/spec.h"
#include "sim/simulation.h"
#include "sim/timeline.h"

namespace gbasim {

// --timeline FILE, --timeline-window FROM:TO and --timeline-events N as a Timeline; throws
// boost::program_options::error naming the option.
Timeline parse_timeline(const std::string& path, const std::string& window, int64_t events);

// Refuses a timeline file that is the result's own (--out), or that cannot be written.
void check_timeline_file(const std::string& timeline_path, const std::string& out_path);

// A run's progress on standard error: a line at each evaluation, and one after `every_s` wall
// seconds without any. Each says the mode, simulated time, global step and samples, then what
// the run stands at, then the wall time.
class ProgressLines {
 public:
  ProgressLines(std::string mode, double every_s)
      : mode_(std::move(mode)), every_s_(every_s), start_(std::chrono::steady_clock::now()) {}
  double wall() const;  // seconds since the run began
  void evaluation(const EvaluationPoint& p);
  void progress(const Progress& p);

 private:
  void line(double time, int64_t step, int64_t samples, const char* rest);
  std::string mode_;
  double every_s_;
  double last_line_s_ = 0.0;  // when the last line was printed
  std::chrono::steady_clock::time_point start_;
};

// On standard error, what the result says beyond its figures: a trace replayed by more workers
// than it has, a run that did not complete.
void print_result_notes(const ExperimentSpec& spec, const nlohmann::ordered_json& result);

// On `to` (standard output, or table_stream's choice), the result's summary as a two-line table
// (mode, time-to-AUC, final AUC, global steps, mean staleness, dropped, simulated time).
void print_summary_table(const std::string& mode, const nlohmann::ordered_json& result,
                         std::FILE* to = stdout);

// On standard error, where the engine's wall time went (--profile). Wall-clock costs stay out of
// the result, which must not depend on the machine.
void print_profile(const SimulationCost& cost);

}  // namespace gbasim
