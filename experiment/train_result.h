// The result `gbasim train` writes: the model, the optimizer, the training, the data, and the
// test curve of one single-process run (docs/models.md).
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>

#include "experiment/data.h"
#include "models/model.h"
#include "models/optimizer.h"
#include "models/trainer.h"

namespace gbasim {

nlohmann::ordered_json train_result_json(const Model& model, const ModelConfig& model_config,
                                         uint64_t init_seed, const OptimizerConfig& opt,
                                         const TrainConfig& train, const TrainResult& result,
                                         const LoadedData& data);

}  // namespace gbasim
