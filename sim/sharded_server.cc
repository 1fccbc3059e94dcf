// The sharded server model (server.h): admissions through the rule, pulls and pushes to
// every shard, a push acknowledged once its update is done.
#include <deque>
#include <memory>

#include "sim/messages.h"
#include "sim/server.h"

namespace gbasim {
namespace {

// The notice that a worker's gradient has reached the shards.
struct Pushed {
  int worker;
  int64_t token;
  Gradient gradient;
};

class ShardedServer : public Server {
 public:
  ShardedServer(Training& training, const Cluster& cluster)
      : training_(training),
        cluster_(cluster),
        network_(cluster.network()),
        inbox_(network_, "ps", cluster.servers()[0]) {
    for (int w = 0; w < training.workers(); ++w)
      acks_.emplace_back(network_, "ack-" + std::to_string(w), cluster.workers()[w].host);
    pushed_.resize(static_cast<size_t>(training.workers()));
    rows_.resize(static_cast<size_t>(training.workers()));
  }

  bool admit(int worker, Admission& admission, Mode& mode) override {
    return training_.wait_for_admission(worker, admission, mode);
  }

  Gradient pull(int w, const Admission&) override {
    Gradient grad;
    training_.next_gradient(w, grad);
    const double start = sg4::Engine::get_clock();
    const auto& servers = cluster_.servers();
    const int shards = static_cast<int>(servers.size());
    sg4::Host* me = cluster_.workers()[w].host;
    // The push carries the same rows (the gradient of this batch): counted once, here.
    const StepSizes& sizes = training_.sizes();
    rows_[w] = sizes.rows(grad, shards);
    const std::vector<double> pull = bytes(w, sizes.value_bytes(), 0.0);
    const std::vector<double> request = bytes(w, 0.0, sizes.id_bytes());
    std::vector<Transfer> comms;
    for (int p = 0; p < shards; ++p)
      comms.push_back(network_.send(me, servers[p], kControlBytes + request[p]));
    network_.wait_all(comms);
    comms.clear();
    for (int p = 0; p < shards; ++p) comms.push_back(network_.send(servers[p], me, pull[p]));
    training_.count_messages(3 * shards + 2);  // requests, pulls, pushes, the notice, its ack
    network_.wait_all(comms);
    training_.stats(w).comm_s += sg4::Engine::get_clock() - start;
    return grad;
  }

  // The push returns once the update is done (its acknowledgement), so the worker is never
  // admitted again while its token is still out.
  void push(int w, int64_t token, Gradient grad) override {
    const double start = sg4::Engine::get_clock();
    const auto& servers = cluster_.servers();
    const std::vector<double> push =
        bytes(w, training_.sizes().value_bytes(), training_.sizes().id_bytes());
    std::vector<Transfer> comms;
    for (size_t p = 0; p < servers.size(); ++p)
      comms.push_back(network_.send(cluster_.workers()[w].host, servers[p], push[p]));
    network_.wait_all(comms);
    // The notice lives in w's slot (w has one push in flight at most), not on the heap: a run
    // ended with messages in flight leaks nothing.
    pushed_[w] = Pushed{w, token, std::move(grad)};
    inbox_.put(&pushed_[w], kControlBytes);
    acks_[w].get<int>();
    training_.stats(w).comm_s += sg4::Engine::get_clock() - start;
  }

  // Notices flow to the server while it works (a permanent receiver, as MPI's small messages
  // do), so that a busy server takes the next one the moment an update is done, not a
  // latency later, and a worker's next admission never coincides with the next update.
  void start() override {
    auto server = sg4::Actor::create("ps", cluster_.servers()[0], [this] { serve(); });
    server->daemonize();
    inbox_.set_receiver(server);
  }

 private:
  // Of the rows of w's gradient in flight, counted by pull().
  std::vector<double> bytes(int w, double per_value, double per_row_id) const {
    return owner_bytes(rows_[w], training_.sizes().dense_values(), per_value, per_row_id);
  }

  // Gradients are taken in one at a time. An update becomes visible at once (so that every
  // token names the parameters a worker then computes on); the shards' optimizer work (in
  // parallel on equal shares) is then charged before the push is acknowledged.
  void serve() {
    while (true) {
      Pushed* pushed = inbox_.get<Pushed>();
      const std::optional<Gradient> update = take_in(
          training_, cluster_, pushed->worker, pushed->token, std::move(pushed->gradient));
      // The last gradient in flight of a switch back to sync.
      if (auto move = training_.take_owed_move()) training_.move_model(*move, cluster_);
      if (update) charge_update(training_, cluster_, *update);
      acks_[pushed->worker].put_detached(&ack_payload, kControlBytes);
    }
  }

  Training& training_;
  const Cluster& cluster_;
  Network& network_;
  Box inbox_;
  std::vector<Pushed> pushed_;  // each worker's notice in flight
  std::vector<RowsByOwner> rows_;  // each worker's gradient's rows by shard
  std::deque<Box> acks_;  // the server's acknowledgement of each worker's push
};

}  // namespace

std::unique_ptr<Server> make_sharded_server(Training& training, const Cluster& cluster) {
  return std::make_unique<ShardedServer>(training, cluster);
}

}  // namespace gbasim
