// The rule in force: what a driver talks to. The spec's rule, or, with training.switching,
// the switching controller over rules; and, for a server that answers requests one at a
// time, its queue of refused admissions. Both drivers (the simulator and gbasim-mpi) use
// this, so that switching and the order in which refused workers are served again are the
// same in both.
#pragma once

#include <deque>
#include <memory>
#include <optional>

#include "strategies/switching.h"
#include "strategies/update_rule.h"

namespace gbasim {

class RuleInForce {
 public:
  // `switching`: the controller's policy, nothing for the spec's rule alone.
  RuleInForce(const RuleConfig& config, const std::optional<SwitchPolicy>& switching);

  Admission admit(int worker);
  std::optional<Gradient> receive(int worker, int64_t token, Gradient gradient);
  // Instead of receive, for a worker that failed mid-step: its token is gone.
  void lose_token(int worker);
  int64_t global_step() const;
  Mode mode() const;
  RuleMetrics metrics() const;

  // Switching; null, nothing and no-ops without it.
  const SwitchingController* switching() const { return switcher_ ? &*switcher_ : nullptr; }
  std::optional<ModelMove> take_model_move();
  void observe_step(int worker, double seconds, double now);

  // A refused request waits here; after every update the waiting workers are served again,
  // each once, in the order they were refused. `serve(worker)` answers the worker (true) or
  // leaves it waiting (false: it goes to the back of the queue).
  void queue_refused(int worker) { refused_.push_back(worker); }
  template <class Serve>
  void serve_refused(Serve serve) {
    for (size_t i = refused_.size(); i-- > 0;) {
      const int worker = refused_.front();
      refused_.pop_front();
      if (!serve(worker)) refused_.push_back(worker);
    }
  }

 private:
  std::unique_ptr<UpdateRule> rule_;             // without switching
  std::optional<SwitchingController> switcher_;  // with it
  std::deque<int> refused_;
};

}  // namespace gbasim
