// The parameter server on rank 0: the rule in force and what it holds through a run.
#pragma once

#include <cstdint>
#include <fstream>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "mpi/job.h"
#include "models/optimizer.h"
#include "strategies/rule_in_force.h"

namespace gbasim::mpi {

// What rank 0 holds through a run: the rule in force, the optimizer, the samples applied,
// and (a switching job) the model moves made and the log of the rule's calls.
struct Holder {
  Holder(const ExperimentSpec& spec, const Parameters& params, const std::string& log_path)
      : rule(spec.training, policy(spec)), optimizer(spec.optimizer, params) {
    if (!log_path.empty()) {
      log.open(log_path);
      if (!log) throw InputError(log_path + ": cannot write the rule log");
    }
  }
  static std::optional<SwitchPolicy> policy(const ExperimentSpec& spec) {
    if (!spec.switching.enabled()) return std::nullopt;
    SwitchPolicy p = switch_policy(spec.switching);
    p.pools = worker_pools(spec);
    return p;
  }
  // The pool in force (0 without switching).
  int pool() const { return rule.switching() != nullptr ? rule.switching()->pool() : 0; }

  RuleInForce rule;
  Optimizer optimizer;
  int64_t applied = 0;
  // data.sharding "queue": each pool's shared sequence, and the batches of it handed out so
  // far (by grants, and N' a sync step).
  std::vector<BatchSource> queues;
  std::vector<int64_t> batches;
  nlohmann::ordered_json moves = nlohmann::ordered_json::array();
  // A move between two sync pools goes through rank 0: when its first leg began, and its bytes.
  std::optional<std::pair<double, double>> between_pools;
  std::ofstream log;  // MpiOptions::rule_log: "admit WORKER TOKEN" and "receive WORKER TOKEN"

  void admitted(int w, int64_t token) {
    if (log) log << "admit " << w << ' ' << token << '\n';
  }
  std::optional<Gradient> receive(int w, int64_t token, Gradient g) {
    if (log) log << "receive " << w << ' ' << token << '\n';
    return rule.receive(w, token, std::move(g));
  }
};

// The parameter server (rank 0): requests and pushes one at a time in arrival order; a
// refused request waits in the rule's queue and is served again after every update. Returns
// when every worker has been told to stop, or (a switching job) has been told that the run
// goes on in sync, with the model and the optimizer's state.
bool run_ps_server(Job& job, Holder& holder, ServerRecord& record);

}  // namespace gbasim::mpi
