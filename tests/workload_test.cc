// The workload (experiment/workload.h): its distinct-row model against closed forms, a direct
// sum and real batches of the proxy's data; its bytes against hand counts; the spec keys.
#include "experiment/workload.h"

#include <gtest/gtest.h>

#include <cmath>

#include "base/error.h"
#include "experiment/spec.h"
#include "models/gradient.h"
#include "models/synthetic.h"

namespace gbasim {
namespace {

TEST(ExpectedDistinct, UniformAccessesAreTheClosedForm) {
  const double r = 1000.0, n = 500.0;
  EXPECT_NEAR(expected_distinct(1000, 0.0, n), r * (1.0 - std::pow(1.0 - 1.0 / r, n)), 1e-9);
  EXPECT_DOUBLE_EQ(expected_distinct(1000, 0.0, 0.0), 0.0);
  EXPECT_NEAR(expected_distinct(1, 1.2, 10.0), 1.0, 1e-12);  // one row: always that row
}

// Beyond the exact ranks the sum is a quadrature: against the sum itself, term by term.
TEST(ExpectedDistinct, MatchesTheDirectSumOverEveryRank) {
  for (const double skew : {0.5, 1.0, 1.1, 1.5}) {
    for (const double draws : {100.0, 10'000.0, 1e6}) {
      const int64_t rows = 2'000'000;
      double norm = 0.0, sum = 0.0;
      for (int64_t i = 1; i <= rows; ++i) norm += std::pow(static_cast<double>(i), -skew);
      for (int64_t i = 1; i <= rows; ++i) {
        const double p = std::pow(static_cast<double>(i), -skew) / norm;
        sum += -std::expm1(draws * std::log1p(-p));
      }
      EXPECT_NEAR(expected_distinct(rows, skew, draws), sum, 1e-4 * sum)
          << "skew " << skew << ", draws " << draws;
    }
  }
}

// Fixed bags: the first ids' distinct rows, and companions spread uniformly.
TEST(ExpectedDistinct, FixedBagsAddUniformCompanionsToTheFirstIds) {
  const double first = expected_distinct(1'000'000, 1.1, 4096.0);
  const double companions = first * 9.0;
  const double expected = 1e6 - (1e6 - first) * std::pow(1.0 - 1e-6, companions);
  EXPECT_NEAR(expected_distinct_bags(1'000'000, 1.1, 4096.0, 10.0), expected, 1e-6 * expected);
  EXPECT_NEAR(expected_distinct_bags(1'000'000, 1.1, 4096.0, 1.0), first, 1e-9 * first);
}

// Distinct ids of each field over consecutive batches of b samples, averaged.
std::vector<double> measured_distinct(const Dataset& data, int64_t b, int batches) {
  const auto fields = static_cast<size_t>(data.num_fields);
  std::vector<double> mean(fields, 0.0);
  FirstSeen seen;
  for (int k = 0; k < batches; ++k) {
    for (size_t f = 0; f < fields; ++f) {
      seen.add_each(static_cast<size_t>(b), [&](size_t i) {
        return data.ids[(static_cast<size_t>(k) * static_cast<size_t>(b) + i) * fields + f];
      });
      mean[f] += static_cast<double>(seen.take().size()) / batches;
    }
  }
  return mean;
}

// The proxy's synthetic data draws each field's ids from a Zipf law (data.zipf_exponent): the
// model, given the law, predicts the distinct rows real batches touch, field by field and in
// total; the exponent fitted to one batch size predicts another.
TEST(ExpectedDistinct, MatchesRealBatchesOfTheProxyData) {
  SyntheticConfig config;
  config.train_samples = 200'000;
  config.test_samples = 1'000;
  const SyntheticData data = generate_synthetic(config);
  const std::vector<int64_t> cards = field_cardinalities(config);
  for (const int64_t b : {256, 4096}) {
    const std::vector<double> measured = measured_distinct(data.train, b, 40);
    double measured_total = 0.0, model_total = 0.0;
    for (size_t f = 0; f < cards.size(); ++f) {
      const double model =
          expected_distinct(cards[f], config.zipf_exponent, static_cast<double>(b));
      EXPECT_NEAR(model, measured[f], 0.03 * measured[f] + 1.0) << "b " << b << ", field " << f;
      measured_total += measured[f];
      model_total += model;
    }
    EXPECT_NEAR(model_total, measured_total, 0.01 * measured_total) << "b " << b;
  }
  // The largest field: fitted on batches of 256, predicting batches of 4,096.
  const size_t f = cards.size() - 1;
  const double fitted = fit_skew(cards[f], 256.0, measured_distinct(data.train, 256, 40)[f]);
  EXPECT_NEAR(fitted, config.zipf_exponent, 0.05);
  const double predicted = expected_distinct(cards[f], fitted, 4096.0);
  const double measured = measured_distinct(data.train, 4096, 40)[f];
  EXPECT_NEAR(predicted, measured, 0.03 * measured);
}

// A small workload counted by hand: an MLP 4-3-1 (4 x 3 + 3 + 3 x 1 + 1 = 19 parameters) and a
// table of 10 rows of dim 2, one uniform id a sample.
WorkloadSpec small_workload() {
  WorkloadSpec w;
  w.dense_layers = {{4, 3, 1}};
  w.tables = {{10, 2, 1.0, 0.0, 1, false}};
  w.local_batch = 3;
  return w;
}

TEST(Workload, BytesOfAStepMatchAHandCount) {
  const Workload w(small_workload());
  EXPECT_EQ(w.dense_params(), 19);
  EXPECT_DOUBLE_EQ(w.flops_per_sample(), 6.0 * 19);
  const double rows = 10.0 * (1.0 - std::pow(0.9, 3));  // distinct rows of 3 uniform ids
  EXPECT_NEAR(w.distinct(3).rows, rows, 1e-12);
  EXPECT_NEAR(w.distinct(3).values, 2.0 * rows, 1e-12);

  const StepBytes ps = step_bytes(w, 3, TablePlacement::kWorkers, 2);
  EXPECT_DOUBLE_EQ(ps.allreduce, 4.0 * 19);
  EXPECT_NEAR(ps.request_per_shard, 8.0 * rows / 2, 1e-12);
  EXPECT_NEAR(ps.pull_per_shard, (4.0 * 19 + 4.0 * 2 * rows) / 2, 1e-12);
  EXPECT_NEAR(ps.push_per_shard, (4.0 * 19 + 4.0 * 2 * rows + 8.0 * rows) / 2, 1e-12);
  // Tables on the workers: every id out, a pooled vector of dim 2 a sample back and its
  // gradient out again.
  EXPECT_DOUBLE_EQ(ps.exchange_ids, 3 * 1 * 8.0);
  EXPECT_DOUBLE_EQ(ps.exchange_vectors, 3 * 2 * 4.0);
  EXPECT_DOUBLE_EQ(ps.exchange_gradients, 3 * 2 * 4.0);
  const StepBytes servers = step_bytes(w, 3, TablePlacement::kServers, 2);
  EXPECT_NEAR(servers.exchange_ids, 8.0 * rows, 1e-12);
  EXPECT_NEAR(servers.exchange_vectors, 4.0 * 2 * rows, 1e-12);
  const StepBytes replicated = step_bytes(w, 3, TablePlacement::kReplicated, 2);
  EXPECT_DOUBLE_EQ(replicated.exchange_ids, 0.0);
  EXPECT_NEAR(replicated.exchange_gradients, (4.0 * 2 + 8.0) * rows, 1e-12);
}

// The preset's totals, against the counts docs/workload.md derives from the reference.
TEST(Workload, DlrmDcnv2PresetHasTheReferencesSizes) {
  const Workload w(workload_preset("dlrm-dcnv2"));
  EXPECT_EQ(w.embedding_rows(), 204'184'588);
  EXPECT_DOUBLE_EQ(w.ids_per_sample(), 214.0);
  EXPECT_DOUBLE_EQ(w.pooled_values_per_sample(), 26.0 * 128);
  EXPECT_EQ(w.tables(), 26);
  WorkloadSpec counted = workload_preset("dlrm-dcnv2");
  counted.tables[0].count = 3;  // a table given with a count counts as that many
  EXPECT_EQ(Workload(counted).tables(), 28);
  const int64_t bottom = 13 * 512 + 512 + 512 * 256 + 256 + 256 * 128 + 128;
  const int64_t cross = 3 * (3456 * 512 + 512 + 512 * 3456 + 3456);
  const int64_t top =
      3456 * 1024 + 1024 + 1024 * 1024 + 1024 + 1024 * 512 + 512 + 512 * 256 + 256 + 256 * 1 + 1;
  EXPECT_EQ(w.dense_params(), bottom + cross + top);
  for (const std::string& name : workload_presets()) EXPECT_NO_THROW(workload_preset(name));

  // One sample a step on 4 shards, by hand: sync sends its 214 ids (8 bytes each) to the tables'
  // owners and gets 26 pooled vectors of 128 values back; a server-mode pull carries a quarter of
  // the dense part and of the rows' values. One sample's rows: each table's first id is one row,
  // and its companions spread uniformly over the table (expected_distinct_bags).
  const StepBytes one = step_bytes(w, 1, TablePlacement::kWorkers, 4);
  EXPECT_DOUBLE_EQ(one.exchange_ids, 214.0 * 8);
  EXPECT_DOUBLE_EQ(one.exchange_vectors, 26.0 * 128 * 4);
  EXPECT_DOUBLE_EQ(one.allreduce, 4.0 * static_cast<double>(bottom + cross + top));
  double rows = 0.0;
  for (const WorkloadTable& t : w.spec().tables)
    rows += expected_distinct_bags(t.rows, t.skew, 1.0, t.ids_per_sample);
  EXPECT_NEAR(rows, 214.0, 2.0);  // few companions collide but in the tables of 3 to 63 rows
  EXPECT_NEAR(one.pull_per_shard,
              (4.0 * static_cast<double>(bottom + cross + top) + 4.0 * 128 * rows) / 4, 1e-6);
}

ExperimentSpec parse(const nlohmann::json& doc) { return parse_spec(doc, "spec.json"); }

TEST(WorkloadSpec, APresetsKeysAreOverriddenAndEchoed) {
  const ExperimentSpec s =
      parse({{"workload", {{"preset", "dlrm-dcnv2"}, {"local_batch", 2048}, {"value_bytes", 2}}}});
  ASSERT_TRUE(s.workload);
  EXPECT_EQ(s.workload->local_batch, 2048);
  EXPECT_EQ(s.workload->tables.size(), 26u);
  EXPECT_EQ(s.cluster.embedding_exchange, EmbeddingExchange::kAllToAll);  // tables on workers
  const auto echo = spec_to_json(s);
  EXPECT_EQ(echo["workload"]["preset"], "dlrm-dcnv2");
  EXPECT_EQ(echo["workload"]["value_bytes"], 2.0);
  // The echo reads back to the same spec.
  const ExperimentSpec again = parse(nlohmann::json::parse(echo.dump()));
  EXPECT_EQ(spec_to_json(again).dump(), echo.dump());
  // Without a workload, the echo has none.
  EXPECT_FALSE(spec_to_json(parse(nlohmann::json::object())).contains("workload"));
}

void expect_error(const nlohmann::json& doc, const std::string& key) {
  try {
    parse(doc);
    ADD_FAILURE() << "no error for " << doc.dump();
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), key) << e.what();
  }
}

TEST(WorkloadSpec, BadValuesNameTheirKey) {
  expect_error({{"workload", {{"preset", "dlrm"}}}}, "workload.preset");
  expect_error({{"workload", {{"tables", {{{"rows", 0}}}}}}}, "workload.tables[0].rows");
  expect_error({{"workload", {{"tables", {{{"rows", 10}}}}}}}, "workload.tables[0].dim");
  expect_error({{"workload", {{"dense_layers", {{4, 1}}}, {"tables", {{{"dim", 8}}}}}}},
               "workload.tables[0].rows");
  // A bag is its first id and the rows fixed for it: fewer than one id a sample is no bag.
  const nlohmann::json bag = {
      {"rows", 1000}, {"dim", 8}, {"ids_per_sample", 0.5}, {"fixed_bags", true}};
  expect_error(
      {{"workload", {{"dense_layers", {{4, 1}}}, {"tables", nlohmann::json::array({bag})}}}},
      "workload.tables[0].ids_per_sample");
  expect_error({{"workload", {{"preset", "dlrm-dcnv2"}, {"local_batch", 0}}}},
               "workload.local_batch");
  expect_error({{"workload", {{"preset", "dlrm-dcnv2"}, {"local_batch", 1e12}}}},
               "workload.local_batch");
  expect_error({{"workload", {{"preset", "dlrm-dcnv2"}, {"local_batch", 2048.5}}}},
               "workload.local_batch");
  // A whole number written as a float is that integer.
  EXPECT_EQ(parse({{"workload", {{"preset", "dlrm-dcnv2"}, {"local_batch", 2.048e3}}}})
                .workload->local_batch,
            2048);
  // Tables alone give no flops to time.
  expect_error({{"workload", {{"tables", {{{"rows", 10}, {"dim", 8}}}}}}}, "workload");
  expect_error({{"workload", {{"tables", {{{"rows", 10}, {"colour", 1}}}}}}},
               "workload.tables[0].colour");
  expect_error({{"workload", {{"dense_layers", {{4}}}}}}, "workload.dense_layers[0]");
  expect_error({{"workload", {{"preset", "dlrm-dcnv2"}, {"value_bytes", 1e300}}}},
               "workload.value_bytes");
  expect_error({{"workload", nlohmann::json::object()}}, "workload");
  expect_error({{"workload", {{"preset", "dlrm-dcnv2"}, {"embedding_placement", "gpu"}}}},
               "workload.embedding_placement");
  expect_error({{"stragglers", {{"time_unit", "step"}}}}, "stragglers.time_unit");
  try {
    parse({{"workload", {{"preset", "dlrm-dcnv2"}, {"embedding_placement", 1}}}});
    ADD_FAILURE() << "no error for a numeric placement";
  } catch (const InputError& e) {
    const std::string what = e.what();
    EXPECT_EQ(what.find("workload.embedding_placement"), what.rfind("workload.embedding_placement"))
        << "the key is named once: " << what;
  }
  expect_error({{"stragglers", {{"time_unit", "min"}}}}, "stragglers.time_unit");
}

// A default rate a step is absurd a second on a tiny workload's step: the error blames the unit
// and names the key, though the user never set it.
TEST(WorkloadSpec, StepsThatAreAbsurdInSecondsBlameTheUnit) {
  try {
    parse({{"workload", {{"preset", "dlrm-dcnv2"}, {"local_batch", 1}}},
           {"cluster", {{"worker_speed", 1e18}}},
           {"stragglers", {{"time_unit", "step"}}}});
    ADD_FAILURE() << "no error for 0.008 episodes a step of a nanosecond";
  } catch (const InputError& e) {
    EXPECT_EQ(e.key(), "stragglers.time_unit") << e.what();
    EXPECT_NE(std::string(e.what()).find("'stragglers.transient_rate_per_s' must lie in"),
              std::string::npos)
        << e.what();
  }
  // A value already out of range in steps keeps its own key.
  expect_error({{"workload", {{"preset", "dlrm-dcnv2"}}},
                {"stragglers", {{"time_unit", "step"}, {"transient_rate_per_s", -1}}}},
               "stragglers.transient_rate_per_s");
}

// Straggler keys counted in steps become seconds of the workload's nominal step.
TEST(WorkloadSpec, StragglerKeysInStepsScaleWithTheWorkloadsStep) {
  const nlohmann::json workload = {{"preset", "dlrm-dcnv2"}, {"local_batch", 1000}};
  const ExperimentSpec s = parse({{"workload", workload},
                                  {"cluster", {{"worker_speed", 1e14}}},
                                  {"stragglers",
                                   {{"time_unit", "step"},
                                    {"transient_rate_per_s", 0.01},
                                    {"transient_mean_duration_s", 50},
                                    {"failures", {{"restart_s", 20}}}}}});
  const double step = Workload(*s.workload).flops_per_sample() * 1000 / 1e14;
  EXPECT_DOUBLE_EQ(s.workload_step_s, step);
  EXPECT_DOUBLE_EQ(s.stragglers.transient_rate_per_s, 0.01 / step);
  EXPECT_DOUBLE_EQ(s.stragglers.transient_mean_duration_s, 50 * step);
  EXPECT_DOUBLE_EQ(s.stragglers.failure_restart_s, 20 * step);
  EXPECT_DOUBLE_EQ(s.stragglers.persistent_slowdown,
                   ExperimentSpec{}.stragglers.persistent_slowdown);
}

}  // namespace
}  // namespace gbasim

namespace gbasim {
namespace {

// The straggler realisation follows the spec's seed unless stragglers.seed is given: two seeds
// slow different workers, and a given stragglers.seed holds one realisation across seeds.
TEST(StragglerSeed, FollowsTheSpecsSeedUnlessGiven) {
  auto slow = [](const nlohmann::json& doc) {
    const ExperimentSpec s = parse_spec(doc, "spec.json");
    return persistent_slowdowns(s.stragglers, 64);
  };
  const nlohmann::json quarter = {{"persistent_fraction", 0.25}, {"persistent_slowdown", 4}};
  EXPECT_NE(slow({{"seed", 1u}, {"stragglers", quarter}}),
            slow({{"seed", 2u}, {"stragglers", quarter}}));
  nlohmann::json pinned = quarter;
  pinned["seed"] = 1u;
  EXPECT_EQ(slow({{"seed", 2u}, {"stragglers", pinned}}),
            slow({{"seed", 1u}, {"stragglers", quarter}}));
  EXPECT_EQ(parse_spec({{"seed", 7u}}, "spec.json").stragglers.seed, 7u);
}

}  // namespace
}  // namespace gbasim
