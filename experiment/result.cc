#include "experiment/result.h"

#include "base/files.h"

namespace gbasim {

void write_json_atomically(const std::string& path, const nlohmann::ordered_json& doc) {
  write_text_atomically(path, doc.dump(2) + "\n");
}

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

nlohmann::ordered_json staleness_histogram(const RuleMetrics& m) {
  nlohmann::ordered_json histogram = nlohmann::ordered_json::array();
  for (auto [staleness, count] : m.staleness) histogram.push_back({staleness, count});
  return histogram;
}

}  // namespace gbasim
