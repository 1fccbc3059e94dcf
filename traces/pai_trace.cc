#include "traces/pai_trace.h"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <map>

#include "base/files.h"
#include "base/stats.h"
#include "traces/csv.h"
#include "traces/trace_mapping.h"

namespace gbasim {
PaiTrace read_pai_trace(const std::string& path) {
  std::ifstream in = open_input(path, "trace");
  std::string line;
  if (!std::getline(in, line)) throw InputError(path + ": empty file (a header is expected)");
  if (!line.empty() && line.back() == '\r') line.pop_back();
  const std::vector<std::string> header = csv::split(line);
  auto column = [&](const std::string& name) {
    const auto it = std::find(header.begin(), header.end(), name);
    if (it == header.end()) throw InputError(path + ":1: no '" + name + "' column in the header");
    return static_cast<size_t>(it - header.begin());
  };
  const size_t worker_col = column("worker"), time_col = column("time"),
               value_col = column("batch_time_norm");

  PaiTrace trace;
  std::map<int64_t, std::map<int, double>> times;  // iteration -> worker -> time
  for (int64_t number = 2; std::getline(in, line); ++number) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty()) continue;
    const std::vector<std::string> cells = csv::split(line);
    const std::string where = path + ":" + std::to_string(number) + ": ";
    if (cells.size() != header.size()) {
      throw InputError(where + "expected " + std::to_string(header.size()) + " columns, found " +
                       std::to_string(cells.size()));
    }
    int worker = 0;
    int64_t iteration = 0;
    if (!csv::parse_number(cells[worker_col], worker) || worker < 0) {
      throw InputError(where + "worker must be a non-negative integer, got '" + cells[worker_col] +
                       "'");
    }
    if (!csv::parse_number(cells[time_col], iteration) || iteration < 0 ||
        iteration > (int64_t{1} << 40)) {
      throw InputError(where + "time (the iteration) must be an integer in [0, 2^40], got '" +
                       cells[time_col] + "'");
    }
    const std::string& text = cells[value_col];
    double value = 0.0;
    if (text.empty()) {
      ++trace.invalid_samples;
      continue;
    }
    // A time beyond 1e12 (PAI's are hundreds) is a corrupt row, whose slowdown would stall
    // the simulated worker for ever.
    if (!csv::parse_number(text, value) || !(value <= 1e12))
      throw InputError(where + "batch_time_norm must be a number up to 1e12, got '" + text + "'");
    if (!(value > 0.0)) {
      ++trace.invalid_samples;
      continue;
    }
    times[iteration][worker] = value;
    ++trace.samples;
  }
  if (trace.samples == 0) throw InputError(path + ": no valid samples");

  std::map<int, WorkerSlowdowns> series;
  for (const auto& [iteration, by_worker] : times) {
    std::vector<double> values;
    for (const auto& [worker, value] : by_worker) values.push_back(value);
    const double middle = median(values);
    for (const auto& [worker, value] : by_worker) {
      WorkerSlowdowns& s = series[worker];
      s.worker = worker;
      s.iterations.push_back(iteration);
      s.slowdowns.push_back(value / middle);
    }
  }
  for (auto& [worker, s] : series) trace.workers.push_back(std::move(s));
  return trace;
}

double slowdown_at(const WorkerSlowdowns& s, double iteration) {
  const auto it = std::lower_bound(s.iterations.begin(), s.iterations.end(), iteration,
                                   [](int64_t a, double b) { return static_cast<double>(a) < b; });
  if (it == s.iterations.begin()) return s.slowdowns.front();
  if (it == s.iterations.end()) return s.slowdowns.back();
  const size_t hi = static_cast<size_t>(it - s.iterations.begin()), lo = hi - 1;
  const double x0 = static_cast<double>(s.iterations[lo]),
               x1 = static_cast<double>(s.iterations[hi]);
  const double t = (iteration - x0) / (x1 - x0);
  return s.slowdowns[lo] + t * (s.slowdowns[hi] - s.slowdowns[lo]);
}

TraceReplay::TraceReplay(PaiTrace trace, const std::string& mapping,
                         const std::vector<std::string>& chosen, double offset, int workers,
                         uint64_t seed, double intensity)
    : trace_(std::move(trace)), intensity_(intensity) {
  std::vector<std::string> ids;
  for (const auto& w : trace_.workers) ids.push_back(std::to_string(w.worker));
  series_ = assign_trace_series(ids, mapping, chosen, workers, seed);
  start_ = offset + static_cast<double>(trace_.workers.front().iterations.front());
  for (const auto& w : trace_.workers)
    start_ = std::min(start_, offset + static_cast<double>(w.iterations.front()));
  std::vector<bool> used(trace_.workers.size(), false);
  for (size_t s : series_) {
    assignment_.push_back(trace_.workers[s].worker);
    wraps_ = wraps_ || used[s];
    used[s] = true;
  }
}

double TraceReplay::slowdown(int worker, int64_t step) const {
  const double s =
      slowdown_at(trace_.workers[series_.at(worker)], start_ + static_cast<double>(step));
  return intensity_ == 1.0 ? s : std::max(kMinSlowdown, 1.0 + intensity_ * (s - 1.0));
}

namespace {

double quantile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return v[static_cast<size_t>(q * static_cast<double>(v.size() - 1))];
}

}  // namespace

TraceStats trace_stats(const PaiTrace& trace, double threshold) {
  TraceStats stats;
  stats.first_iteration = trace.workers.front().iterations.front();
  stats.last_iteration = trace.workers.front().iterations.back();
  std::map<int64_t, std::vector<double>> by_iteration;
  for (const WorkerSlowdowns& s : trace.workers) {
    stats.first_iteration = std::min(stats.first_iteration, s.iterations.front());
    stats.last_iteration = std::max(stats.last_iteration, s.iterations.back());
    stats.workers.push_back({s.worker, quantile(s.slowdowns, 0.5), quantile(s.slowdowns, 0.9),
                             quantile(s.slowdowns, 0.99), quantile(s.slowdowns, 1.0)});
    for (size_t i = 0; i < s.iterations.size(); ++i) {
      by_iteration[s.iterations[i]].push_back(s.slowdowns[i]);
      if (s.slowdowns[i] < threshold) continue;
      if (i == 0 || s.slowdowns[i - 1] < threshold) {
        stats.episodes.push_back({s.worker, s.iterations[i], s.iterations[i], 0, 0.0, 0.0});
      }
      TraceStats::Episode& e = stats.episodes.back();
      e.last_iteration = s.iterations[i];
      e.mean = (e.mean * e.samples + s.slowdowns[i]) / (e.samples + 1);
      ++e.samples;
      e.peak = std::max(e.peak, s.slowdowns[i]);
    }
  }
  std::vector<double> cvs;
  for (const auto& [iteration, values] : by_iteration) {
    if (values.size() < 2) continue;
    double mean = 0.0, sq = 0.0;
    for (double v : values) mean += v;
    mean /= static_cast<double>(values.size());
    for (double v : values) sq += (v - mean) * (v - mean);
    cvs.push_back(std::sqrt(sq / static_cast<double>(values.size())) / mean);
  }
  if (!cvs.empty()) {
    stats.cv_median = quantile(cvs, 0.5);
    stats.cv_p90 = quantile(cvs, 0.9);
  }
  return stats;
}

}  // namespace gbasim
