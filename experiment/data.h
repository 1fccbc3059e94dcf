// The data set of an experiment: synthetic (the default) or a Criteo-format file.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "models/criteo.h"
#include "models/synthetic.h"

namespace gbasim {

// Which training samples a worker reads (sim/training.h): a fixed shard of its own (sample i
// to worker i mod N, as PyTorch's DistributedSampler shards), or one shared sequence of
// batches, each handed to the next worker that asks (as a parameter-server job's input
// pipeline feeds its workers), so that every sample is read once an epoch whatever the
// workers' speeds.
enum class DataSharding { kStatic, kQueue };

struct DataOptions {
  std::string criteo_path;  // empty: synthetic data
  // What named criteo_path, for an error that it cannot be opened (not a spec key itself).
  std::string path_key = "data.criteo_path";
  DataSharding sharding = DataSharding::kQueue;
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
