// The collectives of a sync step (docs/cluster.md, "Collectives"): the all-reduce of the dense
// gradient, then the all-gather of each worker's sparse rows on a ring of every worker (N - 1
// passes, the block of worker w - i at pass i). The all-reduce (cluster.allreduce) is
// - "ring": one ring of every worker, 2(N - 1) passes of size / N (reduce-scatter, then
//   all-gather);
// - "hierarchical", as NCCL's across GPU nodes of g workers: a reduce-scatter on the ring of
//   each node's workers (g - 1 passes of size / g), an all-reduce of each worker's 1 / g on
//   the ring of the workers of the same local rank on every node (g rings at once across the
//   M nodes, 2(M - 1) passes of size / (g M)), an all-gather in each node (g - 1 passes).
// - "tree", NCCL's double binary tree: the first tree in heap order (the parent of rank r is
//   (r - 1) / 2), the second its mirror (rank r there is rank n - 1 - r here), so that a rank
//   inner in one is a leaf in the other; each carries half of the size, in chunks of
//   cluster.tree_chunk_bytes: a rank takes each chunk from its children, then sends it to its
//   parent (a reduce), then takes it from its parent and sends it to its children (a
//   broadcast), the chunks one after another, so that chunks pipeline up and down the trees,
//   up to 8 of them taken in ahead and 8 on their way to the next ranks (NCCL's 8 steps);
//   always a message a chunk and edge (no aggregate model).
// - "nccl", NCCL's ring or tree, the algorithm and protocol picked by NCCL's tuner model
//   (sim/nccl_model.h) from their latencies and the platform's bandwidth: NCCL pipelines a
//   collective in chunks over many channels, so every edge of every channel carries its bytes
//   at once, and each worker sends each peer one message of its bytes for that edge over all
//   channels (the ring: g channels, each leaving a node of g workers by another worker, so that
//   every worker sends 2(n - 1)/n x size x (g - 1)/g to the next worker of its node and the rest
//   to a worker of the next node; the tree: a chain in each node and NCCL's two binary trees
//   across nodes, over 2g channels, each with its head on another worker; NVLS, on Hopper GPU
//   nodes, the NVSwitch reducing and multicasting: a worker's NVLink carries (g + 1)/g of the
//   buffer each way, which a stream to the next worker of its node carries here, and across
//   nodes the tree's streams, NVLSTree). The bytes are
//   divided by the protocol's efficiency (and NVLink's, inside a node); the collective ends
//   when every worker's bytes have arrived, plus what NCCL's latency exceeds the routes'.
// Every ring is simulated in one of two models (cluster.ring_model):
// - "messages": every pass a message to the next member, received from the previous one;
// - "aggregate": the members meet at a barrier, then each sends the next one message of all
//   the bytes of its passes and receives one, and waits the latency of the other passes: one
//   message a member a collective, so that sync at thousands of workers costs what a server
//   mode costs to simulate. Checked against "messages" by tests/collectives_test.py.
#pragma once

#include <simgrid/s4u.hpp>

#include <deque>
#include <string>
#include <vector>

#include "experiment/spec.h"
#include "sim/cluster.h"
#include "sim/nccl_model.h"

namespace gbasim {

// A ring of some of the workers, in the order given.
class RingGroup {
 public:
  RingGroup(const Cluster& cluster, std::vector<int> workers, RingModel model,
            const std::string& name);
  int size() const { return static_cast<int>(workers_.size()); }
  // Member i's part of passes that send bytes[j] to the next member at pass j.
  void run(int i, const std::vector<double>& bytes);
  // Messages member i sends in `passes` passes.
  int64_t messages(int64_t passes) const;

 private:
  void pass(int i, double bytes);

  Network& network_;
  std::vector<int> workers_;
  RingModel model_;
  std::deque<Box> boxes_;             // member i's: it receives from the previous member
  simgrid::s4u::BarrierPtr barrier_;  // aggregate
  std::vector<double> latency_;       // aggregate: of each member's route to the next, raw
};

// The collectives of the pool of workers first to first + workers - 1 (every worker without
// pools); w below is a worker's rank in it (worker first + w), blocks are indexed by rank.
class Collectives {
 public:
  // `name` tells apart the mailboxes of several pools' collectives.
  Collectives(const Cluster& cluster, const ClusterSpec& spec, int first, int workers,
              const std::string& name = "");
  // Worker w's part of one step's all-reduce of `dense_bytes` and all-gather of `blocks` (by
  // worker; every worker's is set before any worker's collective starts).
  void step(int w, double dense_bytes, const std::vector<double>& blocks);
  void all_reduce(int w, double bytes);
  void all_gather(int w, const std::vector<double>& blocks);
  // Worker w's part of a reduce-scatter of `bytes` (each worker ends with the sum of 1/n of
  // it): the ring's n - 1 passes of bytes / n, or NCCL's ring with allreduce "nccl".
  void reduce_scatter(int w, double bytes);
  // Every worker sends bytes_to[v] to every other worker v (cluster.all_to_all_model):
  // "messages": to each at once, point to point (as MPI's linear all-to-all); "aggregate": the
  // bytes for other nodes in one message to the worker half the pool away (on another node),
  // those for its own node in one to the next worker of the node, so that each NIC and link
  // carries what it would, in two messages instead of N - 1 (checked against "messages" by
  // tests/collectives_test.py). Returns when w's sends have arrived.
  void all_to_all(int w, const std::vector<double>& bytes_to);
  // Messages worker w sends in one all-to-all.
  int64_t messages_per_all_to_all() const;
  // Waits for every worker (after an all-to-all: until every worker's bytes have arrived).
  void barrier() const;
  // Point-to-point messages worker w sends in one step's all-reduce of `dense_bytes` and
  // all-gather, or in the all-reduce alone.
  int64_t messages_per_step(int w, double dense_bytes) const;
  int64_t messages_per_all_reduce(int w, double bytes) const;
  // What the all-reduce of `bytes` runs: "ring", "hierarchical", "tree", or for "nccl" the
  // algorithm and protocol NCCL's tuner picks ("tree/LL128").
  std::string all_reduce_name(double bytes) const;
  // What an all-gather or reduce-scatter of `bytes` runs: "ring", or with "nccl" NCCL's ring
  // and the protocol its tuner picks ("ring/LL128").
  std::string gather_name(double bytes) const;

 private:
  // allreduce "nccl": a worker's stream to one peer, its bytes a byte of an all-reduce's
  // buffer (NVLink's efficiency included inside a node); on the ring, `channels` is the share of
  // the channels whose ring goes from the worker to this peer, over NVLink's efficiency.
  struct Stream {
    int to;
    double share;
    double channels = 0.0;
  };
  void build_nccl_streams(const ClusterSpec& spec);
  NcclChoice nccl_choice(double bytes, NcclOp op = NcclOp::kAllReduce) const;
  // Worker w's part of an NCCL collective of `bytes`; a gather's blocks by worker (nullptr:
  // bytes / n each).
  void nccl_run(int w, NcclOp op, double bytes, const std::vector<double>* blocks = nullptr);
  void tree_all_reduce(int w, double bytes);
  int tree_chunks(double bytes) const;  // a tree's half of `bytes` in chunks
  const Cluster& cluster_;
  int first_, n_, g_;
  AllReduce algorithm_;
  simgrid::s4u::BarrierPtr barrier_;
  double tree_chunk_bytes_;
  RingModel ring_model_;        // resolved: messages or aggregate
  RingModel all_to_all_model_;  // resolved
  std::deque<Box> tree_up_;     // tree t, rank r, child k: (t n + r) 2 + k
  std::deque<Box> tree_down_;   // tree t, rank r: t n + r
  RingGroup all_;
  std::vector<RingGroup> nodes_;       // hierarchical: node k's workers
  std::vector<RingGroup> local_rank_;  // hierarchical: local rank i's workers on every node
  NcclJob nccl_job_;
  // By algorithm (nccl_index: ring, tree, NVLS).
  std::vector<Stream> nccl_streams_[kNcclAlgorithms];   // w's streams, in order of w
  std::vector<int> nccl_first_[kNcclAlgorithms];        // [w]: w's first stream; size n + 1
  double nccl_seconds_per_byte_[kNcclAlgorithms] = {};  // the busiest link's load / bandwidth
  double nccl_route_latency_[kNcclAlgorithms] = {};     // the longest stream route's, charged
};

}  // namespace gbasim
