#include "traces/usage_trace.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <functional>
#include <map>
#include <set>

#include "base/files.h"
#include "base/text.h"
#include "traces/csv.h"
#include "traces/pai_trace.h"
#include "traces/trace_mapping.h"

namespace gbasim {
namespace {

// Where each format keeps what is read. A column index of -1: the format has no such column.
struct Layout {
  size_t width = 0;
  int machine = 0, time = 0, cpu = -1, net_in = -1, net_out = -1, speed = -1, bandwidth = -1;
  bool header = false;
};

Layout layout_of(const std::string& format) {
  if (format == "alibaba-v2018") return {9, 0, 1, 2, 6, 7, -1, -1, false};
  if (format == "alibaba-v2017") return {8, 1, 0, 2, -1, -1, -1, -1, false};
  if (format == "generic") return {0, -1, -1, -1, -1, -1, -1, -1, true};
  throw InputError("unknown usage-trace format '" + format +
                   "' (alibaba-v2018, alibaba-v2017 or generic)");
}

// A generic file's columns, from its header line.
Layout generic_layout(const std::string& path, const std::string& line) {
  const std::vector<std::string> header = csv::split(line);
  Layout l;
  l.width = header.size();
  l.header = true;
  auto find = [&](const std::string& name, bool required) {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) {
      if (required) throw InputError(path + ":1: no '" + name + "' column in the header");
      return -1;
    }
    return static_cast<int>(it - header.begin());
  };
  l.machine = find("host", true);
  l.time = find("time", true);
  l.speed = find("speed_factor", true);
  l.bandwidth = find("bandwidth_factor", false);
  return l;
}

// Calls `row(cells, where)` for every non-empty data line of the file, having checked its
// width; returns the layout used.
Layout for_each_row(const std::string& path, const std::string& format,
                    const std::function<void(const std::vector<std::string>&, const std::string&,
                                             const Layout&)>& row) {
  Layout layout = layout_of(format);
  std::ifstream in = open_input(path, "trace");
  std::string line;
  int64_t number = 0;
  if (layout.header) {
    if (!std::getline(in, line)) throw InputError(path + ": empty file (a header is expected)");
    ++number;
    csv::chomp(line);
    layout = generic_layout(path, line);
  }
  while (std::getline(in, line)) {
    ++number;
    csv::chomp(line);
    if (line.empty()) continue;
    const std::vector<std::string> cells = csv::split(line);
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (cells.size() != layout.width) {
      throw InputError(where + "expected " + std::to_string(layout.width) + " columns, found " +
                       std::to_string(cells.size()));
    }
    if (cells[static_cast<size_t>(layout.machine)].empty())
      throw InputError(where + "the machine id is empty");
    if (!valid_utf8(cells[static_cast<size_t>(layout.machine)]))
      throw InputError(where + "the machine id is not valid UTF-8");
    row(cells, where, layout);
  }
  return layout;
}

double parse_time(const std::vector<std::string>& cells, const std::string& where,
                  const Layout& l) {
  double t = 0.0;
  const std::string& text = cells[static_cast<size_t>(l.time)];
  if (!csv::parse_number(text, t) || !(std::fabs(t) <= 1e12))  // 1e12 s: 31,700 years
    throw InputError(where + "the time stamp must be a number of seconds up to 1e12, got '" +
                     text + "'");
  return t;
}

// An Alibaba percentage: false (a gap) when empty or outside [0, 100] (-1 and 101 mark
// invalid values); a InputError when not a number.
bool percent(const std::vector<std::string>& cells, int column, const std::string& where,
             double& out) {
  if (column < 0) return false;
  const std::string& text = cells[static_cast<size_t>(column)];
  if (text.empty()) return false;
  if (!csv::parse_number(text, out) || std::isnan(out))
    throw InputError(where + "column " + std::to_string(column + 1) + " is not a number: '" + text +
                     "'");
  return out >= 0.0 && out <= 100.0;
}

// A generic factor: false (a gap) when empty; a InputError when not a positive number.
bool factor(const std::vector<std::string>& cells, int column, const char* name,
            const std::string& where, double& out) {
  if (column < 0) return false;
  const std::string& text = cells[static_cast<size_t>(column)];
  if (text.empty()) return false;
  // Beyond [1e-6, 1e3] a factor makes a host or link that SimGrid cannot time (it aborts) or
  // that never finishes a step.
  if (!csv::parse_number(text, out) || !(out >= 1e-6 && out <= 1e3))
    throw InputError(where + name + " must be a number in [1e-6, 1000], got '" + text + "'");
  return true;
}

// Sorts samples by time; of equal times the one read last stays.
StepSeries to_series(std::vector<std::pair<double, double>>& samples) {
  std::stable_sort(samples.begin(), samples.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  StepSeries s;
  for (const auto& [t, v] : samples) {
    if (!s.times.empty() && s.times.back() == t) {
      s.values.back() = v;
    } else {
      s.times.push_back(t);
      s.values.push_back(v);
    }
  }
  return s;
}

}  // namespace

bool is_usage_format(const std::string& format) {
  return format == "alibaba-v2018" || format == "alibaba-v2017" || format == "generic";
}

double value_at(const StepSeries& s, double t) {
  if (s.times.empty()) return 1.0;
  const auto it = std::upper_bound(s.times.begin(), s.times.end(), t);
  if (it == s.times.begin()) return s.values.front();
  return s.values[static_cast<size_t>(it - s.times.begin()) - 1];
}

UsageIndex index_usage_trace(const std::string& path, const std::string& format) {
  UsageIndex index;
  std::set<std::string> seen;
  bool any = false;
  for_each_row(path, format, [&](const auto& cells, const std::string& where, const Layout& l) {
    const double t = parse_time(cells, where, l);
    index.first_time = any ? std::min(index.first_time, t) : t;
    any = true;
    const std::string& machine = cells[static_cast<size_t>(l.machine)];
    if (seen.insert(machine).second) index.machines.push_back(machine);
  });
  if (!any) throw InputError(path + ": no rows");
  return index;
}

UsageTrace read_usage_trace(const std::string& path, const std::string& format,
                            const UsageMapping& m, const std::vector<std::string>& only) {
  const std::set<std::string> wanted(only.begin(), only.end());
  std::map<std::string, size_t> slot;
  std::vector<std::vector<std::pair<double, double>>> speed, bandwidth;
  UsageTrace trace;
  bool any = false;
  for_each_row(path, format, [&](const auto& cells, const std::string& where, const Layout& l) {
    const double t = parse_time(cells, where, l);
    trace.first_time = any ? std::min(trace.first_time, t) : t;
    any = true;
    ++trace.rows;
    const std::string& machine = cells[static_cast<size_t>(l.machine)];
    if (!wanted.empty() && !wanted.count(machine)) return;
    auto [it, added] = slot.emplace(machine, trace.machines.size());
    if (added) {
      trace.machines.push_back({machine, {}, {}});
      speed.emplace_back();
      bandwidth.emplace_back();
    }
    const size_t i = it->second;
    double value = 0.0;
    if (l.speed >= 0) {  // generic: the factors themselves
      if (factor(cells, l.speed, "speed_factor", where, value))
        speed[i].emplace_back(t, value);
      else
        ++trace.invalid_values;
      if (l.bandwidth >= 0) {
        if (factor(cells, l.bandwidth, "bandwidth_factor", where, value))
          bandwidth[i].emplace_back(t, value);
        else
          ++trace.invalid_values;
      }
      return;
    }
    if (percent(cells, l.cpu, where, value))
      speed[i].emplace_back(t, std::max(m.min_speed, 1.0 - m.load_share * value / 100.0));
    else
      ++trace.invalid_values;
    if (l.net_in < 0) return;
    double in = 0.0, out = 0.0;
    const bool has_in = percent(cells, l.net_in, where, in),
               has_out = percent(cells, l.net_out, where, out);
    trace.invalid_values += !has_in + !has_out;
    if (has_in || has_out) {
      const double busy = std::max(has_in ? in : 0.0, has_out ? out : 0.0);
      bandwidth[i].emplace_back(t, std::max(m.min_bandwidth, 1.0 - m.net_share * busy / 100.0));
    }
  });
  if (!any) throw InputError(path + ": no rows");
  for (const std::string& machine : only) {
    if (!slot.count(machine)) throw InputError(path + ": no machine '" + machine + "'");
  }
  for (size_t i = 0; i < trace.machines.size(); ++i) {
    trace.machines[i].speed = to_series(speed[i]);
    trace.machines[i].bandwidth = to_series(bandwidth[i]);
  }
  return trace;
}

std::vector<std::pair<double, double>> replay_changes(const StepSeries& s, double first_time,
                                                      double offset, double time_scale) {
  const double start = first_time + offset;
  std::vector<std::pair<double, double>> changes{{0.0, value_at(s, start)}};
  for (size_t i = 0; i < s.times.size(); ++i) {
    if (s.times[i] <= start || s.values[i] == changes.back().second) continue;
    changes.emplace_back((s.times[i] - start) / time_scale, s.values[i]);
  }
  return changes;
}

UsageReplay plan_usage_replay(const StragglerConfig& g, int workers, uint64_t seed) {
  const UsageIndex index = index_usage_trace(g.trace_path, g.trace_format);
  const std::vector<size_t> chosen =
      assign_trace_series(index.machines, g.trace_mapping, g.trace_machines, workers, seed);
  UsageReplay replay;
  std::vector<std::string> wanted;
  for (size_t i : chosen) {
    replay.machines.push_back(index.machines[i]);
    if (std::find(wanted.begin(), wanted.end(), index.machines[i]) == wanted.end())
      wanted.push_back(index.machines[i]);
  }
  replay.wraps = wanted.size() < chosen.size();
  const UsageTrace trace = read_usage_trace(
      g.trace_path, g.trace_format,
      {g.trace_load_share, g.trace_min_speed, g.trace_net_share, g.trace_min_bandwidth}, wanted);
  for (const std::string& machine : replay.machines) {
    const auto it = std::find_if(trace.machines.begin(), trace.machines.end(),
                                 [&](const MachineUsage& m) { return m.machine == machine; });
    replay.speed.push_back(
        replay_changes(it->speed, trace.first_time, g.trace_offset, g.trace_time_scale));
    replay.bandwidth.push_back(
        replay_changes(it->bandwidth, trace.first_time, g.trace_offset, g.trace_time_scale));
  }
  return replay;
}

namespace {

double lower_quantile(std::vector<double> v, double q) {
  if (v.empty()) return 1.0;
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

}  // namespace

UsageStats usage_stats(const UsageTrace& trace, double threshold) {
  UsageStats stats;
  bool any = false;
  std::set<double> stamps;
  for (const MachineUsage& m : trace.machines) {
    for (const StepSeries* s : {&m.speed, &m.bandwidth}) {
      if (s->times.empty()) continue;
      stats.first_time = any ? std::min(stats.first_time, s->times.front()) : s->times.front();
      stats.last_time = any ? std::max(stats.last_time, s->times.back()) : s->times.back();
      any = true;
    }
    std::vector<double> slowdowns;
    for (double v : m.speed.values) slowdowns.push_back(1.0 / v);
    stats.machines.push_back(
        {m.machine, static_cast<int64_t>(m.speed.times.size()),
         static_cast<int64_t>(m.bandwidth.times.size()), lower_quantile(slowdowns, 0.5),
         lower_quantile(slowdowns, 0.9), lower_quantile(slowdowns, 1.0),
         lower_quantile(m.bandwidth.values, 0.5), lower_quantile(m.bandwidth.values, 0.0)});
    stamps.insert(m.speed.times.begin(), m.speed.times.end());
    for (size_t i = 0; i < slowdowns.size(); ++i) {
      if (slowdowns[i] < threshold) continue;
      if (i == 0 || slowdowns[i - 1] < threshold)
        stats.episodes.push_back({m.machine, m.speed.times[i], m.speed.times[i], 0, 0.0, 0.0});
      UsageStats::Episode& e = stats.episodes.back();
      e.last_time = m.speed.times[i];
      e.mean = (e.mean * static_cast<double>(e.samples) + slowdowns[i]) /
               static_cast<double>(e.samples + 1);
      ++e.samples;
      e.peak = std::max(e.peak, slowdowns[i]);
    }
  }
  std::vector<double> cvs;
  if (trace.machines.size() >= 2) {
    for (double t : stamps) {
      double mean = 0.0, sq = 0.0;
      std::vector<double> values;
      for (const MachineUsage& m : trace.machines) values.push_back(1.0 / value_at(m.speed, t));
      for (double v : values) mean += v;
      mean /= static_cast<double>(values.size());
      for (double v : values) sq += (v - mean) * (v - mean);
      cvs.push_back(std::sqrt(sq / static_cast<double>(values.size())) / mean);
    }
  }
  if (!cvs.empty()) {
    stats.cv_median = lower_quantile(cvs, 0.5);
    stats.cv_p90 = lower_quantile(cvs, 0.9);
  }
  return stats;
}

}  // namespace gbasim
