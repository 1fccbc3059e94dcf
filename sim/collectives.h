// The collectives of a sync step on a ring of the workers: the all-reduce of the dense
// gradient (2(N - 1) passes of size / N), then the all-gather of each worker's sparse rows
// (N - 1 passes, the block of worker w - i at pass i), in one of two models
// (cluster.ring_model):
// - "messages": every pass a message to the next worker, received from the previous one:
//   3(N - 1) messages a worker a step, 3N(N - 1) in all;
// - "aggregate": the workers meet at a barrier, then each sends the next worker one message
//   of all the bytes it would send in its passes and receives one, and waits the latency of
//   the other passes: N messages a step, so that sync at thousands of workers costs what a
//   server mode costs to simulate. Checked against "messages" by tests/collectives_test.py.
#pragma once

#include <simgrid/s4u.hpp>

#include <vector>

#include "experiment/spec.h"
#include "sim/cluster.h"

namespace gbasim {

class Ring {
 public:
  Ring(const Cluster& cluster, RingModel model);
  // Worker w's part of one step's all-reduce of `dense_bytes` and all-gather of `blocks` (by
  // worker; every worker's is set before any worker's collective starts).
  void step(int w, double dense_bytes, const std::vector<double>& blocks);
  // Point-to-point messages of one step, per worker.
  int64_t messages_per_step() const;

 private:
  void pass(int w, double bytes);
  void aggregate(int w, double dense_bytes, const std::vector<double>& blocks);

  int n_;
  RingModel model_;
  std::vector<simgrid::s4u::Mailbox*> mailboxes_;
  simgrid::s4u::BarrierPtr barrier_;  // aggregate
  std::vector<double> latency_;       // aggregate: of each worker's route to the next, raw
};

}  // namespace gbasim
