// The workload: the production job whose compute and bytes the cluster times, apart from
// `model`, the small real proxy whose gradients give convergence (docs/workload.md). Without
// a workload a run times the proxy's own batch, as it always has.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace gbasim {

// Where the embedding tables live in sync training (the server modes keep them on the
// parameter-server shards): sharded over the workers (TorchRec's and HugeCTR's model-parallel
// tables: all-to-alls of the ids and of the pooled vectors and their gradients), on the server
// shards (pull and push of the distinct rows, the dense part all-reduced), or replicated on
// every worker (an all-gather of the distinct rows' gradients).
enum class TablePlacement { kCluster, kWorkers, kServers, kReplicated };
// "", "workers", "servers", "replicated"; throws InputError for anything else.
TablePlacement parse_table_placement(const std::string& name);
std::string table_placement_name(TablePlacement placement);

// `count` identical tables.
struct WorkloadTable {
  int64_t rows = 1;
  int64_t dim = 64;
  double ids_per_sample = 1.0;  // the pooling: ids a sample looks up in the table
  double skew = 0.0;            // Zipf exponent of the accesses over the rows; 0: uniform
  int64_t count = 1;
  // How a sample's ids relate: each an independent draw of the law, or (fixed_bags) the first
  // a draw of the law and the others a fixed set of rows for it, drawn uniformly once, as
  // MLPerf's multi-hot Criteo builds its bags.
  bool fixed_bags = false;
};

struct WorkloadSpec {
  std::string preset;  // the preset the values came from, or "" (echoed, not read again)
  std::string source;  // where its numbers come from
  // Dense layers as MLPs of widths ([in, h1, ..., out]: in x h1 + h1 weights and biases, and
  // so on), and parameters beyond them (interaction, norms).
  std::vector<std::vector<int64_t>> dense_layers;
  int64_t dense_extra_params = 0;
  // Flops of a sample's forward and backward pass; 0: 6 x the dense parameters (2 flops a
  // weight forward, 4 backward).
  double flops_per_sample = 0.0;
  std::vector<WorkloadTable> tables;
  int64_t local_batch = 0;     // samples a worker step; 0: training.local_batch
  int optimizer_state = 1;     // optimizer values a parameter (Adagrad 1, Adam 2)
  TablePlacement placement = TablePlacement::kCluster;
  double value_bytes = 4.0;    // bytes a parameter, gradient or activation value
  double id_bytes = 8.0;       // bytes a row id
};

// The named presets (docs/workload.md cites every number).
std::vector<std::string> workload_presets();
// The preset's spec; throws InputError naming the preset list for an unknown name.
WorkloadSpec workload_preset(const std::string& name);

// Reads a spec's "workload" object over its preset's values (or over an empty workload);
// errors name `source` and the key (workload.tables[2].rows).
WorkloadSpec parse_workload(const nlohmann::json& j, const std::string& source);
// What only the whole workload can show: that it has parameters and compute, within the bounds.
// A --with fragment's workload keys are read alone, without it; the spec they merge into is not.
void check_workload(const WorkloadSpec& w, const std::string& source);
nlohmann::ordered_json workload_to_json(const WorkloadSpec& w);

// Expected distinct rows among `draws` independent accesses to a table of `rows` rows whose
// accesses follow a Zipf law of exponent `skew` (access probability of the rank-i row
// proportional to i^-skew; 0 is uniform): the sum over rows of 1 - (1 - p_i)^draws. Exact over
// the first ranks, a quadrature on log-spaced bins beyond (relative error below 1e-4).
double expected_distinct(int64_t rows, double skew, double draws);
// The same for a table of fixed bags of `pooling` ids: the distinct first ids, and the rows
// their fixed companions fall on, uniformly: rows - (rows - d1) (1 - 1/rows)^(d1 (pooling - 1)).
double expected_distinct_bags(int64_t rows, double skew, double samples, double pooling);
// The Zipf exponent under which expected_distinct(rows, skew, draws) equals `distinct`
// (bisection; 0 when the count is that of uniform accesses or more).
double fit_skew(int64_t rows, double draws, double distinct);

// What one workload step weighs, derived from the spec.
class Workload {
 public:
  explicit Workload(WorkloadSpec spec);
  const WorkloadSpec& spec() const { return spec_; }

  int64_t dense_params() const { return dense_params_; }
  int64_t tables() const;  // a table given with a count counts as that many
  int64_t embedding_rows() const;
  double embedding_values() const;  // every table's rows x dim
  double flops_per_sample() const { return flops_per_sample_; }
  // Ids a sample looks up over all tables, and the pooled vector values it reads (a vector of
  // the table's dim per table).
  double ids_per_sample() const;
  double pooled_values_per_sample() const;

  // Over a gradient of `samples` samples: each table's expected distinct rows, summed, and
  // their values (rows x dim). Cached by sample count.
  struct Rows {
    double rows = 0.0, values = 0.0;
  };
  const Rows& distinct(int64_t samples) const;

 private:
  WorkloadSpec spec_;
  int64_t dense_params_ = 0;
  double flops_per_sample_ = 0.0;
  mutable std::map<int64_t, Rows> cache_;
};

// The bytes of one worker's step, by mode, on `shards` server shards and `workers` workers
// (what `gbasim workload` prints; the simulator sends these, split as docs/workload.md says).
struct StepBytes {
  // Sync: the dense gradient's all-reduce (a rank's buffer, as nccl-tests count it), and the
  // embedding exchange a step: ids out, vectors in, gradients out, over all owners.
  double allreduce = 0.0;
  double exchange_ids = 0.0, exchange_vectors = 0.0, exchange_gradients = 0.0;
  // Server modes: a worker's request, pull and push, to one shard and to all of them.
  double request_per_shard = 0.0, pull_per_shard = 0.0, push_per_shard = 0.0;
};
StepBytes step_bytes(const Workload& w, int64_t local_batch, TablePlacement sync_placement,
                     int shards);

}  // namespace gbasim
