// bare_engine: what SimGrid alone costs for the messages of a gbasim timing-only run
// (bench/README.md, "The simulator"). The same platform (built by gbasim's Cluster from the
// same spec), the same actors, mailboxes, message pattern and activities a step, with message
// sizes drawn to match the spec's batches (their rows' mean and deviation, measured on the
// spec's data before the engine starts) instead of each batch's own rows, and none of gbasim's
// own work in the engine: no data, no gradients, no update rule, no bookkeeping.
//
//   bare_engine --spec FILE [--set KEY=VALUE]... [--steps S] [--cfg=KEY:VALUE]...
//
// S steps a worker (default 20).
//
// Patterns, from training.mode:
// - server modes (gba, async, ssp, backup): as sim/sharded_server.cc, each worker step sends
//   a request to every shard, takes the pull back, computes, pushes to every shard, puts the
//   notice in the server's mailbox and waits for its acknowledgement; the server actor takes
//   each notice under a mutex and, every `updates_every` notices (gba: the workers' count,
//   backup: workers - backup; else 1), runs the update's flops on the shards' cores;
// - sync: as sim/workers.cc's all_to_all exchange with sim/collectives.cc's hierarchical or
//   ring all-reduce, in the ring and all-to-all models the spec resolves to, with a barrier
//   of every worker at each step's start (the quorum rule's wait).
// Prints one line: workers, steps, messages, wall seconds in the engine, simulated seconds.
#include <simgrid/s4u.hpp>
#include <xbt/config.hpp>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include "experiment/run_record.h"
#include "experiment/spec.h"
#include "experiment/data.h"
#include "models/layers.h"
#include "models/model.h"
#include "sim/cluster.h"
#include "traces/straggler_models.h"

namespace {

namespace sg4 = simgrid::s4u;
using gbasim::Cluster;
using gbasim::ExperimentSpec;
using gbasim::RingModel;

struct Sizes {
  double rows;       // unique embedding rows a batch touches, on average
  double rows_sd;    // their standard deviation over batches
  double row_bytes;  // 4 bytes a value of a row
  double dense_bytes;
  double flops;      // a worker step's compute, before the spec's step noise
};

int64_t messages = 0;      // every actor runs in turn: no race
int64_t worker_steps = 0;  // the steps done (a backup worker's last may not be)

// Each batch's rows by owner, drawn: the batch's rows (normal, mean and deviation of the
// real batches'), each owner's share as a hash split makes it (binomial, in its normal
// approximation). Sizes that differ as gbasim's do make the flows end at distinct times, as
// theirs do, which is what the engine's cost depends on.
class RowDraws {
 public:
  RowDraws(const Sizes& sizes, int worker) : sizes_(sizes), rng_(static_cast<uint64_t>(worker) + 1) {}
  std::vector<double> draw(int owners) {
    const double rows = std::max(0.0, sizes_.rows + sizes_.rows_sd * normal_(rng_));
    const double q = 1.0 / owners;
    std::vector<double> share(owners);
    for (double& r : share) r = std::max(0.0, rows * q + std::sqrt(rows * q * (1 - q)) * normal_(rng_));
    return share;
  }

 private:
  Sizes sizes_;
  std::mt19937_64 rng_;
  std::normal_distribution<double> normal_;
};

void wait_all(std::vector<sg4::CommPtr>& comms) {
  for (auto& c : comms) c->wait();
  comms.clear();
}

// Server modes: a worker's `steps` steps, and the server.
class ServerPattern {
 public:
  ServerPattern(const Cluster& cluster, const ExperimentSpec& spec, const Sizes& sizes)
      : cluster_(cluster), spec_(spec), sizes_(sizes), inbox_(sg4::Mailbox::by_name("ps")),
        mutex_(sg4::Mutex::create()) {
    const int n = static_cast<int>(cluster.workers().size());
    for (int w = 0; w < n; ++w) acks_.push_back(sg4::Mailbox::by_name("ack-" + std::to_string(w)));
    notices_.assign(n, Notice{0, 0});
    completed_.assign(n, 0);
    contributed_.assign(n, false);
    active_ = n;
    mode_ = spec.training.mode;
    switch (spec.training.mode) {
      case gbasim::Mode::kGBA: updates_every_ = n; break;
      case gbasim::Mode::kBackupWorkers:
        updates_every_ = std::max(1, n - spec.training.backup_workers);
        break;
      default: updates_every_ = 1;
    }
  }

  void worker(int w, int64_t steps) {
    const auto& servers = cluster_.servers();
    const double shards = static_cast<double>(servers.size());
    sg4::Host* me = cluster_.workers()[w].host;
    std::vector<sg4::CommPtr> comms;
    RowDraws draws(sizes_, w);
    for (int64_t s = 0; s < steps; ++s) {
      int64_t token;
      {  // the admission: the rule's wait, under the lock
        std::unique_lock lock(*mutex_);
        while (!admitted(w)) changed_->wait(lock);
        token = version_;
      }
      const std::vector<double> rows = draws.draw(static_cast<int>(servers.size()));
      for (size_t p = 0; p < servers.size(); ++p)
        comms.push_back(sg4::Comm::sendto_async(me, servers[p], 64 + 8 * rows[p]));
      wait_all(comms);
      for (size_t p = 0; p < servers.size(); ++p)
        comms.push_back(sg4::Comm::sendto_async(
            servers[p], me, sizes_.dense_bytes / shards + rows[p] * sizes_.row_bytes));
      wait_all(comms);
      sg4::this_actor::execute(sizes_.flops * gbasim::step_noise(spec_.stragglers, w, s));
      for (size_t p = 0; p < servers.size(); ++p)
        comms.push_back(sg4::Comm::sendto_async(
            me, servers[p], sizes_.dense_bytes / shards + rows[p] * (sizes_.row_bytes + 8)));
      wait_all(comms);
      notices_[w] = {w, token};
      inbox_->put(&notices_[w], 64);
      acks_[w]->get_unique<int>();
      messages += 3 * static_cast<int64_t>(servers.size()) + 2;
      ++worker_steps;
    }
    // Leaving: backup workers' wait for n - b contributions must not wait for this worker
    // (a run would end in SimGrid's deadlock with the waiting workers' steps never done).
    std::unique_lock lock(*mutex_);
    --active_;
    if (mode_ == gbasim::Mode::kBackupWorkers && count_ > 0 && count_ >= quorum()) new_version();
    changed_->notify_all();
  }

  void server() {
    const auto& servers = cluster_.servers();
    const double values = sizes_.dense_bytes / 4 + sizes_.rows * sizes_.row_bytes / 4;
    for (int64_t taken = 1;; ++taken) {
      const Notice* notice = inbox_->get<Notice>();
      const int* w = &notice->worker;
      bool update = false;
      {  // the rule's bookkeeping: a step's count, versions, each worker's steps
        std::unique_lock lock(*mutex_);
        ++completed_[*w];
        if (mode_ == gbasim::Mode::kBackupWorkers) {
          if (notice->token == version_) {
            contributed_[*w] = true;
            update = ++count_ >= quorum();
          }
        } else {
          update = taken % updates_every_ == 0;
        }
        if (update) new_version();
        changed_->notify_all();
      }
      if (update) {
        sg4::this_actor::exec_init(spec_.cost.update_flops_per_value * values * updates_every_ /
                                   static_cast<double>(servers.size()))
            ->set_thread_count(spec_.cluster.ps_cores)
            ->wait();
      }
      acks_[*w]->put_init(new int(0), 64)->detach([](void* p) { delete static_cast<int*>(p); });
    }
  }

 private:
  const Cluster& cluster_;
  const ExperimentSpec& spec_;
  Sizes sizes_;
  sg4::Mailbox* inbox_;
  std::vector<sg4::Mailbox*> acks_;
  int64_t quorum() const { return std::min<int64_t>(updates_every_, active_); }
  void new_version() {
    ++version_;
    count_ = 0;
    std::fill(contributed_.begin(), contributed_.end(), false);
  }
  // The rule's waits: backup workers (a worker that has contributed to the version in
  // progress waits for it), SSP (no worker more than the bound ahead of the slowest).
  bool admitted(int w) const {
    if (mode_ == gbasim::Mode::kBackupWorkers) return !contributed_[w];
    if (mode_ == gbasim::Mode::kBoundedStaleness)
      return completed_[w] - *std::min_element(completed_.begin(), completed_.end()) <=
             spec_.training.staleness_bound;
    return true;
  }

  struct Notice {
    int worker;
    int64_t token;
  };
  std::vector<Notice> notices_;
  sg4::MutexPtr mutex_;
  sg4::ConditionVariablePtr changed_ = sg4::ConditionVariable::create();
  gbasim::Mode mode_;
  int64_t updates_every_ = 1, version_ = 0, count_ = 0;
  int64_t active_;  // workers that have steps left
  std::vector<int64_t> completed_;
  std::vector<bool> contributed_;
};

// A ring of workers (sim/collectives.h's RingGroup): a message a pass, or a barrier and one
// message of every pass's bytes and the other passes' latency.
class Ring {
 public:
  Ring(const Cluster& cluster, std::vector<int> members, RingModel model, const std::string& name)
      : members_(std::move(members)), model_(model) {
    const int n = static_cast<int>(members_.size());
    for (int i = 0; i < n; ++i) boxes_.push_back(sg4::Mailbox::by_name(name + std::to_string(i)));
    if (n > 1) barrier_ = sg4::Barrier::create(n);
    for (int i = 0; i < n; ++i) {
      std::vector<sg4::Link*> links;
      double latency = 0.0;
      cluster.workers()[members_[i]].host->route_to(cluster.workers()[members_[(i + 1) % n]].host,
                                                    links, &latency);
      latency_.push_back(latency);
    }
  }

  void run(int i, int passes, double bytes) {
    const int n = static_cast<int>(members_.size());
    if (n < 2) return;
    auto pass = [&](double b) {
      auto send = boxes_[(i + 1) % n]->put_async(&members_[i], b);
      boxes_[i]->get<int>();
      send->wait();
      ++messages;
    };
    if (model_ == RingModel::kMessages) {
      for (int p = 0; p < passes; ++p) pass(bytes);
      return;
    }
    barrier_->wait();
    pass(bytes * passes);
    sg4::this_actor::sleep_for((passes - 1) * latency_[i] *
                               simgrid::config::get_value<double>("network/latency-factor"));
  }

 private:
  std::vector<int> members_;
  RingModel model_;
  std::vector<sg4::Mailbox*> boxes_;
  sg4::BarrierPtr barrier_;
  std::vector<double> latency_;
};

class SyncPattern {
 public:
  SyncPattern(const Cluster& cluster, const ExperimentSpec& spec, const Sizes& sizes)
      : cluster_(cluster), spec_(spec), sizes_(sizes), n_(static_cast<int>(cluster.workers().size())),
        g_(cluster.gpus_per_node()),
        hierarchical_(spec.cluster.allreduce == gbasim::AllReduce::kHierarchical),
        all_to_all_(resolve_ring_model(spec.cluster.all_to_all_model, n_)),
        step_barrier_(sg4::Barrier::create(n_)) {
    const RingModel ring = resolve_ring_model(spec.cluster.ring_model, n_);
    auto range = [](int first, int count, int stride) {
      std::vector<int> m;
      for (int i = 0; i < count; ++i) m.push_back(first + i * stride);
      return m;
    };
    if (hierarchical_) {
      for (int k = 0; k < n_ / g_; ++k)
        nodes_.emplace_back(cluster, range(k * g_, g_, 1), ring, "node-" + std::to_string(k) + "-");
      for (int i = 0; i < g_; ++i)
        ranks_.emplace_back(cluster, range(i, n_ / g_, g_), ring, "rank-" + std::to_string(i) + "-");
    } else {
      rings_.emplace_back(cluster, range(0, n_, 1), ring, "ring-");
    }
  }

  void worker(int w, int64_t steps) {
    RowDraws draws(sizes_, w);
    for (int64_t s = 0; s < steps; ++s) {
      step_barrier_->wait();  // the quorum rule: every worker starts step k together
      const std::vector<double> rows = n_ > 1 ? draws.draw(n_) : std::vector<double>{};
      if (n_ > 1) {
        all_to_all(w, rows, 8);
        step_barrier_->wait();
        all_to_all(w, rows, sizes_.row_bytes);
        step_barrier_->wait();
      }
      sg4::this_actor::execute(sizes_.flops * gbasim::step_noise(spec_.stragglers, w, s));
      if (n_ > 1) {
        all_to_all(w, rows, sizes_.row_bytes + 8);
        step_barrier_->wait();
        if (hierarchical_) {
          const int m = n_ / g_;
          nodes_[w / g_].run(w % g_, g_ - 1, sizes_.dense_bytes / g_);
          ranks_[w % g_].run(w / g_, 2 * (m - 1), sizes_.dense_bytes / (g_ * m));
          nodes_[w / g_].run(w % g_, g_ - 1, sizes_.dense_bytes / g_);
        } else {
          rings_[0].run(w, 2 * (n_ - 1), sizes_.dense_bytes / n_);
        }
      }
      ++worker_steps;
    }
  }

 private:
  // rows[v] rows to worker v, each `row_bytes`.
  void all_to_all(int w, const std::vector<double>& rows, double row_bytes) {
    std::vector<sg4::CommPtr> sends;
    sg4::Host* me = cluster_.workers()[w].host;
    auto send = [&](int v, double b) {
      if (v == w || b <= 0.0) return;
      sends.push_back(sg4::Comm::sendto_async(me, cluster_.workers()[v].host, b));
      ++messages;
    };
    if (all_to_all_ == RingModel::kAggregate) {
      double within = 0.0, across = 0.0;
      for (int v = 0; v < n_; ++v)
        if (v != w) (v / g_ == w / g_ ? within : across) += rows[v] * row_bytes;
      send((w + n_ / 2) % n_, across);
      send(w / g_ * g_ + (w % g_ + 1) % g_, within);
    } else {
      for (int v = 0; v < n_; ++v) send(v, rows[v] * row_bytes);
    }
    wait_all(sends);
  }

  const Cluster& cluster_;
  const ExperimentSpec& spec_;
  Sizes sizes_;
  int n_, g_;
  bool hierarchical_;
  RingModel all_to_all_;
  sg4::BarrierPtr step_barrier_;
  std::vector<Ring> nodes_, ranks_, rings_;
};

// The message sizes of the spec's run, measured before the engine starts: the model's dense
// values and table dimensions, the compute of a step, and the unique rows of the first
// kSampleBatches batches of a worker's shard (their mean and deviation).
Sizes measure(const ExperimentSpec& spec) {
  constexpr int kSampleBatches = 200;
  const gbasim::LoadedData data = gbasim::load_data(spec.data);
  const gbasim::Model model(spec.model, data.train.cardinalities, data.train.num_dense);
  std::vector<int64_t> dims;
  for (const auto& table : model.init_parameters(spec.seed).tables) dims.push_back(table.cols());
  gbasim::ShardIterator shard(data.train, 0, 1, spec.seed);
  double rows = 0.0, rows2 = 0.0, values = 0.0;
  for (int k = 0; k < kSampleBatches; ++k) {
    const gbasim::FieldGroups groups(shard.next(spec.training.local_batch).ids);
    double r = 0.0;
    for (size_t t = 0; t < dims.size(); ++t) {
      const auto unique = static_cast<double>(groups.unique_ids[t % groups.unique_ids.size()].size());
      r += unique;
      values += unique * static_cast<double>(dims[t]);
    }
    rows += r;
    rows2 += r * r;
  }
  Sizes sizes;
  sizes.rows = rows / kSampleBatches;
  sizes.rows_sd = std::sqrt(std::max(0.0, rows2 / kSampleBatches - sizes.rows * sizes.rows));
  sizes.row_bytes = 4.0 * values / rows;
  sizes.dense_bytes = 4.0 * static_cast<double>(model.num_dense_parameters());
  sizes.flops = spec.cost.flops_scale * model.flops_per_sample() *
                static_cast<double>(spec.training.local_batch);
  return sizes;
}

int run(int argc, char** argv) {
  std::string spec_path;
  std::vector<std::string> overrides;
  int64_t steps = 20;
  std::vector<char*> engine_argv{argv[0]};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--spec") spec_path = value();
    else if (a == "--set") overrides.push_back(value());
    else if (a == "--steps") steps = std::stoll(value());
    else if (a.rfind("--cfg=", 0) == 0) engine_argv.push_back(argv[i]);
    else throw std::invalid_argument("unknown argument " + a + " (see the comment atop bench/bare_engine.cc)");
  }
  if (spec_path.empty()) throw std::invalid_argument("--spec FILE is required");
  int engine_argc = static_cast<int>(engine_argv.size());
  engine_argv.push_back(nullptr);
  sg4::Engine engine(&engine_argc, engine_argv.data());
  const ExperimentSpec spec = gbasim::load_spec(spec_path, overrides);
  const Sizes sizes = measure(spec);
  gbasim::configure_network(spec.cluster);
  const gbasim::ReplayedTrace trace;
  const Cluster cluster(spec, trace);
  const int n = static_cast<int>(cluster.workers().size());
  const bool sync = spec.training.mode == gbasim::Mode::kSync;
  ServerPattern ps(cluster, spec, sizes);
  SyncPattern allreduce(cluster, spec, sizes);
  for (int w = 0; w < n; ++w) {
    sg4::Actor::create("worker-" + std::to_string(w), cluster.workers()[w].host, [&, w] {
      if (sync) allreduce.worker(w, steps);
      else ps.worker(w, steps);
    });
  }
  if (!sync) {  // notices flow to the server while it works, as sim/sharded_server.cc's
    auto server = sg4::Actor::create("ps", cluster.servers()[0], [&] { ps.server(); });
    server->daemonize();
    sg4::Mailbox::by_name("ps")->set_receiver(server);
  }
  const auto start = std::chrono::steady_clock::now();
  engine.run();
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  std::printf("bare_engine: rows a batch %.1f (sd %.1f), %.1f bytes a row, %.0f dense bytes\n",
              sizes.rows, sizes.rows_sd, sizes.row_bytes, sizes.dense_bytes);
  std::printf("bare_engine: %d workers, %lld worker steps, %lld messages, wall %.3f s in the engine, "
              "simulated %.4f s\n",
              n, static_cast<long long>(worker_steps), static_cast<long long>(messages), wall,
              sg4::Engine::get_clock());
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::cerr << "bare_engine: error: " << e.what() << "\n";
    return 2;
  }
}
