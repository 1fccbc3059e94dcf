#include "models/synthetic.h"

#include <cstdio>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "base/error.h"
#include "base/system.h"
#include "models/metrics.h"

namespace gbasim {
namespace {

// The teacher of one day.
struct Teacher {
  std::vector<std::vector<float>> value_weight;  // [field][value]
  std::vector<RowMatrixXf> hidden;               // [field]: cardinality x teacher_dim, or empty
  Eigen::VectorXf dense_weight;                  // D
  std::vector<int> nonlinear_fields;
  std::vector<std::pair<int, int>> pairs;  // interacting fields
  Eigen::MatrixXf mlp_w1;                  // (|nonlinear| * teacher_dim + D) x width
  Eigen::RowVectorXf mlp_b1;               // width
  Eigen::VectorXf mlp_w2;                  // width
};

// Dense feature d is exp(N(mu_d, sigma_d)); the teacher sees the standardised normal.
struct DenseLaw {
  std::vector<double> mu, sigma;
};

// Raw (unscaled) teacher terms of every sample.
struct Terms {
  std::vector<float> linear, dense, interaction, mlp;
};

// `key` is the spec's ("data." + key; the command-line option is --key with '-' for '_').
void require(bool ok, const std::string& key, const std::string& what) {
  if (!ok) throw InputError("", "data." + key, what);
}

Teacher make_teacher(const SyntheticConfig& c, const std::vector<int64_t>& cards, Rng& rng) {
  Teacher t;
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const float hidden_std = 1.0f / std::sqrt(static_cast<float>(c.teacher_dim));
  t.value_weight.resize(c.num_fields);
  t.hidden.resize(c.num_fields);
  for (int f = 0; f < c.num_fields; ++f) {
    t.value_weight[f].resize(cards[f]);
    for (float& w : t.value_weight[f]) w = normal(rng);
    if (cards[f] <= c.nonlinear_max_cardinality) {
      t.nonlinear_fields.push_back(f);
      t.hidden[f].resize(cards[f], c.teacher_dim);
      for (float& h : t.hidden[f].reshaped()) h = hidden_std * normal(rng);
    }
  }
  t.dense_weight.resize(c.num_dense);
  for (float& w : t.dense_weight) w = normal(rng);

  // Interactions are FM-like: every pair among a random subset of the nonlinear fields.
  const int nl = static_cast<int>(t.nonlinear_fields.size());
  std::vector<int> interacting = t.nonlinear_fields;
  std::shuffle(interacting.begin(), interacting.end(), rng);
  interacting.resize(std::min<size_t>(interacting.size(), c.interaction_fields));
  std::sort(interacting.begin(), interacting.end());
  for (size_t i = 0; i < interacting.size(); ++i)
    for (size_t j = i + 1; j < interacting.size(); ++j)
      t.pairs.emplace_back(interacting[i], interacting[j]);

  const int in = nl * c.teacher_dim + c.num_dense;
  // Pre-activations of standard deviation about 1.5 put tanh well into its nonlinear range.
  const float w1_std = 1.5f / std::sqrt(static_cast<float>(std::max(1, nl + c.num_dense)));
  t.mlp_w1.resize(in, c.teacher_mlp_width);
  for (float& w : t.mlp_w1.reshaped()) w = w1_std * normal(rng);
  t.mlp_b1.resize(c.teacher_mlp_width);
  for (float& w : t.mlp_b1) w = 0.5f * normal(rng);
  t.mlp_w2.resize(c.teacher_mlp_width);
  for (float& w : t.mlp_w2) w = normal(rng);
  return t;
}

// The next day's teacher: an AR(1) step that keeps every weight's variance unchanged.
void drift(Teacher& t, double delta, int teacher_dim, Rng& rng) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  const float keep = static_cast<float>(std::sqrt(1.0 - delta * delta));
  const float step = static_cast<float>(delta);
  const float hidden_std = 1.0f / std::sqrt(static_cast<float>(teacher_dim));
  for (auto& weights : t.value_weight)
    for (float& w : weights) w = keep * w + step * normal(rng);
  for (auto& h : t.hidden)
    for (float& x : h.reshaped()) x = keep * x + step * hidden_std * normal(rng);
  for (float& w : t.dense_weight) w = keep * w + step * normal(rng);
}

// Zipf sampling in O(1) through Walker's alias table over ranks, then a seeded permutation
// from rank to id so that id order says nothing about frequency.
struct ZipfField {
  std::vector<double> keep;  // probability of keeping rank r rather than its alias
  std::vector<int32_t> alias;
  std::vector<int32_t> id_of_rank;

  int32_t sample(double u) const {
    const double scaled = u * static_cast<double>(keep.size());
    const auto r = std::min(static_cast<size_t>(scaled), keep.size() - 1);
    return id_of_rank[scaled - static_cast<double>(r) < keep[r] ? static_cast<int32_t>(r)
                                                                : alias[r]];
  }
};

ZipfField make_zipf(int64_t cardinality, double exponent, Rng& rng) {
  std::vector<double> weight(cardinality);
  double total = 0.0;
  for (int64_t r = 0; r < cardinality; ++r)
    total += weight[r] = std::pow(static_cast<double>(r + 1), -exponent);
  // Vose's construction: pair each under-full rank with an over-full one.
  ZipfField z;
  z.keep.resize(cardinality);
  z.alias.resize(cardinality);
  std::vector<int32_t> small, large;
  for (int64_t r = 0; r < cardinality; ++r) {
    z.keep[r] = weight[r] * static_cast<double>(cardinality) / total;
    (z.keep[r] < 1.0 ? small : large).push_back(static_cast<int32_t>(r));
  }
  while (!small.empty() && !large.empty()) {
    const int32_t s = small.back(), l = large.back();
    small.pop_back();
    z.alias[s] = l;
    z.keep[l] -= 1.0 - z.keep[s];
    if (z.keep[l] < 1.0) {
      large.pop_back();
      small.push_back(l);
    }
  }
  for (int32_t r : small) z.keep[r] = 1.0;  // rounding leftovers
  for (int32_t r : large) z.keep[r] = 1.0;
  z.id_of_rank.resize(cardinality);
  std::iota(z.id_of_rank.begin(), z.id_of_rank.end(), 0);
  std::shuffle(z.id_of_rank.begin(), z.id_of_rank.end(), rng);
  return z;
}

void draw_features(const SyntheticConfig& c, const std::vector<ZipfField>& zipf,
                   const DenseLaw& law, Rng& rng, Dataset& data, std::vector<float>& dense_std,
                   int64_t n) {
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::normal_distribution<double> normal(0.0, 1.0);
  reserve_on_huge_pages(data.ids, static_cast<size_t>(n * c.num_fields));
  data.ids.resize(n * c.num_fields);
  reserve_on_huge_pages(data.dense, static_cast<size_t>(n * c.num_dense));
  data.dense.resize(n * c.num_dense);
  dense_std.resize(n * c.num_dense);
  for (int64_t i = 0; i < n; ++i) {
    for (int f = 0; f < c.num_fields; ++f)
      data.ids[i * c.num_fields + f] = zipf[f].sample(uniform(rng));
    for (int d = 0; d < c.num_dense; ++d) {
      const double standard = normal(rng);
      const double x = std::exp(law.mu[d] + law.sigma[d] * standard);
      dense_std[i * c.num_dense + d] = static_cast<float>(standard);
      data.dense[i * c.num_dense + d] = static_cast<float>(std::log1p(x));
    }
  }
}

// Adds the teacher's raw terms for rows [begin, end) of `data` at `offset` in `terms`.
void add_terms(const SyntheticConfig& c, const Teacher& t, const Dataset& data,
               const std::vector<float>& dense_std, int64_t begin, int64_t end, int64_t offset,
               Terms& terms) {
  const int k = c.teacher_dim;
  const int nl = static_cast<int>(t.nonlinear_fields.size());
  const int in = nl * k + c.num_dense;
  constexpr int64_t kChunk = 4096;
  RowMatrixXf x(kChunk, in);
  for (int64_t start = begin; start < end; start += kChunk) {
    const int64_t rows = std::min(kChunk, end - start);
    for (int64_t r = 0; r < rows; ++r) {
      const int64_t i = start + r;
      const int32_t* ids = &data.ids[i * c.num_fields];
      const float* u = &dense_std[i * c.num_dense];
      double linear = 0.0, interaction = 0.0;
      for (int f = 0; f < c.num_fields; ++f) linear += t.value_weight[f][ids[f]];
      for (auto [a, b] : t.pairs)
        interaction += t.hidden[a].row(ids[a]).dot(t.hidden[b].row(ids[b]));
      const Eigen::Map<const Eigen::VectorXf> uv(u, c.num_dense);
      terms.linear[offset + i - begin] = static_cast<float>(linear);
      terms.dense[offset + i - begin] = t.dense_weight.dot(uv);
      terms.interaction[offset + i - begin] = static_cast<float>(interaction);
      for (int j = 0; j < nl; ++j) {
        const int f = t.nonlinear_fields[j];
        x.row(r).segment(j * k, k) = t.hidden[f].row(ids[f]);
      }
      x.row(r).tail(c.num_dense) = uv.transpose();
    }
    const Eigen::MatrixXf h =
        ((x.topRows(rows) * t.mlp_w1).rowwise() + t.mlp_b1).array().tanh().matrix();
    const Eigen::VectorXf out = h * t.mlp_w2;
    for (int64_t r = 0; r < rows; ++r) terms.mlp[offset + start - begin + r] = out[r];
  }
}

double stddev(const std::vector<float>& v) {
  double mean = 0.0, sq = 0.0;
  for (float x : v) mean += x;
  mean /= static_cast<double>(v.size());
  for (float x : v) sq += (x - mean) * (x - mean);
  return std::sqrt(sq / static_cast<double>(v.size()));
}

double scale_to(const std::vector<float>& raw, double target) {
  const double s = stddev(raw);
  return s > 0.0 ? target / s : 0.0;
}

// The bias b such that the mean of sigmoid(b + z) equals `mean`: Newton steps on this
// increasing function, falling back to bisection when a step leaves the bracket.
double calibrate_bias(const std::vector<double>& z, double mean) {
  double lo = -40.0, hi = 40.0, b = 0.0;
  for (int it = 0; it < 100; ++it) {
    double value = 0.0, slope = 0.0;
    for (double v : z) {
      const double p = 1.0 / (1.0 + std::exp(-(b + v)));
      value += p;
      slope += p * (1.0 - p);
    }
    value = value / static_cast<double>(z.size()) - mean;
    slope /= static_cast<double>(z.size());
    if (std::abs(value) < 1e-12) break;
    (value < 0.0 ? lo : hi) = b;
    const double next = b - value / slope;
    b = next > lo && next < hi ? next : 0.5 * (lo + hi);
  }
  return b;
}

}  // namespace

void validate(const SyntheticConfig& c) {
  // Sane ranges: far beyond them a value is a typo, and generating the data would take more
  // memory or time than any machine has.
  require(c.train_samples > 0 && c.train_samples <= 1000000000, "train_samples",
          "must lie in [1, 1e9]");
  require(c.test_samples > 0 && c.test_samples <= 100000000, "test_samples",
          "must lie in [1, 1e8]");
  require(c.num_fields > 0 && c.num_fields <= 1024, "fields", "must lie in [1, 1024]");
  require(c.num_dense >= 0 && c.num_dense <= 1024, "dense", "must lie in [0, 1024]");
  require(c.min_cardinality >= 1, "min_cardinality", "must be at least 1");
  require(c.max_cardinality >= c.min_cardinality && c.max_cardinality < (int64_t{1} << 31),
          "max_cardinality", "must lie in [min_cardinality, 2^31)");
  require(c.zipf_exponent >= 0.0 && c.zipf_exponent <= 10.0, "zipf_exponent",
          "must lie in [0, 10]");
  require(c.label_flip >= 0.0 && c.label_flip < 0.5, "label_flip", "must lie in [0, 0.5)");
  require(c.target_ctr > c.label_flip && c.target_ctr < 1.0 - c.label_flip, "target_ctr",
          "must lie in (label_flip, 1 - label_flip)");
  for (auto [v, key] : {std::pair{c.linear_std, "linear_std"},
                        {c.dense_std, "dense_std"},
                        {c.interaction_std, "interaction_std"},
                        {c.mlp_std, "mlp_std"}}) {
    require(v >= 0.0 && v <= 1000.0, key, "must lie in [0, 1000]");
  }
  require(c.interaction_fields >= 0 && c.interaction_fields <= 1024, "interaction_fields",
          "must lie in [0, 1024]");
  require(c.teacher_dim >= 1 && c.teacher_dim <= 1024, "teacher_dim", "must lie in [1, 1024]");
  require(c.teacher_mlp_width >= 1 && c.teacher_mlp_width <= 65536, "teacher_mlp_width",
          "must lie in [1, 65536]");
  require(c.days >= 1 && c.days <= 1000 && c.days <= c.train_samples, "days",
          "must lie in [1, 1000] and be at most train_samples");
  // The rows (ids, dense values, label) and the teacher's tables, bounded above.
  const double rows = static_cast<double>(c.train_samples) + static_cast<double>(c.test_samples);
  const double bytes = rows * (8.0 * c.num_fields + 4.0 * c.num_dense + 8.0) +
                       static_cast<double>(c.num_fields) * static_cast<double>(c.max_cardinality) *
                           (c.teacher_dim + 1.0) * 4.0;
  const double memory = physical_memory_bytes();
  if (memory > 0.0 && bytes > memory) {
    char what[200];
    std::snprintf(what, sizeof what,
                  "asks for data of about %.3g GB (train_samples + test_samples rows, fields x "
                  "max_cardinality teacher rows), more than this machine's %.3g GB",
                  bytes / 1e9, memory / 1e9);
    require(false, "train_samples", what);
  }
  require(c.day_drift >= 0.0 && c.day_drift <= 1.0, "day_drift", "must lie in [0, 1]");
}

std::vector<int64_t> field_cardinalities(const SyntheticConfig& c) {
  std::vector<int64_t> cards(c.num_fields);
  const double ratio =
      static_cast<double>(c.max_cardinality) / static_cast<double>(c.min_cardinality);
  for (int f = 0; f < c.num_fields; ++f) {
    const double share = c.num_fields == 1 ? 0.0 : static_cast<double>(f) / (c.num_fields - 1);
    cards[f] = std::llround(static_cast<double>(c.min_cardinality) * std::pow(ratio, share));
  }
  return cards;
}

SyntheticData generate_synthetic(const SyntheticConfig& c) {
  validate(c);
  const std::vector<int64_t> cards = field_cardinalities(c);

  Rng teacher_rng = make_rng(c.seed, kStreamTeacher);
  Teacher teacher = make_teacher(c, cards, teacher_rng);
  std::vector<ZipfField> zipf;
  for (int f = 0; f < c.num_fields; ++f)
    zipf.push_back(make_zipf(cards[f], c.zipf_exponent, teacher_rng));
  DenseLaw law;
  std::uniform_real_distribution<double> mu(0.0, 4.0), sigma(0.5, 2.0);
  for (int d = 0; d < c.num_dense; ++d) {
    law.mu.push_back(mu(teacher_rng));
    law.sigma.push_back(sigma(teacher_rng));
  }

  SyntheticData out;
  for (Dataset* data : {&out.train, &out.test}) {
    data->num_fields = c.num_fields;
    data->num_dense = c.num_dense;
    data->cardinalities = cards;
  }
  Rng feature_rng = make_rng(c.seed, kStreamFeatures);
  std::vector<float> train_u, test_u;
  draw_features(c, zipf, law, feature_rng, out.train, train_u, c.train_samples);
  draw_features(c, zipf, law, feature_rng, out.test, test_u, c.test_samples);

  // Day t (0-based) covers train rows [t n / days, (t + 1) n / days); the test set is the
  // day after the last training day, or day 0 itself when there is only one.
  const int64_t n = c.train_samples, total = n + c.test_samples;
  const int test_day = c.days > 1 ? c.days : 0;
  Terms raw;
  for (auto* v : {&raw.linear, &raw.dense, &raw.interaction, &raw.mlp}) v->resize(total);
  Rng drift_rng = make_rng(c.seed, kStreamDrift);
  for (int day = 0; day <= test_day; ++day) {
    if (day > 0) drift(teacher, c.day_drift, c.teacher_dim, drift_rng);
    if (day < c.days) {
      const int64_t begin = day * n / c.days, end = (day + 1) * n / c.days;
      add_terms(c, teacher, out.train, train_u, begin, end, begin, raw);
    }
    if (day == test_day) add_terms(c, teacher, out.test, test_u, 0, c.test_samples, n, raw);
  }

  const double s_linear = scale_to(raw.linear, c.linear_std);
  const double s_dense = scale_to(raw.dense, c.dense_std);
  const double s_inter = scale_to(raw.interaction, c.interaction_std);
  const double s_mlp = scale_to(raw.mlp, c.mlp_std);
  std::vector<double> logit(total);
  for (int64_t i = 0; i < total; ++i) {
    logit[i] = s_linear * raw.linear[i] + s_dense * raw.dense[i] + s_inter * raw.interaction[i] +
               s_mlp * raw.mlp[i];
  }
  // With label flips, P(label) = flip + (1 - 2 flip) p: calibrate p's mean accordingly.
  const double flip = c.label_flip;
  out.bias = calibrate_bias(logit, (c.target_ctr - flip) / (1.0 - 2.0 * flip));

  Rng label_rng = make_rng(c.seed, kStreamLabels);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  for (int64_t i = 0; i < total; ++i) {
    Dataset& data = i < n ? out.train : out.test;
    const double p = 1.0 / (1.0 + std::exp(-(out.bias + logit[i])));
    const double p_label = flip + (1.0 - 2.0 * flip) * p;
    data.true_prob.push_back(static_cast<float>(p_label));
    data.labels.push_back(uniform(label_rng) < p_label ? 1.0f : 0.0f);
  }
  out.bayes_auc = roc_auc(out.test.true_prob, out.test.labels);
  return out;
}

}  // namespace gbasim
