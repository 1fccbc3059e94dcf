#include "experiment/data.h"

#include "base/error.h"

namespace gbasim {

LoadedData load_data(const DataOptions& o) {
  LoadedData out;
  if (o.criteo_path.empty()) {
    SyntheticData d = generate_synthetic(o.synthetic);
    const SyntheticConfig& s = o.synthetic;
    out.train = std::move(d.train);
    out.test = std::move(d.test);
    out.bayes_auc = d.bayes_auc;
    out.description = {{"source", "synthetic"},
                       {"train_samples", s.train_samples},
                       {"test_samples", s.test_samples},
                       {"fields", s.num_fields},
                       {"dense", s.num_dense},
                       {"min_cardinality", s.min_cardinality},
                       {"max_cardinality", s.max_cardinality},
                       {"zipf_exponent", s.zipf_exponent},
                       {"target_ctr", s.target_ctr},
                       {"linear_std", s.linear_std},
                       {"dense_std", s.dense_std},
                       {"interaction_std", s.interaction_std},
                       {"mlp_std", s.mlp_std},
                       {"nonlinear_max_cardinality", s.nonlinear_max_cardinality},
                       {"interaction_fields", s.interaction_fields},
                       {"teacher_dim", s.teacher_dim},
                       {"teacher_mlp_width", s.teacher_mlp_width},
                       {"label_flip", s.label_flip},
                       {"days", s.days},
                       {"day_drift", s.day_drift},
                       {"seed", s.seed}};
  } else {
    if (!(o.test_fraction > 0.0 && o.test_fraction < 1.0)) {
      throw InputError("--test-fraction must lie in (0, 1), got " +
                       std::to_string(o.test_fraction));
    }
    CriteoFile file = read_criteo(o.criteo_path, o.criteo);
    auto [train, test] = split_train_test(file.data, o.test_fraction);
    if (train.size() < 1 || test.size() < 1) {
      throw InputError(o.criteo_path + ": holds " + std::to_string(file.data.size()) +
                       " samples, too few for a training and a test set (test fraction " +
                       std::to_string(o.test_fraction) + ")");
    }
    out.train = std::move(train);
    out.test = std::move(test);
    out.description = {{"source", "criteo"},
                       {"path", o.criteo_path},
                       {"samples", file.data.size()},
                       {"bad_lines", file.bad_lines},
                       {"test_fraction", o.test_fraction},
                       {"table_size", o.criteo.table_size}};
  }
  out.description["train_ctr"] = out.train.positive_rate();
  out.description["test_ctr"] = out.test.positive_rate();
  return out;
}

}  // namespace gbasim
