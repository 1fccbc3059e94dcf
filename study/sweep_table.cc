#include "study/sweep_table.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>

#include "base/error.h"
#include "base/files.h"
#include "base/stats.h"

namespace gbasim {
namespace {

using Row = std::map<std::string, std::string>;

struct Metric {
  const char* key;
  const char* title;
  const char* format;
};
constexpr Metric kMetrics[] = {{"time_to_auc_s", "time to target AUC (simulated s)", "%.2f"},
                               {"final_auc", "final AUC", "%.4f"},
                               {"mean_staleness", "mean staleness", "%.2f"},
                               {"dropped_share", "dropped", "%.3f"},
                               {"decayed_share", "decayed", "%.3f"},
                               {"simulated_time_s", "simulated time (s)", "%.2f"}};
const char* const kMode = "training.mode";
const char* const kModes[] = {"sync", "async", "gba", "ssp", "backup"};

// One line of the summary's CSV (its quoting: a field in double quotes, "" for a quote; a
// line may end in CRLF, as Python's csv module writes).
std::vector<std::string> csv_fields(std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();  // a CRLF line end
  std::vector<std::string> fields(1);
  bool quoted = false;
  for (size_t i = 0; i < line.size(); ++i) {
    const char c = line[i];
    if (quoted && c == '"' && i + 1 < line.size() && line[i + 1] == '"') {
      fields.back() += '"';
      ++i;
    } else if (c == '"') {
      quoted = !quoted;
    } else if (c == ',' && !quoted) {
      fields.emplace_back();
    } else {
      fields.back() += c;
    }
  }
  return fields;
}

double number(const std::string& text) {
  return text.empty() ? std::nan("") : std::strtod(text.c_str(), nullptr);
}

std::string fmt(double x, const char* format, bool sign = false) {
  char text[64];
  std::snprintf(text, sizeof text, format, x);
  std::string out = sign && x >= 0.0 ? "+" : "";  // "+-0.00" for -0.0, as Python writes it
  out.append(text);
  return out;
}

// "mean [low, high]" of the numbers among `values`.
std::string interval_text(const std::vector<double>& values, const char* format) {
  std::vector<double> finite;
  for (double v : values)
    if (!std::isnan(v)) finite.push_back(v);
  const Interval i = mean_interval(finite);
  if (i.n == 0) return "-";
  if (i.n < 2) return fmt(i.mean, format);
  return fmt(i.mean, format) + " [" + fmt(i.low, format) + ", " + fmt(i.high, format) + "]";
}

// A seed's value, in the order the seeds came.
using BySeed = std::vector<std::pair<std::string, double>>;

// The paired difference over the seeds where both have a number.
std::string paired_text(const BySeed& mine, const BySeed& theirs, const char* format) {
  std::vector<double> a, b;
  for (const auto& [seed, x] : mine) {
    const auto it = std::find_if(theirs.begin(), theirs.end(),
                                 [&](const auto& p) { return p.first == seed; });
    if (it == theirs.end() || std::isnan(x) || std::isnan(it->second)) continue;
    a.push_back(x);
    b.push_back(it->second);
  }
  const Interval d = paired_difference(a, b);
  if (d.n == 0) return "-";
  std::string text = fmt(d.mean, format, true);
  if (d.n >= 2) text += " [" + fmt(d.low, format, true) + ", " + fmt(d.high, format, true) + "]";
  return text + (d.excludes_zero() ? " *" : "") + " (n=" + std::to_string(d.n) + ")";
}

std::string row_line(const std::vector<std::string>& cells) {
  std::string line = "|";
  for (const std::string& c : cells) line += " " + c + " |";
  return line;
}

std::string rule_line(size_t columns) {
  std::string line = "|";
  for (size_t k = 0; k < columns; ++k) line += " --- |";
  return line;
}

// Rows grouped by `keys`' values, in the order each group first came.
template <class Key>
std::vector<std::pair<Key, std::vector<const Row*>>> grouped(const std::vector<Row>& rows,
                                                             Key (*key)(const Row&,
                                                                        const std::vector<std::string>&),
                                                             const std::vector<std::string>& keys,
                                                             bool done_only) {
  std::vector<std::pair<Key, std::vector<const Row*>>> groups;
  for (const Row& r : rows) {
    if (done_only && r.at("status") != "done") continue;
    const Key k = key(r, keys);
    auto it = std::find_if(groups.begin(), groups.end(), [&](const auto& g) { return g.first == k; });
    if (it == groups.end()) {
      groups.push_back({k, {}});
      it = groups.end() - 1;
    }
    it->second.push_back(&r);
  }
  return groups;
}

std::vector<std::string> values_of(const Row& r, const std::vector<std::string>& keys) {
  std::vector<std::string> v;
  for (const auto& k : keys) v.push_back(r.at(k));
  return v;
}

BySeed by_seed(const std::vector<const Row*>& rows, const char* key) {
  BySeed out;
  for (const Row* r : rows) out.push_back({r->at("seed"), number(r->at(key))});
  return out;
}

std::string against_table(const std::vector<Row>& rows, const std::vector<std::string>& axes,
                          const std::vector<std::pair<std::string, std::string>>& reference) {
  for (const auto& [key, value] : reference) {
    if (std::find(axes.begin(), axes.end(), key) == axes.end()) {
      std::string list;
      for (const auto& a : axes) list += (list.empty() ? "" : ", ") + a;
      throw InputError("--against " + key + ": not an axis of the sweep (" + list + ")");
    }
  }
  const auto combos = grouped(rows, values_of, axes, true);
  std::vector<size_t> matching;
  for (size_t c = 0; c < combos.size(); ++c) {
    bool all = true;
    for (const auto& [key, value] : reference) {
      const size_t k = std::find(axes.begin(), axes.end(), key) - axes.begin();
      all = all && combos[c].first[k] == value;
    }
    if (all) matching.push_back(c);
  }
  if (matching.size() != 1)
    throw InputError("--against must name one combination of the axes; " +
                     std::to_string(matching.size()) + " match");
  const auto& theirs = combos[matching[0]].second;
  std::string name;
  for (const auto& [key, value] : reference) name += (name.empty() ? "" : ", ") + key + " " + value;
  std::vector<std::string> head = axes;
  head.push_back("time vs " + name + " (s)");
  head.push_back("final AUC vs " + name);
  std::string out = "\nPaired differences by seed against " + name +
                    " (minus it), 95% interval, * where it excludes 0, n the seeds paired:\n\n" +
                    row_line(head) + "\n" + rule_line(head.size()) + "\n";
  for (size_t c = 0; c < combos.size(); ++c) {
    if (c == matching[0]) continue;
    std::vector<std::string> cells = combos[c].first;
    cells.push_back(paired_text(by_seed(combos[c].second, "time_to_auc_s"),
                                by_seed(theirs, "time_to_auc_s"), "%.2f"));
    cells.push_back(paired_text(by_seed(combos[c].second, "final_auc"),
                                by_seed(theirs, "final_auc"), "%.4f"));
    out += row_line(cells) + "\n";
  }
  return out;
}

std::string modes_table(const std::vector<Row>& rows, const std::vector<std::string>& axes) {
  if (std::find(axes.begin(), axes.end(), kMode) == axes.end()) return "";
  std::set<std::string> modes;
  for (const Row& r : rows) modes.insert(r.at(kMode));
  std::vector<std::string> references;
  for (const char* m : {"sync", "gba"})
    if (modes.count(m)) references.push_back(m);
  if (references.empty()) return "";
  std::vector<std::string> others;
  for (const auto& a : axes)
    if (a != kMode) others.push_back(a);
  std::vector<std::string> head = others;
  head.push_back("mode");
  for (const auto& ref : references) {
    head.push_back("time vs " + ref + " (s)");
    head.push_back("final AUC vs " + ref);
  }
  std::string out = "\nPaired differences by seed (mode minus reference), 95% interval, * where "
                    "it excludes 0, n the seeds paired:\n\n" +
                    row_line(head) + "\n" + rule_line(head.size()) + "\n";
  for (const auto& [key, members] : grouped(rows, values_of, others, true)) {
    std::vector<std::pair<std::string, std::vector<const Row*>>> by_mode;
    for (const Row* r : members) {
      auto it = std::find_if(by_mode.begin(), by_mode.end(),
                             [&](const auto& m) { return m.first == r->at(kMode); });
      if (it == by_mode.end()) {
        by_mode.push_back({r->at(kMode), {}});
        it = by_mode.end() - 1;
      }
      it->second.push_back(r);
    }
    auto find = [&](const std::string& m) {
      return std::find_if(by_mode.begin(), by_mode.end(), [&](const auto& p) { return p.first == m; });
    };
    std::vector<std::string> order;
    for (const char* m : kModes)
      if (find(m) != by_mode.end()) order.push_back(m);
    std::vector<std::string> rest;
    for (const auto& [m, unused] : by_mode)
      if (std::find(std::begin(kModes), std::end(kModes), m) == std::end(kModes)) rest.push_back(m);
    std::sort(rest.begin(), rest.end());
    order.insert(order.end(), rest.begin(), rest.end());
    for (const std::string& mode : order) {
      std::vector<std::string> cells = key;
      cells.push_back(mode);
      for (const auto& ref : references) {
        if (mode == ref || find(ref) == by_mode.end()) {
          cells.insert(cells.end(), {"-", "-"});
          continue;
        }
        const auto& mine = find(mode)->second;
        const auto& theirs = find(ref)->second;
        cells.push_back(paired_text(by_seed(mine, "time_to_auc_s"), by_seed(theirs, "time_to_auc_s"),
                                    "%.2f"));
        cells.push_back(
            paired_text(by_seed(mine, "final_auc"), by_seed(theirs, "final_auc"), "%.4f"));
      }
      out += row_line(cells) + "\n";
    }
  }
  return out;
}

}  // namespace

std::string sweep_table(const std::string& folder,
                        const std::vector<std::pair<std::string, std::string>>& against) {
  const std::string path = (std::filesystem::path(folder) / "summary.csv").string();
  std::ifstream in = open_input(path, "sweep summary");
  std::string line;
  if (!std::getline(in, line)) throw InputError(path + ": empty");
  const std::vector<std::string> header = csv_fields(line);
  const auto status = std::find(header.begin(), header.end(), "status");
  if (header.size() < 3 || header[0] != "point" || header[1] != "seed" || status == header.end())
    throw InputError(path + ": line 1 is not a sweep summary's header (point, seed, ..., status)");
  const std::vector<std::string> axes(header.begin() + 2, status);
  std::vector<Row> rows;
  for (long number_of_line = 2; std::getline(in, line); ++number_of_line) {
    const std::vector<std::string> fields = csv_fields(line);
    if (fields.size() != header.size())
      throw InputError(path + ": line " + std::to_string(number_of_line) + " has " +
                       std::to_string(fields.size()) + " fields, not " +
                       std::to_string(header.size()));
    Row r;
    for (size_t k = 0; k < header.size(); ++k) r[header[k]] = fields[k];
    rows.push_back(std::move(r));
  }
  for (const Metric& m : kMetrics)
    if (std::find(header.begin(), header.end(), m.key) == header.end())
      throw InputError(path + ": no column " + m.key);
  std::string target = "?";
  for (const Row& r : rows) {
    if (!r.at("target_auc").empty()) {
      target = r.at("target_auc");
      break;
    }
  }
  std::vector<std::string> head = axes;
  head.push_back("seeds");
  for (const Metric& m : kMetrics) {
    std::string title = m.title;
    const size_t at = title.find("target AUC");
    if (at != std::string::npos) title.replace(at, 10, "AUC " + target);
    head.push_back(title);
  }
  std::string out = row_line(head) + "\n" + rule_line(head.size()) + "\n";
  for (const auto& [values, members] : grouped(rows, values_of, axes, false)) {
    std::vector<const Row*> done;
    for (const Row* r : members)
      if (r->at("status") == "done") done.push_back(r);
    std::vector<std::string> cells = values;
    cells.push_back(std::to_string(done.size()) +
                    (done.size() == members.size() ? "" : " of " + std::to_string(members.size())));
    for (const Metric& m : kMetrics) {
      std::vector<double> numbers;
      for (const Row* r : done) numbers.push_back(number(r->at(m.key)));
      std::string text = interval_text(numbers, m.format);
      if (std::string(m.key) == "time_to_auc_s") {
        const auto reached = std::count_if(numbers.begin(), numbers.end(),
                                           [](double x) { return !std::isnan(x); });
        text = (reached == 0 ? "not reached" : text) + " (" + std::to_string(reached) + "/" +
               std::to_string(done.size()) + ")";
      }
      cells.push_back(text);
    }
    out += row_line(cells) + "\n";
  }
  out += "\nMean over seeds with its 95% interval (Student's t) in brackets; time to the target: "
         "the mean of the seeds that reached it, (reached/seeds). Dropped and decayed: shares of "
         "the gradients received.\n";
  if (!against.empty()) out += against_table(rows, axes, against);
  return out + modes_table(rows, axes);
}

}  // namespace gbasim
