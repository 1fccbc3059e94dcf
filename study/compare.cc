// The comparison (study/compare.h): every mode over K paired seeds with the same settings,
// time-to-AUC and final AUC per mode with 95% intervals, paired differences against sync and
// against GBA, the resources spent to reach the target, and the recommendation with its
// evidence.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <sstream>
#include <thread>

#include "base/error.h"
#include "base/files.h"
#include "base/stats.h"
#include "experiment/json_file.h"
#include "experiment/result.h"
#include "study/compare.h"
#include "study/report.h"
#include "study/sweep.h"
#include "study/tune.h"

extern char** environ;

namespace gbasim {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// The comparison's Markdown table (its header, then a row a mode) into `md`, and each mode's
// numbers into `modes_json`.
void mode_rows(const std::vector<std::string>& modes, const std::map<std::string, ModeRuns>& runs,
               int seeds, std::ostringstream& md, Json& modes_json) {
  const ModeRuns* sync = runs.count("sync") ? &runs.at("sync") : nullptr;
  const ModeRuns* gba = runs.count("gba") ? &runs.at("gba") : nullptr;
  md << "| mode | reached | time-to-AUC (s) | speed-up over sync | time vs sync (s) | time vs GBA "
        "(s) | final AUC | AUC vs sync | AUC vs GBA | worker-hours to target | server "
        "core-hours to target |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | "
        "--- |\n";
  for (const auto& m : modes) {
    const ModeRuns& r = runs.at(m);
    const Interval t = mean_interval(finite(r.time_to_auc)), a = mean_interval(finite(r.final_auc));
    const Interval tvs = sync ? paired(r.time_to_auc, sync->time_to_auc) : Interval{};
    const Interval tvg = gba ? paired(r.time_to_auc, gba->time_to_auc) : Interval{};
    const Interval avs = sync ? paired(r.final_auc, sync->final_auc) : Interval{};
    const Interval avg = gba ? paired(r.final_auc, gba->final_auc) : Interval{};
    const Interval wh = mean_interval(finite(r.worker_hours));
    const Interval sh = mean_interval(finite(r.server_core_hours));
    const double speedup = sync ? mean_interval(finite(sync->time_to_auc)).mean / t.mean : kNaN;
    const std::string reached = std::to_string(r.reached()) + "/" + std::to_string(seeds);
    md << "| " << m << " | " << reached << " | " << text(t, "%.3g") << " | " << fmt(speedup, "%.2f")
       << " | " << (m == "sync" ? "-" : text(tvs, "%.3g", true)) << " | "
       << (m == "gba" ? "-" : text(tvg, "%.3g", true)) << " | " << text(a, "%.4f") << " | "
       << (m == "sync" ? "-" : text(avs, "%.4f", true)) << " | "
       << (m == "gba" ? "-" : text(avg, "%.4f", true)) << " | " << text(wh, "%.3g") << " | "
       << text(sh, "%.3g") << " |\n";
    Json not_completed = r.not_completed;
    modes_json.push_back({{"mode", m},
                          {"reached_target", r.reached()},
                          {"seeds", seeds},
                          {"time_to_auc", interval_json(t)},
                          {"speedup_over_sync", std::isfinite(speedup) ? Json(speedup) : Json()},
                          {"time_vs_sync", interval_json(tvs)},
                          {"time_vs_gba", interval_json(tvg)},
                          {"final_auc", interval_json(a)},
                          {"auc_vs_sync", interval_json(avs)},
                          {"auc_vs_gba", interval_json(avg)},
                          {"worker_hours_to_target", interval_json(wh)},
                          {"server_core_hours_to_target", interval_json(sh)},
                          {"not_completed", not_completed}});
  }
}

}  // namespace

ModeRuns read_mode(const std::string& mode, const std::vector<SweepPoint>& points,
                   const fs::path& out) {
  ModeRuns r;
  r.mode = mode;
  for (const SweepPoint& p : points) {
    if (p.values[0].get<std::string>() != mode) continue;
    const fs::path file = out / "points" / (p.name + ".json");
    nlohmann::json doc;
    if (fs::exists(file)) {
      doc = parse_json_or_discarded(read_text_or_empty(file.string()));
    }
    const std::string seed = "seed " + std::to_string(*p.seed);
    if (doc.is_discarded() || !doc.contains("summary")) {
      r.time_to_auc.push_back(kNaN);
      r.final_auc.push_back(kNaN);
      r.worker_hours.push_back(kNaN);
      r.server_core_hours.push_back(kNaN);
      r.simulated_time.push_back(kNaN);
      r.not_completed.push_back(seed + ": failed");
      continue;
    }
    const auto& s = doc["summary"];
    const auto& c = doc["spec"]["cluster"];
    const bool completed = s["status"] == "completed";
    if (!completed) r.not_completed.push_back(seed + ": " + s["status"].get<std::string>());
    const double t = s["time_to_auc"].is_number() ? s["time_to_auc"].get<double>() : kNaN;
    r.time_to_auc.push_back(t);
    r.simulated_time.push_back(s["simulated_time"].get<double>());
    r.final_auc.push_back(completed && s["final_auc"].is_number() ? s["final_auc"].get<double>()
                                                                  : kNaN);
    // Resources to the target: every worker for the whole time (workers of every pool, which
    // a run holds throughout), and the servers' cores where the mode uses them.
    int workers = doc["spec"]["training"]["workers"].get<int>();
    for (const auto& pool : c["pools"]) workers += pool["workers"].get<int>();
    const bool servers = mode != "sync" || c["embedding_exchange"] == "hybrid" ||
                         !doc["spec"]["training"]["switching"]["at_steps"].empty() ||
                         !doc["spec"]["training"]["switching"]["at_times"].empty() ||
                         doc["spec"]["training"]["switching"]["automatic"].get<bool>();
    const double cores = c["ps_shards"].get<double>() * c["ps_cores"].get<double>();
    r.worker_hours.push_back(workers * t / 3600.0);
    r.server_core_hours.push_back(servers ? cores * t / 3600.0 : 0.0);
  }
  return r;
}

Recommendation recommend(const std::vector<std::string>& modes,
                         const std::map<std::string, ModeRuns>& runs, int seeds, double tolerance,
                         double target) {
  // The recommendation: among the modes that reached the target on every seed and whose final
  // AUC is, on average over the pairs, not below sync's by more than the tolerance, the
  // fastest; sync unless that one is faster than sync beyond the noise.
  std::string pick, why;
  const ModeRuns* sync = runs.count("sync") ? &runs.at("sync") : nullptr;
  double best_time = std::numeric_limits<double>::infinity();
  for (const auto& m : modes) {
    const ModeRuns& r = runs.at(m);
    if (r.reached() != seeds) continue;
    if (sync && m != "sync" && !(paired(r.final_auc, sync->final_auc).mean >= -tolerance)) continue;
    const double t = mean_interval(finite(r.time_to_auc)).mean;
    if (t < best_time) {
      best_time = t;
      pick = m;
    }
  }
  if (pick.empty()) {
    why = "no mode reached AUC " + fmt(target, "%.4g") + " on every seed";
  } else if (sync && pick != "sync") {
    const Interval tvs = paired(runs.at(pick).time_to_auc, sync->time_to_auc);
    const Interval avs = paired(runs.at(pick).final_auc, sync->final_auc);
    if (sync->reached() == seeds && !(tvs.n >= 2 && tvs.high < 0.0)) {
      why = "sync: no mode reached the target faster beyond the noise without losing more than " +
            fmt(tolerance, "%.4g") + " AUC (the fastest, " + pick + ", differs from sync by " +
            text(tvs, "%.2f", true) + " s)";
      pick = "sync";
    } else {
      why = pick + ": reaches AUC " + fmt(target, "%.4g") + " in " + fmt(best_time, "%.2f") +
            " s against sync's " +
            (sync->reached() == seeds ? fmt(mean_interval(finite(sync->time_to_auc)).mean, "%.2f") +
                                            " s (paired " + text(tvs, "%.2f", true) + " s)"
                                      : std::to_string(sync->reached()) + "/" +
                                            std::to_string(seeds) + " seeds reaching it") +
            ", final AUC " + text(avs, "%.4f", true) + " against sync's (tolerance " +
            fmt(tolerance, "%.4g") + ")";
    }
  } else if (sync) {
    why = pick + ": the fastest to AUC " + fmt(target, "%.4g") + " (" + fmt(best_time, "%.2f") +
          " s) among the modes within " + fmt(tolerance, "%.4g") + " AUC of sync";
  } else {
    why = pick + ": the fastest to AUC " + fmt(target, "%.4g") + " (" + fmt(best_time, "%.2f") +
          " s) among the modes compared; sync did not run (--modes), so no mode's AUC was "
          "held against sync's";
  }
  // What the rule gave up: a mode that reached the target on every seed sooner than the pick
  // but ended further below sync than the tolerance.
  if (sync && !pick.empty()) {
    const double pick_time = mean_interval(finite(runs.at(pick).time_to_auc)).mean;
    for (const auto& m : modes) {
      const ModeRuns& r = runs.at(m);
      if (m == pick || m == "sync" || r.reached() != seeds) continue;
      const Interval avs = paired(r.final_auc, sync->final_auc);
      const double t = mean_interval(finite(r.time_to_auc)).mean;
      if (t < pick_time && !(avs.mean >= -tolerance)) {
        why += "; " + m + " reached it sooner (" + fmt(t, "%.2f") +
               " s) but its final AUC differs from sync's by " + text(avs, "%.4f", true) +
               ", beyond the tolerance";
      }
    }
  }
  return {pick, why};
}

namespace {

// Step 1: sync's learning rate, tuned (into o.learning_rate) unless given. Returns where it
// comes from, or nothing when the tuning was interrupted.
std::optional<std::string> settle_learning_rate(CompareOptions& o, const fs::path& out) {
  if (!o.learning_rate && o.tune) {
    TuneOptions t;
    t.spec = o.spec;
    t.out = (out / "tune").string();
    t.fragment = (out / "tune" / "tuned.json").string();
    t.overrides = o.overrides;
    t.overrides.push_back("training.mode=sync");
    t.seeds = o.tune_seeds;
    t.jobs = o.jobs;
    const std::optional<double> lr = tune_sync(t);
    if (!lr) return std::nullopt;
    o.learning_rate = lr;
    return "tuned for sync by gbasim tune (" + t.fragment + ")";
  }
  if (o.learning_rate) return "given (--learning-rate)";
  if (o.given_by_override) return "given by --with or --set";
  return "the spec's own (--no-tune)";
}

// Step 3: the table, the recommendation, compare.md, compare.json and the figure.
void write_comparison(const CompareOptions& o, const fs::path& out,
                      const std::map<std::string, ModeRuns>& runs, const std::string& lr_source,
                      const ExperimentSpec& base) {
  const double lr = base.optimizer.learning_rate;
  const double target = base.evaluation.target_auc;
  std::ostringstream md;
  md << "Spec `" << o.spec << "`, " << o.seeds << " paired seeds, learning rate " << fmt(lr, "%.4g")
     << " (" << lr_source << "), target AUC " << fmt(target, "%.4g")
     << ". Intervals: 95%, Student's t over the seeds; differences are paired by seed (the "
        "seeds where both reached the target, or both completed). \"reached\": the seeds that "
        "reached the target; time-to-AUC is their mean, resolved to the evaluation interval ("
     << fmt(base.evaluation.interval_s, "%.3g") << " s).\n\n";
  Json modes_json = Json::array();
  mode_rows(o.modes, runs, o.seeds, md, modes_json);

  const Recommendation recommendation = recommend(o.modes, runs, o.seeds, o.tolerance, target);
  const std::string& pick = recommendation.pick;
  const std::string& why = recommendation.why;
  md << "\nRecommendation: " << why << ".\n";
  const std::string table = md.str();
  std::cout << table;
  const Json doc = {{"spec", o.spec},
                    {"overrides", o.overrides},
                    {"seeds", o.seeds},
                    {"learning_rate", lr},
                    {"learning_rate_source", lr_source},
                    {"target_auc", target},
                    {"tolerance", o.tolerance},
                    {"modes", modes_json},
                    {"recommendation", pick},
                    {"recommendation_text", why}};
  write_json_atomically((out / "compare.json").string(), doc);
  write_text_atomically((out / "compare.md").string(), table);
  draw_convergence(out, "gbasim compare");
  std::cerr << "gbasim compare: wrote " << (out / "compare.md").string() << " and "
            << (out / "compare.json").string() << "\n";
}

}  // namespace

int run_comparison(CompareOptions o) {
  const fs::path out = o.out;
  fs::create_directories(out);
  const std::optional<std::string> lr_source = settle_learning_rate(o, out);
  if (!lr_source) return 130;
  std::vector<std::string> fixed = o.overrides;
  if (o.learning_rate) {
    char text[48];
    std::snprintf(text, sizeof text, "optimizer.learning_rate=%.17g", *o.learning_rate);
    fixed.push_back(text);
  }
  const ExperimentSpec base = load_spec(o.spec, fixed);
  const double lr = base.optimizer.learning_rate;

  // Step 2: every mode over the seeds, with the same settings.
  SweepSpec sweep;
  sweep.path = o.spec;
  sweep.base = o.spec;
  sweep.fixed = fixed;
  SweepAxis axis{"training.mode", {}};
  for (const auto& m : o.modes) axis.values.push_back(m);
  sweep.axes.push_back(axis);
  for (int s = 1; s <= o.seeds; ++s) sweep.seeds.push_back(static_cast<uint64_t>(s));
  sweep.description = "gbasim compare of " + o.spec;
  std::vector<SweepPoint> points = plan_sweep(sweep);
  const std::vector<SweepPoint> planned = points;
  std::cerr << "gbasim compare: " << o.modes.size() << " modes x " << o.seeds
            << " seeds at learning rate " << fmt(lr, "%.4g") << "\n"
            << "gbasim compare: " << timed_workload_line(base) << "\n";
  const int status = run_points(sweep, std::move(points), out.string(), o.jobs);
  if (status == 130) return 130;

  std::map<std::string, ModeRuns> runs;
  for (const auto& m : o.modes) runs[m] = read_mode(m, planned, out);
  write_comparison(o, out, runs, *lr_source, base);
  return status;
}

}  // namespace gbasim
