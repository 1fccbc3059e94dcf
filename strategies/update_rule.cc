#include "strategies/update_rule.h"

#include <stdexcept>

#include "base/enum_names.h"
#include "base/error.h"
#include "strategies/rules.h"

namespace gbasim {

namespace {
constexpr EnumName<Mode> kModeNames[] = {{Mode::kSync, "sync"}, {Mode::kAsync, "async"}, {Mode::kGBA, "gba"}, {Mode::kBoundedStaleness, "ssp"}, {Mode::kBackupWorkers, "backup"}};
}  // namespace

Mode parse_mode(const std::string& name) {
  return parse_enum(name, kModeNames);
}

std::string mode_name(Mode mode) { return enum_name(mode, kModeNames); }

namespace {
constexpr EnumName<Decay> kDecayNames[] = {{Decay::kDrop, "drop"}, {Decay::kExp, "exp"}, {Decay::kInverse, "inverse"}};
}  // namespace

Decay parse_decay(const std::string& name) {
  return parse_enum(name, kDecayNames);
}

std::string decay_name(Decay decay) { return enum_name(decay, kDecayNames); }

void validate(const RuleConfig& c) {
  auto require = [](bool ok, const std::string& key, const std::string& what) {
    if (!ok) throw InputError("", "training." + key, what);
  };
  require(c.num_workers >= 1 && c.num_workers <= 16384, "workers", "must lie in [1, 16384]");
  require(c.local_batch >= 1, "local_batch", "must be at least 1");
  require(c.global_batch >= 0, "global_batch", "must not be negative");
  if (c.global_batch > 0) {
    require(c.global_batch % c.local_batch == 0, "global_batch",
            "must be a multiple of training.local_batch");
    require(c.mode == Mode::kGBA || c.global_batch == c.num_workers * c.local_batch, "global_batch",
            "other than workers x local_batch is for gba only");
  }
  require(c.gba.iota >= 0, "gba.iota", "must not be negative");
  require(c.gba.gamma > 0.0 && c.gba.gamma <= 1.0, "gba.gamma", "must lie in (0, 1]");
  require(c.staleness_bound >= 0, "staleness_bound", "must not be negative");
  require(
      c.backup_workers >= 0 && (c.mode != Mode::kBackupWorkers || c.backup_workers < c.num_workers),
      "backup_workers", "must lie in [0, workers)");
}

UpdateRule::UpdateRule(const RuleConfig& config)
    : config_(config), in_flight_(config.num_workers, false), token_of_(config.num_workers, 0) {
  validate(config);
}

Admission UpdateRule::grant(int worker, bool admitted) {
  if (in_flight_.at(worker)) throw std::logic_error("admit: worker already holds a token");
  if (!admitted) {
    ++metrics_.waits;
    return {};
  }
  ++metrics_.admissions;
  in_flight_[worker] = true;
  token_of_[worker] = global_step_;
  return {true, global_step_};
}

int64_t UpdateRule::take(int worker, int64_t token) {
  if (!in_flight_.at(worker) || token_of_[worker] != token) {
    throw std::logic_error("receive: the gradient's token is not the one the worker holds");
  }
  in_flight_[worker] = false;
  const int64_t staleness = global_step_ - token;
  ++metrics_.gradients_received;
  ++metrics_.staleness[staleness];
  return staleness;
}

void UpdateRule::advance() {
  ++global_step_;
  ++metrics_.global_steps;
}

bool UpdateRule::any_in_flight() const {
  for (bool f : in_flight_)
    if (f) return true;
  return false;
}

void UpdateRule::resume_at(int64_t global_step) {
  if (any_in_flight()) throw std::logic_error("resume_at: tokens are out");
  global_step_ = global_step;
}

void UpdateRule::discard(int worker, int64_t token) {
  take(worker, token);
  ++metrics_.gradients_dropped;
}

void UpdateRule::lose_token(int worker) {
  if (!in_flight_.at(worker)) throw std::logic_error("lose_token: worker holds no token");
  in_flight_[worker] = false;
  ++metrics_.tokens_lost;
}

std::unique_ptr<UpdateRule> make_rule(const RuleConfig& config) {
  switch (config.mode) {
    case Mode::kSync:
      return std::make_unique<QuorumRule>(config, config.num_workers);
    case Mode::kAsync:
      return std::make_unique<AsyncRule>(config);
    case Mode::kGBA:
      return std::make_unique<GbaRule>(config);
    case Mode::kBoundedStaleness:
      return std::make_unique<BoundedStalenessRule>(config);
    case Mode::kBackupWorkers:
      return std::make_unique<QuorumRule>(config, config.num_workers - config.backup_workers);
  }
  throw std::logic_error("make_rule: unknown mode");
}

}  // namespace gbasim
