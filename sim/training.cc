#include "sim/training.h"

#include <fcntl.h>
#include <unistd.h>

#include <cstdio>

#include "base/clock.h"
#include "base/error.h"

namespace gbasim {

namespace {

std::optional<SwitchPolicy> switching_of(const ExperimentSpec& spec) {
  if (!spec.switching.enabled()) return std::nullopt;
  SwitchPolicy policy = switch_policy(spec.switching);
  policy.pools = worker_pools(spec);
  return policy;
}

}  // namespace

Training::Training(const ExperimentSpec& spec, SimulationCost& cost)
    : spec_(spec),
      cost_(cost),
      data_(load_data(spec.data)),
      trace_(load_trace(spec)),
      record_(spec, data_),
      model_(spec.model, data_.train.cardinalities, data_.train.num_dense),
      params_(model_.init_parameters(spec.seed)),
      optimizer_(spec.optimizer, params_),
      rule_(spec.training, switching_of(spec)),
      pools_(worker_pools(spec)),
      n_(total_workers(spec)),
      timing_only_(spec.simulation.timing_only),
      dense_values_(model_.num_dense_parameters()),
      stats_(n_),
      mutex_(sg4::Mutex::create()),
      updated_(sg4::ConditionVariable::create()) {
  // A data file too small for one global step (synthetic data is checked with the spec).
  for (const WorkerPool& pool : pools_) {
    const int64_t batch = int64_t{pool.workers} * pool.local_batch;
    if (data_.train.size() < batch) {
      throw InputError(spec.data.criteo_path + ": its training part holds " +
                       std::to_string(data_.train.size()) +
                       " samples, fewer than one global batch (" + std::to_string(pool.workers) +
                       " workers x " + std::to_string(pool.local_batch) + ")");
    }
  }
  // Each pool's workers share the whole training set among them: a shard each, or one
  // sequence the pool's workers take batches from in the order they ask.
  const bool queue = spec.data.sharding == DataSharding::kQueue;
  for (int p = 0; p < static_cast<int>(pools_.size()); ++p) {
    if (queue) shards_.emplace_back(data_.train, 0, 1, spec.seed);
    for (int i = 0; i < pools_[p].workers; ++i) {
      if (!queue) shards_.emplace_back(data_.train, i, pools_[p].workers, spec.seed);
      shard_of_.push_back(static_cast<int>(shards_.size()) - 1);
      pool_of_.push_back(p);
    }
  }
  reads_.assign(static_cast<size_t>(data_.train.size()), 0);
  for (ShardIterator& shard : shards_) shard.count_reads(&reads_);
  if (spec.evaluation.test_samples > 0)
    data_.test = first_rows(data_.test, spec.evaluation.test_samples);
  for (const auto& table : params_.tables) dims_.push_back(table.cols());
  if (timing_only_) batch_rows_.emplace(data_.train.cardinalities);
  sizes_.emplace(spec, dims_, dense_values_, model_.flops_per_sample());
}

// Each field's unique ids in the order they first appear, without a sort: the rows' order
// matters to nothing timing reads. Every model's tables are a field's each, once (embeddings
// or first-order weights) or twice (both; the second set holds the same rows).
template <typename Sample>
void Training::rows_of(int64_t b, Sample sample, Gradient& grad) {
  grad = Gradient{};
  grad.samples = b;
  grad.tables.resize(dims_.size());
  const auto fields = static_cast<size_t>(data_.train.num_fields);
  if (grad.tables.size() >= fields && fields > 0) batch_rows_->take(b, sample, grad.tables);
  for (size_t t = 0; t < dims_.size(); ++t) {
    if (t >= fields) grad.tables[t].rows = grad.tables[t % fields].rows;
    grad.tables[t].values.resize(static_cast<Eigen::Index>(grad.tables[t].rows.size()), 0);
  }
}

void Training::gradient_of(const Batch& batch, Gradient& grad) {
  if (!timing_only_) {
    const auto start = WallClock::now();
    model_.forward_backward(params_, batch, grad);
    cost_.math_s += seconds_since(start);
    return;
  }
  rows_of(batch.ids.rows(), [&](int64_t i) { return &batch.ids(i, 0); }, grad);
}

void Training::next_gradient(int worker, Gradient& grad) {
  if (!timing_only_) {
    gradient_of(next_batch(worker), grad);
    return;
  }
  // The rows the batch would copy, read where they are.
  ShardIterator& shard = shards_[shard_of_[worker]];
  const std::span<const int64_t> rows = shard.next_rows(local_batch(worker));
  if (!sizes_->proxy()) {  // a workload's sizes need the sample count alone
    grad = Gradient{};
    grad.samples = static_cast<int64_t>(rows.size());
    return;
  }
  const Dataset& data = shard.data();
  const int32_t* ids = data.ids.data();
  const int64_t fields = data.num_fields;
  rows_of(static_cast<int64_t>(rows.size()), [&](int64_t i) { return ids + rows[i] * fields; }, grad);
}

bool Training::wait_for_admission(int worker, Admission& admission, Mode& mode) {
  const double start = sg4::Engine::get_clock();
  std::unique_lock lock(*mutex_);
  while (!stop_) {
    if (!moving_) {
      admission = rule_.admit(worker);
      if (admission.admitted) break;
    }
    updated_->wait(lock);
  }
  mode = rule_.mode();
  stats_[worker].wait_s += sg4::Engine::get_clock() - start;
  return admission.admitted && !stop_;
}

std::optional<Gradient> Training::receive(int worker, int64_t token, Gradient gradient) {
  const auto start = WallClock::now();
  std::optional<Gradient> update = rule_.receive(worker, token, std::move(gradient));
  cost_.rule_s += seconds_since(start);
  hold_for_move();
  return update;
}

void Training::lose_token(int worker) {
  std::unique_lock lock(*mutex_);
  rule_.lose_token(worker);
  hold_for_move();
  updated_->notify_all();
}

void Training::hold_for_move() {
  if (auto move = rule_.take_model_move()) {
    moving_ = true;
    owed_move_ = move;
  }
}

void Training::apply_update(const Gradient& update) {
  if (!timing_only_) {
    const auto start = WallClock::now();
    optimizer_.apply(params_, update);
    cost_.math_s += seconds_since(start);
  }
  applied_samples_ += update.samples;
  stop_ = record_.budget().spent(applied_samples_, sg4::Engine::get_clock());
  updated_->notify_all();
}

void Training::end_run(const std::string& status, const std::string& detail) {
  record_.end(status, detail);
  stop_ = true;
  ended_at_ = sg4::Engine::get_clock();
  // The killed actors drop messages still in flight, and SimGrid prints a backtrace on standard
  // error for each ("freed before its completion"): noise about a run that ended as asked. So
  // standard error goes to /dev/null until the engine returns (restore_stderr).
  if (muted_stderr_ < 0) {
    std::fflush(stderr);
    const int null = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
    if (null >= 0) {
      muted_stderr_ = ::dup(STDERR_FILENO);
      if (muted_stderr_ >= 0) ::dup2(null, STDERR_FILENO);
      ::close(null);
    }
  }
  sg4::Actor::kill_all();
}

void Training::restore_stderr() {
  if (muted_stderr_ < 0) return;
  std::fflush(stderr);
  ::dup2(muted_stderr_, STDERR_FILENO);
  ::close(muted_stderr_);
  muted_stderr_ = -1;
}

std::optional<ModelMove> Training::take_owed_move() {
  std::optional<ModelMove> move;
  move.swap(owed_move_);
  return move;
}

// The model goes whole: from the first worker of the pool that ran sync (every all-reduce
// worker holds it) to the server shards, each taking its share; or from the shards to every
// worker of the pool that runs sync next; between two sync pools, both.
void Training::move_model(const ModelMove& move, const Cluster& cluster) {
  double values = static_cast<double>(dense_values_);
  for (const auto& table : params_.tables) values += static_cast<double>(table.size());
  const double bytes = sizes_->value_bytes() * sizes_->model_values(values);
  const double start = sg4::Engine::get_clock();
  const auto& servers = cluster.servers();
  const int shards = static_cast<int>(servers.size());
  using Direction = ModelMove::Direction;
  const bool up = move.direction != Direction::kToWorkers;
  const bool down = move.direction != Direction::kToParameterServers;
  double moved = 0.0;
  for (int leg = 0; leg < 2; ++leg) {
    if ((leg == 0 && !up) || (leg == 1 && !down)) continue;
    Network& network = cluster.network();
    std::vector<Transfer> comms;
    for (int p = 0; p < shards; ++p) {
      if (leg == 0) {
        comms.push_back(
            network.send(cluster.workers()[move.from.first].host, servers[p], bytes / shards));
      } else {
        for (int w = move.to.first; w < move.to.first + move.to.workers; ++w)
          comms.push_back(network.send(servers[p], cluster.workers()[w].host, bytes / shards));
      }
    }
    network.wait_all(comms);
    messages_ += static_cast<int64_t>(comms.size());
    moved += bytes * (leg == 0 ? 1 : move.to.workers);
  }
  const char* direction = move.direction == Direction::kToParameterServers ? "to_parameter_servers"
                          : move.direction == Direction::kToWorkers        ? "to_workers"
                                                                           : "between_pools";
  moves_.push_back({{"global_step", move.global_step},
                    {"direction", direction},
                    {"start", start},
                    {"end", sg4::Engine::get_clock()},
                    {"bytes", moved}});
  std::unique_lock lock(*mutex_);
  moving_ = false;
  updated_->notify_all();
}

}  // namespace gbasim
