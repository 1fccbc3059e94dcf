#include "experiment/workload.h"

#include <algorithm>
#include <cmath>

#include "base/enum_names.h"
#include "base/error.h"
#include "experiment/json_file.h"

namespace gbasim {

namespace {
constexpr EnumName<TablePlacement> kTablePlacementNames[] = {
    {TablePlacement::kWorkers, "workers"},
    {TablePlacement::kServers, "servers"},
    {TablePlacement::kReplicated, "replicated"}};
}  // namespace

TablePlacement parse_table_placement(const std::string& name) {
  if (name.empty()) return TablePlacement::kCluster;
  return parse_enum(name, kTablePlacementNames);
}

std::string table_placement_name(TablePlacement placement) {
  return enum_name(placement, kTablePlacementNames);
}

namespace {

using Json = nlohmann::json;

// 1 - (1 - p)^n, accurate for tiny p.
double touched(double p, double n) { return p >= 1.0 ? 1.0 : -std::expm1(n * std::log1p(-p)); }

constexpr int64_t kExactRanks = 4096;
constexpr double kBinsPerE = 200.0;  // Simpson intervals per unit of log(rank)

// The integral of g(x) dx over [a, b] (1 <= a < b) by Simpson's rule in u = log x.
template <class G>
double log_integral(G g, double a, double b) {
  const double ua = std::log(a), ub = std::log(b);
  int n = std::max(2, static_cast<int>(std::ceil((ub - ua) * kBinsPerE)));
  if (n % 2) ++n;
  const double h = (ub - ua) / n;
  double sum = 0.0;
  for (int k = 0; k <= n; ++k) {
    const double x = std::exp(ua + k * h);
    const double weight = (k == 0 || k == n) ? 1.0 : (k % 2 ? 4.0 : 2.0);
    sum += weight * g(x) * x;
  }
  return sum * h / 3.0;
}

// sum over i = 1..rows of i^-skew: exact over the first ranks, the midpoint integral beyond.
double zipf_norm(int64_t rows, double skew) {
  const int64_t exact = std::min(rows, kExactRanks);
  double sum = 0.0;
  for (int64_t i = exact; i >= 1; --i) sum += std::pow(static_cast<double>(i), -skew);
  if (rows > exact) {
    const double a = static_cast<double>(exact) + 0.5, b = static_cast<double>(rows) + 0.5;
    sum += std::abs(skew - 1.0) < 1e-12
               ? std::log(b / a)
               : (std::pow(b, 1.0 - skew) - std::pow(a, 1.0 - skew)) / (1.0 - skew);
  }
  return sum;
}

}  // namespace

double expected_distinct(int64_t rows, double skew, double draws) {
  if (rows <= 0 || draws <= 0.0) return 0.0;
  const auto r = static_cast<double>(rows);
  if (skew == 0.0) return r * touched(1.0 / r, draws);
  const double norm = zipf_norm(rows, skew);
  const int64_t exact = std::min(rows, kExactRanks);
  double sum = 0.0;
  for (int64_t i = exact; i >= 1; --i)
    sum += touched(std::pow(static_cast<double>(i), -skew) / norm, draws);
  if (rows > exact) {
    sum += log_integral([&](double x) { return touched(std::pow(x, -skew) / norm, draws); },
                        static_cast<double>(exact) + 0.5, r + 0.5);
  }
  return std::min(sum, std::min(r, draws));
}

double expected_distinct_bags(int64_t rows, double skew, double samples, double pooling) {
  if (rows <= 0 || samples <= 0.0) return 0.0;
  const auto r = static_cast<double>(rows);
  const double first = expected_distinct(rows, skew, samples);
  const double companions = first * std::max(0.0, pooling - 1.0);
  return r - (r - first) * std::exp(companions * std::log1p(-1.0 / r));
}

double fit_skew(int64_t rows, double draws, double distinct) {
  if (distinct >= expected_distinct(rows, 0.0, draws)) return 0.0;
  double lo = 0.0, hi = 8.0;
  for (int k = 0; k < 60; ++k) {
    const double mid = 0.5 * (lo + hi);
    (expected_distinct(rows, mid, draws) > distinct ? lo : hi) = mid;
  }
  return 0.5 * (lo + hi);
}

// ---- presets ----

namespace {

// No fitted exponent of Criteo's or Outbrain's accesses is published (docs/workload.md); the
// presets assume this one, near the proxy data's 1.1, and docs/workload.md shows what the
// bytes of a step would be at 0 and 1.2.
constexpr double kAssumedSkew = 1.05;

// MLPerf Training's DLRM-DCNv2 reference on Criteo 1TB Click Logs, multi-hot. Every number
// is cited in docs/workload.md, "dlrm-dcnv2"; the access skew is an assumption it states.
WorkloadSpec dlrm_dcnv2() {
  WorkloadSpec w;
  w.preset = "dlrm-dcnv2";
  w.source =
      "MLPerf Training DLRM-DCNv2 reference, mlcommons/training recommendation_v2/torchrec_dlrm "
      "(docs/workload.md)";
  const std::vector<int64_t> rows = {
      40000000, 39060,    17295,    7424,     20265,  3,     7122, 1543, 63,
      40000000, 3067956,  405282,   10,       2209,   11938, 155,  4,    976,
      14,       40000000, 40000000, 40000000, 590152, 12973, 108,  36};
  const std::vector<double> hot = {3, 2, 1, 2, 6, 1, 1,  1,   1,  7,  3, 8, 1,
                                   6, 9, 5, 1, 1, 1, 12, 100, 27, 10, 3, 1, 1};
  for (size_t t = 0; t < rows.size(); ++t)
    w.tables.push_back({rows[t], 128, hot[t], kAssumedSkew, 1, true});
  // Bottom MLP 13-512-256-128; DCNv2: 3 low-rank (512) cross layers on the 27 x 128 = 3456
  // features, each U (3456 x 512) then V (512 x 3456) with a bias; top MLP 1024-1024-512-256-1
  // on the cross network's 3456 outputs.
  w.dense_layers = {{13, 512, 256, 128},
                    {3456, 512, 3456},
                    {3456, 512, 3456},
                    {3456, 512, 3456},
                    {3456, 1024, 1024, 512, 256, 1}};
  w.local_batch = 8192;   // the reference's global batch of 65,536 on 8 GPUs
  w.optimizer_state = 1;  // Adagrad: one accumulator a weight
  w.placement = TablePlacement::kWorkers;
  return w;
}

// NVIDIA DeepLearningExamples' TensorFlow 2 Wide & Deep on Outbrain (docs/workload.md,
// "wide-deep-outbrain").
WorkloadSpec wide_deep_outbrain() {
  WorkloadSpec w;
  w.preset = "wide-deep-outbrain";
  w.source =
      "NVIDIA DeepLearningExamples TensorFlow2/Recommendation/WideAndDeep (Outbrain), README "
      "(docs/workload.md)";
  // (dim, rows, ids a sample): 11 request-level tables, then 5 item-level ones.
  const std::vector<std::vector<int64_t>> deep = {
      {128, 300000, 1}, {19, 4, 1},     {128, 100000, 1}, {64, 4000, 1},
      {64, 1000, 1},    {64, 2500, 1},  {64, 300, 1},     {64, 2000, 1},
      {64, 350, 3},     {64, 10000, 3}, {64, 100, 3},     {128, 250000, 1},
      {64, 2500, 1},    {64, 4000, 1},  {64, 1000, 1},    {128, 5000, 1}};
  for (const auto& t : deep) {
    w.tables.push_back({t[1], t[0], static_cast<double>(t[2]), kAssumedSkew, 1, false});
    w.tables.push_back({t[1], 1, static_cast<double>(t[2]), kAssumedSkew, 1, false});  // wide
  }
  // The deep part: 1,235 embedding values and 13 numerical features, 5 layers of 1,024, the
  // output; the wide part's 13 numerical weights and its bias.
  w.dense_layers = {{1248, 1024, 1024, 1024, 1024, 1024, 1}};
  w.dense_extra_params = 14;
  w.local_batch = 16384;  // the global batch of 131,072 on 8 GPUs
  w.optimizer_state = 1;
  w.placement = TablePlacement::kCluster;  // the README does not say: the cluster's exchange
  return w;
}

}  // namespace

std::vector<std::string> workload_presets() { return {"dlrm-dcnv2", "wide-deep-outbrain"}; }

WorkloadSpec workload_preset(const std::string& name) {
  if (name == "dlrm-dcnv2") return dlrm_dcnv2();
  if (name == "wide-deep-outbrain") return wide_deep_outbrain();
  std::string known;
  for (const std::string& p : workload_presets()) known += (known.empty() ? "" : ", ") + p;
  throw InputError("unknown workload preset '" + name + "' (the presets: " + known + ")");
}

// ---- reading and writing ----

namespace {

[[noreturn]] void fail(const std::string& source, const std::string& key, const std::string& what) {
  throw InputError(source, key, what);
}

double number(const Json& j, const std::string& source, const std::string& key, double lo,
              double hi) {
  if (!j.is_number()) fail(source, key, "must be a number");
  const double v = j.get<double>();
  if (!std::isfinite(v) || v < lo || v > hi) {
    fail(source, key,
         "must be between " + Json(lo).dump() + " and " + Json(hi).dump() + " (got " + j.dump() +
             ")");
  }
  return v;
}

int64_t integer(const Json& written, const std::string& source, const std::string& key, int64_t lo,
                int64_t hi) {
  const Json j = whole_numbers(written);  // 1e7 and 16.0 are integers
  if (!j.is_number_integer()) {
    fail(source, key,
         "must be an integer between " + std::to_string(lo) + " and " + std::to_string(hi) +
             " (got " + j.dump() + ")");
  }
  if (j.is_number_unsigned() && j.get<uint64_t>() > static_cast<uint64_t>(hi))
    fail(source, key, "must be at most " + std::to_string(hi) + " (got " + j.dump() + ")");
  const auto v = j.get<int64_t>();
  if (v < lo || v > hi) {
    fail(source, key,
         "must be between " + std::to_string(lo) + " and " + std::to_string(hi) + " (got " +
             j.dump() + ")");
  }
  return v;
}

std::string text(const Json& j, const std::string& source, const std::string& key) {
  if (!j.is_string()) fail(source, key, "must be a string");
  return j.get<std::string>();
}

constexpr int64_t kMaxWidth = 1'000'000'000;
constexpr double kMaxFlops = 1e15;  // a petaflop a sample

// workload.dense_layers: each layer's widths, [in, ..., out].
std::vector<std::vector<int64_t>> parse_dense_layers(const Json& value, const std::string& source,
                                                     const std::string& path) {
  if (!value.is_array()) fail(source, path, "must be a list of layer width lists");
  std::vector<std::vector<int64_t>> layers;
  for (size_t m = 0; m < value.size(); ++m) {
    const std::string at = path + "[" + std::to_string(m) + "]";
    if (!value[m].is_array() || value[m].size() < 2)
      fail(source, at, "must be a list of at least two widths ([in, ..., out])");
    std::vector<int64_t> widths;
    for (size_t k = 0; k < value[m].size(); ++k)
      widths.push_back(
          integer(value[m][k], source, at + "[" + std::to_string(k) + "]", 1, kMaxWidth));
    layers.push_back(std::move(widths));
  }
  return layers;
}

// workload.tables: each table's rows, dimension, ids a sample, skew, count and bags.
std::vector<WorkloadTable> parse_tables(const Json& value, const std::string& source,
                                        const std::string& path) {
  if (!value.is_array()) fail(source, path, "must be a list of table objects");
  std::vector<WorkloadTable> tables;
  for (size_t t = 0; t < value.size(); ++t) {
    const std::string at = path + "[" + std::to_string(t) + "]";
    if (!value[t].is_object()) fail(source, at, "must be an object");
    WorkloadTable table;
    for (const auto& [k, v] : value[t].items()) {
      const std::string kp = at + "." + k;
      if (k == "rows") {
        table.rows = integer(v, source, kp, 1, int64_t{1} << 40);
      } else if (k == "dim") {
        table.dim = integer(v, source, kp, 1, 1 << 16);
      } else if (k == "ids_per_sample") {
        table.ids_per_sample = number(v, source, kp, 1e-6, 1e5);
      } else if (k == "skew") {
        table.skew = number(v, source, kp, 0.0, 4.0);
      } else if (k == "count") {
        table.count = integer(v, source, kp, 1, 100'000);
      } else if (k == "fixed_bags") {
        if (!v.is_boolean()) fail(source, kp, "must be true or false");
        table.fixed_bags = v.get<bool>();
      } else {
        throw InputError::unknown_key(source, kp);
      }
    }
    for (const char* required : {"rows", "dim"})
      if (!value[t].contains(required)) fail(source, at + "." + required, "is required");
    if (table.fixed_bags && table.ids_per_sample < 1.0) {
      fail(source, at + ".ids_per_sample",
           "must be at least 1 with fixed_bags (a bag is a first id and the rows fixed for it), "
           "got " +
               Json(table.ids_per_sample).dump());
    }
    tables.push_back(table);
  }
  return tables;
}

}  // namespace

WorkloadSpec parse_workload(const Json& j, const std::string& source) {
  if (!j.is_object()) fail(source, "workload", "must be an object");
  WorkloadSpec w;
  if (j.contains("preset")) {
    const std::string name = text(j["preset"], source, "workload.preset");
    try {
      w = workload_preset(name);
    } catch (const InputError& e) {
      fail(source, "workload.preset", e.what());
    }
  }
  for (const auto& [key, value] : j.items()) {
    const std::string path = "workload." + key;
    if (key == "preset") {
      continue;
    } else if (key == "source") {
      w.source = text(value, source, path);
    } else if (key == "dense_layers") {
      w.dense_layers = parse_dense_layers(value, source, path);
    } else if (key == "dense_extra_params") {
      w.dense_extra_params = integer(value, source, path, 0, int64_t{1} << 50);
    } else if (key == "flops_per_sample") {
      w.flops_per_sample = number(value, source, path, 0.0, kMaxFlops);
    } else if (key == "tables") {
      w.tables = parse_tables(value, source, path);
    } else if (key == "local_batch") {
      w.local_batch = integer(value, source, path, 1, 100'000'000);
    } else if (key == "optimizer_state") {
      w.optimizer_state = static_cast<int>(integer(value, source, path, 0, 16));
    } else if (key == "embedding_placement") {
      const std::string name = text(value, source, path);
      try {
        w.placement = parse_table_placement(name);
      } catch (const InputError& e) {
        fail(source, path, e.what());
      }
    } else if (key == "value_bytes") {
      w.value_bytes = number(value, source, path, 0.125, 16.0);
    } else if (key == "id_bytes") {
      w.id_bytes = number(value, source, path, 0.125, 16.0);
    } else {
      throw InputError::unknown_key(source, path);
    }
  }
  return w;
}

void check_workload(const WorkloadSpec& w, const std::string& source) {
  if (w.dense_layers.empty() && w.dense_extra_params == 0 && w.tables.empty())
    fail(source, "workload", "describes no parameters: give a preset, dense_layers or tables");
  const Workload derived(w);
  if (derived.embedding_values() > 1e15)
    fail(source, "workload.tables", "hold more than 1e15 values");
  if (!(derived.flops_per_sample() > 0.0)) {
    fail(source, "workload",
         "has no compute: give flops_per_sample, or dense_layers or dense_extra_params to derive "
         "it from");
  }
  if (derived.flops_per_sample() > kMaxFlops) {
    fail(source, "workload.dense_layers",
         "and dense_extra_params give more than 1e15 flops a sample (6 a dense parameter)");
  }
}

nlohmann::ordered_json workload_to_json(const WorkloadSpec& w) {
  nlohmann::ordered_json j;
  j["preset"] = w.preset;
  j["source"] = w.source;
  j["dense_layers"] = w.dense_layers;
  j["dense_extra_params"] = w.dense_extra_params;
  j["flops_per_sample"] = w.flops_per_sample;
  j["tables"] = nlohmann::ordered_json::array();
  for (const WorkloadTable& t : w.tables) {
    j["tables"].push_back({{"rows", t.rows},
                           {"dim", t.dim},
                           {"ids_per_sample", t.ids_per_sample},
                           {"skew", t.skew},
                           {"count", t.count},
                           {"fixed_bags", t.fixed_bags}});
  }
  j["local_batch"] = w.local_batch;
  j["optimizer_state"] = w.optimizer_state;
  j["embedding_placement"] = table_placement_name(w.placement);
  j["value_bytes"] = w.value_bytes;
  j["id_bytes"] = w.id_bytes;
  return j;
}

// ---- derived sizes ----

Workload::Workload(WorkloadSpec spec) : spec_(std::move(spec)) {
  dense_params_ = spec_.dense_extra_params;
  for (const auto& widths : spec_.dense_layers)
    for (size_t k = 1; k < widths.size(); ++k)
      dense_params_ += widths[k - 1] * widths[k] + widths[k];
  flops_per_sample_ = spec_.flops_per_sample > 0.0 ? spec_.flops_per_sample
                                                   : 6.0 * static_cast<double>(dense_params_);
}

int64_t Workload::tables() const {
  int64_t n = 0;
  for (const WorkloadTable& t : spec_.tables) n += t.count;
  return n;
}

int64_t Workload::embedding_rows() const {
  int64_t n = 0;
  for (const WorkloadTable& t : spec_.tables) n += t.rows * t.count;
  return n;
}

double Workload::embedding_values() const {
  double n = 0.0;
  for (const WorkloadTable& t : spec_.tables)
    n += static_cast<double>(t.rows) * static_cast<double>(t.dim) * static_cast<double>(t.count);
  return n;
}

double Workload::ids_per_sample() const {
  double n = 0.0;
  for (const WorkloadTable& t : spec_.tables) n += t.ids_per_sample * static_cast<double>(t.count);
  return n;
}

double Workload::pooled_values_per_sample() const {
  double n = 0.0;
  for (const WorkloadTable& t : spec_.tables)
    n += static_cast<double>(t.dim) * static_cast<double>(t.count);
  return n;
}

const Workload::Rows& Workload::distinct(int64_t samples) const {
  const auto it = cache_.find(samples);
  if (it != cache_.end()) return it->second;
  Rows r;
  for (const WorkloadTable& t : spec_.tables) {
    const auto n = static_cast<double>(samples);
    const double d = static_cast<double>(t.count) *
                     (t.fixed_bags ? expected_distinct_bags(t.rows, t.skew, n, t.ids_per_sample)
                                   : expected_distinct(t.rows, t.skew, n * t.ids_per_sample));
    r.rows += d;
    r.values += d * static_cast<double>(t.dim);
  }
  return cache_.emplace(samples, r).first->second;
}

StepBytes step_bytes(const Workload& w, int64_t local_batch, TablePlacement sync_placement,
                     int shards) {
  const WorkloadSpec& s = w.spec();
  const auto b = static_cast<double>(local_batch);
  const double dense = s.value_bytes * static_cast<double>(w.dense_params());
  const Workload::Rows& d = w.distinct(local_batch);
  const double rows_values = s.value_bytes * d.values, rows_ids = s.id_bytes * d.rows;
  StepBytes out;
  out.allreduce = dense;
  switch (sync_placement) {
    case TablePlacement::kWorkers:
      out.exchange_ids = b * w.ids_per_sample() * s.id_bytes;
      out.exchange_vectors = b * w.pooled_values_per_sample() * s.value_bytes;
      out.exchange_gradients = out.exchange_vectors;
      break;
    case TablePlacement::kServers:
      out.exchange_ids = rows_ids;
      out.exchange_vectors = rows_values;
      out.exchange_gradients = rows_values + rows_ids;
      break;
    case TablePlacement::kReplicated:
    case TablePlacement::kCluster:
      out.exchange_gradients = rows_values + rows_ids;
      break;
  }
  const double n = static_cast<double>(shards);
  out.request_per_shard = rows_ids / n;
  out.pull_per_shard = (dense + rows_values) / n;
  out.push_per_shard = (dense + rows_values + rows_ids) / n;
  return out;
}

}  // namespace gbasim
