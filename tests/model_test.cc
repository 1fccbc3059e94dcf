#include "models/model.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <random>
#include <set>
#include <tuple>

#include "base/error.h"
#include "models/layers.h"
#include "models/synthetic.h"

namespace gbasim {
namespace {

constexpr int kFields = 4, kDense = 3, kBatch = 6;
const std::vector<int64_t> kCards = {5, 7, 3, 9};

// A small batch in which several samples share ids, so shared rows must sum.
Batch tiny_batch() {
  Batch b;
  b.ids.resize(kBatch, kFields);
  b.ids << 0, 1, 2, 3,  //
      0, 6, 2, 8,       //
      4, 1, 0, 3,       //
      0, 1, 2, 8,       //
      3, 5, 1, 0,       //
      4, 6, 2, 3;
  b.dense.resize(kBatch, kDense);
  std::mt19937 rng(3);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& v : b.dense.reshaped()) v = normal(rng);
  b.labels.resize(kBatch);
  b.labels << 1, 0, 0, 1, 1, 0;
  return b;
}

ModelConfig tiny_config(ModelKind kind, int embedding_dim = 4) {
  ModelConfig c;
  c.kind = kind;
  c.embedding_dim = embedding_dim;
  c.mlp = {8, 6};
  c.bottom_mlp = {5};
  return c;
}

// Parameters of order one, so every term of the logit matters to the gradient.
Parameters lively_parameters(const Model& model) {
  Parameters p = model.init_parameters(11);
  std::mt19937 rng(5);
  std::normal_distribution<float> normal(0.0f, 0.4f);
  for (float& v : p.dense) v = normal(rng);
  for (auto& t : p.tables)
    for (float& v : t.reshaped()) v = normal(rng);
  return p;
}

double loss_at(const Model& model, const Parameters& p, const Batch& batch) {
  Gradient unused;
  return model.forward_backward(p, batch, unused);
}

// Central difference of the loss along one value of p, which is restored afterwards.
double numeric(const Model& model, Parameters& p, float* value_in_p, const Batch& batch) {
  constexpr float h = 2e-3f;
  const float saved = *value_in_p;
  *value_in_p = saved + h;
  const double up = loss_at(model, p, batch);
  *value_in_p = saved - h;
  const double down = loss_at(model, p, batch);
  *value_in_p = saved;
  return (up - down) / (2.0 * h);
}

void expect_close(double analytic, double fd, const std::string& what) {
  EXPECT_NEAR(analytic, fd, 2e-4 + 2e-2 * std::abs(fd)) << what;
}

// Every model at embedding dimension 4 and at 16, the width the embedding and FM code
// handles with fixed-size rows.
class GradientCheck : public ::testing::TestWithParam<std::tuple<ModelKind, int>> {
 protected:
  static ModelConfig config() {
    return tiny_config(std::get<0>(GetParam()), std::get<1>(GetParam()));
  }
};

TEST_P(GradientCheck, DenseBlocksMatchFiniteDifferences) {
  const Model model(config(), kCards, kDense);
  const Batch batch = tiny_batch();
  Parameters p = lively_parameters(model);
  Gradient g;
  model.forward_backward(p, batch, g);
  ASSERT_EQ(g.dense.size(), model.num_dense_parameters());
  EXPECT_EQ(g.samples, kBatch);
  for (const auto& block : model.dense_blocks()) {
    const int64_t stride = std::max<int64_t>(1, block.size / 10);
    for (int64_t i = block.offset; i < block.offset + block.size; i += stride) {
      const double fd = numeric(model, p, &p.dense[i], batch);
      expect_close(g.dense[i], fd, block.name + "[" + std::to_string(i - block.offset) + "]");
    }
  }
}

TEST_P(GradientCheck, TableRowsMatchFiniteDifferencesAndOnlyTouchedRowsAppear) {
  const Model model(config(), kCards, kDense);
  const Batch batch = tiny_batch();
  Parameters p = lively_parameters(model);
  Gradient g;
  model.forward_backward(p, batch, g);
  ASSERT_EQ(g.tables.size(), p.tables.size());
  for (size_t t = 0; t < p.tables.size(); ++t) {
    const int field = static_cast<int>(t % kFields);
    const SparseRows& rows = g.tables[t];
    ASSERT_TRUE(std::is_sorted(rows.rows.begin(), rows.rows.end()));
    for (int64_t row = 0; row < p.tables[t].rows(); ++row) {
      const bool touched = (batch.ids.col(field).array() == row).any();
      const auto at = std::find(rows.rows.begin(), rows.rows.end(), row);
      ASSERT_EQ(touched, at != rows.rows.end()) << "table " << t << " row " << row;
      if (!touched) continue;
      const auto r = at - rows.rows.begin();
      for (int64_t d = 0; d < p.tables[t].cols(); ++d) {
        const double fd = numeric(model, p, &p.tables[t](row, d), batch);
        expect_close(rows.values(r, d), fd,
                     "table " + std::to_string(t) + " row " + std::to_string(row) + " dim " +
                         std::to_string(d));
      }
    }
  }
}

TEST_P(GradientCheck, DirectionalDerivativeOverAllParameters) {
  const Model model(config(), kCards, kDense);
  const Batch batch = tiny_batch();
  const Parameters p = lively_parameters(model);
  Gradient g;
  model.forward_backward(p, batch, g);
  std::mt19937 rng(9);
  std::normal_distribution<float> normal(0.0f, 1.0f);
  Parameters dir = p;
  double analytic = 0.0;
  for (Eigen::Index i = 0; i < dir.dense.size(); ++i) {
    dir.dense[i] = normal(rng);
    analytic += dir.dense[i] * g.dense[i];
  }
  for (size_t t = 0; t < dir.tables.size(); ++t) {
    for (float& v : dir.tables[t].reshaped()) v = normal(rng);
    for (size_t r = 0; r < g.tables[t].rows.size(); ++r)
      analytic += dir.tables[t].row(g.tables[t].rows[r]).dot(g.tables[t].values.row(r));
  }
  constexpr float h = 1e-3f;
  auto moved = [&](float sign) {
    Parameters q = p;
    q.dense += sign * h * dir.dense;
    for (size_t t = 0; t < q.tables.size(); ++t) q.tables[t] += sign * h * dir.tables[t];
    return loss_at(model, q, batch);
  };
  const double fd = (moved(1.0f) - moved(-1.0f)) / (2.0 * h);
  EXPECT_NEAR(analytic, fd, 1e-2 * std::abs(fd) + 1e-4);
}

TEST_P(GradientCheck, ForwardAgreesWithForwardBackward) {
  const Model model(config(), kCards, kDense);
  const Batch batch = tiny_batch();
  const Parameters p = lively_parameters(model);
  Eigen::VectorXf logits;
  model.forward(p, batch, logits);
  double loss = 0.0;
  for (int i = 0; i < kBatch; ++i) {
    const double prob = 1.0 / (1.0 + std::exp(-logits[i]));
    loss -= batch.labels[i] > 0.5f ? std::log(prob) : std::log(1.0 - prob);
  }
  EXPECT_NEAR(loss_at(model, p, batch), loss / kBatch, 1e-5);
}

INSTANTIATE_TEST_SUITE_P(
    AllModels, GradientCheck,
    ::testing::Combine(::testing::Values(ModelKind::kLR, ModelKind::kFM, ModelKind::kDeepFM,
                                         ModelKind::kWideDeep, ModelKind::kDLRM),
                       ::testing::Values(4, 16)),
    [](const auto& info) {
      return model_name(std::get<0>(info.param)) + "_dim" +
             std::to_string(std::get<1>(info.param));
    });

// FieldGroups against a plain reference (std::set), over batches one after another, so that
// what one batch leaves in its scratch cannot leak into the next: fields of few and of many
// values, ids repeated within a field, a field of one value.
TEST(FieldGroups, SortedUniqueIdsAndEachSamplesPlaceAmongThem) {
  std::mt19937 rng(17);
  const std::vector<int> cards = {1, 3, 50, 100000};
  for (int batch = 0; batch < 20; ++batch) {
    const int b = 1 + batch * 13;
    RowMatrixXi ids(b, static_cast<Eigen::Index>(cards.size()));
    for (Eigen::Index f = 0; f < ids.cols(); ++f) {
      std::uniform_int_distribution<int> pick(0, cards[f] - 1);
      for (int i = 0; i < b; ++i) ids(i, f) = pick(rng);
    }
    const FieldGroups groups(ids);
    ASSERT_EQ(groups.unique_ids.size(), cards.size());
    for (Eigen::Index f = 0; f < ids.cols(); ++f) {
      std::set<int32_t> distinct;
      for (int i = 0; i < b; ++i) distinct.insert(ids(i, f));
      const std::vector<int32_t> expected(distinct.begin(), distinct.end());
      ASSERT_EQ(groups.unique_ids[f], expected) << "batch " << batch << " field " << f;
      ASSERT_EQ(groups.position[f].size(), static_cast<size_t>(b));
      for (int i = 0; i < b; ++i)
        ASSERT_EQ(groups.unique_ids[f][groups.position[f][i]], ids(i, f))
            << "batch " << batch << " field " << f << " sample " << i;
    }
  }
}

TEST(Model, FmTermIsHalfTheSquaredSumMinusSumOfSquares) {
  // One sample, two fields: the FM term must be e_0 . e_1 exactly.
  ModelConfig c = tiny_config(ModelKind::kFM);
  const Model model(c, {2, 2}, 1);
  Parameters p = model.init_parameters(1);
  p.tables[2].row(1) << 1, 2, 3, 4;
  p.tables[3].row(0) << 0.5, -1, 2, 0;
  Batch b;
  b.ids.resize(1, 2);
  b.ids << 1, 0;
  b.dense = RowMatrixXf::Zero(1, 1);
  b.labels = Eigen::VectorXf::Ones(1);
  Eigen::VectorXf logits;
  model.forward(p, b, logits);
  EXPECT_FLOAT_EQ(logits[0], 0.5f - 2.0f + 6.0f);
}

// Evaluation slices the test set into chunks (kEvaluationChunk); a sample's logit must not
// depend on which chunk size, among the multiples of 8 that divide 8,192 (the chunk of the
// committed results), at the default sizes: the product kernels differ for a batch's last
// rows (chunks of 1 or 2 samples give other bits), so this would fail for a chunk that is not
// such a multiple. 20,000 samples: the demo's test set, three chunks of 8,192 or fewer.
TEST(Model, LogitsDoNotDependOnTheirChunk) {
  SyntheticConfig c;
  c.train_samples = 20'003;
  c.test_samples = 10;
  const SyntheticData data = generate_synthetic(c);
  const Dataset even = first_rows(data.train, 20'000);
  for (ModelKind kind : {ModelKind::kLR, ModelKind::kFM, ModelKind::kDeepFM, ModelKind::kWideDeep,
                         ModelKind::kDLRM}) {
    ModelConfig config;
    config.kind = kind;
    const Model model(config, data.train.cardinalities, data.train.num_dense);
    const Parameters p = lively_parameters(model);
    for (const Dataset* set : {&even, &data.train}) {
      const std::vector<float> before = logits_of(model, p, *set, 8192);
      for (int64_t chunk : {int64_t{8}, int64_t{64}, kEvaluationChunk, int64_t{4096}}) {
        const std::vector<float> now = logits_of(model, p, *set, chunk);
        ASSERT_EQ(now.size(), before.size());
        for (size_t i = 0; i < now.size(); ++i) {
          ASSERT_EQ(std::bit_cast<uint32_t>(now[i]), std::bit_cast<uint32_t>(before[i]))
              << model_name(kind) << ", " << set->size() << " samples in chunks of " << chunk
              << ": sample " << i;
        }
      }
    }
  }
}

TEST(Model, UnknownNamesAreInputErrors) {
  EXPECT_THROW(parse_model_kind("resnet"), InputError);
  EXPECT_EQ(parse_model_kind("dlrm"), ModelKind::kDLRM);
}

}  // namespace
}  // namespace gbasim
