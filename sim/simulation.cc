#include "sim/simulation.h"

#include <random>
#include <simgrid/kernel/ProfileBuilder.hpp>
#include <simgrid/s4u.hpp>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <memory>
#include <sstream>
#include <tuple>

#include "base/clock.h"
#include "base/error.h"
#include "experiment/result.h"
#include "experiment/slowdown.h"
#include "strategies/update_rule.h"
#include "traces/pai_trace.h"
#include "traces/trace_mapping.h"
#include "traces/usage_trace.h"

namespace sg4 = simgrid::s4u;

namespace gbasim {
namespace {

// A message to the server: a worker's push, or (cluster.ps_one_queue) its admission request.
struct Arrival {
  int worker;
  int64_t token;
  Gradient gradient;
  bool request = false;
};

constexpr double kControlBytes = 64;  // a request or a "gradient pushed" notice


// Bytes a batch's message carries, one share per parameter-server shard: the dense values
// are split evenly, each embedding row goes to the shard its (table, row) hashes to. Sizes
// come from the gradient's row lists and the tables' dimensions, so that a timing-only
// gradient (rows without values) weighs what a real one would.
std::vector<double> shard_bytes(const Gradient& g, int64_t dense_values,
                                const std::vector<int64_t>& dims, int shards,
                                double bytes_per_value, double bytes_per_row_id) {
  std::vector<double> bytes(shards, bytes_per_value * static_cast<double>(dense_values) / shards);
  for (size_t t = 0; t < g.tables.size(); ++t) {
    const double row_bytes = bytes_per_value * static_cast<double>(dims[t]) + bytes_per_row_id;
    for (int32_t row : g.tables[t].rows) {
      bytes[(static_cast<uint64_t>(row) * 0x9e3779b97f4a7c15ULL + t) %
            static_cast<uint64_t>(shards)] += row_bytes;
    }
  }
  return bytes;
}

double total(const std::vector<double>& parts) {
  double sum = 0.0;
  for (double p : parts) sum += p;
  return sum;
}

int64_t updated_values(const Gradient& g, int64_t dense_values, const std::vector<int64_t>& dims) {
  int64_t n = dense_values;
  for (size_t t = 0; t < g.tables.size(); ++t)
    n += static_cast<int64_t>(g.tables[t].rows.size()) * dims[t];
  return n;
}

// A piecewise-constant factor of simulated time, as its changes (time, new value) in time
// order: at least those at or after `from` and before `until`; later ones may come too.
using ChangeSource =
    std::function<std::vector<std::pair<double, double>>(double from, double until)>;

// Episodes: 1 / slowdown inside them, 1 outside.
ChangeSource episode_source(std::function<std::vector<Episode>(double)> episodes) {
  return [episodes = std::move(episodes)](double from, double until) {
    std::vector<std::pair<double, double>> changes;
    for (const Episode& e : episodes(until)) {
      if (e.start < from) continue;
      changes.emplace_back(e.start, 1.0 / e.slowdown);
      changes.emplace_back(e.end, 1.0);
    }
    return changes;
  };
}

// Changes known in advance (a replayed trace), the first one at time 0.
ChangeSource fixed_source(std::vector<std::pair<double, double>> changes) {
  return [changes = std::move(changes)](double from, double until) {
    std::vector<std::pair<double, double>> window;
    for (const auto& c : changes)
      if (c.first >= from && c.first < until) window.push_back(c);
    return window;
  };
}

// A profile of `normal` times the product of the sources' factors (a host's speed profile
// takes multiples of its peak speed, a link's bandwidth profile bytes/s). SimGrid asks for
// more events as the run goes, so no horizon is fixed in advance: each call covers a window
// twice as long as the last, starting with `window_s`. An event dated 0 does not reach an
// activity started at 0, so changes at time 0 make no event: the resource must be created
// with the value they give (initial_factor).
simgrid::kernel::profile::Profile* product_profile(const std::string& name,
                                                   std::vector<ChangeSource> sources, double normal,
                                                   double window_s) {
  using simgrid::kernel::profile::DatedValue;
  struct State {
    std::vector<ChangeSource> sources;
    std::vector<double> factors;
    // Changes read but not yet emitted: (time, order read, source, value).
    std::vector<std::tuple<double, int64_t, size_t, double>> pending;
    int64_t read = 0;
    double generated_until = 0.0, last_event = 0.0, length = 0.0, value = 0.0;
  };
  auto state = std::make_shared<State>();
  state->factors.assign(sources.size(), 1.0);
  state->sources = std::move(sources);
  state->length = window_s;
  state->value = normal;
  auto more = [state, normal](std::vector<DatedValue>& events) {
    State& st = *state;
    const double until = st.generated_until + st.length;
    for (size_t i = 0; i < st.sources.size(); ++i) {
      for (const auto& [t, v] : st.sources[i](st.generated_until, until))
        st.pending.emplace_back(t, st.read++, i, v);
    }
    std::sort(st.pending.begin(), st.pending.end());
    size_t used = 0;
    // Dates are delays since the previous event; changes at one time make one event.
    while (used < st.pending.size() && std::get<0>(st.pending[used]) < until) {
      const double t = std::get<0>(st.pending[used]);
      for (; used < st.pending.size() && std::get<0>(st.pending[used]) == t; ++used)
        st.factors[std::get<2>(st.pending[used])] = std::get<3>(st.pending[used]);
      double value = normal;
      for (double f : st.factors) value *= f;
      if (t == 0.0) st.value = value;  // the resource was created with it
      if (value == st.value) continue;
      events.emplace_back(t - st.last_event, value);
      st.last_event = t;
      st.value = value;
    }
    st.pending.erase(st.pending.begin(), st.pending.begin() + static_cast<ptrdiff_t>(used));
    if (st.last_event < until) {
      events.emplace_back(until - st.last_event, st.value);
      st.last_event = until;
    }
    st.generated_until = until;
    st.length *= 2.0;
  };
  return simgrid::kernel::profile::ProfileBuilder::from_callback(name, more, -1);
}

// The product of the factors in force at time 0 (each replayed trace's first change is at 0).
double initial_factor(const std::vector<std::vector<std::pair<double, double>>>& changes,
                      int worker) {
  return changes.empty() ? 1.0 : changes[worker].front().second;
}

class Simulation {
 public:
  Simulation(const ExperimentSpec& spec, const std::function<void(const ProgressPoint&)>& on_point,
             SimulationCost& cost)
      : spec_(spec),
        on_point_(on_point),
        data_(load_data(spec.data)),
        model_(spec.model, data_.train.cardinalities, data_.train.num_dense),
        params_(model_.init_parameters(spec.seed)),
        optimizer_(spec.optimizer, params_),
        rule_(make_rule(spec.training)),
        n_(spec.training.num_workers),
        max_samples_(spec.budget.max_samples > 0 ? spec.budget.max_samples : data_.train.size()),
        timing_only_(spec.simulation.timing_only),
        dense_values_(model_.num_dense_parameters()),
        cost_(cost) {
    for (int w = 0; w < n_; ++w) shards_.emplace_back(data_.train, w, n_, spec.seed);
    if (spec.evaluation.test_samples > 0)
      data_.test = first_rows(data_.test, spec.evaluation.test_samples);
    for (const auto& table : params_.tables) dims_.push_back(table.cols());
    workers_.resize(n_);
    load_trace();
    if (spec.switching.enabled())
      switcher_.emplace(spec.training, switch_policy(spec.switching), spec.training.mode);
  }

  nlohmann::ordered_json run();

 private:
  void load_trace();
  void build_platform();
  // Runs `flops` for the calling actor: on its own host (with `threads` cores), or on the
  // shared machine (one core) when there is one.
  void run_flops(double flops, int threads = 1);
  // Another tenant's work on `worker`'s host: it computes for duty x period of every period.
  void tenant(int worker);
  // The budget is checked when an update is applied, so that all-reduce workers stop
  // together at a step boundary.
  bool should_stop() const { return stop_; }
  // The rule in force: the switching controller when there is one.
  Admission admit(int worker) {
    return switcher_ ? switcher_->admit(worker) : rule_->admit(worker);
  }
  std::optional<Gradient> receive(int worker, int64_t token, Gradient gradient);
  int64_t global_step() const {
    return switcher_ ? switcher_->global_step() : rule_->global_step();
  }
  Mode mode_now() const { return switcher_ ? switcher_->mode() : spec_.training.mode; }
  // Blocks until the rule admits `worker` or the run stops; false when it stopped. `mode`
  // is the mode in force at the admission.
  bool wait_for_admission(int worker, Admission& admission, Mode& mode);
  // cluster.ps_one_queue: the request goes into the server's queue; false when it answers stop.
  bool request_admission(int worker, Admission& admission);
  // The server serves a request: admits (computing the worker's gradient on the parameters
  // of its token and sending the pull) or stops it, or leaves it waiting; false then.
  bool serve_request(int worker);
  // Moves the model between the all-reduce workers and the parameter servers (a switch).
  void move_model(const ModelMove& move);
  void gradient_for(int worker, Gradient& grad);
  void gradient_of(const Batch& batch, Gradient& grad);
  void compute(int worker, int64_t step);
  void applied(const Gradient& update);
  void worker(int worker);
  void ps_step(int worker, int64_t step, const Admission& admission, Gradient& grad);
  void allreduce_step(int worker, int64_t step, const Admission& admission, Gradient& grad);
  void parameter_server();
  void evaluator();
  void evaluate_now();

  struct WorkerStats {
    sg4::Host* host = nullptr;
    double speed = 0.0, persistent = 1.0;
    int64_t steps = 0;
    double compute_s = 0.0, comm_s = 0.0, wait_s = 0.0;
    std::vector<double> step_ends;
  };

  const ExperimentSpec& spec_;
  std::function<void(const ProgressPoint&)> on_point_;
  LoadedData data_;
  Model model_;
  Parameters params_;
  Optimizer optimizer_;
  std::unique_ptr<UpdateRule> rule_;
  std::optional<SwitchingController> switcher_;  // when training.switching is enabled
  int n_;
  int64_t max_samples_;
  std::vector<ShardIterator> shards_;
  std::vector<WorkerStats> workers_;
  std::vector<sg4::Host*> ps_hosts_;
  sg4::MutexPtr mutex_;
  sg4::ConditionVariablePtr updated_;
  bool stop_ = false;
  int64_t applied_samples_ = 0;
  std::vector<ProgressPoint> curve_;
  double time_to_auc_ = -1.0;
  // All-reduce: each worker's sparse block size this step, and the ring's mailboxes.
  std::vector<double> sparse_bytes_;
  std::vector<sg4::Mailbox*> ring_;
  std::vector<sg4::Mailbox*> acks_;  // the server's acknowledgement of each worker's push
  // cluster.ps_one_queue (parameter-server modes): each worker's batch, drawn when it asks,
  // and its gradient, computed when the server admits it; the server's answers.
  bool one_queue_ = false;
  std::vector<Batch> requested_;
  std::vector<Gradient> granted_;
  std::vector<sg4::Mailbox*> grants_;
  bool timing_only_;
  int64_t dense_values_;
  std::vector<int64_t> dims_;  // columns of each table
  int64_t messages_ = 0;
  SimulationCost& cost_;
  std::optional<TraceReplay> replay_;
  // A usage trace: each worker's machine and its speed and bandwidth changes.
  std::vector<std::string> usage_machines_;
  std::vector<std::vector<std::pair<double, double>>> speed_changes_, bandwidth_changes_;
  bool usage_wraps_ = false;
  // cluster.shared_cores: the one machine every rank computes on, and each worker's
  // slowdowns, slept as real ranks do.
  sg4::Host* machine_ = nullptr;
  std::vector<RankSlowdown> rank_slowdowns_;
  // cluster.time_slice_s: the machine's cores, taken for a slice at a time in arrival order.
  sg4::SemaphorePtr cores_;
  double slice_flops_ = 0.0;
  // Switching: a model move in progress holds every admission back.
  bool moving_ = false;
  std::optional<ModelMove> owed_move_;  // taken from the controller, to be made
  nlohmann::ordered_json moves_ = nlohmann::ordered_json::array();
  nlohmann::ordered_json status_ = nlohmann::ordered_json::array();  // [time, mode, ratio]
};

void Simulation::load_trace() {
  const StragglerConfig& g = spec_.stragglers;
  if (g.trace_format.empty()) return;
  try {
    if (g.trace_format == "pai") {
      replay_.emplace(read_pai_trace(g.trace_path), g.trace_mapping, g.trace_machines,
                      g.trace_offset, n_, spec_.seed);
      return;
    }
    UsageReplay replay = plan_usage_replay(g, n_, spec_.seed);
    usage_machines_ = std::move(replay.machines);
    usage_wraps_ = replay.wraps;
    speed_changes_ = std::move(replay.speed);
    bandwidth_changes_ = std::move(replay.bandwidth);
  } catch (const InputError& e) {
    throw InputError(std::string("'stragglers.trace': ") + e.what());
  }
}

void Simulation::build_platform() {
  const ClusterSpec& c = spec_.cluster;
  auto* zone = sg4::create_star_zone("cluster");
  const StragglerConfig& g = spec_.stragglers;
  auto connect = [&](sg4::Host* host, int worker) {
    const double initial = worker >= 0 ? initial_factor(bandwidth_changes_, worker) : 1.0;
    auto* link =
        zone->create_split_duplex_link(host->get_name() + "-nic", c.nic_bandwidth * initial)
            ->set_latency(c.nic_latency);
    std::vector<ChangeSource> factors;
    if (worker >= 0 && g.network_rate_per_s > 0.0)
      factors.push_back(
          episode_source([g, worker](double h) { return network_episodes(g, worker, h); }));
    if (worker >= 0 && !bandwidth_changes_.empty())
      factors.push_back(fixed_source(bandwidth_changes_[worker]));
    if (!factors.empty()) {
      link->set_bandwidth_profile(
          product_profile(host->get_name() + "-network", std::move(factors), c.nic_bandwidth,
                          g.network_rate_per_s > 0.0 ? 10.0 / g.network_rate_per_s : 10.0));
    }
    link->seal();
    zone->add_route(host->get_netpoint(), nullptr, nullptr, nullptr,
                    {{link, sg4::LinkInRoute::Direction::UP}}, true);
  };
  std::vector<double> speeds;
  for (const auto& group : c.worker_groups)
    for (int i = 0; i < static_cast<int>(group[0]); ++i) speeds.push_back(group[1]);
  if (speeds.empty()) speeds.assign(n_, c.worker_speed);
  const std::vector<double> persistent = persistent_slowdowns(spec_.stragglers, n_);
  const bool shared = c.shared_cores > 0;
  if (shared) {
    machine_ = zone->create_host("machine", c.worker_speed)->set_core_count(c.shared_cores);
    machine_->seal();
    for (int w = 0; w < n_; ++w) rank_slowdowns_.emplace_back(spec_, w);
    if (c.time_slice_s > 0.0) {
      cores_ = sg4::Semaphore::create(static_cast<unsigned>(c.shared_cores));
      slice_flops_ = c.time_slice_s * c.worker_speed;
    }
  }
  for (int w = 0; w < n_; ++w) {
    WorkerStats& s = workers_[w];
    s.persistent = persistent[w];
    s.speed = speeds[w] / persistent[w];
    const double initial = initial_factor(speed_changes_, w);
    s.host = zone->create_host("worker-" + std::to_string(w), s.speed * initial);
    std::vector<ChangeSource> factors;
    if (g.transient_rate_per_s > 0.0)
      factors.push_back(episode_source([g, w](double h) { return transient_episodes(g, w, h); }));
    if (!speed_changes_.empty()) factors.push_back(fixed_source(speed_changes_[w]));
    if (!factors.empty() && !shared) {
      s.host->set_speed_profile(
          product_profile(s.host->get_name() + "-speed", std::move(factors), 1.0 / initial,
                          g.transient_rate_per_s > 0.0 ? 10.0 / g.transient_rate_per_s : 10.0));
    }
    s.host->seal();
    connect(s.host, w);
  }
  for (int p = 0; p < c.ps_shards; ++p) {
    auto* host =
        zone->create_host("ps-" + std::to_string(p), c.ps_speed)->set_core_count(c.ps_cores);
    host->seal();
    connect(host, -1);
    ps_hosts_.push_back(host);
  }
  zone->seal();
}

bool Simulation::wait_for_admission(int worker, Admission& admission, Mode& mode) {
  const double start = sg4::Engine::get_clock();
  std::unique_lock lock(*mutex_);
  while (!should_stop()) {
    if (!moving_) {
      admission = admit(worker);
      if (admission.admitted) break;
    }
    updated_->wait(lock);
  }
  mode = mode_now();
  workers_[worker].wait_s += sg4::Engine::get_clock() - start;
  return admission.admitted && !should_stop();
}

// Called under the mutex. A switch that this gradient completes leaves a model move owed,
// which the calling actor makes (move_model) before anyone is admitted again.
std::optional<Gradient> Simulation::receive(int worker, int64_t token, Gradient gradient) {
  if (!switcher_) return rule_->receive(worker, token, std::move(gradient));
  std::optional<Gradient> update = switcher_->receive(worker, token, std::move(gradient));
  if (auto move = switcher_->take_model_move()) {
    moving_ = true;
    owed_move_ = move;
  }
  return update;
}

// The model goes whole: from worker 0 (every all-reduce worker holds it) to the server
// shards, each taking its share; or from the shards to every worker.
void Simulation::move_model(const ModelMove& move) {
  double values = static_cast<double>(dense_values_);
  for (const auto& table : params_.tables) values += static_cast<double>(table.size());
  const double bytes = 4.0 * values;
  const double start = sg4::Engine::get_clock();
  const int shards = static_cast<int>(ps_hosts_.size());
  std::vector<sg4::CommPtr> comms;
  const bool to_servers = move.direction == ModelMove::Direction::kToParameterServers;
  for (int p = 0; p < shards; ++p) {
    if (to_servers) {
      comms.push_back(sg4::Comm::sendto_async(workers_[0].host, ps_hosts_[p], bytes / shards));
    } else {
      for (int w = 0; w < n_; ++w)
        comms.push_back(sg4::Comm::sendto_async(ps_hosts_[p], workers_[w].host, bytes / shards));
    }
  }
  for (auto& comm : comms) comm->wait();
  messages_ += static_cast<int64_t>(comms.size());
  moves_.push_back({{"global_step", move.global_step},
                    {"direction", to_servers ? "to_parameter_servers" : "to_workers"},
                    {"start", start},
                    {"end", sg4::Engine::get_clock()},
                    {"bytes", bytes * (to_servers ? 1 : n_)}});
  std::unique_lock lock(*mutex_);
  moving_ = false;
  updated_->notify_all();
}

// The real gradient of the worker's next batch, or in timing-only mode just its rows (the
// unique ids of each field, in the model's table order), which is all the timing needs.
void Simulation::gradient_for(int w, Gradient& grad) {
  gradient_of(shards_[w].next(spec_.training.local_batch), grad);
}

void Simulation::gradient_of(const Batch& batch, Gradient& grad) {
  if (!timing_only_) {
    const auto start = WallClock::now();
    model_.forward_backward(params_, batch, grad);
    cost_.math_s += seconds_since(start);
    return;
  }
  const FieldGroups groups(batch.ids);
  grad = Gradient{};
  grad.samples = batch.size();
  grad.tables.resize(dims_.size());
  for (size_t t = 0; t < dims_.size(); ++t) {
    grad.tables[t].rows = groups.unique_ids[t % groups.unique_ids.size()];
    grad.tables[t].values.resize(static_cast<Eigen::Index>(grad.tables[t].rows.size()), 0);
  }
}

void Simulation::compute(int worker, int64_t step) {
  const double base = spec_.cost.flops_scale * model_.flops_per_sample() *
                      static_cast<double>(spec_.training.local_batch);
  const double start = sg4::Engine::get_clock();
  if (machine_ != nullptr) {
    // As a real rank: compute, then sleep (slowdown - 1) x the time it took.
    run_flops(base);
    const double took = sg4::Engine::get_clock() - start;
    const double slowdown = rank_slowdowns_[worker].factor(step, start);
    if (slowdown > 1.0) sg4::this_actor::sleep_for((slowdown - 1.0) * took);
  } else {
    sg4::this_actor::execute(base * step_noise(spec_.stragglers, worker, step) *
                             (replay_ ? replay_->slowdown(worker, step) : 1.0));
  }
  workers_[worker].compute_s += sg4::Engine::get_clock() - start;
}

void Simulation::run_flops(double flops, int threads) {
  if (cores_) {  // no more computations at once than cores, each at a core's speed
    for (double left = flops; left > 0.0; left -= slice_flops_) {
      cores_->acquire();
      sg4::this_actor::exec_init(std::min(left, slice_flops_))->set_host(machine_)->wait();
      cores_->release();
    }
  } else if (machine_ != nullptr) {
    sg4::this_actor::exec_init(flops)->set_host(machine_)->wait();
  } else if (threads > 1) {
    sg4::this_actor::exec_init(flops)->set_thread_count(threads)->wait();
  } else {
    sg4::this_actor::execute(flops);
  }
}

void Simulation::applied(const Gradient& update) {
  if (!timing_only_) {
    const auto start = WallClock::now();
    optimizer_.apply(params_, update);
    cost_.math_s += seconds_since(start);
  }
  applied_samples_ += update.samples;
  stop_ = applied_samples_ >= max_samples_ ||
          (spec_.budget.max_time_s > 0.0 && sg4::Engine::get_clock() >= spec_.budget.max_time_s);
  updated_->notify_all();
}

// One worker's steps, each in the mode in force when it is admitted.
void Simulation::worker(int w) {
  WorkerStats& me = workers_[w];
  Gradient grad;
  for (int64_t step = 0;; ++step) {
    Admission admission;
    Mode mode;
    if (one_queue_) {
      if (!request_admission(w, admission)) break;
      mode = spec_.training.mode;
    } else if (!wait_for_admission(w, admission, mode)) {
      break;
    }
    const double compute_before = me.compute_s;
    if (mode == Mode::kSync)
      allreduce_step(w, step, admission, grad);
    else
      ps_step(w, step, admission, grad);
    grad = Gradient{};
    ++me.steps;
    me.step_ends.push_back(sg4::Engine::get_clock());
    if (switcher_) {
      std::unique_lock lock(*mutex_);
      switcher_->observe_step(w, me.compute_s - compute_before, sg4::Engine::get_clock());
    }
  }
}

// pull, compute, push: the gradient is computed at admission on the parameters of the
// token, since the pull returns exactly those parameters.
void Simulation::ps_step(int w, int64_t step, const Admission& admission, Gradient& grad) {
  WorkerStats& me = workers_[w];
  const int shards = static_cast<int>(ps_hosts_.size());
  auto* ps = sg4::Mailbox::by_name("ps");
  std::vector<sg4::CommPtr> comms;
  if (one_queue_) {  // the server has admitted the request, computed the gradient, sent the pull
    grad = std::move(granted_[w]);
  } else {
    gradient_for(w, grad);
    const double start = sg4::Engine::get_clock();
    const std::vector<double> pull = shard_bytes(grad, dense_values_, dims_, shards, 4.0, 0.0);
    const std::vector<double> request = shard_bytes(grad, dense_values_, dims_, shards, 0.0, 8.0);
    for (int p = 0; p < shards; ++p)
      comms.push_back(sg4::Comm::sendto_async(me.host, ps_hosts_[p], kControlBytes + request[p]));
    for (auto& comm : comms) comm->wait();
    comms.clear();
    for (int p = 0; p < shards; ++p)
      comms.push_back(sg4::Comm::sendto_async(ps_hosts_[p], me.host, pull[p]));
    messages_ += 3 * shards + 2;  // requests, pulls, pushes, the notice and its acknowledgement
    for (auto& comm : comms) comm->wait();
    me.comm_s += sg4::Engine::get_clock() - start;
  }

  compute(w, step);

  const double start = sg4::Engine::get_clock();
  const std::vector<double> push = shard_bytes(grad, dense_values_, dims_, shards, 4.0, 8.0);
  if (one_queue_) {
    // One message into the server's queue. As a large MPI message (rendezvous), it returns
    // once the server has taken it in (its notice, sent then), so that the worker's next
    // request queues behind what arrived meanwhile.
    ps->put(new Arrival{w, admission.token, std::move(grad)}, kControlBytes + push[0]);
    acks_[w]->get_unique<int>();
    me.comm_s += sg4::Engine::get_clock() - start;
    return;
  }
  comms.clear();
  for (int p = 0; p < shards; ++p)
    comms.push_back(sg4::Comm::sendto_async(me.host, ps_hosts_[p], push[p]));
  for (auto& comm : comms) comm->wait();
  // The push returns once the update is done (its acknowledgement), so the worker is never
  // admitted again while its token is still out.
  ps->put(new Arrival{w, admission.token, std::move(grad)}, kControlBytes);
  acks_[w]->get_unique<int>();
  me.comm_s += sg4::Engine::get_clock() - start;
}

bool Simulation::request_admission(int w, Admission& admission) {
  WorkerStats& me = workers_[w];
  const double start = sg4::Engine::get_clock();
  requested_[w] = shards_[w].next(spec_.training.local_batch);
  // The request carries the batch's row ids, table by table.
  const FieldGroups groups(requested_[w].ids);
  double row_ids = 0.0;
  for (size_t t = 0; t < dims_.size(); ++t)
    row_ids += static_cast<double>(groups.unique_ids[t % groups.unique_ids.size()].size());
  // One message each way, as gbasim-mpi's: the request into the server's queue, then its
  // answer with the parameters.
  sg4::Mailbox::by_name("ps")->put(new Arrival{w, 0, Gradient{}, true},
                                   kControlBytes + 8.0 * row_ids);
  admission = *grants_[w]->get_unique<Admission>();
  me.comm_s += sg4::Engine::get_clock() - start;
  messages_ += 3;  // the request, the grant with the pull, the push
  return admission.admitted;
}

bool Simulation::serve_request(int w) {
  Admission admission;
  {
    std::unique_lock lock(*mutex_);
    if (!should_stop()) {
      admission = admit(w);
      if (!admission.admitted) return false;
      gradient_of(requested_[w], granted_[w]);  // on the parameters of the token: now
    }
  }
  double bytes = kControlBytes;
  if (admission.admitted)
    bytes += total(shard_bytes(granted_[w], dense_values_, dims_, 1, 4.0, 0.0));
  // The answer with the parameters: the server sends it itself and goes on once it is
  // through, as gbasim-mpi's does (a blocking send); so grants go out one after another.
  grants_[w]->put(new Admission(admission), bytes);
  return true;
}

// Gradients are taken in one at a time. An update becomes visible at once (so that every
// token names the parameters a worker then computes on); the shards' optimizer work (in
// parallel on equal shares) is then charged before the push is acknowledged. With one queue
// the push is acknowledged when taken in, requests come through the same queue, and those
// the rule refused are served again after each update.
void Simulation::parameter_server() {
  auto* ps = sg4::Mailbox::by_name("ps");
  const int shards = static_cast<int>(ps_hosts_.size());
  std::deque<int> waiting;  // one queue: requests the rule refused, tried after each update
  // cluster.ps_service_seed: the messages that have arrived, one of them served at random.
  std::vector<std::unique_ptr<Arrival>> arrived;
  Rng pick = service_order_rng(static_cast<uint64_t>(spec_.cluster.ps_service_seed));
  while (true) {
    std::unique_ptr<Arrival> arrival;
    if (one_queue_ && spec_.cluster.ps_service_seed > 0) {
      if (arrived.empty()) arrived.push_back(ps->get_unique<Arrival>());
      while (ps->ready()) arrived.push_back(ps->get_unique<Arrival>());
      const auto chosen =
          arrived.begin() + static_cast<ptrdiff_t>(
                                std::uniform_int_distribution<size_t>(0, arrived.size() - 1)(pick));
      arrival = std::move(*chosen);
      arrived.erase(chosen);
    } else {
      arrival = ps->get_unique<Arrival>();
    }
    if (arrival->request) {
      if (!serve_request(arrival->worker)) waiting.push_back(arrival->worker);
      continue;
    }
    if (one_queue_) {  // taken in: the push returns
      acks_[arrival->worker]->put_init(new int(0), kControlBytes)->detach([](void* p) {
        delete static_cast<int*>(p);
      });
    }
    double own = spec_.cost.server_flops_per_push;
    // Modes that sum several gradients into one update merge this one's rows into the sum.
    const Mode mode = mode_now();
    if (mode == Mode::kGBA || mode == Mode::kBackupWorkers) {
      own += spec_.cost.merge_flops_per_value *
             static_cast<double>(updated_values(arrival->gradient, dense_values_, dims_));
    }
    if (own > 0.0) run_flops(own);
    std::optional<Gradient> update;
    {
      std::unique_lock lock(*mutex_);
      update = receive(arrival->worker, arrival->token, std::move(arrival->gradient));
      if (update) applied(*update);
    }
    if (owed_move_) {  // the last gradient in flight of a switch back to sync
      const ModelMove move = *owed_move_;
      owed_move_.reset();
      move_model(move);
    }
    if (update) {
      const double flops = spec_.cost.update_flops_per_value *
                           static_cast<double>(updated_values(*update, dense_values_, dims_)) /
                           shards;
      run_flops(flops, spec_.cluster.ps_cores);
    }
    if (one_queue_) {
      for (size_t i = waiting.size(); i-- > 0;) {  // each waiting worker once, in order
        const int v = waiting.front();
        waiting.pop_front();
        if (!serve_request(v)) waiting.push_back(v);
      }
      continue;
    }
    acks_[arrival->worker]->put_init(new int(0), kControlBytes)->detach([](void* p) {
      delete static_cast<int*>(p);
    });
  }
}

// compute, ring all-reduce of the dense gradient (2(N - 1) steps of size / N) and ring
// all-gather of the sparse rows (N - 1 steps), local optimizer work, then the step.
void Simulation::allreduce_step(int w, int64_t step, const Admission& admission, Gradient& grad) {
  WorkerStats& me = workers_[w];
  gradient_for(w, grad);
  sparse_bytes_[w] = total(shard_bytes(grad, 0, dims_, 1, 4.0, 8.0));
  compute(w, step);

  const double start = sg4::Engine::get_clock();
  if (n_ > 1) {
    auto* next = ring_[(w + 1) % n_];
    auto pass = [&](double bytes) {
      auto send = next->put_async(new int(w), bytes);
      ring_[w]->get_unique<int>();
      send->wait();
    };
    const double chunk = 4.0 * static_cast<double>(dense_values_) / n_;
    for (int i = 0; i < 2 * (n_ - 1); ++i) pass(chunk);
    for (int i = 0; i < n_ - 1; ++i) pass(sparse_bytes_[(w - i + n_) % n_]);
    messages_ += 3 * (n_ - 1);
  }
  me.comm_s += sg4::Engine::get_clock() - start;
  run_flops(spec_.cost.update_flops_per_value *
            static_cast<double>(updated_values(grad, dense_values_, dims_)));
  std::optional<ModelMove> move;
  {
    std::unique_lock lock(*mutex_);
    if (auto update = receive(w, admission.token, std::move(grad))) applied(*update);
    move.swap(owed_move_);
  }
  if (move) move_model(*move);  // the last gradient of the sync step before a switch
}

void Simulation::tenant(int w) {
  const StragglerConfig& g = spec_.stragglers;
  const double busy_flops = g.colocated_duty * g.colocated_period_s * workers_[w].speed;
  while (true) {
    run_flops(busy_flops);  // shares the host's core fairly with the worker
    sg4::this_actor::sleep_for((1.0 - g.colocated_duty) * g.colocated_period_s);
  }
}

void Simulation::evaluate_now() {
  const auto start = WallClock::now();
  const Evaluation e = evaluate(model_, params_, data_.test);
  cost_.evaluation_s += seconds_since(start);
  const ProgressPoint point{sg4::Engine::get_clock(), global_step(), applied_samples_, e.auc,
                            e.logloss};
  if (switcher_) {
    status_.push_back({point.time, mode_name(switcher_->mode()), switcher_->straggler_ratio()});
  }
  curve_.push_back(point);
  if (time_to_auc_ < 0.0 && e.auc >= spec_.evaluation.target_auc) time_to_auc_ = point.time;
  if (on_point_) on_point_(point);
}

void Simulation::evaluator() {
  while (true) {
    sg4::this_actor::sleep_for(spec_.evaluation.interval_s);
    evaluate_now();
  }
}

nlohmann::ordered_json Simulation::run() {
  build_platform();
  mutex_ = sg4::Mutex::create();
  updated_ = sg4::ConditionVariable::create();
  const bool allreduce = spec_.training.mode == Mode::kSync && !switcher_;
  sparse_bytes_.assign(n_, 0.0);
  for (int w = 0; w < n_; ++w) {
    ring_.push_back(sg4::Mailbox::by_name("ring-" + std::to_string(w)));
    acks_.push_back(sg4::Mailbox::by_name("ack-" + std::to_string(w)));
    grants_.push_back(sg4::Mailbox::by_name("grant-" + std::to_string(w)));
  }
  one_queue_ = spec_.cluster.ps_one_queue && !allreduce;
  requested_.resize(n_);
  granted_.resize(n_);
  for (int w = 0; w < n_; ++w) {
    sg4::Actor::create("worker-" + std::to_string(w), workers_[w].host, [this, w] { worker(w); });
  }
  if (!allreduce) {
    auto ps = sg4::Actor::create("ps", ps_hosts_[0], [this] { parameter_server(); });
    ps->daemonize();
    // One queue: messages flow to the server while it works, as MPI's do, so that it is
    // busy with its work and not with their latency.
    if (one_queue_) sg4::Mailbox::by_name("ps")->set_receiver(ps);
  }
  const std::vector<bool> colocated = colocated_workers(spec_.stragglers, n_);
  for (int w = 0; w < n_; ++w) {
    if (colocated[w]) {
      sg4::Actor::create("tenant-" + std::to_string(w), workers_[w].host, [this, w] {
        tenant(w);
      })->daemonize();
    }
  }
  if (!timing_only_) {
    sg4::Actor::create("evaluator", ps_hosts_[0], [this] { evaluator(); })->daemonize();
    evaluate_now();
  }
  const auto start = WallClock::now();
  sg4::Engine::get_instance()->run();
  cost_.wall_s = seconds_since(start);
  cost_.messages = messages_;
  if (!timing_only_ && (curve_.back().time < sg4::Engine::get_clock() ||
                        curve_.back().global_step != global_step())) {
    evaluate_now();
  }
  // Timing-only runs have no snapshots: the curve ends with the clock alone.
  const ProgressPoint last = timing_only_
                                 ? ProgressPoint{sg4::Engine::get_clock(), global_step(),
                                                 applied_samples_, std::nan(""), std::nan("")}
                                 : curve_.back();
  for (const auto& w : workers_) {
    if (allreduce && w.steps != workers_[0].steps)
      throw std::logic_error("simulation: workers ended out of step");
  }

  const RuleMetrics m = switcher_ ? switcher_->metrics() : rule_->metrics();
  nlohmann::ordered_json doc;
  doc["spec"] = spec_to_json(spec_);
  nlohmann::ordered_json summary;
  summary["mode"] = mode_name(spec_.training.mode);
  summary["target_auc"] = spec_.evaluation.target_auc;
  summary["time_to_auc"] =
      time_to_auc_ >= 0.0 ? nlohmann::ordered_json(time_to_auc_) : nlohmann::ordered_json();
  summary["final_auc"] = timing_only_ ? nlohmann::ordered_json() : nlohmann::ordered_json(last.auc);
  summary["final_logloss"] =
      timing_only_ ? nlohmann::ordered_json() : nlohmann::ordered_json(last.logloss);
  if (data_.bayes_auc) summary["bayes_auc"] = *data_.bayes_auc;
  summary["simulated_time"] = last.time;
  summary["global_steps"] = global_step();
  summary["samples"] = applied_samples_;
  put_rule_metrics(m, summary);
  summary["flops_per_sample"] = spec_.cost.flops_scale * model_.flops_per_sample();
  doc["summary"] = summary;
  nlohmann::ordered_json curve = nlohmann::ordered_json::array();
  for (const auto& p : curve_) {
    curve.push_back({{"time", p.time},
                     {"global_step", p.global_step},
                     {"samples", p.samples},
                     {"test_auc", p.auc},
                     {"test_logloss", p.logloss}});
  }
  doc["curve"] = curve;
  doc["staleness_histogram"] = staleness_histogram(m);
  nlohmann::ordered_json workers = nlohmann::ordered_json::array();
  auto listed = [&](const std::vector<Episode>& episodes) {
    nlohmann::ordered_json list = nlohmann::ordered_json::array();
    for (const Episode& e : episodes) list.push_back({e.start, e.end, e.slowdown});
    return list;
  };
  for (int w = 0; w < n_; ++w) {
    const WorkerStats& s = workers_[w];
    workers.push_back(
        {{"worker", w},
         {"speed", s.speed},
         // One step's compute on this host undisturbed (no noise, episodes or trace).
         {"nominal_step_s", spec_.cost.flops_scale * model_.flops_per_sample() *
                                static_cast<double>(spec_.training.local_batch) / s.speed},
         {"persistent_slowdown", s.persistent},
         {"colocated", static_cast<bool>(colocated[w])},
         {"steps", s.steps},
         {"compute_s", s.compute_s},
         {"comm_s", s.comm_s},
         {"wait_s", s.wait_s},
         {"transient_episodes", listed(transient_episodes(spec_.stragglers, w, last.time))},
         {"network_episodes", listed(network_episodes(spec_.stragglers, w, last.time))},
         {"step_ends", s.step_ends}});
  }
  doc["workers"] = workers;
  if (replay_) {
    doc["trace"] = {{"path", spec_.stragglers.trace_path},
                    {"assignment", replay_->assignment()},
                    {"wraps", replay_->wraps()}};
  } else if (!usage_machines_.empty()) {
    doc["trace"] = {{"path", spec_.stragglers.trace_path},
                    {"assignment", usage_machines_},
                    {"wraps", usage_wraps_}};
  }
  if (switcher_) {
    nlohmann::ordered_json events = nlohmann::ordered_json::array();
    for (const SwitchEvent& e : switcher_->events()) {
      events.push_back({{"global_step", e.global_step},
                        {"time", e.time},
                        {"from", mode_name(e.from)},
                        {"to", mode_name(e.to)},
                        {"reason", e.reason},
                        {"straggler_ratio", e.straggler_ratio}});
    }
    doc["switching"] = {{"initial_mode", mode_name(spec_.training.mode)},
                        {"final_mode", mode_name(switcher_->mode())},
                        {"events", events},
                        {"moves", moves_},
                        {"status", status_}};
  }
  return doc;
}

}  // namespace

nlohmann::ordered_json run_simulation(const ExperimentSpec& spec,
                                      const std::function<void(const ProgressPoint&)>& on_point,
                                      SimulationCost* cost) {
  if (spec.cluster.network_model == "CM02") {
    // Plain latency + size / bandwidth timing, as analytic checks expect.
    sg4::Engine::set_config("network/model:CM02");
    sg4::Engine::set_config("network/crosstraffic:0");
  }
  SimulationCost ignored;
  Simulation simulation(spec, on_point, cost != nullptr ? *cost : ignored);
  return simulation.run();
}

}  // namespace gbasim
