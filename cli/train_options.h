// gbasim train's options: the table, and what they set checked and turned into the libraries'
// configurations.
#pragma once

#include <boost/program_options.hpp>
#include <cstdint>
#include <string>

#include "experiment/data.h"
#include "models/model.h"
#include "models/optimizer.h"
#include "models/trainer.h"

namespace gbasim {

// What `gbasim train`'s options set.
struct TrainOptions {
  std::string model_name = "deepfm", optimizer = "adam", out_path, mlp = "128,64", bottom = "64";
  ModelConfig model_config;
  OptimizerConfig opt;
  TrainConfig train;
  DataOptions data;
  uint64_t init_seed = 1;
  bool quiet = false;
};

// The options' table, writing into `o`.
boost::program_options::options_description train_options(TrainOptions& o);

// Reads --model, --mlp, --bottom-mlp and --optimizer into `o`'s configurations and checks every
// number's range, naming the option as the user typed it. Throws po::error or InputError.
void finish_train_options(TrainOptions& o);

}  // namespace gbasim
