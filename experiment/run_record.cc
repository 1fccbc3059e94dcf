#include "experiment/run_record.h"

namespace gbasim {
namespace {

// The rule's counts: mean_staleness, gradients (received, full, decayed, dropped), admissions,
// waits.
void put_rule_metrics(const RuleMetrics& m, nlohmann::ordered_json& summary) {
  double staleness_sum = 0.0;
  for (auto [staleness, count] : m.staleness)
    staleness_sum += static_cast<double>(staleness * count);
  summary["mean_staleness"] =
      m.gradients_received > 0 ? staleness_sum / static_cast<double>(m.gradients_received) : 0.0;
  summary["gradients"] = {{"received", m.gradients_received},
                          {"full", m.gradients_full},
                          {"decayed", m.gradients_decayed},
                          {"dropped", m.gradients_dropped}};
  summary["admissions"] = m.admissions;
  summary["waits"] = m.waits;
}

// [staleness, gradients] pairs, by increasing staleness.
nlohmann::ordered_json staleness_histogram(const RuleMetrics& m) {
  nlohmann::ordered_json histogram = nlohmann::ordered_json::array();
  for (auto [staleness, count] : m.staleness) histogram.push_back({staleness, count});
  return histogram;
}

}  // namespace

Budget::Budget(const BudgetSpec& budget, int64_t train_samples)
    : max_samples_(budget.max_samples > 0 ? budget.max_samples : train_samples),
      max_time_s_(budget.max_time_s) {}

ReplayedTrace load_trace(const ExperimentSpec& spec) {
  const StragglerConfig& g = spec.stragglers;
  const int n = spec.training.num_workers;
  ReplayedTrace trace;
  if (g.trace_format.empty()) return trace;
  try {
    if (g.trace_format == "pai") {
      trace.pai.emplace(read_pai_trace(g.trace_path), g.trace_mapping, g.trace_machines,
                        g.trace_offset, n, spec.seed, g.trace_intensity);
    } else {
      trace.usage = plan_usage_replay(g, n, spec.seed);
    }
  } catch (const InputError& e) {
    if (!e.key().empty()) throw e.in_file(g.trace_path);  // a key the trace does not match
    throw InputError(std::string("'stragglers.trace.path': ") + e.what());
  }
  return trace;
}

RunRecord::RunRecord(const ExperimentSpec& spec, const LoadedData& data)
    : spec_(spec), bayes_auc_(data.bayes_auc), budget_(spec.budget, data.train.size()) {}

void RunRecord::add_point(const EvaluationPoint& point) {
  curve_.push_back(point);
  if (!time_to_auc_ && point.auc >= spec_.evaluation.target_auc) time_to_auc_ = point.time;
}

void RunRecord::end(const std::string& status, const std::string& detail) {
  if (status_ != "completed") return;  // the first reason stands
  status_ = status;
  status_detail_ = detail;
}

nlohmann::ordered_json RunRecord::result(const DriverSummary& driver, int64_t global_steps,
                                         int64_t samples, const RuleMetrics& metrics) const {
  using Json = nlohmann::ordered_json;
  Json doc;
  doc["spec"] = spec_to_json(spec_);
  Json summary;
  summary["mode"] = mode_name(spec_.training.mode);
  summary["clock"] = driver.clock;
  summary["status"] = status_;
  if (!status_detail_.empty()) summary["status_detail"] = status_detail_;
  summary["target_auc"] = spec_.evaluation.target_auc;
  summary["time_to_auc"] = time_to_auc_ ? Json(*time_to_auc_) : Json();
  const bool scored = !curve_.empty();
  summary["final_auc"] = scored ? Json(curve_.back().auc) : Json();
  summary["final_logloss"] = scored ? Json(curve_.back().logloss) : Json();
  if (bayes_auc_) summary["bayes_auc"] = *bayes_auc_;
  summary[driver.clock == "wall" ? "run_time" : "simulated_time"] = driver.end_time;
  for (const auto& [key, value] : driver.before_counts.items()) summary[key] = value;
  summary["global_steps"] = global_steps;
  summary["samples"] = samples;
  put_rule_metrics(metrics, summary);
  for (const auto& [key, value] : driver.after_counts.items()) summary[key] = value;
  doc["summary"] = summary;
  Json curve = Json::array();
  for (const auto& p : curve_) {
    curve.push_back({{"time", p.time},
                     {"global_step", p.global_step},
                     {"samples", p.samples},
                     {"test_auc", p.auc},
                     {"test_logloss", p.logloss}});
  }
  doc["curve"] = curve;
  doc["staleness_histogram"] = staleness_histogram(metrics);
  return doc;
}

nlohmann::ordered_json switching_json(const ExperimentSpec& spec,
                                      const SwitchingController& controller,
                                      const nlohmann::ordered_json& moves,
                                      const nlohmann::ordered_json& status) {
  nlohmann::ordered_json events = nlohmann::ordered_json::array();
  for (const SwitchEvent& e : controller.events()) {
    events.push_back({{"global_step", e.global_step},
                      {"time", e.time},
                      {"from", mode_name(e.from)},
                      {"to", mode_name(e.to)},
                      {"reason", e.reason},
                      {"straggler_ratio", e.straggler_ratio}});
    if (controller.pools() > 1) {
      events.back()["from_pool"] = e.from_pool;
      events.back()["to_pool"] = e.to_pool;
    }
  }
  nlohmann::ordered_json doc = {{"initial_mode", mode_name(spec.training.mode)},
                                {"final_mode", mode_name(controller.mode())},
                                {"events", events},
                                {"moves", moves}};
  if (!status.is_null()) doc["status"] = status;
  return doc;
}

nlohmann::ordered_json trace_json(const ExperimentSpec& spec, const ReplayedTrace& trace) {
  if (trace.pai) {
    return {{"path", spec.stragglers.trace_path},
            {"assignment", trace.pai->assignment()},
            {"wraps", trace.pai->wraps()}};
  }
  if (trace.usage) {
    return {{"path", spec.stragglers.trace_path},
            {"assignment", trace.usage->machines},
            {"wraps", trace.usage->wraps}};
  }
  return nullptr;
}

}  // namespace gbasim
