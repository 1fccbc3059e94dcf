// gbasim train's result document (experiment/train_result.h).
#include "experiment/train_result.h"

namespace gbasim {

nlohmann::ordered_json train_result_json(const Model& model, const ModelConfig& model_config,
                                         uint64_t init_seed, const OptimizerConfig& opt,
                                         const TrainConfig& train, const TrainResult& result,
                                         const LoadedData& data) {
  nlohmann::ordered_json doc;
  doc["command"] = "train";
  doc["status"] = result.diverged ? "diverged" : "completed";
  doc["model"] = {{"name", model_name(model_config.kind)},
                  {"embedding_dim", model_config.embedding_dim},
                  {"mlp", model_config.mlp},
                  {"bottom_mlp", model_config.bottom_mlp},
                  {"dense_parameters", model.num_dense_parameters()},
                  {"flops_per_sample", model.flops_per_sample()},
                  {"init_seed", init_seed}};
  doc["optimizer"] = {
      {"name", optimizer_name(opt.kind)}, {"learning_rate", opt.learning_rate}, {"l2", opt.l2}};
  doc["training"] = {{"batch_size", train.batch_size},
                     {"epochs", train.epochs},
                     {"seed", train.seed},
                     {"steps", result.steps},
                     {"samples", result.samples}};
  doc["data"] = data.description;
  if (data.bayes_auc) doc["bayes_auc"] = *data.bayes_auc;
  doc["final_auc"] = result.curve.back().test.auc;
  doc["final_logloss"] = result.curve.back().test.logloss;
  nlohmann::ordered_json curve = nlohmann::ordered_json::array();
  for (const CurvePoint& p : result.curve) {
    curve.push_back({{"step", p.step},
                     {"samples", p.samples},
                     {"train_loss", p.train_loss},
                     {"test_auc", p.test.auc},
                     {"test_logloss", p.test.logloss}});
  }
  doc["curve"] = curve;
  return doc;
}

}  // namespace gbasim
