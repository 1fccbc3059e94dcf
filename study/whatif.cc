// What the stragglers cost (study/whatif.h): the variants of the spec, their runs in one pool,
// the losses with paired intervals, the tables and the figure.
#include "study/whatif.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <iostream>
#include <limits>
#include <sstream>

#include "base/error.h"
#include "base/files.h"
#include "base/stats.h"
#include "experiment/json_file.h"
#include "experiment/result.h"
#include "study/report.h"
#include "study/sweep.h"

namespace gbasim {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::ordered_json;

// Whether `spec` holds `source`: removing it would change a run.
bool holds(const ExperimentSpec& spec, const std::string& source) {
  const StragglerConfig& g = spec.stragglers;
  if (source == "persistent") return g.persistent_fraction > 0.0 && g.persistent_slowdown != 1.0;
  if (source == "noise") return g.noise_cv > 0.0;
  if (source == "transient") return g.transient_rate_per_s > 0.0;
  if (source == "network") return g.network_rate_per_s > 0.0;
  if (source == "colocated") return g.colocated_fraction > 0.0 && g.colocated_duty > 0.0;
  if (source == "failures") return g.failure_rate_per_s > 0.0 || g.server_failure_rate_per_s > 0.0;
  if (source == "trace") return !g.trace_format.empty();
  throw InputError("unknown straggler source '" + source + "'");
}

// One variant of the spec: its name in point names and tables, and what it removes.
struct Variant {
  std::string name;  // "given", "without-<source>", "without-all"
  std::vector<std::string> removal;
  bool run = true;  // false: the same runs as "given" (it removes nothing the spec holds)
  std::vector<SweepPoint> points;
};

// The variant's points: every mode and seed, named "<variant>_mode-<m>_seed-<k>", with the
// variant as a second value (the summary's "variant" column).
std::vector<SweepPoint> plan_variant(const WhatifOptions& o, const Variant& v) {
  SweepSpec sweep;
  sweep.path = sweep.base = o.spec;
  sweep.fixed = o.overrides;
  sweep.fixed.insert(sweep.fixed.end(), v.removal.begin(), v.removal.end());
  SweepAxis axis{"training.mode", {}};
  for (const auto& m : o.modes) axis.values.push_back(m);
  sweep.axes.push_back(axis);
  for (int s = 1; s <= o.seeds; ++s) sweep.seeds.push_back(static_cast<uint64_t>(s));
  std::vector<SweepPoint> points = plan_sweep(sweep);
  for (SweepPoint& p : points) {
    p.name = v.name + "_" + p.name;
    p.values.push_back(v.name);
  }
  return points;
}

std::string cell(const SourceLoss& l, const Interval& i, const char* format) {
  if (!l.present) return "0 (absent)";
  return text(i, format, true);
}

// One mode's table into `md`, its numbers into `json`.
void mode_table(const std::string& mode, const ModeRuns& given,
                const std::vector<SourceLoss>& losses,
                const std::map<std::string, std::string>& whats, int seeds, std::ostringstream& md,
                Json& json) {
  const Interval t = mean_interval(finite(given.time_to_auc));
  md << "### " << mode << "\n\nAs given: " << given.reached() << "/" << seeds
     << " seeds reached the target"
     << (given.reached() > 0 ? ", in " + text(t, "%.3g") + " s" : std::string()) << "; final AUC "
     << text(mean_interval(finite(given.final_auc)), "%.4f") << "; the run ended at "
     << text(mean_interval(finite(given.simulated_time)), "%.3g") << " s.\n\n"
     << "| removed | reached | time to AUC lost (s) | share | run time lost (s) | final AUC lost "
        "|\n"
     << "| --- | --- | --- | --- | --- | --- |\n";
  Json rows = Json::array();
  for (const SourceLoss& l : losses) {
    const bool all = l.source == "all";
    md << "| " << (all ? "all together" : l.source) << " | "
       << (l.present ? std::to_string(l.reached) + "/" + std::to_string(seeds) : "-") << " | "
       << cell(l, l.time_lost, "%.3g") << " | " << (l.present ? fmt(l.share, "%.2f") : "0") << " | "
       << cell(l, l.run_lost, "%.3g") << " | " << cell(l, l.auc_lost, "%.4f") << " |\n";
    rows.push_back(
        {{"source", l.source},
         {"what", all ? "every source the spec holds, removed together" : whats.at(l.source)},
         {"present", l.present},
         {"reached_target", l.reached},
         {"time_to_auc_lost", interval_json(l.time_lost)},
         {"share", std::isfinite(l.share) ? Json(l.share) : Json()},
         {"run_time_lost", interval_json(l.run_lost)},
         {"final_auc_lost", interval_json(l.auc_lost)}});
  }
  // Which source costs most, and what the one-at-a-time losses miss of the whole: by time to
  // the target where it is defined on every source, else by the run's time.
  const bool to_target = losses.back().share_of_time_to_target;
  auto loss = [&](const SourceLoss& l) { return (to_target ? l.time_lost : l.run_lost).mean; };
  const char* measure = to_target ? "time to the target" : "run time";
  const SourceLoss& whole = losses.back();
  double one_at_a_time = 0.0, interaction = std::numeric_limits<double>::quiet_NaN();
  const SourceLoss* most = nullptr;
  for (size_t i = 0; i + 1 < losses.size(); ++i) {
    const SourceLoss& l = losses[i];
    if (!l.present) continue;
    one_at_a_time += loss(l);
    if (!most || loss(l) > loss(*most)) most = &l;
  }
  if (whole.present) interaction = loss(whole) - one_at_a_time;
  md << "\n";
  if (most && std::isfinite(loss(whole)) && loss(whole) > 0.0) {
    md << "Costs most (" << measure << "): " << most->source << ", " << fmt(loss(*most), "%.3g")
       << " s of the " << fmt(loss(whole), "%.3g") << " s all sources cost together. ";
  }
  md << "Interaction (" << measure << ": all together minus the sum of the one-at-a-time losses): "
     << (whole.present ? fmt(interaction, "%+.3g") + " s" : std::string("none (no source)"))
     << ".\n\n";
  json.push_back({{"mode", mode},
                  {"reached_target", given.reached()},
                  {"time_to_auc", interval_json(t)},
                  {"final_auc", interval_json(mean_interval(finite(given.final_auc)))},
                  {"simulated_time", interval_json(mean_interval(finite(given.simulated_time)))},
                  {"sources", rows},
                  {"share_of", to_target ? "time_to_auc_lost" : "run_time_lost"},
                  {"interaction_s", std::isfinite(interaction) ? Json(interaction) : Json()}});
}

// Which trace workers and which periods of the run cost most, from the runs as given of a
// replayed PAI trace: a trace worker's excess compute is the compute time beyond their nominal
// steps of the simulated workers replaying it, a mean over them (the trace's slowdowns, with
// the synthetic models off, or on top of them); a period's excess
// is the step time beyond each worker's median step, summed over the workers, in tenths of the
// run's simulated time. Means over the seeds.
void trace_costs(const std::string& mode, const std::vector<SweepPoint>& points,
                 const fs::path& out, std::ostringstream& md, Json& json) {
  std::map<int, double> by_worker;  // trace worker -> excess compute, summed over the seeds
  std::map<int, int> replicas;      // trace worker -> simulated workers replaying it, over them
  std::vector<double> by_period(10, 0.0);
  double run_s = 0.0;
  int seeds = 0;
  for (const SweepPoint& p : points) {
    if (p.values[0].get<std::string>() != mode) continue;
    const nlohmann::json doc =
        parse_json_or_discarded(read_text_or_empty((out / "points" / (p.name + ".json")).string()));
    if (doc.is_discarded() || !doc.contains("trace") || !doc.contains("workers")) continue;
    ++seeds;
    const double end = doc["summary"]["simulated_time"].get<double>();
    run_s += end;
    const auto& assignment = doc["trace"]["assignment"];
    for (const auto& w : doc["workers"]) {
      const int id = w["worker"].get<int>();
      const double nominal = w["steps"].get<double>() * w["nominal_step_s"].get<double>();
      by_worker[assignment[id].get<int>()] += w["compute_s"].get<double>() - nominal;
      ++replicas[assignment[id].get<int>()];
      std::vector<double> steps, ends = w["step_ends"].get<std::vector<double>>();
      for (size_t k = 1; k < ends.size(); ++k) steps.push_back(ends[k] - ends[k - 1]);
      if (steps.empty() || end <= 0.0) continue;
      const double typical = median(steps);
      for (size_t k = 0; k < steps.size(); ++k) {
        const size_t tenth = std::min<size_t>(9, static_cast<size_t>(10.0 * ends[k + 1] / end));
        by_period[tenth] += std::max(0.0, steps[k] - typical);
      }
    }
  }
  if (seeds == 0) return;
  std::vector<std::pair<double, int>> workers;  // a replica's mean excess, the trace worker
  double total = 0.0;
  for (const auto& [id, excess] : by_worker) {
    workers.push_back({excess / replicas[id], id});
    total += excess / seeds;
  }
  std::sort(workers.rbegin(), workers.rend());
  std::vector<std::pair<double, int>> periods;
  for (int t = 0; t < 10; ++t) periods.push_back({by_period[t] / seeds, t});
  std::sort(periods.rbegin(), periods.rend());
  const double tenth_s = run_s / seeds / 10.0;
  md << "The trace's costliest workers (excess compute, s, a simulated worker replaying it; of "
     << fmt(total, "%.3g") << " s in all over the " << replicas.size() << " trace workers):";
  Json workers_json = Json::array(), periods_json = Json::array();
  for (size_t i = 0; i < workers.size() && i < 3; ++i) {
    const int id = workers[i].second;
    md << (i ? "," : "") << " worker " << id << " " << fmt(workers[i].first, "%.3g") << " s";
    workers_json.push_back({{"trace_worker", id},
                            {"excess_compute_s", workers[i].first},
                            {"replayed_by", replicas[id] / seeds}});
  }
  md << ". Costliest periods (step time beyond each worker's median step, summed over the "
        "workers):";
  for (size_t i = 0; i < 3; ++i) {
    const double from = periods[i].second * tenth_s;
    md << (i ? "," : "") << " " << fmt(from, "%.3g") << "-" << fmt(from + tenth_s, "%.3g") << " s ("
       << fmt(periods[i].first, "%.3g") << " s)";
    periods_json.push_back(
        {{"from_s", from}, {"to_s", from + tenth_s}, {"excess_step_s", periods[i].first}});
  }
  md << ".\n\n";
  json["trace_workers"] = workers_json;
  json["trace_periods"] = periods_json;
}

}  // namespace

const std::vector<StragglerSource>& straggler_sources() {
  static const std::vector<StragglerSource> sources = {
      {"persistent",
       "persistent slow workers (stragglers.persistent_fraction)",
       {"stragglers.persistent_fraction=0"}},
      {"noise", "per-step noise (stragglers.noise_cv)", {"stragglers.noise_cv=0"}},
      {"transient",
       "transient slow episodes (stragglers.transient_rate_per_s)",
       {"stragglers.transient_rate_per_s=0"}},
      {"network",
       "network episodes (stragglers.network_rate_per_s)",
       {"stragglers.network_rate_per_s=0"}},
      {"colocated",
       "co-located tenants (stragglers.colocated_fraction)",
       {"stragglers.colocated_fraction=0"}},
      {"failures",
       "worker and server failures (stragglers.failures)",
       {"stragglers.failures.rate_per_s=0", "stragglers.failures.server_rate_per_s=0"}},
      {"trace",
       "the replayed trace (stragglers.trace)",
       {"stragglers.trace.format=\"\"", "stragglers.trace.path=\"\""}},
  };
  return sources;
}

std::vector<SourceLoss> source_losses(const ModeRuns& given,
                                      const std::vector<std::pair<std::string, ModeRuns>>& without,
                                      const std::vector<bool>& present) {
  std::vector<SourceLoss> losses;
  for (size_t i = 0; i < without.size(); ++i) {
    const ModeRuns& w = without[i].second;
    SourceLoss l;
    l.source = without[i].first;
    l.present = present[i];
    l.reached = w.reached();
    l.time_lost = paired(given.time_to_auc, w.time_to_auc);
    l.run_lost = paired(given.simulated_time, w.simulated_time);
    l.auc_lost = paired(w.final_auc, given.final_auc);
    losses.push_back(l);
  }
  // The share is of the time to the target where every source's loss to it is defined, else
  // of the run's time.
  const bool to_target = std::all_of(losses.begin(), losses.end(), [](const SourceLoss& l) {
    return !l.present || l.time_lost.n > 0;
  });
  const double whole = (to_target ? losses.back().time_lost : losses.back().run_lost).mean;
  for (SourceLoss& l : losses) {
    l.share_of_time_to_target = to_target;
    const double mine = (to_target ? l.time_lost : l.run_lost).mean;
    l.share = !l.present                             ? 0.0
              : std::isfinite(whole) && whole != 0.0 ? mine / whole
                                                     : std::numeric_limits<double>::quiet_NaN();
  }
  return losses;
}

// The tables' opening paragraph: what was run and how the losses are read.
std::string intro(const WhatifOptions& o, const ExperimentSpec& given_spec) {
  std::ostringstream md;
  md << "Spec `" << o.spec << "`, " << o.seeds << " paired seeds, target AUC "
     << fmt(given_spec.evaluation.target_auc, "%.4g")
     << ". Each source is removed alone, then all together; every other part of each seed's "
        "realisation stays the same. Losses are paired by seed (as given minus without, for "
        "time; without minus as given, for final AUC), with 95% intervals (Student's t); time "
        "to AUC over the seeds where both reached the target, to the evaluation interval ("
     << fmt(given_spec.evaluation.interval_s, "%.3g")
     << " s). Share: a source's loss over what all cost together, of the time to the target "
        "where every source's loss to it is defined, else of the run's time (the line below "
        "each table says which); the shares need not sum to 1, and the interaction says by how "
        "much they miss. A source the spec does not "
        "hold is not run: its loss is exactly 0.\n\n";
  return md.str();
}

int run_whatif(const WhatifOptions& o) {
  const fs::path out = o.out;
  fs::create_directories(out);
  const ExperimentSpec given_spec = load_spec(o.spec, o.overrides);
  std::vector<Variant> variants{{"given", {}, true, {}}};
  std::vector<std::string> all_removal, names;
  std::map<std::string, std::string> whats;
  for (const StragglerSource& s : straggler_sources()) {
    if (!o.sources.empty() &&
        std::find(o.sources.begin(), o.sources.end(), s.name) == o.sources.end())
      continue;
    const bool present = holds(given_spec, s.name);
    variants.push_back({"without-" + s.name, s.removal, present, {}});
    names.push_back(s.name);
    whats[s.name] = s.what;
    if (present) all_removal.insert(all_removal.end(), s.removal.begin(), s.removal.end());
  }
  variants.push_back({"without-all", all_removal, !all_removal.empty(), {}});
  names.push_back("all");
  // With one source in the spec, "all" is that source's runs.
  const auto present_count = std::count_if(variants.begin() + 1, variants.end() - 1,
                                           [](const Variant& v) { return v.run; });
  Variant* same_as_all = nullptr;
  if (present_count == 1) {
    for (auto it = variants.begin() + 1; it != variants.end() - 1; ++it)
      if (it->run) same_as_all = &*it;
  }

  SweepSpec sweep;  // the pool's: its summary has a column a value
  sweep.path = sweep.base = o.spec;
  sweep.axes = {{"training.mode", {}}, {"variant", {}}};
  sweep.description = "gbasim whatif of " + o.spec;
  std::vector<SweepPoint> points;
  for (Variant& v : variants) {
    if (!v.run || (same_as_all && &v == &variants.back())) continue;
    v.points = plan_variant(o, v);
    points.insert(points.end(), v.points.begin(), v.points.end());
  }
  std::cerr << "gbasim whatif: " << o.modes.size() << " modes x " << o.seeds << " seeds, as given";
  for (size_t i = 1; i < variants.size(); ++i)
    if (variants[i].run && !(same_as_all && i + 1 == variants.size()))
      std::cerr << ", " << variants[i].name;
  std::cerr << " (" << points.size() << " runs)\n";
  const int status = o.summarize ? 0 : run_points(sweep, points, out.string(), o.jobs);
  if (status == 130) return 130;
  if (same_as_all) variants.back().points = same_as_all->points;

  std::ostringstream md;
  md << intro(o, given_spec);
  Json modes = Json::array();
  for (const std::string& m : o.modes) {
    const ModeRuns given = read_mode(m, variants[0].points, out);
    std::vector<std::pair<std::string, ModeRuns>> without;
    std::vector<bool> present;
    for (size_t i = 1; i < variants.size(); ++i) {
      const Variant& v = variants[i];
      without.emplace_back(names[i - 1], v.run ? read_mode(m, v.points, out) : given);
      present.push_back(v.run);
    }
    mode_table(m, given, source_losses(given, without, present), whats, o.seeds, md, modes);
    if (given_spec.stragglers.trace_format == "pai")
      trace_costs(m, variants[0].points, out, md, modes.back());
  }
  const std::string table = md.str();
  std::cout << table;
  const Json doc = {{"spec", o.spec},
                    {"overrides", o.overrides},
                    {"seeds", o.seeds},
                    {"target_auc", given_spec.evaluation.target_auc},
                    {"modes", modes}};
  write_json_atomically((out / "whatif.json").string(), doc);
  write_text_atomically((out / "whatif.md").string(), table);
  draw_figure("plot_whatif.py",
              {(out / "whatif.json").string(), (out / "figures" / "whatif").string()},
              "gbasim whatif");
  std::cerr << "gbasim whatif: wrote " << (out / "whatif.md").string() << " and "
            << (out / "whatif.json").string() << "\n";
  return status;
}

}  // namespace gbasim
