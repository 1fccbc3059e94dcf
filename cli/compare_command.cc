// gbasim compare: the user's question in one command. Sync is tuned (or given its learning
// rate), then every mode runs with those same settings, as the GBA paper's protocol switches
// without re-tuning, over K paired seeds (a seed is the same data order and the same straggler
// realisation in every mode). Reports time-to-AUC and final AUC per mode with 95% intervals,
// paired differences against sync and against GBA, the resources spent to reach the target,
// and a one-line recommendation with its evidence.
#include <algorithm>
#include <boost/program_options.hpp>
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
#include "cli/commands.h"
#include "cli/sweep.h"
#include "cli/tune.h"
#include "experiment/json_file.h"
#include "experiment/result.h"

extern char** environ;

namespace gbasim {
namespace {

namespace fs = std::filesystem;
namespace po = boost::program_options;
using Json = nlohmann::ordered_json;

const double kNaN = std::numeric_limits<double>::quiet_NaN();

// One mode's K seeds, in seed order; NaN where a seed did not reach the target (time) or did
// not complete (AUC).
struct ModeRuns {
  std::string mode;
  std::vector<double> time_to_auc, final_auc, worker_hours, server_core_hours;
  std::vector<std::string> not_completed;
  int reached() const {
    int n = 0;
    for (double t : time_to_auc) n += std::isfinite(t);
    return n;
  }
};

std::vector<double> finite(const std::vector<double>& v) {
  std::vector<double> out;
  for (double x : v)
    if (std::isfinite(x)) out.push_back(x);
  return out;
}

// The paired difference a - b over the seeds where both are finite.
Interval paired(const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> x, y;
  for (size_t i = 0; i < a.size() && i < b.size(); ++i) {
    if (std::isfinite(a[i]) && std::isfinite(b[i])) {
      x.push_back(a[i]);
      y.push_back(b[i]);
    }
  }
  return paired_difference(x, y);
}

std::string fmt(double x, const char* format) {
  if (!std::isfinite(x)) return "-";
  char text[48];
  std::snprintf(text, sizeof text, format, x);
  return text;
}

// "mean [low, high]"; the mean alone with one value; "-" with none.
std::string text(const Interval& i, const char* format, bool sign = false) {
  if (i.n == 0) return "-";
  std::string f = sign ? std::string("%+") + (format + 1) : format;
  if (i.n < 2) return fmt(i.mean, f.c_str());
  return fmt(i.mean, f.c_str()) + " [" + fmt(i.low, f.c_str()) + ", " + fmt(i.high, f.c_str()) +
         "]";
}

Json interval_json(const Interval& i) {
  auto num = [](double x) { return std::isfinite(x) ? Json(x) : Json(); };
  return {{"n", i.n}, {"mean", num(i.mean)}, {"low", num(i.low)}, {"high", num(i.high)}};
}

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
      r.not_completed.push_back(seed + ": failed");
      continue;
    }
    const auto& s = doc["summary"];
    const auto& c = doc["spec"]["cluster"];
    const bool completed = s["status"] == "completed";
    if (!completed) r.not_completed.push_back(seed + ": " + s["status"].get<std::string>());
    const double t = s["time_to_auc"].is_number() ? s["time_to_auc"].get<double>() : kNaN;
    r.time_to_auc.push_back(t);
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

struct CompareOptions {
  std::string spec, out;
  std::vector<std::string> overrides, modes{"sync", "async", "gba", "ssp", "backup"};
  std::optional<double> learning_rate;
  bool tune = true;
  bool given_by_override = false;  // --with or --set names optimizer.learning_rate
  int seeds = 5, tune_seeds = 3, jobs = 1;
  double tolerance = 1e-3;
};

int compare(CompareOptions o) {
  const fs::path out = o.out;
  fs::create_directories(out);
  // Step 1: sync's learning rate.
  std::string lr_source;
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
    if (!lr) return 130;
    o.learning_rate = lr;
    lr_source = "tuned for sync by gbasim tune (" + t.fragment + ")";
  } else if (o.learning_rate) {
    lr_source = "given (--learning-rate)";
  } else if (o.given_by_override) {
    lr_source = "given by --with or --set";
  } else {
    lr_source = "the spec's own (--no-tune)";
  }
  std::vector<std::string> fixed = o.overrides;
  if (o.learning_rate) {
    char text[48];
    std::snprintf(text, sizeof text, "optimizer.learning_rate=%.17g", *o.learning_rate);
    fixed.push_back(text);
  }
  const ExperimentSpec base = load_spec(o.spec, fixed);
  const double lr = base.optimizer.learning_rate;
  const double target = base.evaluation.target_auc;

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
  const ModeRuns* sync = runs.count("sync") ? &runs["sync"] : nullptr;
  const ModeRuns* gba = runs.count("gba") ? &runs["gba"] : nullptr;

  std::ostringstream md;
  md << "Spec `" << o.spec << "`, " << o.seeds << " paired seeds, learning rate "
     << fmt(lr, "%.4g") << " (" << lr_source << "), target AUC " << fmt(target, "%.4g")
     << ". Intervals: 95%, Student's t over the seeds; differences are paired by seed (the "
        "seeds where both reached the target, or both completed). \"reached\": the seeds that "
        "reached the target; time-to-AUC is their mean, resolved to the evaluation interval ("
     << fmt(base.evaluation.interval_s, "%.3g") << " s).\n\n";
  md << "| mode | reached | time-to-AUC (s) | speed-up over sync | time vs sync (s) | time vs GBA "
        "(s) | final AUC | AUC vs sync | AUC vs GBA | worker-hours to target | server "
        "core-hours to target |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | "
        "--- |\n";
  Json modes_json = Json::array();
  for (const auto& m : o.modes) {
    const ModeRuns& r = runs[m];
    const Interval t = mean_interval(finite(r.time_to_auc)), a = mean_interval(finite(r.final_auc));
    const Interval tvs = sync ? paired(r.time_to_auc, sync->time_to_auc) : Interval{};
    const Interval tvg = gba ? paired(r.time_to_auc, gba->time_to_auc) : Interval{};
    const Interval avs = sync ? paired(r.final_auc, sync->final_auc) : Interval{};
    const Interval avg = gba ? paired(r.final_auc, gba->final_auc) : Interval{};
    const Interval wh = mean_interval(finite(r.worker_hours));
    const Interval sh = mean_interval(finite(r.server_core_hours));
    const double speedup =
        sync ? mean_interval(finite(sync->time_to_auc)).mean / t.mean : kNaN;
    const std::string reached = std::to_string(r.reached()) + "/" + std::to_string(o.seeds);
    md << "| " << m << " | " << reached << " | " << text(t, "%.3g") << " | "
       << fmt(speedup, "%.2f") << " | " << (m == "sync" ? "-" : text(tvs, "%.3g", true)) << " | "
       << (m == "gba" ? "-" : text(tvg, "%.3g", true)) << " | " << text(a, "%.4f") << " | "
       << (m == "sync" ? "-" : text(avs, "%.4f", true)) << " | "
       << (m == "gba" ? "-" : text(avg, "%.4f", true)) << " | " << text(wh, "%.3g") << " | "
       << text(sh, "%.3g") << " |\n";
    Json not_completed = r.not_completed;
    modes_json.push_back({{"mode", m},
                          {"reached_target", r.reached()},
                          {"seeds", o.seeds},
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

  // The recommendation: among the modes that reached the target on every seed and whose final
  // AUC is, on average over the pairs, not below sync's by more than the tolerance, the
  // fastest; sync unless that one is faster than sync beyond the noise.
  std::string pick, why;
  double best_time = std::numeric_limits<double>::infinity();
  for (const auto& m : o.modes) {
    const ModeRuns& r = runs[m];
    if (r.reached() != o.seeds) continue;
    if (sync && m != "sync" && !(paired(r.final_auc, sync->final_auc).mean >= -o.tolerance))
      continue;
    const double t = mean_interval(finite(r.time_to_auc)).mean;
    if (t < best_time) {
      best_time = t;
      pick = m;
    }
  }
  if (pick.empty()) {
    why = "no mode reached AUC " + fmt(target, "%.4g") + " on every seed";
  } else if (sync && pick != "sync") {
    const Interval tvs = paired(runs[pick].time_to_auc, sync->time_to_auc);
    const Interval avs = paired(runs[pick].final_auc, sync->final_auc);
    if (sync->reached() == o.seeds && !(tvs.n >= 2 && tvs.high < 0.0)) {
      why = "sync: no mode reached the target faster beyond the noise without losing more than " +
            fmt(o.tolerance, "%.4g") + " AUC (the fastest, " + pick + ", differs from sync by " +
            text(tvs, "%.2f", true) + " s)";
      pick = "sync";
    } else {
      why = pick + ": reaches AUC " + fmt(target, "%.4g") + " in " + fmt(best_time, "%.2f") +
            " s against sync's " +
            (sync->reached() == o.seeds
                 ? fmt(mean_interval(finite(sync->time_to_auc)).mean, "%.2f") + " s (paired " +
                       text(tvs, "%.2f", true) + " s)"
                 : std::to_string(sync->reached()) + "/" + std::to_string(o.seeds) +
                       " seeds reaching it") +
            ", final AUC " + text(avs, "%.4f", true) + " against sync's (tolerance " +
            fmt(o.tolerance, "%.4g") + ")";
    }
  } else if (sync) {
    why = pick + ": the fastest to AUC " + fmt(target, "%.4g") + " (" + fmt(best_time, "%.2f") +
          " s) among the modes within " + fmt(o.tolerance, "%.4g") + " AUC of sync";
  } else {
    why = pick + ": the fastest to AUC " + fmt(target, "%.4g") + " (" + fmt(best_time, "%.2f") +
          " s) among the modes compared; sync did not run (--modes), so no mode's AUC was "
          "held against sync's";
  }
  // What the rule gave up: a mode that reached the target on every seed sooner than the pick
  // but ended further below sync than the tolerance.
  if (sync && !pick.empty()) {
    const double pick_time = mean_interval(finite(runs[pick].time_to_auc)).mean;
    for (const auto& m : o.modes) {
      const ModeRuns& r = runs[m];
      if (m == pick || m == "sync" || r.reached() != o.seeds) continue;
      const Interval avs = paired(r.final_auc, sync->final_auc);
      const double t = mean_interval(finite(r.time_to_auc)).mean;
      if (t < pick_time && !(avs.mean >= -o.tolerance)) {
        why += "; " + m + " reached it sooner (" + fmt(t, "%.2f") +
               " s) but its final AUC differs from sync's by " + text(avs, "%.4f", true) +
               ", beyond the tolerance";
      }
    }
  }
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
  return status;
}

}  // namespace

int run_compare(const std::vector<std::string>& args) {
  CompareOptions o;
  std::vector<std::string> fragments, sets;
  std::string modes;
  double learning_rate = 0.0;
  bool no_tune = false;
  o.jobs = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  po::options_description desc(
      "gbasim compare --spec FILE [options]\n\n"
      "Sync, async or GBA on this cluster? Tunes sync's learning rate (gbasim tune), then\n"
      "runs every mode with those settings, without re-tuning, over K paired seeds; prints\n"
      "and writes (OUT/compare.md, OUT/compare.json) each mode's time-to-AUC and final AUC\n"
      "with 95% intervals, paired differences against sync and GBA, the worker-hours and\n"
      "server core-hours spent to reach the target, a one-line recommendation, and the\n"
      "convergence figure (OUT/figures). Resumes where it stopped.\n\nOptions");
  desc.add_options()("help,h", "show this help")(
      "spec", po::value(&o.spec)->value_name("FILE"), "experiment spec (JSON)")(
      "with", po::value(&fragments)->composing()->value_name("FILE"),
      "a spec fragment merged over the spec before --set (repeatable)")(
      "set", po::value(&sets)->composing()->value_name("KEY=VALUE"),
      "override a spec key (repeatable)")(
      "seeds", po::value(&o.seeds)->default_value(o.seeds), "paired seeds (1, 2, ..., K)")(
      "modes", po::value(&modes)->value_name("LIST"),
      "modes compared, comma-separated (default: sync,async,gba,ssp,backup)")(
      "learning-rate", po::value(&learning_rate)->value_name("X"),
      "sync's learning rate, not tuned")(
      "no-tune", po::bool_switch(&no_tune), "keep the spec's own learning rate")(
      "tune-seeds", po::value(&o.tune_seeds)->default_value(o.tune_seeds),
      "seeds a value while tuning")(
      "tolerance", po::value(&o.tolerance)->default_value(o.tolerance),
      "final AUC below sync's by at most this still counts as not worse")(
      "jobs,j", po::value(&o.jobs)->default_value(o.jobs), "runs at once (default: the cores)")(
      "out", po::value(&o.out)->value_name("DIR"),
      "work folder (default: out/compare-<spec name>)");
  po::variables_map vm;
  if (!parse_options(args, desc, vm)) return 0;
  if (o.spec.empty()) throw po::error("--spec FILE is required");
  if (o.seeds < 2 || o.seeds > 100) throw po::error("--seeds must lie in [2, 100] (intervals need 2)");
  if (o.tune_seeds < 1 || o.tune_seeds > 100) throw po::error("--tune-seeds must lie in [1, 100]");
  if (o.jobs < 1) throw po::error("--jobs must be at least 1");
  if (!(o.tolerance >= 0.0) || o.tolerance > 0.5) throw po::error("--tolerance must lie in [0, 0.5]");
  if (vm.count("learning-rate")) {
    if (!(learning_rate > 0.0) || !std::isfinite(learning_rate))
      throw po::error("--learning-rate must be a positive number");
    if (no_tune) throw po::error("--learning-rate and --no-tune: choose one");
    o.learning_rate = learning_rate;
  }
  o.tune = !no_tune;
  if (!modes.empty()) {
    if (modes.front() == ',' || modes.back() == ',' || modes.find(",,") != std::string::npos)
      throw po::error("--modes: '" + modes + "' has an empty item");
    o.modes.clear();
    std::stringstream in(modes);
    for (std::string m; std::getline(in, m, ',');) {
      if (m != "sync" && m != "async" && m != "gba" && m != "ssp" && m != "backup")
        throw po::error("--modes: unknown mode '" + m + "' (sync, async, gba, ssp, backup)");
      if (std::find(o.modes.begin(), o.modes.end(), m) != o.modes.end())
        throw po::error("--modes: '" + m + "' is named twice");
      o.modes.push_back(m);
    }
  }
  o.overrides = with_fragments(fragments, sets);
  // A fragment that sets the learning rate counts as given.
  for (const std::string& s : o.overrides)
    if (s.rfind("optimizer.learning_rate=", 0) == 0 && !o.learning_rate) {
      o.tune = false;
      o.given_by_override = true;
    }
  load_spec(o.spec, o.overrides);  // checked before anything runs
  if (o.out.empty()) o.out = "out/compare-" + fs::path(o.spec).stem().string();
  check_output_folder(o.out, "output folder");
  check_output_folder((fs::path(o.out) / "points").string(), "points folder");
  check_points_folder((fs::path(o.out) / "points").string());
  check_points_folder((fs::path(o.out) / "tune" / "points").string());
  for (const char* name : {"compare.json", "compare.md", "summary.csv"})
    check_output_file((fs::path(o.out) / name).string(), "comparison");
  return compare(o);
}

}  // namespace gbasim
