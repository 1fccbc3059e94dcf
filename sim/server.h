// The parameter server, in one of two models (cluster.server_model, docs/spec.md):
// - sharded (the default): admissions do not pass through the server (the worker takes its
//   token from the rule), the pull and the push go to every shard, and a push is
//   acknowledged once its update is done;
// - one_queue: as gbasim-mpi's server, one queue of admission requests and pushes served one
//   at a time; the token is taken when the server serves the request, which it answers with
//   the parameters; a push is acknowledged when it is taken in.
// A worker's step in a server mode is admit, pull, compute, push (workers.cc).
#pragma once

#include <memory>

#include "sim/cluster.h"
#include "sim/training.h"

namespace gbasim {

// What an acknowledgement carries: nothing anyone reads.
inline int ack_payload = 0;

class Server {
 public:
  virtual ~Server() = default;
  // Blocks until `worker` may start a step; false when the run stopped. `mode` is the mode
  // in force at the admission (sync too, whose barrier is the rule's).
  virtual bool admit(int worker, Admission& admission, Mode& mode) = 0;
  // The parameters of the token: the gradient of the worker's next batch computed on them,
  // and the messages that bring them.
  virtual Gradient pull(int worker, const Admission& admission) = 0;
  // Sends the gradient; returns when the server acknowledges it.
  virtual void push(int worker, int64_t token, Gradient gradient) = 0;
  // Starts the server's actor (a daemon) on the first shard's host.
  virtual void start() = 0;
};

// What both models do with a push they take in: the server's own work (cost.server_flops_per_push,
// and in modes that sum several gradients into one update the merge of its rows), then, under
// the lock, the rule takes it; the update it completes is applied and returned.
std::optional<Gradient> take_in(Training& training, const Cluster& cluster, int worker,
                                int64_t token, Gradient gradient);
// The shards' optimizer work for an applied update, in parallel on equal shares.
void charge_update(const Training& training, const Cluster& cluster, const Gradient& update);

std::unique_ptr<Server> make_sharded_server(Training& training, const Cluster& cluster);
std::unique_ptr<Server> make_one_queue_server(Training& training, const Cluster& cluster);

// The spec's server model; sync alone (no server) admits through the rule as the sharded
// model does.
inline std::unique_ptr<Server> make_server(Training& training, const Cluster& cluster) {
  const ExperimentSpec& spec = training.spec();
  return spec.cluster.server_model == ServerModel::kOneQueue && spec.training.mode != Mode::kSync
             ? make_one_queue_server(training, cluster)
             : make_sharded_server(training, cluster);
}

}  // namespace gbasim
