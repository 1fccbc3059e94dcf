#include "cli/train_options.h"

#include <cmath>

#include "base/error.h"
#include "cli/commands.h"
#include "cli/data_options.h"

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

// The options' table, writing into `o`.
po::options_description train_options(TrainOptions& o) {
  po::options_description desc(
      "gbasim train [options]\n\nTrains one model in one process and writes a JSON result");
  po::options_description general("Training");
  general.add_options()("help,h", "show this help")(
      "model", po::value(&o.model_name)->default_value(o.model_name),
      "lr, fm, deepfm, widedeep or dlrm")(
      "embedding-dim",
      po::value(&o.model_config.embedding_dim)->default_value(o.model_config.embedding_dim),
      "embedding dimension")("mlp", po::value(&o.mlp)->default_value(o.mlp),
                             "hidden widths of the deep part (DLRM: top MLP)")(
      "bottom-mlp", po::value(&o.bottom)->default_value(o.bottom),
      "DLRM: hidden widths of the bottom MLP (it then maps to embedding-dim)")(
      "optimizer", po::value(&o.optimizer)->default_value(o.optimizer), "sgd, adagrad or adam")(
      "lr", po::value(&o.opt.learning_rate)->default_value(o.opt.learning_rate), "learning rate")(
      "l2", po::value(&o.opt.l2)->default_value(o.opt.l2),
      "L2 penalty on the values each step updates")(
      "batch-size", po::value(&o.train.batch_size)->default_value(o.train.batch_size),
      "samples per step")("epochs", po::value(&o.train.epochs)->default_value(o.train.epochs),
                          "passes over the training set")(
      "eval-every", po::value(&o.train.eval_every)->default_value(o.train.eval_every),
      "steps between test evaluations (0: ten over the run)")(
      "seed", po::value(&o.train.seed)->default_value(o.train.seed), "seed of the data order")(
      "init-seed", po::value(&o.init_seed)->default_value(o.init_seed),
      "seed of the initial parameters")("out", po::value(&o.out_path)->value_name("FILE"),
                                        "result JSON (default: out/train-<model>.json)")(
      "quiet,q", po::bool_switch(&o.quiet), "no progress lines on standard error");
  desc.add(general);
  add_data_options(desc, o.data);
  return desc;
}

void finish_train_options(TrainOptions& o) {
  read_model_options(o.model_name, o.mlp, o.bottom, o.optimizer, o.model_config, o.opt);
  check_train_options(o.train, o.model_config, o.opt);
}

}  // namespace gbasim
