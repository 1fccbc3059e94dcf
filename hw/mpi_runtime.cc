#include "hw/mpi_runtime.h"

#include <mpi.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <deque>
#include <fstream>
#include <iostream>
#include <optional>
#include <thread>

#include "base/clock.h"
#include "base/error.h"
#include "base/files.h"
#include "models/layers.h"
#include "models/optimizer.h"
#include "experiment/run_record.h"
#include "experiment/slowdown.h"
#include "strategies/rule_in_force.h"
#include "strategies/update_rule.h"

namespace gbasim {
namespace {

constexpr int kToServer = 1, kToWorker = 2;
enum MessageKind : int32_t { kAdmit = 1, kPush = 2, kGrant = 3, kStop = 4, kSyncNow = 5 };

// A flat message: values appended and read back in the same order.
class Buffer {
 public:
  template <class T>
  void put(const T* data, size_t count) {
    const size_t at = bytes_.size();
    bytes_.resize(at + count * sizeof(T));
    if (count) std::memcpy(bytes_.data() + at, data, count * sizeof(T));
  }
  template <class T>
  void put(T value) {
    put(&value, 1);
  }
  template <class T>
  void get(T* data, size_t count) {
    if (read_ + count * sizeof(T) > bytes_.size()) throw std::runtime_error("short MPI message");
    if (count) std::memcpy(data, bytes_.data() + read_, count * sizeof(T));
    read_ += count * sizeof(T);
  }
  template <class T>
  T get() {
    T value;
    get(&value, 1);
    return value;
  }
  std::vector<char>& bytes() { return bytes_; }

 private:
  std::vector<char> bytes_;
  size_t read_ = 0;
};

void send(const Buffer& b, int to, int tag) {
  auto& bytes = const_cast<Buffer&>(b).bytes();
  MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, to, tag, MPI_COMM_WORLD);
}

// Receives the next message with `tag` (from `from`, or anyone), polling with short sleeps
// rather than spinning, so that a waiting rank leaves its core to the ranks that compute
// (the job may run oversubscribed).
Buffer receive(int from, int tag, int* source = nullptr, double* idle_s = nullptr) {
  MPI_Status status;
  int ready = 0;
  const auto start = WallClock::now();
  for (;;) {
    MPI_Iprobe(from, tag, MPI_COMM_WORLD, &ready, &status);
    if (ready) break;
    std::this_thread::sleep_for(std::chrono::microseconds(20));
  }
  if (idle_s) *idle_s += seconds_since(start);
  int count = 0;
  MPI_Get_count(&status, MPI_BYTE, &count);
  Buffer b;
  b.bytes().resize(static_cast<size_t>(count));
  MPI_Recv(b.bytes().data(), count, MPI_BYTE, status.MPI_SOURCE, tag, MPI_COMM_WORLD,
           MPI_STATUS_IGNORE);
  if (source) *source = status.MPI_SOURCE;
  return b;
}

void put_rows(Buffer& b, const SparseRows& s) {
  b.put<int64_t>(static_cast<int64_t>(s.rows.size()));
  b.put<int64_t>(s.values.cols());
  b.put(s.rows.data(), s.rows.size());
  b.put(s.values.data(), static_cast<size_t>(s.values.size()));
}

SparseRows get_rows(Buffer& b) {
  SparseRows s;
  const auto n = b.get<int64_t>(), dim = b.get<int64_t>();
  s.rows.resize(static_cast<size_t>(n));
  b.get(s.rows.data(), s.rows.size());
  s.values.resize(n, dim);
  b.get(s.values.data(), static_cast<size_t>(s.values.size()));
  return s;
}

void sleep_for(double seconds) {
  if (seconds > 0.0) std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

// A snapshot keeps only what changed since the one before: the dense vector and the table
// rows updated since (their new values), so that taking it costs what an update costs, not a
// copy of every table. Evaluation replays them in order onto the initial parameters.
struct Snapshot {
  double time;
  int64_t global_step, samples;
  Eigen::VectorXf dense;
  std::vector<std::vector<int32_t>> rows;  // per table
  std::vector<RowMatrixXf> values;         // per table, one row per entry of rows
};

// Where the parameter server's time goes (seconds).
struct ServerRecord {
  double idle_s = 0.0, receive_s = 0.0, update_s = 0.0, grant_s = 0.0;
  int64_t pushes = 0, grants = 0;
};

struct WorkerRecord {
  int64_t steps = 0;
  double compute_s = 0.0, injected_s = 0.0, slept_s = 0.0, comm_s = 0.0;
  std::vector<double> step_ends;
};

// What every rank holds: the data, the model, the parameters, the clock.
struct Job {
  const ExperimentSpec& spec;
  const MpiOptions& options;
  int rank = 0, size = 1;
  LoadedData data;
  Model model;
  Parameters params;
  WallClock::time_point start;
  ReplayedTrace trace;
  RunRecord record;
  // The pools of workers (one without cluster.pools); worker w is rank w + 1 in a job with a
  // server, every pool's workers one after the other.
  std::vector<WorkerPool> pools;
  // Parameter holder (rank 0) only.
  std::vector<Snapshot> snapshots;
  double next_snapshot = 0.0;
  double snapshot_s = 0.0;  // what taking them cost training (seconds)

  Job(const ExperimentSpec& s, const MpiOptions& o)
      : spec(s),
        options(o),
        data(load_data(s.data)),
        model(s.model, data.train.cardinalities, data.train.num_dense),
        params(model.init_parameters(s.seed)),
        trace(load_trace(s)),
        record(s, data),
        pools(worker_pools(s)) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  }
  double elapsed() const { return seconds_since(start); }
  // The pool worker `w` belongs to.
  int pool_of(int w) const {
    int p = 0;
    while (w >= pools[p].first + pools[p].workers) ++p;
    return p;
  }
  bool out_of_time() const { return record.budget().out_of_time(elapsed()); }
  // The holder applies `update` to its parameters: the rows it touches become dirty. A row
  // is dirty when its mark is the number of the next snapshot, so taking one clears every
  // mark at once by counting up.
  void updated(const Gradient& update) {
    if (marks.empty()) {
      for (const auto& t : params.tables) marks.emplace_back(static_cast<size_t>(t.rows()), -1);
      dirty_rows.resize(params.tables.size());
    }
    const auto next = static_cast<int32_t>(snapshots.size());
    for (size_t k = 0; k < update.tables.size(); ++k) {
      for (int32_t row : update.tables[k].rows) {
        int32_t& mark = marks[k][static_cast<size_t>(row)];
        if (mark != next) {
          mark = next;
          dirty_rows[k].push_back(row);
        }
      }
    }
  }
  // Takes a snapshot when one is due (or `force`): the dense vector and the dirty rows, in
  // the order first touched (replay needs no other: each row appears once).
  void maybe_snapshot(int64_t global_step, int64_t samples, bool force = false) {
    const double now = elapsed();
    if (!force && now < next_snapshot) return;
    const auto t = WallClock::now();
    Snapshot s{now, global_step, samples, params.dense, {}, {}};
    for (size_t k = 0; k < dirty_rows.size(); ++k) {
      const RowMatrixXf& table = params.tables[k];
      RowMatrixXf values(static_cast<Eigen::Index>(dirty_rows[k].size()), table.cols());
      for (size_t i = 0; i < dirty_rows[k].size(); ++i)
        values.row(static_cast<Eigen::Index>(i)) = table.row(dirty_rows[k][i]);
      s.rows.push_back(std::move(dirty_rows[k]));
      s.values.push_back(std::move(values));
      dirty_rows[k] = {};
      dirty_rows[k].reserve(s.rows.back().size());
    }
    snapshots.push_back(std::move(s));
    snapshot_s += seconds_since(t);
    while (next_snapshot <= now) next_snapshot += spec.evaluation.interval_s;
  }
  std::vector<std::vector<int32_t>> marks;       // per table, per row: see updated()
  std::vector<std::vector<int32_t>> dirty_rows;  // per table, in the order first touched
  void maybe_fail(int64_t step) const {
    if (rank != options.fail_rank || step != options.fail_step) return;
    const std::string when =
        step < 0 ? "while preparing the job" : "at step " + std::to_string(step);
    if (options.fail_with_error)
      throw InputError("failing on purpose " + when + " (--fail-rank, --fail-how error)");
    std::fprintf(stderr, "gbasim-mpi: rank %d: failing on purpose %s (--fail-rank)\n", rank,
                 when.c_str());
    std::abort();
  }
};

// The gradient of the batch, then the straggler's sleep: (slowdown - 1) x the compute.
void compute_step(Job& job, RankSlowdown& slow, int64_t step, const Batch& batch, Gradient& grad,
                  WorkerRecord& me) {
  const auto t = WallClock::now();
  job.model.forward_backward(job.params, batch, grad);
  const double compute = seconds_since(t);
  const double extra = (slow.factor(step, job.elapsed() - compute) - 1.0) * compute;
  if (extra > 0.0) {  // the sleep asked for, and the one had: waking up may take longer
    const auto slept = WallClock::now();
    sleep_for(extra);
    me.injected_s += extra;
    me.slept_s += seconds_since(slept);
  }
  me.compute_s += compute;
}

// Every worker's gradient of one sync step, in worker order: the dense parts summed
// (MPI_Allreduce, with `flag` summed alongside), the sparse rows gathered (MPI_Allgatherv).
// The workers are ranks first..first + workers - 1 of MPI_COMM_WORLD, each with a local batch
// of `local_batch`; every other rank (the server of a switching job, the workers of the pools
// not in force) contributes `mine` empty. Worker 0's gradient carries the dense sum and the
// others a zero dense part, so that the rule's average is the average over workers.
std::vector<Gradient> exchange_gradients(const Job& job, const Gradient& mine, int first,
                                         int workers, int64_t local_batch, float& flag) {
  const size_t tables = job.params.tables.size();
  const int ranks = job.size;
  std::vector<float> dense(mine.dense.data(), mine.dense.data() + mine.dense.size());
  dense.push_back(flag);
  MPI_Allreduce(MPI_IN_PLACE, dense.data(), static_cast<int>(dense.size()), MPI_FLOAT, MPI_SUM,
                MPI_COMM_WORLD);
  flag = dense.back();
  dense.pop_back();
  // Every rank's rows of every table, in three collectives: the row counts per table, then
  // all row ids, then all values, each rank's tables one after another.
  std::vector<int> counts(tables), all_counts(tables * ranks);
  std::vector<int32_t> my_rows;
  std::vector<float> my_values;
  for (size_t k = 0; k < tables; ++k) {
    const SparseRows& rows = mine.tables[k];
    counts[k] = static_cast<int>(rows.rows.size());
    my_rows.insert(my_rows.end(), rows.rows.begin(), rows.rows.end());
    my_values.insert(my_values.end(), rows.values.data(), rows.values.data() + rows.values.size());
  }
  MPI_Allgather(counts.data(), static_cast<int>(tables), MPI_INT, all_counts.data(),
                static_cast<int>(tables), MPI_INT, MPI_COMM_WORLD);
  std::vector<int> row_counts(ranks, 0), row_offsets(ranks, 0), value_counts(ranks, 0),
      value_offsets(ranks, 0);
  for (int r = 0, rows_total = 0, values_total = 0; r < ranks; ++r) {
    for (size_t k = 0; k < tables; ++k) {
      const int c_k = all_counts[r * tables + k];
      row_counts[r] += c_k;
      value_counts[r] += c_k * static_cast<int>(job.params.tables[k].cols());
    }
    row_offsets[r] = rows_total;
    value_offsets[r] = values_total;
    rows_total += row_counts[r];
    values_total += value_counts[r];
  }
  std::vector<int32_t> all_rows(
      static_cast<size_t>(row_offsets[ranks - 1] + row_counts[ranks - 1]));
  std::vector<float> all_values(
      static_cast<size_t>(value_offsets[ranks - 1] + value_counts[ranks - 1]));
  MPI_Allgatherv(my_rows.data(), static_cast<int>(my_rows.size()), MPI_INT32_T, all_rows.data(),
                 row_counts.data(), row_offsets.data(), MPI_INT32_T, MPI_COMM_WORLD);
  MPI_Allgatherv(my_values.data(), static_cast<int>(my_values.size()), MPI_FLOAT,
                 all_values.data(), value_counts.data(), value_offsets.data(), MPI_FLOAT,
                 MPI_COMM_WORLD);
  std::vector<Gradient> grads(static_cast<size_t>(workers));
  for (int v = 0; v < workers; ++v) {
    const int r = first + v;
    Gradient& g = grads[v];
    g.dense = v == 0 ? Eigen::Map<Eigen::VectorXf>(dense.data(),
                                                   static_cast<Eigen::Index>(dense.size()))
                           .eval()
                     : Eigen::VectorXf::Zero(static_cast<Eigen::Index>(dense.size()));
    g.samples = local_batch;
    size_t row = static_cast<size_t>(row_offsets[r]), value = static_cast<size_t>(value_offsets[r]);
    for (size_t k = 0; k < tables; ++k) {
      const int count = all_counts[r * tables + k];
      const int dim = static_cast<int>(job.params.tables[k].cols());
      SparseRows rows;
      rows.rows.assign(all_rows.begin() + static_cast<ptrdiff_t>(row),
                       all_rows.begin() + static_cast<ptrdiff_t>(row) + count);
      rows.values = Eigen::Map<RowMatrixXf>(all_values.data() + value, count, dim);
      g.tables.push_back(std::move(rows));
      row += static_cast<size_t>(count);
      value += static_cast<size_t>(count) * static_cast<size_t>(dim);
    }
  }
  return grads;
}

// The batches a rank reads. data.sharding "static": its own shard of its pool's, in order.
// "queue": the one sequence of the whole training set that every rank of a pool rebuilds from
// the seed (the simulator's shared queue of that pool), each batch named by its number in it:
// the server hands the numbers out with the grants, in the order it grants (the server modes),
// and sync step s gives the pool's worker i batch s x N' + i (as if the workers asked in rank
// order).
class BatchSource {
 public:
  BatchSource(const Dataset& data, int worker, int workers, uint64_t seed, DataSharding sharding)
      : queue_(sharding == DataSharding::kQueue),
        it_(data, queue_ ? 0 : worker, queue_ ? 1 : workers, seed) {}
  bool queue() const { return queue_; }
  // "static": the next batch of the rank's shard.
  Batch next(int64_t batch_size) { return it_.next(batch_size); }
  // "queue": batch number `k` of the sequence; k grows from call to call.
  Batch at(int64_t k, int64_t batch_size) {
    if (k < taken_) throw std::logic_error("BatchSource: batch numbers must grow");
    for (; taken_ < k; ++taken_) it_.next_rows(batch_size);
    ++taken_;
    return it_.next(batch_size);
  }

 private:
  bool queue_;
  ShardIterator it_;
  int64_t taken_ = 0;  // batches of the sequence passed so far
};

// What rank 0 tells the ranks after each sync step of a switching job.
enum SyncNext : int32_t { kNextStep = 0, kToServerModes = 1, kStopNow = 2 };

// Sync without switching: rank r is worker r. Each step every rank computes its batch's
// gradient, the gradients are exchanged, and every rank feeds the N gradients to its copy of
// the rule in worker order and applies the update, so all hold the same parameters.
RuleMetrics run_sync(Job& job, WorkerRecord& me, int64_t& applied) {
  const ExperimentSpec& spec = job.spec;
  const int n = job.size, w = job.rank;
  auto rule = make_rule(spec.training);
  Optimizer optimizer(spec.optimizer, job.params);
  BatchSource source(job.data.train, w, n, spec.seed, spec.data.sharding);
  RankSlowdown slow(spec, job.trace, w);
  Gradient grad;
  std::vector<int64_t> tokens(n);
  for (int64_t step = 0;; ++step) {
    job.maybe_fail(step);
    for (int v = 0; v < n; ++v) tokens[v] = rule->admit(v).token;
    const int64_t b = spec.training.local_batch;
    const Batch batch = source.queue() ? source.at(step * n + w, b) : source.next(b);
    compute_step(job, slow, step, batch, grad, me);
    const auto c = WallClock::now();
    float out_of_time = w == 0 && job.out_of_time() ? 1.0f : 0.0f;  // rank 0's clock decides
    std::vector<Gradient> grads =
        exchange_gradients(job, grad, 0, n, spec.training.local_batch, out_of_time);
    me.comm_s += seconds_since(c);
    for (int v = 0; v < n; ++v) {
      if (auto update = rule->receive(v, tokens[v], std::move(grads[v]))) {
        optimizer.apply(job.params, *update);
        if (w == 0) job.updated(*update);
        applied += update->samples;
      }
    }
    ++me.steps;
    me.step_ends.push_back(job.elapsed());
    if (w == 0) job.maybe_snapshot(rule->global_step(), applied);
    if (applied >= job.record.budget().max_samples() || out_of_time > 0.0f) break;
  }
  if (w == 0) job.maybe_snapshot(rule->global_step(), applied, true);
  return rule->metrics();
}

// The unique ids of the batch for each table (table k belongs to field k mod F).
std::vector<std::vector<int32_t>> rows_needed(const Batch& batch, size_t tables) {
  const FieldGroups groups(batch.ids);
  std::vector<std::vector<int32_t>> rows(tables);
  for (size_t k = 0; k < tables; ++k) rows[k] = groups.unique_ids[k % groups.unique_ids.size()];
  return rows;
}

// The model (and, towards the workers, the optimizer's state) as one message.
void put_model(Buffer& b, Parameters& params, Optimizer* optimizer) {
  b.put(params.dense.data(), static_cast<size_t>(params.dense.size()));
  for (const auto& t : params.tables) b.put(t.data(), static_cast<size_t>(t.size()));
  if (optimizer == nullptr) return;
  b.put<int64_t>(optimizer->steps());
  optimizer->for_each_state([&](float* data, size_t n) { b.put(data, n); });
}

void get_model(Buffer& b, Parameters& params, Optimizer* optimizer) {
  b.get(params.dense.data(), static_cast<size_t>(params.dense.size()));
  for (auto& t : params.tables) b.get(t.data(), static_cast<size_t>(t.size()));
  if (optimizer == nullptr) return;
  optimizer->set_steps(b.get<int64_t>());
  optimizer->for_each_state([&](float* data, size_t n) { b.get(data, n); });
}

// How a worker's server phase ended: stopped, or (a switching job) on to sync at this step,
// with this many batches of the queue handed out before it.
struct WorkerPhase {
  bool to_sync = false;
  int64_t global_step = 0;
  int64_t queue_base = 0;  // the batches of the pool's sequence handed out so far
  int pool = 0;            // the pool that runs sync next
};

// A worker of the server modes (rank w + 1). Each step reads admit, pull, compute, push. With
// static shards the batch is drawn first and its rows go with the request; with the queue the
// grant names the batch (its number in the shared sequence) and brings its rows. The grant
// brings the token and those parameters. Returns on the server's stop, or (a switching job)
// when the server says the run goes on in sync: the model and the optimizer's state have
// arrived then, and a batch drawn for the request is left in `carried` for the worker's next
// step, in sync or (its pool not in force for sync) in the next server phase.
WorkerPhase run_ps_worker(Job& job, WorkerRecord& me, BatchSource& source, RankSlowdown& slow,
                          Optimizer* optimizer, std::optional<Batch>& carried, int64_t& step) {
  const size_t tables = job.params.tables.size();
  const int64_t b = job.pools[job.pool_of(job.rank - 1)].local_batch;
  Gradient grad;
  for (;; ++step) {
    job.maybe_fail(step);
    std::optional<Batch> drawn;
    std::vector<std::vector<int32_t>> needed;
    if (!source.queue()) {  // a batch drawn for a request that was not granted comes first
      drawn = carried ? std::move(carried) : source.next(b);
      carried.reset();
      needed = rows_needed(*drawn, tables);
    }
    auto c = WallClock::now();
    Buffer ask;
    ask.put<int32_t>(kAdmit);
    for (const auto& r : needed) {
      ask.put<int64_t>(static_cast<int64_t>(r.size()));
      ask.put(r.data(), r.size());
    }
    send(ask, 0, kToServer);
    Buffer answer = receive(0, kToWorker);
    const auto kind = answer.get<int32_t>();
    if (kind == kStop) return {};
    if (kind == kSyncNow) {
      const auto global_step = answer.get<int64_t>();
      const auto pool = answer.get<int32_t>();
      const auto queue_base = answer.get<int64_t>();
      get_model(answer, job.params, optimizer);
      me.comm_s += seconds_since(c);
      if (drawn) carried = std::move(drawn);
      return {true, global_step, queue_base, pool};
    }
    const auto token = answer.get<int64_t>();
    if (source.queue()) {
      drawn = source.at(answer.get<int64_t>(), b);
      needed = rows_needed(*drawn, tables);
    }
    const Batch& batch = *drawn;
    answer.get(job.params.dense.data(), static_cast<size_t>(job.params.dense.size()));
    for (size_t k = 0; k < tables; ++k) {
      RowMatrixXf& table = job.params.tables[k];
      for (int32_t row : needed[k])
        answer.get(table.row(row).data(), static_cast<size_t>(table.cols()));
    }
    me.comm_s += seconds_since(c);

    const double compute_before = me.compute_s;
    compute_step(job, slow, step, batch, grad, me);

    c = WallClock::now();
    Buffer push;
    push.put<int32_t>(kPush);
    push.put<int64_t>(token);
    push.put<double>(me.compute_s - compute_before);  // this step's work, for switching
    push.put<int64_t>(grad.samples);
    push.put(grad.dense.data(), static_cast<size_t>(grad.dense.size()));
    for (const SparseRows& s : grad.tables) put_rows(push, s);
    send(push, 0, kToServer);  // ordered before this worker's next request
    me.comm_s += seconds_since(c);
    ++me.steps;
    me.step_ends.push_back(job.elapsed());
  }
}

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
bool run_ps_server(Job& job, Holder& holder, ServerRecord& record) {
  const int n = job.size - 1;
  RuleInForce& rule = holder.rule;
  const size_t tables = job.params.tables.size();
  std::vector<std::vector<std::vector<int32_t>>> wanted(n);  // each waiting worker's rows
  bool stop = false;
  int stopped = 0, to_sync = 0;
  double move_start = 0.0;
  auto grant = [&](int w, int64_t token) {
    Buffer b;
    b.put<int32_t>(kGrant);
    b.put<int64_t>(token);
    if (!holder.queues.empty()) {  // the next batch of its pool's sequence goes to the worker
      const int p = job.pool_of(w);
      const int64_t k = holder.batches[p]++;
      wanted[w] = rows_needed(holder.queues[p].at(k, job.pools[p].local_batch), tables);
      b.put<int64_t>(k);
    }
    b.put(job.params.dense.data(), static_cast<size_t>(job.params.dense.size()));
    for (size_t k = 0; k < tables; ++k) {
      const RowMatrixXf& table = job.params.tables[k];
      for (int32_t row : wanted[w][k])
        b.put(table.row(row).data(), static_cast<size_t>(table.cols()));
    }
    const auto sent = WallClock::now();
    send(b, w + 1, kToWorker);
    record.grant_s += seconds_since(sent);
    ++record.grants;
  };
  // Stop, hand over to sync, grant, or leave waiting (false).
  auto serve = [&](int w) {
    Buffer b;
    if (stop) {
      b.put<int32_t>(kStop);
      send(b, w + 1, kToWorker);
      ++stopped;
      return true;
    }
    if (rule.mode() == Mode::kSync) {  // the switch is complete: the model moves to the worker
      b.put<int32_t>(kSyncNow);
      b.put<int64_t>(rule.global_step());
      b.put<int32_t>(holder.pool());
      b.put<int64_t>(holder.batches.empty() ? 0 : holder.batches[holder.pool()]);
      put_model(b, job.params, &holder.optimizer);
      send(b, w + 1, kToWorker);
      if (++to_sync == n) {
        const double bytes = static_cast<double>(b.bytes().size()) * n;
        const auto& [start, first_leg] = holder.between_pools.value_or(std::pair{move_start, 0.0});
        holder.moves.push_back({{"global_step", rule.global_step()},
                                {"direction", holder.between_pools ? "between_pools" : "to_workers"},
                                {"start", start},
                                {"end", job.elapsed()},
                                {"bytes", first_leg + bytes}});
        holder.between_pools.reset();
      }
      return true;
    }
    const Admission a = rule.admit(w);
    if (!a.admitted) return false;
    holder.admitted(w, a.token);
    grant(w, a.token);
    return true;
  };
  while (stopped + to_sync < n) {
    int source = 0;
    auto t = WallClock::now();
    Buffer m = receive(MPI_ANY_SOURCE, kToServer, &source, &record.idle_s);
    record.receive_s += seconds_since(t);
    const int w = source - 1;
    const auto kind = m.get<int32_t>();
    if (kind == kAdmit) {
      wanted[w].assign(tables, {});
      for (size_t k = 0; k < tables && holder.queues.empty(); ++k) {
        wanted[w][k].resize(static_cast<size_t>(m.get<int64_t>()));
        m.get(wanted[w][k].data(), wanted[w][k].size());
      }
      if (!serve(w)) rule.queue_refused(w);
      continue;
    }
    // A push.
    const auto token = m.get<int64_t>();
    const auto compute_s = m.get<double>();
    Gradient g;
    g.samples = m.get<int64_t>();
    g.dense.resize(job.params.dense.size());
    m.get(g.dense.data(), static_cast<size_t>(g.dense.size()));
    for (size_t k = 0; k < tables; ++k) g.tables.push_back(get_rows(m));
    job.maybe_fail(record.pushes);  // the server's step K: its K-th push taken in
    ++record.pushes;
    t = WallClock::now();
    if (auto update = holder.receive(w, token, std::move(g))) {
      holder.optimizer.apply(job.params, *update);
      job.updated(*update);
      holder.applied += update->samples;
      stop = job.record.budget().spent(holder.applied, job.elapsed());
      job.maybe_snapshot(rule.global_step(), holder.applied);
    }
    rule.observe_step(w, compute_s, job.elapsed());
    if (rule.take_model_move()) move_start = job.elapsed();  // made as each worker asks
    record.update_s += seconds_since(t);
    rule.serve_refused(serve);
  }
  return to_sync == n;
}

// One sync phase of a switching job on every rank: the workers of pool `pool` (ranks
// 1 + first .. first + N') compute and exchange their gradients; rank 0, and the workers of
// the other pools, take part in the exchange with nothing of their own. Rank 0 feeds the
// gradients to the rule in force; each worker of the pool applies them through a sync rule of
// its own, which gives the same updates. After each step rank 0 says whether the next one
// follows, the run goes on in a server mode (the pool's first worker's model then moves to
// rank 0; between two sync pools it goes on from there), or it stops. Returns true for the
// server modes.
bool run_sync_phase(Job& job, Holder* holder, WorkerRecord& me, BatchSource* source,
                    RankSlowdown* slow, Optimizer* optimizer, std::optional<Batch>& carried,
                    int64_t global_step, int pool, int64_t queue_base, int64_t& step) {
  const ExperimentSpec& spec = job.spec;
  const WorkerPool& p = job.pools[pool];
  const int n = p.workers, i = job.rank - 1 - p.first;  // i: this rank's place in the pool
  const bool working = holder == nullptr && i >= 0 && i < n;
  std::unique_ptr<UpdateRule> local;
  if (working) {
    RuleConfig sync_config = spec.training;  // the pool's sync rule, as the controller's
    sync_config.mode = Mode::kSync;
    sync_config.num_workers = n;
    sync_config.local_batch = p.local_batch;
    sync_config.global_batch = int64_t{n} * p.local_batch;
    local = make_rule(sync_config);
    local->resume_at(global_step);
  }
  std::vector<int64_t> tokens(n);
  Gradient grad;
  std::vector<double> computes(job.rank == 0 ? job.size : 0);  // one a rank, rank 0's first
  bool between = false;  // rank 0: the move is to another sync pool
  for (int64_t phase_step = 0;; ++phase_step) {
    for (int v = 0; v < n; ++v) {
      if (holder != nullptr) {
        tokens[v] = holder->rule.admit(p.first + v).token;
        holder->admitted(p.first + v, tokens[v]);
      } else if (working) {
        tokens[v] = local->admit(v).token;
      }
    }
    double compute_s = 0.0;
    if (working) {
      job.maybe_fail(step);
      const Batch batch = carried          ? *carried
                          : source->queue() ? source->at(queue_base + phase_step * n + i,
                                                         p.local_batch)
                                            : source->next(p.local_batch);
      carried.reset();
      const double before = me.compute_s;
      compute_step(job, *slow, step, batch, grad, me);
      compute_s = me.compute_s - before;
    } else {
      grad = Gradient{};
      grad.dense = Eigen::VectorXf::Zero(job.params.dense.size());
      grad.tables.resize(job.params.tables.size());
      for (size_t k = 0; k < grad.tables.size(); ++k)
        grad.tables[k].values.resize(0, job.params.tables[k].cols());
    }
    const auto c = WallClock::now();
    float unused = 0.0f;
    std::vector<Gradient> grads =
        exchange_gradients(job, grad, 1 + p.first, n, p.local_batch, unused);
    MPI_Gather(&compute_s, 1, MPI_DOUBLE, computes.data(), 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int32_t next = kNextStep;
    if (holder != nullptr) {
      if (!holder->batches.empty()) holder->batches[pool] += n;
      for (int v = 0; v < n; ++v) {
        if (auto update = holder->receive(p.first + v, tokens[v], std::move(grads[v]))) {
          holder->optimizer.apply(job.params, *update);
          job.updated(*update);
          holder->applied += update->samples;
        }
      }
      for (int v = 0; v < n; ++v)
        holder->rule.observe_step(p.first + v, computes[1 + p.first + v], job.elapsed());
      job.maybe_snapshot(holder->rule.global_step(), holder->applied);
      if (job.record.budget().spent(holder->applied, job.elapsed())) {
        next = kStopNow;
      } else if (const auto move = holder->rule.take_model_move()) {
        next = kToServerModes;
        between = move->direction == ModelMove::Direction::kBetweenPools;
      }
    } else if (working) {
      for (int v = 0; v < n; ++v) {
        if (auto update = local->receive(v, tokens[v], std::move(grads[v])))
          optimizer->apply(job.params, *update);
      }
      ++me.steps;
      ++step;
      me.step_ends.push_back(job.elapsed());
    }
    MPI_Bcast(&next, 1, MPI_INT32_T, 0, MPI_COMM_WORLD);
    if (working) me.comm_s += seconds_since(c);
    if (next == kStopNow) return false;
    if (next == kToServerModes) {
      // The pool's first worker moves the model to the server, which holds the optimizer's
      // state already.
      const double start = job.elapsed();
      Buffer model;
      if (working && i == 0) {
        put_model(model, job.params, nullptr);
        send(model, 0, kToServer);
      } else if (job.rank == 0) {
        model = receive(1 + p.first, kToServer);
        get_model(model, job.params, nullptr);
        const double bytes = static_cast<double>(model.bytes().size());
        if (between) {  // recorded once the model is on the next pool's workers
          holder->between_pools.emplace(start, bytes);
        } else {
          holder->moves.push_back({{"global_step", holder->rule.global_step()},
                                   {"direction", "to_parameter_servers"},
                                   {"start", start},
                                   {"end", job.elapsed()},
                                   {"bytes", bytes}});
        }
      }
      return true;
    }
  }
}

// A switching job (training.switching): rank 0 the server and the holder of the rule in
// force through every phase, ranks 1..N the workers of every pool; sync phases exchange
// gradients between all ranks, server phases talk to rank 0.
RuleMetrics run_switching(Job& job, Holder* holder, WorkerRecord& me, ServerRecord& server) {
  const ExperimentSpec& spec = job.spec;
  const int w = job.rank - 1;
  std::optional<BatchSource> source;
  std::optional<RankSlowdown> slow;
  std::optional<Optimizer> optimizer;
  if (job.rank != 0) {
    const WorkerPool& p = job.pools[job.pool_of(w)];
    source.emplace(job.data.train, w - p.first, p.workers, spec.seed, spec.data.sharding);
    slow.emplace(spec, job.trace, w);
    if (spec.switching.enabled()) optimizer.emplace(spec.optimizer, job.params);
  }
  std::optional<Batch> carried;
  bool sync = spec.training.mode == Mode::kSync;
  int64_t global_step = 0, step = 0, queue_base = 0;
  int pool = 0;
  while (true) {
    if (sync) {
      if (!run_sync_phase(job, holder, me, source ? &*source : nullptr, slow ? &*slow : nullptr,
                          optimizer ? &*optimizer : nullptr, carried, global_step, pool,
                          queue_base, step))
        break;
      sync = false;
    } else if (holder != nullptr) {
      if (!run_ps_server(job, *holder, server)) break;
      pool = holder->pool();  // the pool the next sync phase runs on, as told the workers
      sync = true;
    } else {
      const WorkerPhase phase =
          run_ps_worker(job, me, *source, *slow, optimizer ? &*optimizer : nullptr, carried, step);
      if (!phase.to_sync) break;
      global_step = phase.global_step;
      queue_base = phase.queue_base;
      pool = phase.pool;
      sync = true;
    }
  }
  if (holder == nullptr) return {};
  job.maybe_snapshot(holder->rule.global_step(), holder->applied, true);
  return holder->rule.metrics();
}

}  // namespace

int ranks_needed(const ExperimentSpec& spec) {
  const bool sync_only = spec.training.mode == Mode::kSync && !spec.switching.enabled();
  return total_workers(spec) + (sync_only ? 0 : 1);
}

void write_parameters(const std::string& path, const Eigen::VectorXf& dense,
                      const std::vector<RowMatrixXf>& tables) {
  std::string bytes(reinterpret_cast<const char*>(dense.data()), dense.size() * sizeof(float));
  for (const auto& t : tables)
    bytes.append(reinterpret_cast<const char*>(t.data()), t.size() * sizeof(float));
  write_text_atomically(path, bytes);
}

struct MpiJob::State {
  State(const ExperimentSpec& spec, const MpiOptions& options) : job(spec, options) {
    if (job.rank == 0 && spec.evaluation.test_samples > 0)
      job.data.test = first_rows(job.data.test, spec.evaluation.test_samples);
    if (!all_workers && job.rank == 0) {
      holder.emplace(spec, job.params, options.rule_log);
      if (spec.data.sharding == DataSharding::kQueue) {
        for (size_t p = 0; p < job.pools.size(); ++p)
          holder->queues.emplace_back(job.data.train, 0, 1, spec.seed, DataSharding::kQueue);
        holder->batches.assign(job.pools.size(), 0);
      }
    }
    job.maybe_fail(-1);
  }
  Job job;
  // Sync without switching: every rank a worker. Otherwise rank 0 holds the rule in force.
  const bool all_workers = ranks_needed(job.spec) == total_workers(job.spec);
  std::optional<Holder> holder;
};

MpiJob::MpiJob(const ExperimentSpec& spec, const MpiOptions& options)
    : state_(std::make_unique<State>(spec, options)) {}

MpiJob::~MpiJob() = default;

nlohmann::ordered_json MpiJob::run() {
  Job& job = state_->job;
  const ExperimentSpec& spec = job.spec;
  const MpiOptions& options = job.options;
  const bool all_workers = state_->all_workers;
  std::optional<Holder>& holder = state_->holder;
  WorkerRecord me;
  ServerRecord server;
  int64_t applied = 0;
  RuleMetrics metrics;
  MPI_Barrier(MPI_COMM_WORLD);
  job.start = WallClock::now();
  if (job.rank == 0) job.maybe_snapshot(0, 0, true);
  if (all_workers) {
    metrics = run_sync(job, me, applied);
  } else {
    metrics = run_switching(job, holder ? &*holder : nullptr, me, server);
    if (holder) applied = holder->applied;
  }
  const double run_time = job.elapsed();

  // Worker records to rank 0.
  Buffer mine;
  mine.put<int64_t>(me.steps);
  mine.put(me.compute_s);
  mine.put(me.injected_s);
  mine.put(me.slept_s);
  mine.put(me.comm_s);
  mine.put(me.step_ends.data(), me.step_ends.size());
  int size = static_cast<int>(mine.bytes().size());
  std::vector<int> sizes(job.size), offsets(job.size);
  MPI_Gather(&size, 1, MPI_INT, sizes.data(), 1, MPI_INT, 0, MPI_COMM_WORLD);
  int total = 0;
  for (int r = 0; r < job.size; ++r) {
    offsets[r] = total;
    total += sizes[r];
  }
  std::vector<char> all(static_cast<size_t>(total));
  MPI_Gatherv(mine.bytes().data(), size, MPI_BYTE, all.data(), sizes.data(), offsets.data(),
              MPI_BYTE, 0, MPI_COMM_WORLD);
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  std::vector<char> hosts(job.rank == 0 ? 256 * job.size : 0);
  MPI_Gather(host, 256, MPI_CHAR, hosts.data(), 256, MPI_CHAR, 0, MPI_COMM_WORLD);
  if (job.rank != 0) return nullptr;

  if (!options.params_out.empty())
    write_parameters(options.params_out, job.params.dense, job.params.tables);
  if (!options.quiet)
    std::cerr << "gbasim-mpi: trained in " << run_time << " s; evaluating " << job.snapshots.size()
              << " snapshots\n";
  Parameters replayed = job.model.init_parameters(spec.seed);
  for (const Snapshot& s : job.snapshots) {
    replayed.dense = s.dense;
    for (size_t k = 0; k < s.rows.size(); ++k) {
      for (size_t i = 0; i < s.rows[k].size(); ++i)
        replayed.tables[k].row(s.rows[k][i]) = s.values[k].row(static_cast<Eigen::Index>(i));
    }
    const Evaluation e = evaluate(job.model, replayed, job.data.test);
    job.record.add_point({s.time, s.global_step, s.samples, e.auc, e.logloss});
    if (e.diverged) {  // found after training, which went on to its budget
      job.record.end("diverged", "the model's test predictions are not finite numbers at " +
                                     std::to_string(s.time) + " s (global step " +
                                     std::to_string(s.global_step) + ")");
    }
  }
  DriverSummary driver{"wall", run_time};
  driver.before_counts = {{"snapshots", job.snapshots.size()}, {"snapshot_s", job.snapshot_s}};
  driver.after_counts = {{"ranks", job.size}};
  nlohmann::ordered_json doc = job.record.result(driver, metrics.global_steps, applied, metrics);
  nlohmann::ordered_json workers = nlohmann::ordered_json::array();
  for (int r = all_workers ? 0 : 1; r < job.size; ++r) {
    Buffer b;
    b.bytes().assign(all.begin() + offsets[r], all.begin() + offsets[r] + sizes[r]);
    const auto steps = b.get<int64_t>();
    const auto compute = b.get<double>(), injected = b.get<double>(), slept = b.get<double>(),
               comm = b.get<double>();
    std::vector<double> ends(static_cast<size_t>(steps));
    b.get(ends.data(), ends.size());
    const int w = all_workers ? r : r - 1;
    workers.push_back({{"worker", w},
                       {"pool", job.pool_of(w)},
                       {"rank", r},
                       {"host", std::string(hosts.data() + 256 * r)},
                       {"steps", steps},
                       {"compute_s", compute},
                       {"injected_slowdown_s", injected},
                       {"slept_s", slept},
                       {"comm_s", comm},
                       {"step_ends", ends}});
  }
  doc["workers"] = workers;
  if (holder && holder->rule.switching())
    doc["switching"] = switching_json(spec, *holder->rule.switching(), holder->moves);
  if (!all_workers) {
    doc["server"] = {{"idle_s", server.idle_s},     {"receive_s", server.receive_s},
                     {"update_s", server.update_s}, {"grant_s", server.grant_s},
                     {"pushes", server.pushes},     {"grants", server.grants}};
  }
  return doc;
}

nlohmann::ordered_json measure_pingpong() {
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  auto round_trip = [rank](size_t bytes, int reps) {
    std::vector<char> buffer(bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    double best = 1e300;
    for (int r = 0; r < reps; ++r) {
      const double start = MPI_Wtime();
      if (rank == 0) {
        MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 1, 0, MPI_COMM_WORLD);
        MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 1, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
      } else if (rank == 1) {
        MPI_Recv(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 0, 0, MPI_COMM_WORLD,
                 MPI_STATUS_IGNORE);
        MPI_Send(buffer.data(), static_cast<int>(bytes), MPI_BYTE, 0, 0, MPI_COMM_WORLD);
      }
      best = std::min(best, MPI_Wtime() - start);
    }
    return best;
  };
  round_trip(8, 50);  // warm up
  const double small = round_trip(8, 2000);
  const size_t big_bytes = size_t{4} << 20;
  const double big = round_trip(big_bytes, 30);
  const double latency = small / 2;
  return {{"latency_s", latency},
          {"bandwidth_bytes_per_s", static_cast<double>(big_bytes) / (big / 2 - latency)},
          {"method", "best of 2000 round trips of 8 B, and of 30 of 4 MiB, between ranks 0 and 1"}};
}


}  // namespace gbasim
