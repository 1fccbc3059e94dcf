#include "cli/data_options.h"

namespace gbasim {

namespace po = boost::program_options;

void add_data_options(po::options_description& desc, DataOptions& o) {
  o.path_key = "--data";
  SyntheticConfig& s = o.synthetic;
  po::options_description data("Data (synthetic by default; --data reads a Criteo-format file)");
  data.add_options()("data", po::value(&o.criteo_path)->value_name("FILE"),
                     "Criteo-format file: label, 13 integer and 26 hexadecimal categorical "
                     "features, tab-separated")(
      "test-fraction", po::value(&o.test_fraction)->default_value(o.test_fraction),
      "with --data: the last fraction of the file is the test set")(
      "table-size", po::value(&o.criteo.table_size)->default_value(o.criteo.table_size),
      "with --data: rows of each field's hashed embedding table")(
      "skip-bad-lines", po::bool_switch(&o.criteo.skip_bad_lines),
      "with --data: skip and count malformed lines instead of stopping at the first")(
      "max-samples", po::value(&o.criteo.max_samples)->default_value(o.criteo.max_samples),
      "with --data: read at most this many samples (-1: all)")(
      "train-samples", po::value(&s.train_samples)->default_value(s.train_samples),
      "synthetic training samples")("test-samples",
                                    po::value(&s.test_samples)->default_value(s.test_samples),
                                    "synthetic test samples")(
      "fields", po::value(&s.num_fields)->default_value(s.num_fields), "categorical fields")(
      "dense", po::value(&s.num_dense)->default_value(s.num_dense), "dense (log-normal) features")(
      "min-cardinality", po::value(&s.min_cardinality)->default_value(s.min_cardinality),
      "values of the smallest field")(
      "max-cardinality", po::value(&s.max_cardinality)->default_value(s.max_cardinality),
      "values of the largest field (fields in between are log-spaced)")(
      "zipf", po::value(&s.zipf_exponent)->default_value(s.zipf_exponent),
      "Zipf exponent of value frequencies")(
      "ctr", po::value(&s.target_ctr)->default_value(s.target_ctr), "mean click-through rate")(
      "linear-std", po::value(&s.linear_std)->default_value(s.linear_std),
      "teacher: standard deviation of the per-value weights' term")(
      "dense-std", po::value(&s.dense_std)->default_value(s.dense_std),
      "teacher: standard deviation of the dense features' term")(
      "interaction-std", po::value(&s.interaction_std)->default_value(s.interaction_std),
      "teacher: standard deviation of the pairwise interaction term")(
      "mlp-std", po::value(&s.mlp_std)->default_value(s.mlp_std),
      "teacher: standard deviation of the nonlinear (MLP) term")(
      "nonlinear-max-cardinality",
      po::value(&s.nonlinear_max_cardinality)->default_value(s.nonlinear_max_cardinality),
      "teacher: fields with at most this many values feed the interactions and the MLP")(
      "interaction-fields", po::value(&s.interaction_fields)->default_value(s.interaction_fields),
      "teacher: nonlinear fields whose every pair interacts (FM-like)")(
      "label-flip", po::value(&s.label_flip)->default_value(s.label_flip),
      "probability that a drawn label is flipped (label noise)")(
      "days", po::value(&s.days)->default_value(s.days),
      "> 1: train on days 1..days, test on the next day, the teacher drifting daily")(
      "day-drift", po::value(&s.day_drift)->default_value(s.day_drift),
      "per-day innovation of the teacher's weights (0: none, 1: a new teacher)")(
      "data-seed", po::value(&s.seed)->default_value(s.seed), "seed of the synthetic data set");
  desc.add(data);
}

}  // namespace gbasim
