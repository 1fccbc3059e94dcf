// The data set of an experiment: synthetic (the default) or a Criteo-format file.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "models/criteo.h"
#include "models/synthetic.h"

namespace gbasim {

struct DataOptions {
  std::string criteo_path;  // empty: synthetic data
  // With a Criteo file, the last test_fraction of it is the test set.
  double test_fraction = 0.1;
  CriteoOptions criteo;
  SyntheticConfig synthetic;
};

struct LoadedData {
  Dataset train;
  Dataset test;
  std::optional<double> bayes_auc;  // synthetic data only
  nlohmann::ordered_json description;
};

LoadedData load_data(const DataOptions& options);

}  // namespace gbasim
