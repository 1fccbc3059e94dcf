// Samples per second of one training step (forward, backward, optimizer) of every model,
// and the single-core matrix-multiply rate the MLP layers are measured against.
#include <benchmark/benchmark.h>

#include "models/model.h"
#include "models/optimizer.h"
#include "models/synthetic.h"
#include "sim/batch_rows.h"

namespace gbasim {
namespace {

// The default data set's shape (26 fields, 10 to 10^5 values, 13 dense features), with
// enough samples for a few thousand distinct batches.
const SyntheticData& bench_data() {
  static const SyntheticData data = [] {
    SyntheticConfig c;
    c.train_samples = 200'000;
    c.test_samples = 1'000;
    return generate_synthetic(c);
  }();
  return data;
}

void BM_TrainStep(benchmark::State& state, ModelKind kind) {
  const int64_t b = state.range(0);
  const Dataset& train = bench_data().train;
  ModelConfig config;
  config.kind = kind;
  const Model model(config, train.cardinalities, train.num_dense);
  Parameters params = model.init_parameters(1);
  Optimizer optimizer(OptimizerConfig{}, params);
  ShardIterator data(train, 0, 1, 1);
  std::vector<Batch> batches;
  for (int i = 0; i < 16; ++i) batches.push_back(data.next(b));
  Gradient grad;
  size_t i = 0;
  for (auto _ : state) {
    const Batch& batch = batches[i++ % batches.size()];
    benchmark::DoNotOptimize(model.forward_backward(params, batch, grad));
    optimizer.apply(params, grad);
  }
  state.SetItemsProcessed(state.iterations() * b);
  state.counters["samples_per_s"] =
      benchmark::Counter(static_cast<double>(b), benchmark::Counter::kIsIterationInvariantRate);
  state.counters["model_gflops"] = benchmark::Counter(
      model.flops_per_sample() * b * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// DeepFM's deep MLP alone (429 -> 128 -> 64 -> 1, ReLU): forward and backward, the part
// of a step that the matrix-multiply ceiling below bounds.
void BM_DeepMlpStep(benchmark::State& state) {
  const int64_t b = state.range(0);
  DenseLayout layout;
  const Mlp mlp = Mlp::build("deep", 26 * 16 + 13, {128, 64, 1}, false, layout);
  const Eigen::VectorXf params = Eigen::VectorXf::Random(layout.size);
  Eigen::VectorXf dparams = Eigen::VectorXf::Zero(layout.size);
  MlpCache cache;
  cache.acts = {RowMatrixXf::Random(b, 26 * 16 + 13)};
  RowMatrixXf dx;
  for (auto _ : state) {
    mlp_forward(mlp, params, cache);
    RowMatrixXf dy = RowMatrixXf::Constant(b, 1, 1e-3f);
    mlp_backward(mlp, params, cache, dy, dparams, &dx);
    benchmark::DoNotOptimize(dx.data());
  }
  state.counters["gflops"] =
      benchmark::Counter(3.0 * 2.0 * static_cast<double>(mlp.multiply_adds() * b) * 1e-9,
                         benchmark::Counter::kIsIterationInvariantRate);
}

// The MLP's largest multiply at DeepFM's shape: (b x 429) x (429 x 128), row-major.
void BM_MatmulCeiling(benchmark::State& state) {
  const int64_t b = state.range(0), in = 26 * 16 + 13, out = 128;
  const RowMatrixXf x = RowMatrixXf::Random(b, in), w = RowMatrixXf::Random(in, out);
  RowMatrixXf y(b, out);
  for (auto _ : state) {
    y.noalias() = x * w;
    benchmark::DoNotOptimize(y.data());
  }
  state.counters["gflops"] =
      benchmark::Counter(2.0 * b * in * out * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// The update rules' sum of M DeepFM gradients of b = 256 (GBA's aggregation of a global
// batch at M workers, sync's at M workers): GradientSum's add and take.
void BM_GradientSum(benchmark::State& state) {
  const int m = static_cast<int>(state.range(0));
  const Dataset& train = bench_data().train;
  ModelConfig config;
  config.kind = ModelKind::kDeepFM;
  const Model model(config, train.cardinalities, train.num_dense);
  const Parameters params = model.init_parameters(1);
  ShardIterator data(train, 0, 1, 1);
  std::vector<Gradient> grads(m);
  for (Gradient& g : grads) model.forward_backward(params, data.next(256), g);
  GradientSum sum;
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<Gradient> copies = grads;
    state.ResumeTiming();
    for (Gradient& g : copies) sum.add(std::move(g));
    benchmark::DoNotOptimize(sum.take(1.0f / m));
  }
  state.counters["gradients_per_s"] =
      benchmark::Counter(static_cast<double>(m), benchmark::Counter::kIsIterationInvariantRate);
}

// A snapshot's forward pass: DeepFM's logits of the demo's 20,000 test samples, sliced into
// chunks of the argument's size (evaluate() uses kEvaluationChunk, 256).
void BM_EvaluationForward(benchmark::State& state) {
  const int64_t chunk = state.range(0);
  const Dataset& train = bench_data().train;
  ModelConfig config;
  config.kind = ModelKind::kDeepFM;
  const Model model(config, train.cardinalities, train.num_dense);
  const Parameters params = model.init_parameters(1);
  const Dataset test = first_rows(train, 20'000);
  for (auto _ : state) benchmark::DoNotOptimize(logits_of(model, params, test, chunk));
  state.counters["samples_per_s"] = benchmark::Counter(
      static_cast<double>(test.size()), benchmark::Counter::kIsIterationInvariantRate);
}

// A timing-only step's distinct rows of each field (sim/batch_rows.h) of batches of b samples
// drawn in a shuffled order from the whole data set, as a worker reads them.
void BM_BatchRows(benchmark::State& state) {
  const int64_t b = state.range(0);
  const Dataset& train = bench_data().train;
  BatchRows batch_rows(train.cardinalities);
  ShardIterator data(train, 0, 1, 1);
  std::vector<SparseRows> tables(static_cast<size_t>(train.num_fields));
  const int32_t* ids = train.ids.data();
  for (auto _ : state) {
    const std::span<const int64_t> rows = data.next_rows(b);
    batch_rows.take(b, [&](int64_t i) { return ids + rows[i] * train.num_fields; }, tables);
    benchmark::DoNotOptimize(tables.data());
  }
  state.counters["ids_per_s"] = benchmark::Counter(static_cast<double>(b * train.num_fields),
                                                   benchmark::Counter::kIsIterationInvariantRate);
}

BENCHMARK_CAPTURE(BM_TrainStep, lr, ModelKind::kLR)
    ->Arg(256)
    ->Arg(4096)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_TrainStep, fm, ModelKind::kFM)
    ->Arg(256)
    ->Arg(4096)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_TrainStep, deepfm, ModelKind::kDeepFM)
    ->Arg(256)
    ->Arg(4096)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_TrainStep, widedeep, ModelKind::kWideDeep)
    ->Arg(256)
    ->Arg(4096)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_TrainStep, dlrm, ModelKind::kDLRM)
    ->Arg(256)
    ->Arg(4096)
    ->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_EvaluationForward)
    ->Arg(64)
    ->Arg(256)
    ->Arg(1024)
    ->Arg(8192)
    ->Unit(benchmark::kMillisecond);
BENCHMARK(BM_BatchRows)->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_GradientSum)->Arg(16)->Arg(256)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_DeepMlpStep)->Arg(256)->Arg(4096)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_MatmulCeiling)->Arg(256)->Arg(4096)->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace gbasim

BENCHMARK_MAIN();
