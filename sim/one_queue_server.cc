// The one-queue server model (server.h), as gbasim-mpi's server: admission requests and pushes
// in one queue, served one at a time; a request is answered with the token and the parameters
// (the gradient is computed then, on those parameters); a push is acknowledged when taken in;
// requests the rule refused are served again after each update.
#include <deque>
#include <memory>

#include "base/random.h"
#include "models/layers.h"
#include "sim/messages.h"
#include "sim/server.h"

namespace gbasim {
namespace {

// A message into the server's queue: a worker's admission request, or its push.
struct Arrival {
  int worker;
  int64_t token;
  Gradient gradient;
  bool request = false;
};

class OneQueueServer : public Server {
 public:
  OneQueueServer(Training& training, const Cluster& cluster)
      : training_(training),
        cluster_(cluster),
        network_(cluster.network()),
        inbox_(network_, "ps", cluster.servers()[0]),
        requested_(training.workers()),
        granted_(training.workers()),
        arrivals_(static_cast<size_t>(training.workers())),
        grants_slots_(static_cast<size_t>(training.workers())) {
    for (int w = 0; w < training.workers(); ++w) {
      acks_.emplace_back(network_, "ack-" + std::to_string(w), cluster.workers()[w].host);
      grants_.emplace_back(network_, "grant-" + std::to_string(w), cluster.workers()[w].host);
    }
  }

  // One message each way: the request (with the batch's row ids, table by table) into the
  // server's queue, then its answer with the parameters.
  bool admit(int w, Admission& admission, Mode& mode) override {
    const double start = sg4::Engine::get_clock();
    requested_[w] = training_.next_batch(w);
    const StepSizes& sizes = training_.sizes();
    double row_ids = 0.0;
    if (sizes.proxy()) {
      const FieldGroups groups(requested_[w].ids);
      for (size_t t = 0; t < training_.table_dims().size(); ++t)
        row_ids += static_cast<double>(groups.unique_ids[t % groups.unique_ids.size()].size());
    } else {
      Gradient batch;
      batch.samples = requested_[w].ids.rows();
      row_ids = total(sizes.rows(batch, 1).rows);
    }
    // Messages live in per-worker slots (a worker has one in flight at most), not on the
    // heap: a run ended with messages in flight leaks nothing.
    arrivals_[w] = Arrival{w, 0, Gradient{}, true};
    queued(+1);
    inbox_.put(&arrivals_[w], kControlBytes + sizes.id_bytes() * row_ids);
    admission = *grants_[w].get<Admission>();
    training_.stats(w).comm_s += sg4::Engine::get_clock() - start;
    training_.count_messages(3);  // the request, the grant with the pull, the push
    mode = training_.spec().training.mode;
    return admission.admitted;
  }

  // The grant brought the parameters; the server computed the gradient on them.
  Gradient pull(int w, const Admission&) override { return std::move(granted_[w]); }

  // One message into the server's queue. As a large MPI message (rendezvous), it returns once
  // the server has taken it in (its notice, sent then), so that the worker's next request
  // queues behind what arrived meanwhile.
  void push(int w, int64_t token, Gradient grad) override {
    const double start = sg4::Engine::get_clock();
    const StepSizes& sizes = training_.sizes();
    const double bytes = owner_bytes(sizes.rows(grad, 1), sizes.dense_values(),
                                     sizes.value_bytes(), sizes.id_bytes())[0];
    arrivals_[w] = Arrival{w, token, std::move(grad)};
    queued(+1);
    inbox_.put(&arrivals_[w], kControlBytes + bytes);
    acks_[w].get<int>();
    training_.stats(w).comm_s += sg4::Engine::get_clock() - start;
  }

  // Messages flow to the server while it works, as MPI's do, so that it is busy with its
  // work and not with their latency.
  void start() override {
    auto server = sg4::Actor::create("ps", cluster_.servers()[0], [this] { serve(); });
    server->daemonize();
    inbox_.set_receiver(server);
  }

 private:
  // The messages sent to the server and not yet taken up by it (on their way, or waiting), as
  // the timeline's "server queue" counter: each worker has one in flight at most.
  void queued(int delta) {
    queued_ += delta;
    if (Timeline* timeline = training_.timeline())
      timeline->counter("server queue", sg4::Engine::get_clock(), queued_);
  }

  // The next message: the first sent of those in the inbox, once it has arrived (the inbox
  // hands them over in the order sent, as SimGrid's permanent mailbox does: Box::set_receiver),
  // or (cluster.ps_service_seed k > 0) one of those handed over, at random, as an MPI server
  // probing for any source gets them in an order of its transport's making.
  Arrival* next(Rng& pick) {
    if (training_.spec().cluster.ps_service_seed == 0) return inbox_.get<Arrival>();
    if (arrived_.empty()) arrived_.push_back(inbox_.get<Arrival>());
    while (inbox_.ready()) arrived_.push_back(inbox_.get<Arrival>());
    const auto chosen =
        arrived_.begin() + static_cast<ptrdiff_t>(
                               std::uniform_int_distribution<size_t>(0, arrived_.size() - 1)(pick));
    Arrival* arrival = *chosen;
    arrived_.erase(chosen);
    return arrival;
  }

  // Admits (computing the worker's gradient on the parameters of its token and sending the
  // grant) or stops the worker; false when the rule leaves it waiting.
  bool serve_request(int w) {
    Admission admission;
    {
      std::unique_lock lock(*training_.mutex());
      if (!training_.stopped()) {
        admission = training_.rule().admit(w);
        if (!admission.admitted) return false;
        training_.gradient_of(requested_[w], granted_[w]);  // on the parameters of the token
      }
    }
    double bytes = kControlBytes;
    if (admission.admitted)
      bytes += total(owner_bytes(training_.sizes().rows(granted_[w], 1),
                                 training_.sizes().dense_values(), training_.sizes().value_bytes(),
                                 0.0));
    // The server sends the grant itself and goes on once it is through, as gbasim-mpi's does
    // (a blocking send); so grants go out one after another.
    grants_slots_[w] = admission;
    const double start = sg4::Engine::get_clock();
    grants_[w].put(&grants_slots_[w], bytes);
    if (Timeline* timeline = training_.timeline())
      timeline->server_span("grant", start, sg4::Engine::get_clock());
    return true;
  }

  void serve() {
    const ExperimentSpec& spec = training_.spec();
    Rng pick = service_order_rng(static_cast<uint64_t>(spec.cluster.ps_service_seed));
    RuleInForce& rule = training_.rule();
    while (true) {
      Arrival* arrival = next(pick);
      queued(-1);
      if (arrival->request) {
        if (!serve_request(arrival->worker)) rule.queue_refused(arrival->worker);
        continue;
      }
      acks_[arrival->worker].put_detached(&ack_payload, kControlBytes);
      const std::optional<Gradient> update = take_in(
          training_, cluster_, arrival->worker, arrival->token, std::move(arrival->gradient));
      if (update) charge_update(training_, cluster_, *update);
      rule.serve_refused([this](int w) { return serve_request(w); });
    }
  }

  Training& training_;
  const Cluster& cluster_;
  Network& network_;
  Box inbox_;
  std::deque<Box> acks_, grants_;
  std::vector<Batch> requested_;  // each worker's batch, drawn when it asks
  std::vector<Gradient> granted_;  // its gradient, computed when the server admits it
  std::vector<Arrival*> arrived_;  // taken from the queue, not yet served
  std::vector<Arrival> arrivals_;  // each worker's message in flight
  std::vector<Admission> grants_slots_;  // each worker's grant in flight
  int queued_ = 0;
};

}  // namespace

std::unique_ptr<Server> make_one_queue_server(Training& training, const Cluster& cluster) {
  return std::make_unique<OneQueueServer>(training, cluster);
}

}  // namespace gbasim
