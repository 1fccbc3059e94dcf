// Command-line options that choose and shape the data set, shared by every command that
// trains or describes data.
#pragma once

#include <boost/program_options.hpp>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "models/criteo.h"
#include "models/synthetic.h"

namespace gbasim {

struct DataOptions {
  std::string criteo_path;  // empty: synthetic data
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

// Adds --data, --test-fraction, --table-size, --skip-bad-lines, --max-samples and the
// synthetic generator's options to `desc`, bound to `options`.
void add_data_options(boost::program_options::options_description& desc, DataOptions& options);

LoadedData load_data(const DataOptions& options);

}  // namespace gbasim
