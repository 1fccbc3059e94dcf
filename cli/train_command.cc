// gbasim train: single-process training, the reference for every distributed mode.
#include <boost/program_options.hpp>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>

#include "base/error.h"
#include "base/files.h"
#include "models/trainer.h"
#include "cli/commands.h"
#include "cli/data_options.h"
#include "experiment/result.h"
#include "experiment/train_result.h"

namespace gbasim {

namespace po = boost::program_options;

namespace {

// --model, --mlp, --bottom-mlp and --optimizer into the libraries' configurations.
void read_model_options(const std::string& model_name_text, const std::string& mlp_text,
                        const std::string& bottom_text, const std::string& optimizer_text,
                        ModelConfig& model_config, OptimizerConfig& opt) {
  try {
    model_config.kind = parse_model_kind(model_name_text);
  } catch (const InputError& e) {
    throw po::error(std::string("--model ") + e.what());
  }
  model_config.mlp = parse_widths(mlp_text, "mlp");
  model_config.bottom_mlp = parse_widths(bottom_text, "bottom-mlp");
  try {
    opt.kind = parse_optimizer_kind(optimizer_text);
  } catch (const InputError& e) {
    throw po::error(std::string("--optimizer ") + e.what());
  }
}

// The numbers' ranges, by the options' names as the user typed them (the libraries name their
// own fields).
void check_train_options(const TrainConfig& train, const ModelConfig& model_config,
                         const OptimizerConfig& opt) {
  auto require = [](bool ok, const std::string& what) {
    if (!ok) throw InputError(what);
  };
  require(train.batch_size >= 1, "--batch-size must be at least 1");
  require(train.epochs > 0.0 && train.epochs <= 1e4, "--epochs must lie in (0, 10000]");
  require(train.eval_every >= 0, "--eval-every must not be negative");
  require(model_config.embedding_dim >= 1 && model_config.embedding_dim <= 1024,
          "--embedding-dim must lie in [1, 1024]");
  require(opt.learning_rate > 0.0 && std::isfinite(opt.learning_rate),
          "--lr must be a positive number");
  require(opt.l2 >= 0.0 && std::isfinite(opt.l2), "--l2 must not be negative");
}

}  // namespace

int run_train(const std::vector<std::string>& args) {
  std::string model_name_text = "deepfm", optimizer_text = "adam", out_path, mlp_text = "128,64",
              bottom_text = "64";
  ModelConfig model_config;
  OptimizerConfig opt;
  TrainConfig train;
  DataOptions data_options;
  uint64_t init_seed = 1;
  bool quiet = false;

  po::options_description desc(
      "gbasim train [options]\n\nTrains one model in one process and writes a JSON result");
  po::options_description general("Training");
  general.add_options()("help,h", "show this help")(
      "model", po::value(&model_name_text)->default_value(model_name_text),
      "lr, fm, deepfm, widedeep or dlrm")(
      "embedding-dim",
      po::value(&model_config.embedding_dim)->default_value(model_config.embedding_dim),
      "embedding dimension")("mlp", po::value(&mlp_text)->default_value(mlp_text),
                             "hidden widths of the deep part (DLRM: top MLP)")(
      "bottom-mlp", po::value(&bottom_text)->default_value(bottom_text),
      "DLRM: hidden widths of the bottom MLP (it then maps to embedding-dim)")(
      "optimizer", po::value(&optimizer_text)->default_value(optimizer_text),
      "sgd, adagrad or adam")("lr", po::value(&opt.learning_rate)->default_value(opt.learning_rate),
                              "learning rate")("l2", po::value(&opt.l2)->default_value(opt.l2),
                                               "L2 penalty on the values each step updates")(
      "batch-size", po::value(&train.batch_size)->default_value(train.batch_size),
      "samples per step")("epochs", po::value(&train.epochs)->default_value(train.epochs),
                          "passes over the training set")(
      "eval-every", po::value(&train.eval_every)->default_value(train.eval_every),
      "steps between test evaluations (0: ten over the run)")(
      "seed", po::value(&train.seed)->default_value(train.seed), "seed of the data order")(
      "init-seed", po::value(&init_seed)->default_value(init_seed),
      "seed of the initial parameters")("out", po::value(&out_path)->value_name("FILE"),
                                        "result JSON (default: out/train-<model>.json)")(
      "quiet,q", po::bool_switch(&quiet), "no progress lines on standard error");
  desc.add(general);
  add_data_options(desc, data_options);

  po::variables_map vm;
  if (!parse_options(args, desc, vm)) return 0;

  read_model_options(model_name_text, mlp_text, bottom_text, optimizer_text, model_config, opt);
  check_train_options(train, model_config, opt);
  if (out_path.empty()) out_path = "out/train-" + model_name_text + ".json";
  check_output_file(out_path, "result");

  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  if (!quiet) std::cerr << "gbasim train: preparing data\n";
  const LoadedData data = load_data(data_options);
  const Model model(model_config, data.train.cardinalities, data.train.num_dense);
  Parameters params = model.init_parameters(init_seed);
  Optimizer optimizer(opt, params);
  const int64_t steps = total_steps(train, data.train.size());
  if (!quiet) {
    std::cerr << "gbasim train: " << model_name_text << ", " << data.train.size() << " training / "
              << data.test.size() << " test samples, " << steps << " steps of " << train.batch_size;
    if (data.bayes_auc) std::cerr << ", Bayes AUC " << *data.bayes_auc;
    std::cerr << " (" << elapsed() << " s)\n";
  }
  const double train_start = elapsed();
  const TrainResult result = train_single_process(
      model, params, optimizer, data.train, data.test, train, [&](const CurvePoint& p) {
        if (quiet) return;
        char line[200];
        std::snprintf(line, sizeof line,
                      "  step %6lld/%lld  samples %9lld  train loss %.4f  test AUC %.4f  log-loss "
                      "%.4f  (%.0f samples/s)\n",
                      static_cast<long long>(p.step), static_cast<long long>(steps),
                      static_cast<long long>(p.samples), p.train_loss, p.test.auc, p.test.logloss,
                      static_cast<double>(p.samples) / (elapsed() - train_start));
        std::cerr << line;
      });

  write_json_atomically(out_path, train_result_json(model, model_config, init_seed, opt, train,
                                                    result, data));
  if (result.diverged) {
    std::cerr << "gbasim train: the model diverged at step " << result.steps
              << " (a batch loss that is not a finite number); training stopped there, status "
                 "\"diverged\" in "
              << out_path << '\n';
  }
  if (!quiet) {
    std::cerr << "gbasim train: final test AUC " << result.curve.back().test.auc << ", log-loss "
              << result.curve.back().test.logloss << " (" << elapsed() << " s); wrote " << out_path
              << '\n';
  }
  return 0;
}

}  // namespace gbasim
