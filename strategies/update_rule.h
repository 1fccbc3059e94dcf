// The update rules: what a parameter server (or an all-reduce ring) applies, when, and
// with which weight. A rule sees workers, tokens and gradients, never hosts, messages or
// clocks, so the simulator, the MPI runtime and the tests drive the very same code.
//
// The protocol a driver follows for each worker:
//   1. admit(worker): either a token (the global step of the parameters the worker must
//      pull and compute on) or "wait". A waiting worker asks again after the next update.
//   2. The worker computes its gradient on the parameters of that token.
//   3. receive(worker, token, gradient): nothing, or the update to apply now. The driver
//      applies it with the optimizer to the authoritative parameters at once; the rule's
//      global step has then advanced by one.
//   lose_token(worker) instead of 3 when the worker failed mid-step.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "models/gradient.h"

namespace gbasim {

enum class Mode { kSync, kAsync, kGBA, kBoundedStaleness, kBackupWorkers };

// "sync", "async", "gba", "ssp", "backup"; throws InputError for anything else.
Mode parse_mode(const std::string& name);
std::string mode_name(Mode mode);

enum class Decay { kDrop, kExp, kInverse };

// "drop", "exp", "inverse"; throws InputError for anything else.
Decay parse_decay(const std::string& name);
std::string decay_name(Decay decay);

struct GbaConfig {
  int64_t iota = 2;  // staleness up to iota counts in full
  Decay decay = Decay::kExp;
  double gamma = 0.5;  // exp decay: weight gamma^(staleness - iota)
  // Whether a decayed (0 < weight < 1) or a dropped (weight 0) gradient still counts as one
  // of the M local gradients that make up a global batch.
  bool decayed_count = true;
  bool dropped_count = false;
  // The aggregate is sum(weight_i * g_i) / M by default; with this, / sum(weight_i).
  bool normalize_by_weights = false;
};

struct RuleConfig {
  Mode mode = Mode::kGBA;
  int num_workers = 4;
  int64_t local_batch = 256;  // b
  int64_t global_batch = 0;   // G; 0 means N x b (GBA only: any multiple of b)
  GbaConfig gba;
  int64_t staleness_bound = 2;  // ssp: a worker starts at most this many steps ahead of the slowest
  int backup_workers = 1;       // backup: each global step takes the first N - k gradients
};

// Counters every rule keeps. Staleness is counted over every gradient received.
struct RuleMetrics {
  int64_t global_steps = 0;
  int64_t gradients_received = 0;
  int64_t gradients_full = 0;     // applied with weight 1
  int64_t gradients_decayed = 0;  // applied with 0 < weight < 1
  int64_t gradients_dropped = 0;  // weight 0, or too late (backup workers)
  int64_t admissions = 0;
  int64_t waits = 0;  // admissions refused
  int64_t tokens_lost = 0;
  std::map<int64_t, int64_t> staleness;  // staleness -> gradients
};

struct Admission {
  bool admitted = false;
  int64_t token = 0;  // when admitted: the global step of the parameters to compute on
};

class UpdateRule {
 public:
  explicit UpdateRule(const RuleConfig& config);
  virtual ~UpdateRule() = default;

  virtual Admission admit(int worker) = 0;
  virtual std::optional<Gradient> receive(int worker, int64_t token, Gradient gradient) = 0;
  virtual void lose_token(int worker);
  // Takes the gradient of `token` back without using it (counted as dropped).
  void discard(int worker, int64_t token);

  // Whether `worker` holds a token whose gradient has not come back.
  bool in_flight(int worker) const { return in_flight_.at(worker); }
  bool any_in_flight() const;
  // Continues the version count of another rule (a mode switch); no token may be out.
  void resume_at(int64_t global_step);
  int64_t global_step() const { return global_step_; }
  const RuleMetrics& metrics() const { return metrics_; }
  const RuleConfig& config() const { return config_; }

 protected:
  // Marks the admission and counts it; `admitted` false counts a wait.
  Admission grant(int worker, bool admitted);
  // Checks that `worker` holds `token`, clears its flight and records the staleness.
  int64_t take(int worker, int64_t token);
  // Counts the update and advances the global step.
  void advance();

  RuleConfig config_;
  RuleMetrics metrics_;

 private:
  int64_t global_step_ = 0;
  std::vector<bool> in_flight_;
  std::vector<int64_t> token_of_;
};

// Throws InputError naming the first invalid key of `config`.
void validate(const RuleConfig& config);

std::unique_ptr<UpdateRule> make_rule(const RuleConfig& config);

}  // namespace gbasim
