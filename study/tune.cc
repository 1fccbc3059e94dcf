// gbasim tune: the paper's protocol starts by tuning for sync. Finds sync's best value of one
// optimizer setting (the learning rate by default) for a spec's model, data and global batch:
// a log-spaced grid, widened while the best is at its edge, then refined around the best,
// every value over K seeds, scored by the mean final test AUC (time-to-AUC breaks ties). The
// runs are a sweep's points (study/sweep.h), so an interrupted tune resumes where it stopped.
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <limits>
#include <map>
#include <thread>

#include "base/error.h"
#include "base/files.h"
#include "base/stats.h"
#include "study/sweep.h"
#include "study/tune.h"
#include "experiment/json_file.h"
#include "experiment/result.h"

namespace gbasim {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// A value to 3 significant digits, so that grid values read well and name points alike.
double rounded(double x) {
  char text[32];
  std::snprintf(text, sizeof text, "%.3g", x);
  return std::stod(text);
}

std::string number(double x, const char* format = "%.4g") {
  char text[32];
  std::snprintf(text, sizeof text, format, x);
  return text;
}

// What K seeds of one value gave.
struct Scored {
  std::vector<double> score;           // final AUC; 0 for a run that did not complete
  std::vector<double> time_to_auc;     // the seeds that reached the target
  std::vector<std::string> not_completed;  // "seed 2: diverged", ...
  Interval auc;
  double mean_time = std::numeric_limits<double>::infinity();
};

class Tuner {
 public:
  explicit Tuner(TuneOptions o) : o_(std::move(o)) {}
  // The chosen value; nothing when interrupted.
  std::optional<double> run();

 private:
  // Runs the values not run yet; false when interrupted or when a run could not start.
  bool evaluate(const std::vector<double>& values, const std::string& stage);
  double best() const;
  void write(double chosen) const;

  TuneOptions o_;
  std::map<double, Scored> scored_;
  int status_ = 0;
};

bool Tuner::evaluate(const std::vector<double>& wanted, const std::string& stage) {
  std::vector<double> values;
  for (double v : wanted)
    if (v > 0.0 && !scored_.count(v)) values.push_back(v);
  if (values.empty()) return true;
  SweepSpec sweep;
  sweep.path = o_.spec;
  sweep.base = o_.spec;
  sweep.fixed = o_.overrides;
  SweepAxis axis{o_.key, {}};
  for (double v : values) axis.values.push_back(v);
  sweep.axes.push_back(axis);
  for (int s = 1; s <= o_.seeds; ++s) sweep.seeds.push_back(static_cast<uint64_t>(s));
  sweep.description = "gbasim tune of " + o_.key + " for sync";
  std::vector<SweepPoint> points = plan_sweep(sweep);
  std::cerr << "gbasim tune: " << stage << ": " << values.size() << " values of " << o_.key
            << " x " << o_.seeds << " seeds\n";
  const std::vector<SweepPoint> planned = points;
  status_ = run_points(sweep, std::move(points), o_.out, o_.jobs);
  if (status_ == 130) return false;
  for (const SweepPoint& p : planned) {
    const double v = p.values[0].get<double>();
    Scored& s = scored_[v];
    const fs::path file = fs::path(o_.out) / "points" / (p.name + ".json");
    nlohmann::json summary;
    if (fs::exists(file)) {
      const nlohmann::json doc = parse_json_or_discarded(read_text_or_empty(file.string()));
      if (!doc.is_discarded() && doc.contains("summary")) summary = doc["summary"];
    }
    const std::string seed = "seed " + std::to_string(*p.seed);
    if (summary.is_null()) {
      s.score.push_back(0.0);
      s.not_completed.push_back(seed + ": failed");
      continue;
    }
    const std::string status = summary["status"].get<std::string>();
    const bool ok = status == "completed" && summary["final_auc"].is_number() &&
                    std::isfinite(summary["final_auc"].get<double>());
    s.score.push_back(ok ? summary["final_auc"].get<double>() : 0.0);
    if (!ok) s.not_completed.push_back(seed + ": " + status);
    if (ok && summary["time_to_auc"].is_number())
      s.time_to_auc.push_back(summary["time_to_auc"].get<double>());
  }
  for (double v : values) {
    Scored& s = scored_[v];
    s.auc = mean_interval(s.score);
    if (s.time_to_auc.size() == s.score.size()) s.mean_time = mean_interval(s.time_to_auc).mean;
  }
  return true;
}

// Among the values that completed on every seed (a value that diverged on any is never
// chosen), the highest mean score; among those within `tie` of it, the one that reached the
// target on every seed soonest on average (the highest score when none did). 0 when no value
// completed on every seed.
double Tuner::best() const {
  double top = -1.0;
  for (const auto& [v, s] : scored_)
    if (s.not_completed.empty()) top = std::max(top, s.auc.mean);
  double chosen = 0.0, chosen_time = std::numeric_limits<double>::infinity(), chosen_score = -1.0;
  for (const auto& [v, s] : scored_) {
    if (!s.not_completed.empty() || s.auc.mean < top - o_.tie) continue;
    const bool sooner = s.mean_time < chosen_time;
    const bool same_time = s.mean_time == chosen_time && s.auc.mean > chosen_score;
    if (chosen == 0.0 || sooner || same_time) {
      chosen = v;
      chosen_time = s.mean_time;
      chosen_score = s.auc.mean;
    }
  }
  return chosen;
}

void Tuner::write(double chosen) const {
  Json values = Json::array();
  std::printf("%-12s %-34s %-24s %s\n", o_.key.substr(o_.key.rfind('.') + 1).c_str(),
              "final AUC, mean [95% interval]", "time-to-AUC (reached)", "not completed");
  for (const auto& [v, s] : scored_) {
    const std::string auc = s.auc.n >= 2 ? number(s.auc.mean, "%.4f") + " [" +
                                               number(s.auc.low, "%.4f") + ", " +
                                               number(s.auc.high, "%.4f") + "]"
                                         : number(s.auc.mean, "%.4f");
    const std::string time = (std::isfinite(s.mean_time) ? number(s.mean_time, "%.2f") + " s"
                                                         : std::string("-")) +
                             " (" + std::to_string(s.time_to_auc.size()) + "/" +
                             std::to_string(s.score.size()) + ")";
    std::string failed;
    for (const auto& f : s.not_completed) failed += (failed.empty() ? "" : "; ") + f;
    std::printf("%-12s %-34s %-24s %s%s\n", number(v).c_str(), auc.c_str(), time.c_str(),
                failed.empty() ? "-" : failed.c_str(), v == chosen ? "   <- chosen" : "");
    Json row = {{"value", v},
                {"seeds", s.score.size()},
                {"final_auc", {{"mean", s.auc.mean}, {"low", s.auc.low}, {"high", s.auc.high}}},
                {"scores", s.score},
                {"reached_target", s.time_to_auc.size()},
                {"mean_time_to_auc", std::isfinite(s.mean_time) ? Json(s.mean_time) : Json()},
                {"not_completed", s.not_completed}};
    for (auto& [k, x] : row["final_auc"].items())
      if (!std::isfinite(x.get<double>())) x = nullptr;
    values.push_back(row);
  }
  // The fragment: {"optimizer": {"learning_rate": v}} for the key "optimizer.learning_rate".
  Json fragment = Json::object();
  Json* node = &fragment;
  std::string rest = o_.key;
  for (size_t dot; (dot = rest.find('.')) != std::string::npos; rest = rest.substr(dot + 1))
    node = &(*node)[rest.substr(0, dot)];
  (*node)[rest] = chosen;
  const Json doc = {{"spec", o_.spec},
                    {"overrides", o_.overrides},
                    {"key", o_.key},
                    {"mode", "sync"},
                    {"seeds", o_.seeds},
                    {"score", "mean final test AUC over the seeds (0 for a run that did not "
                              "complete; a value with such a run is never chosen); ties within " +
                                  number(o_.tie) + " go to the soonest mean time-to-AUC"},
                    {"chosen", chosen > 0.0 ? Json(chosen) : Json()},
                    {"values", values}};
  write_json_atomically((fs::path(o_.out) / "tune.json").string(), doc);
  if (!(chosen > 0.0)) {
    throw InputError("no value of " + o_.key + " completed on every seed (each " +
                     "diverged or failed on one at least: see the table and " +
                     (fs::path(o_.out) / "tune.json").string() +
                     "); no fragment written. Try a range of smaller values (--from, --to)");
  }
  write_json_atomically(o_.fragment, fragment);
  std::cerr << "gbasim tune: " << o_.key << " = " << number(chosen) << " for sync; wrote "
            << o_.fragment << " (give it to gbasim run, sweep or compare with --with) and "
            << (fs::path(o_.out) / "tune.json").string() << "\n";
}

std::optional<double> Tuner::run() {
  const double step = 1.0 / o_.per_decade;  // decades
  std::vector<double> grid;
  for (int i = 0;; ++i) {
    const double v = o_.from * std::pow(10.0, i * step);
    if (v > o_.to * (1.0 + 1e-9)) break;
    grid.push_back(rounded(v));
  }
  if (!evaluate(grid, "grid")) return std::nullopt;
  // Widen while the best is at an edge (at most 3 steps each way).
  for (int widen = 0; widen < 3; ++widen) {
    const double b = best(), low = scored_.begin()->first, high = scored_.rbegin()->first;
    if (b == 0.0 || (b != low && b != high)) break;
    const double next = rounded(b * std::pow(10.0, b == low ? -step : step));
    if (!evaluate({next}, b == low ? "widening down" : "widening up")) return std::nullopt;
  }
  double h = step;
  for (int level = 1; level <= o_.refine; ++level) {
    h /= 2;
    const double b = best();
    if (b == 0.0) break;
    if (!evaluate({rounded(b / std::pow(10.0, h)), rounded(b * std::pow(10.0, h))},
                  "refinement " + std::to_string(level)))
      return std::nullopt;
  }
  const double chosen = best();
  write(chosen);
  if (status_ != 0)
    std::cerr << "gbasim tune: some runs failed; their values were not chosen (tune.json)\n";
  return chosen;
}

}  // namespace

std::optional<double> tune_sync(const TuneOptions& options) {
  std::filesystem::create_directories(options.out);
  return Tuner(options).run();
}

}  // namespace gbasim
