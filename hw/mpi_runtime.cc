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
#include <thread>

#include "base/clock.h"
#include "base/error.h"
#include "models/layers.h"
#include "models/optimizer.h"
#include "experiment/run_record.h"
#include "experiment/slowdown.h"
#include "strategies/update_rule.h"

namespace gbasim {
namespace {

constexpr int kToServer = 1, kToWorker = 2;
enum MessageKind : int32_t { kAdmit = 1, kPush = 2, kGrant = 3, kStop = 4 };

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
        record(s, data) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
  }
  double elapsed() const { return seconds_since(start); }
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
    if (rank == options.fail_rank && step == options.fail_step) {
      std::fprintf(stderr, "gbasim-mpi: rank %d: failing on purpose at step %lld (--fail-rank)\n",
                   rank, static_cast<long long>(step));
      std::abort();
    }
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

// Sync: rank r is worker r. Each step every rank computes its batch's gradient, the dense
// parts are summed (MPI_Allreduce), the sparse rows gathered (MPI_Allgatherv), and every
// rank feeds the N gradients to its copy of the rule in worker order and applies the
// update, so the parameters stay identical everywhere.
RuleMetrics run_sync(Job& job, WorkerRecord& me, int64_t& applied) {
  const ExperimentSpec& spec = job.spec;
  const int n = job.size, w = job.rank;
  auto rule = make_rule(spec.training);
  Optimizer optimizer(spec.optimizer, job.params);
  ShardIterator shard(job.data.train, w, n, spec.seed);
  RankSlowdown slow(spec, job.trace, w);
  const size_t tables = job.params.tables.size();
  Gradient grad;
  std::vector<int64_t> tokens(n);
  for (int64_t step = 0;; ++step) {
    job.maybe_fail(step);
    for (int v = 0; v < n; ++v) tokens[v] = rule->admit(v).token;
    const Batch batch = shard.next(spec.training.local_batch);
    compute_step(job, slow, step, batch, grad, me);

    const auto c = WallClock::now();
    // The dense sum, with rank 0's out-of-time flag riding along.
    std::vector<float> dense(grad.dense.data(), grad.dense.data() + grad.dense.size());
    dense.push_back(w == 0 && job.out_of_time() ? 1.0f : 0.0f);
    MPI_Allreduce(MPI_IN_PLACE, dense.data(), static_cast<int>(dense.size()), MPI_FLOAT, MPI_SUM,
                  MPI_COMM_WORLD);
    const bool out_of_time = dense.back() > 0.0f;
    dense.pop_back();
    // Every worker's rows of every table, in three collectives: the row counts per table,
    // then all row ids, then all values, each rank's tables one after another.
    std::vector<int> counts(tables), all_counts(tables * n);
    std::vector<int32_t> my_rows;
    std::vector<float> my_values;
    for (size_t k = 0; k < tables; ++k) {
      const SparseRows& mine = grad.tables[k];
      counts[k] = static_cast<int>(mine.rows.size());
      my_rows.insert(my_rows.end(), mine.rows.begin(), mine.rows.end());
      my_values.insert(my_values.end(), mine.values.data(),
                       mine.values.data() + mine.values.size());
    }
    MPI_Allgather(counts.data(), static_cast<int>(tables), MPI_INT, all_counts.data(),
                  static_cast<int>(tables), MPI_INT, MPI_COMM_WORLD);
    std::vector<int> row_counts(n, 0), row_offsets(n, 0), value_counts(n, 0), value_offsets(n, 0);
    for (int v = 0, rows_total = 0, values_total = 0; v < n; ++v) {
      for (size_t k = 0; k < tables; ++k) {
        const int c_k = all_counts[v * tables + k];
        row_counts[v] += c_k;
        value_counts[v] += c_k * static_cast<int>(job.params.tables[k].cols());
      }
      row_offsets[v] = rows_total;
      value_offsets[v] = values_total;
      rows_total += row_counts[v];
      values_total += value_counts[v];
    }
    std::vector<int32_t> all_rows(static_cast<size_t>(row_offsets[n - 1] + row_counts[n - 1]));
    std::vector<float> all_values(static_cast<size_t>(value_offsets[n - 1] + value_counts[n - 1]));
    MPI_Allgatherv(my_rows.data(), static_cast<int>(my_rows.size()), MPI_INT32_T, all_rows.data(),
                   row_counts.data(), row_offsets.data(), MPI_INT32_T, MPI_COMM_WORLD);
    MPI_Allgatherv(my_values.data(), static_cast<int>(my_values.size()), MPI_FLOAT,
                   all_values.data(), value_counts.data(), value_offsets.data(), MPI_FLOAT,
                   MPI_COMM_WORLD);
    std::vector<std::vector<SparseRows>> rows(n, std::vector<SparseRows>(tables));
    for (int v = 0; v < n; ++v) {
      size_t r = static_cast<size_t>(row_offsets[v]), x = static_cast<size_t>(value_offsets[v]);
      for (size_t k = 0; k < tables; ++k) {
        const int count = all_counts[v * tables + k];
        const int dim = static_cast<int>(job.params.tables[k].cols());
        SparseRows& sr = rows[v][k];
        sr.rows.assign(all_rows.begin() + static_cast<ptrdiff_t>(r),
                       all_rows.begin() + static_cast<ptrdiff_t>(r) + count);
        sr.values = Eigen::Map<RowMatrixXf>(all_values.data() + x, count, dim);
        r += static_cast<size_t>(count);
        x += static_cast<size_t>(count) * static_cast<size_t>(dim);
      }
    }
    me.comm_s += seconds_since(c);

    for (int v = 0; v < n; ++v) {
      Gradient g;
      g.dense = v == 0 ? Eigen::Map<Eigen::VectorXf>(dense.data(),
                                                     static_cast<Eigen::Index>(dense.size()))
                             .eval()
                       : Eigen::VectorXf::Zero(static_cast<Eigen::Index>(dense.size()));
      g.tables = std::move(rows[v]);
      g.samples = batch.size();
      if (auto update = rule->receive(v, tokens[v], std::move(g))) {
        optimizer.apply(job.params, *update);
        if (w == 0) job.updated(*update);
        applied += update->samples;
      }
    }
    ++me.steps;
    me.step_ends.push_back(job.elapsed());
    if (w == 0) job.maybe_snapshot(rule->global_step(), applied);
    if (applied >= job.record.budget().max_samples() || out_of_time) break;
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

// A server-mode worker (rank w + 1): draw the batch, ask for admission with its rows, get
// the token and the parameters it needs, compute, push; until the server says stop.
void run_ps_worker(Job& job, WorkerRecord& me) {
  const ExperimentSpec& spec = job.spec;
  const int n = job.size - 1, w = job.rank - 1;
  ShardIterator shard(job.data.train, w, n, spec.seed);
  RankSlowdown slow(spec, job.trace, w);
  const size_t tables = job.params.tables.size();
  Gradient grad;
  for (int64_t step = 0;; ++step) {
    job.maybe_fail(step);
    const Batch batch = shard.next(spec.training.local_batch);
    const auto needed = rows_needed(batch, tables);
    auto c = WallClock::now();
    Buffer ask;
    ask.put<int32_t>(kAdmit);
    for (const auto& r : needed) {
      ask.put<int64_t>(static_cast<int64_t>(r.size()));
      ask.put(r.data(), r.size());
    }
    send(ask, 0, kToServer);
    Buffer answer = receive(0, kToWorker);
    if (answer.get<int32_t>() == kStop) break;
    const auto token = answer.get<int64_t>();
    answer.get(job.params.dense.data(), static_cast<size_t>(job.params.dense.size()));
    for (size_t k = 0; k < tables; ++k) {
      RowMatrixXf& table = job.params.tables[k];
      for (int32_t row : needed[k])
        answer.get(table.row(row).data(), static_cast<size_t>(table.cols()));
    }
    me.comm_s += seconds_since(c);

    compute_step(job, slow, step, batch, grad, me);

    c = WallClock::now();
    Buffer push;
    push.put<int32_t>(kPush);
    push.put<int64_t>(token);
    push.put<int64_t>(grad.samples);
    push.put(grad.dense.data(), static_cast<size_t>(grad.dense.size()));
    for (const SparseRows& s : grad.tables) put_rows(push, s);
    send(push, 0, kToServer);  // ordered before this worker's next request
    me.comm_s += seconds_since(c);
    ++me.steps;
    me.step_ends.push_back(job.elapsed());
  }
}

// The parameter server (rank 0): the rule, the parameters and the optimizer. Requests and
// pushes are handled one at a time in arrival order; a refused request waits in a queue and
// is tried again after every update.
RuleMetrics run_ps_server(Job& job, int64_t& applied, ServerRecord& record) {
  const ExperimentSpec& spec = job.spec;
  const int n = job.size - 1;
  auto rule = make_rule(spec.training);
  Optimizer optimizer(spec.optimizer, job.params);
  const size_t tables = job.params.tables.size();
  std::vector<std::vector<std::vector<int32_t>>> wanted(n);  // each waiting worker's rows
  std::deque<int> waiting;
  bool stop = false;
  int stopped = 0;
  auto grant = [&](int w, int64_t token) {
    Buffer b;
    b.put<int32_t>(kGrant);
    b.put<int64_t>(token);
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
  auto tell_stop = [&](int w) {
    Buffer b;
    b.put<int32_t>(kStop);
    send(b, w + 1, kToWorker);
    ++stopped;
  };
  // Stop, grant, or keep waiting (at the back of the queue).
  auto admit_or_queue = [&](int w) {
    if (stop) return tell_stop(w);
    const Admission a = rule->admit(w);
    if (a.admitted)
      grant(w, a.token);
    else
      waiting.push_back(w);
  };
  while (stopped < n) {
    int source = 0;
    auto t = WallClock::now();
    Buffer m = receive(MPI_ANY_SOURCE, kToServer, &source, &record.idle_s);
    record.receive_s += seconds_since(t);
    const int w = source - 1;
    const auto kind = m.get<int32_t>();
    if (kind == kAdmit) {
      wanted[w].assign(tables, {});
      for (size_t k = 0; k < tables; ++k) {
        wanted[w][k].resize(static_cast<size_t>(m.get<int64_t>()));
        m.get(wanted[w][k].data(), wanted[w][k].size());
      }
      admit_or_queue(w);
      continue;
    }
    // A push.
    const auto token = m.get<int64_t>();
    Gradient g;
    g.samples = m.get<int64_t>();
    g.dense.resize(job.params.dense.size());
    m.get(g.dense.data(), static_cast<size_t>(g.dense.size()));
    for (size_t k = 0; k < tables; ++k) g.tables.push_back(get_rows(m));
    ++record.pushes;
    t = WallClock::now();
    if (auto update = rule->receive(w, token, std::move(g))) {
      optimizer.apply(job.params, *update);
      job.updated(*update);
      applied += update->samples;
      stop = job.record.budget().spent(applied, job.elapsed());
      job.maybe_snapshot(rule->global_step(), applied);
    }
    record.update_s += seconds_since(t);
    for (size_t i = waiting.size(); i-- > 0;) {  // each waiting worker once, in order
      const int v = waiting.front();
      waiting.pop_front();
      admit_or_queue(v);
    }
  }
  job.maybe_snapshot(rule->global_step(), applied, true);
  return rule->metrics();
}

}  // namespace

int ranks_needed(const ExperimentSpec& spec) {
  return spec.training.num_workers + (spec.training.mode == Mode::kSync ? 0 : 1);
}

void write_parameters(const std::string& path, const Eigen::VectorXf& dense,
                      const std::vector<RowMatrixXf>& tables) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary);
    out.write(reinterpret_cast<const char*>(dense.data()),
              static_cast<std::streamsize>(dense.size() * sizeof(float)));
    for (const auto& t : tables)
      out.write(reinterpret_cast<const char*>(t.data()),
                static_cast<std::streamsize>(t.size() * sizeof(float)));
    if (!out) throw InputError(path + ": cannot write the parameters");
  }
  std::rename(tmp.c_str(), path.c_str());
}

nlohmann::ordered_json run_mpi_job(const ExperimentSpec& spec, const MpiOptions& options) {
  Job job(spec, options);
  if (job.rank == 0 && spec.evaluation.test_samples > 0)
    job.data.test = first_rows(job.data.test, spec.evaluation.test_samples);
  const bool sync = spec.training.mode == Mode::kSync;
  WorkerRecord me;
  ServerRecord server;
  int64_t applied = 0;
  RuleMetrics metrics;
  MPI_Barrier(MPI_COMM_WORLD);
  job.start = WallClock::now();
  if (job.rank == 0) job.maybe_snapshot(0, 0, true);
  if (sync) {
    metrics = run_sync(job, me, applied);
  } else if (job.rank == 0) {
    metrics = run_ps_server(job, applied, server);
  } else {
    run_ps_worker(job, me);
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
  }
  DriverSummary driver{"wall", run_time};
  driver.before_counts = {{"snapshots", job.snapshots.size()}, {"snapshot_s", job.snapshot_s}};
  driver.after_counts = {{"ranks", job.size}};
  nlohmann::ordered_json doc = job.record.result(driver, metrics.global_steps, applied, metrics);
  nlohmann::ordered_json workers = nlohmann::ordered_json::array();
  for (int r = sync ? 0 : 1; r < job.size; ++r) {
    Buffer b;
    b.bytes().assign(all.begin() + offsets[r], all.begin() + offsets[r] + sizes[r]);
    const auto steps = b.get<int64_t>();
    const auto compute = b.get<double>(), injected = b.get<double>(), slept = b.get<double>(),
               comm = b.get<double>();
    std::vector<double> ends(static_cast<size_t>(steps));
    b.get(ends.data(), ends.size());
    workers.push_back({{"worker", sync ? r : r - 1},
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
  if (!sync) {
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
