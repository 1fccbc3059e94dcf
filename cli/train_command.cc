// gbasim train: single-process training, the reference for every distributed mode.
#include <boost/program_options.hpp>
#include <chrono>
#include <cstdio>
#include <iostream>

#include "base/files.h"
#include "cli/commands.h"
#include "cli/train_options.h"
#include "experiment/result.h"
#include "experiment/train_result.h"
#include "models/trainer.h"

namespace gbasim {

namespace po = boost::program_options;

namespace {

// One evaluation's progress line.
void print_progress(const CurvePoint& p, int64_t steps, double train_s) {
  char line[200];
  std::snprintf(line, sizeof line,
                "  step %6lld/%lld  samples %9lld  train loss %.4f  test AUC %.4f  log-loss "
                "%.4f  (%.0f samples/s)\n",
                static_cast<long long>(p.step), static_cast<long long>(steps),
                static_cast<long long>(p.samples), p.train_loss, p.test.auc, p.test.logloss,
                static_cast<double>(p.samples) / train_s);
  std::cerr << line;
}

}  // namespace

int run_train(const std::vector<std::string>& args) {
  TrainOptions o;
  po::options_description desc = train_options(o);
  po::variables_map vm;
  if (!parse_options(args, desc, vm)) return 0;

  finish_train_options(o);
  if (o.out_path.empty()) o.out_path = "out/train-" + o.model_name + ".json";
  check_output_file(o.out_path, "result");

  const auto start = std::chrono::steady_clock::now();
  auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  };
  if (!o.quiet) std::cerr << "gbasim train: preparing data\n";
  const LoadedData data = load_data(o.data);
  const Model model(o.model_config, data.train.cardinalities, data.train.num_dense);
  Parameters params = model.init_parameters(o.init_seed);
  Optimizer optimizer(o.opt, params);
  const int64_t steps = total_steps(o.train, data.train.size());
  if (!o.quiet) {
    std::cerr << "gbasim train: " << o.model_name << ", " << data.train.size() << " training / "
              << data.test.size() << " test samples, " << steps << " steps of "
              << o.train.batch_size;
    if (data.bayes_auc) std::cerr << ", Bayes AUC " << *data.bayes_auc;
    std::cerr << " (" << elapsed() << " s)\n";
  }
  const double train_start = elapsed();
  const TrainResult result = train_single_process(
      model, params, optimizer, data.train, data.test, o.train, [&](const CurvePoint& p) {
        if (!o.quiet) print_progress(p, steps, elapsed() - train_start);
      });

  write_json_atomically(o.out_path, train_result_json(model, o.model_config, o.init_seed, o.opt,
                                                      o.train, result, data));
  if (result.diverged) {
    std::cerr << "gbasim train: the model diverged at step " << result.steps
              << " (a batch loss that is not a finite number); training stopped there, status "
                 "\"diverged\" in "
              << o.out_path << '\n';
  }
  if (!o.quiet) {
    std::cerr << "gbasim train: final test AUC " << result.curve.back().test.auc << ", log-loss "
              << result.curve.back().test.logloss << " (" << elapsed() << " s); wrote "
              << o.out_path << '\n';
  }
  return 0;
}

}  // namespace gbasim
