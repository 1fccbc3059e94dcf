#include "sim/collectives.h"

#include <xbt/config.hpp>

#include <algorithm>
#include <cmath>
#include <deque>
#include <map>

namespace gbasim {

RingGroup::RingGroup(const Cluster& cluster, std::vector<int> workers, RingModel model,
                     const std::string& name)
    : network_(cluster.network()), workers_(std::move(workers)), model_(model) {
  const int n = size();
  for (int i = 0; i < n; ++i) {
    boxes_.emplace_back(network_, name + "-" + std::to_string(i),
                        cluster.workers()[workers_[i]].host);
  }
  if (model_ == RingModel::kAggregate && n > 1) {
    barrier_ = simgrid::s4u::Barrier::create(static_cast<unsigned>(n));
    for (int i = 0; i < n; ++i) {
      std::vector<simgrid::s4u::Link*> links;
      double latency = 0.0;
      cluster.workers()[workers_[i]].host->route_to(cluster.workers()[workers_[(i + 1) % n]].host,
                                                    links, &latency);
      latency_.push_back(latency);
    }
  }
}

int64_t RingGroup::messages(int64_t passes) const {
  if (size() < 2 || passes == 0) return 0;
  return model_ == RingModel::kAggregate ? 1 : passes;
}

void RingGroup::pass(int i, double bytes) {
  // The payload is the sender's rank, not owned: a run ended with messages in flight leaks
  // nothing.
  const Transfer send = boxes_[(i + 1) % size()].put_async(&workers_[i], bytes);
  boxes_[i].get<int>();
  network_.wait(send);
}

void RingGroup::run(int i, const std::vector<double>& bytes) {
  if (size() < 2 || bytes.empty()) return;
  if (model_ == RingModel::kMessages) {
    for (double b : bytes) pass(i, b);
    return;
  }
  barrier_->wait();  // no pass of a ring gets further than its last member to arrive
  double sum = 0.0;
  for (double b : bytes) sum += b;
  pass(i, sum);
  // The other passes' latencies, as the network model charges each message's (LV08
  // multiplies the route's latency by its latency factor).
  const double factor = simgrid::config::get_value<double>("network/latency-factor");
  simgrid::s4u::this_actor::sleep_for((static_cast<double>(bytes.size()) - 1.0) * latency_[i] *
                                      factor);
}

namespace {

std::vector<int> range(int first, int count, int stride) {
  std::vector<int> members;
  for (int i = 0; i < count; ++i) members.push_back(first + i * stride);
  return members;
}

}  // namespace

Collectives::Collectives(const Cluster& cluster, const ClusterSpec& spec, int first, int workers,
                         const std::string& name)
    : cluster_(cluster),
      first_(first),
      n_(workers),
      g_(cluster.gpus_per_node()),
      algorithm_(spec.allreduce),
      barrier_(simgrid::s4u::Barrier::create(static_cast<unsigned>(n_))),
      tree_chunk_bytes_(spec.tree_chunk_bytes),
      ring_model_(resolve_ring_model(spec.ring_model, workers)),
      all_to_all_model_(resolve_ring_model(spec.all_to_all_model, workers)),
      all_(cluster, range(first, n_, 1), ring_model_, name + "ring") {
  if (algorithm_ == AllReduce::kTree) {
    for (int t = 0; t < 2; ++t) {
      for (int r = 0; r < n_; ++r) {
        const std::string box = name + "tree-" + std::to_string(t) + "-" + std::to_string(r);
        simgrid::s4u::Host* host = cluster.workers()[first + (t == 0 ? r : n_ - 1 - r)].host;
        tree_down_.emplace_back(cluster.network(), box + "-down", host);
        for (int k = 0; k < 2; ++k)
          tree_up_.emplace_back(cluster.network(), box + "-up-" + std::to_string(k), host);
      }
    }
  }
  if (algorithm_ == AllReduce::kNccl) build_nccl_streams(spec);
  if (algorithm_ == AllReduce::kHierarchical) {
    const int m = n_ / g_;
    for (int k = 0; k < m; ++k)
      nodes_.emplace_back(cluster, range(first + k * g_, g_, 1), ring_model_,
                          name + "node-ring-" + std::to_string(k));
    for (int i = 0; i < g_; ++i)
      local_rank_.emplace_back(cluster, range(first + i, m, g_), ring_model_,
                               name + "rank-ring-" + std::to_string(i));
  }
}

void Collectives::build_nccl_streams(const ClusterSpec& spec) {
  const int m = n_ / g_;
  nccl_job_ = {n_,
               m,
               spec.gpu_node.gpu_generation,
               spec.gpu_node.cpu_vendor,
               g_ > 1 && spec.gpu_node.gpu_generation == GpuGeneration::kHopper,
               spec.nccl_algorithm};
  const double nvlink = g_ > 1 ? nvlink_efficiency(spec.gpu_node.gpu_generation) : 1.0;
  const double n = n_;
  auto rank = [&](int node, int local) { return (node + m) % m * g_ + (local + g_) % g_; };
  for (int w = 0; w < n_; ++w) {
    const int k = w / g_, i = w % g_;
    // Adds `share` to w's stream to worker `to` (one message a peer, over all channels).
    auto add = [&](int a, int to, double share) {
      if (to == w) return;
      auto& mine = nccl_streams_[a];
      for (size_t s = nccl_first_[a][w]; s < mine.size(); ++s) {
        if (mine[s].to == to) {
          mine[s].share += share;
          return;
        }
      }
      mine.push_back({to, share});
    };
    for (int a = 0; a < kNcclAlgorithms; ++a)
      nccl_first_[a].push_back(static_cast<int>(nccl_streams_[a].size()));
    // The ring: g channels, channel c entering each node at its worker c + 1 and leaving it
    // from worker c for worker c + 1 of the next node; each edge carries 2(n - 1)/n of the
    // buffer over the channels.
    const double ring = 2.0 * (n - 1.0) / n / g_;
    for (int c = 0; c < g_; ++c) add(0, i == c ? rank(k + 1, i + 1) : rank(k, i + 1), ring);
    // The tree: 2g channels, channel c on tree c / g with its head on worker c % g of every
    // node, a chain from the head through the node (reduced up the chain, broadcast down it),
    // the heads in NCCL's two binary trees over the nodes (nccl_tree_links);
    // each channel carries 1/2g of the buffer up and down.
    const double tree = 1.0 / (2.0 * g_);
    for (int c = 0; c < 2 * g_; ++c) {
      const int head = c % g_;
      if (i != head) add(1, rank(k, i - 1), tree);                  // up the chain
      if (i != (head - 1 + g_) % g_) add(1, rank(k, i + 1), tree);  // down it
      if (i != head) continue;
      const NcclTreeLinks links = nccl_tree_links(m, k, c / g_);
      for (int a : {1, 2}) {  // the tree's heads, and NVLSTree's
        if (links.parent >= 0) add(a, rank(links.parent, head), tree);
        for (int child : links.children)
          if (child >= 0) add(a, rank(child, head), tree);
      }
    }
    // NVLS: the switch reads the whole buffer from each worker and returns the reduced 1/g of
    // it, then takes that 1/g and multicasts every worker's to every worker: (g + 1)/g of the
    // buffer on each worker's NVLink each way, carried here to the next worker of the node.
    if (g_ > 1) add(2, rank(k, i + 1), (g_ + 1.0) / g_);
  }
  // Each algorithm's busiest link and longest route on the platform as it starts.
  const double factor = simgrid::config::get_value<double>("network/latency-factor");
  for (int a = 0; a < kNcclAlgorithms; ++a) {
    nccl_first_[a].push_back(static_cast<int>(nccl_streams_[a].size()));
    std::map<simgrid::s4u::Link*, double> load;
    for (int w = 0; w < n_; ++w) {
      for (int s = nccl_first_[a][w]; s < nccl_first_[a][w + 1]; ++s) {
        Stream& stream = nccl_streams_[a][s];
        if (stream.to / g_ == w / g_) stream.share /= a == 2 ? nvlink * nvls_efficiency() : nvlink;
        std::vector<simgrid::s4u::Link*> links;
        double latency = 0.0;
        cluster_.workers()[first_ + w].host->route_to(cluster_.workers()[first_ + stream.to].host,
                                                      links, &latency);
        nccl_route_latency_[a] = std::max(nccl_route_latency_[a], latency * factor);
        for (simgrid::s4u::Link* link : links) load[link] += stream.share;
      }
    }
    if (a == 0) {
      for (Stream& stream : nccl_streams_[a])
        stream.channels = stream.share * n / (2.0 * (n - 1.0));
    }
    for (const auto& [link, bytes] : load)
      nccl_seconds_per_byte_[a] =
          std::max(nccl_seconds_per_byte_[a], bytes / link->get_bandwidth());
  }
}

NcclChoice Collectives::nccl_choice(double bytes, NcclOp op) const {
  if (op == NcclOp::kAllReduce) return nccl_choose(nccl_job_, bytes, nccl_seconds_per_byte_);
  // A gather's ring edge carries (n - 1)/n of the buffer, half of an all-reduce's.
  double gather[kNcclAlgorithms] = {nccl_seconds_per_byte_[0] / 2.0};
  return nccl_choose(nccl_job_, bytes, gather, op);
}

void Collectives::nccl_run(int w, NcclOp op, double bytes, const std::vector<double>* blocks) {
  const NcclChoice choice = nccl_choice(bytes, op);
  const int a = nccl_index(choice.algorithm);
  const double efficiency = nccl_efficiency(choice.algorithm, choice.protocol, nccl_job_, bytes);
  Network& network = cluster_.network();
  barrier_->wait();  // a collective starts when its last rank calls it
  const double start = simgrid::s4u::Engine::get_clock();
  std::vector<Transfer> sends;
  for (int s = nccl_first_[a][w]; s < nccl_first_[a][w + 1]; ++s) {
    const Stream& stream = nccl_streams_[a][s];
    // A gather's edge to a worker carries every block but that worker's own.
    double edge = bytes * stream.share;
    if (op == NcclOp::kGather)
      edge = (bytes - (blocks ? (*blocks)[stream.to] : bytes / n_)) * stream.channels;
    sends.push_back(network.send(cluster_.workers()[first_ + w].host,
                                 cluster_.workers()[first_ + stream.to].host, edge / efficiency));
  }
  network.wait_all(sends);
  barrier_->wait();  // every worker's bytes have arrived
  // The time NCCL's pipeline takes to fill and drain, or its bandwidth cap where it binds, and
  // its latency beyond what the routes charged.
  const double streamed = simgrid::s4u::Engine::get_clock() - start;
  const double cap = bytes / nccl_bandwidth_cap(choice.algorithm, choice.protocol, nccl_job_, op);
  const double busy =
      std::max(streamed * nccl_pipeline_stretch(choice.algorithm, nccl_job_, bytes), cap);
  simgrid::s4u::this_actor::sleep_for(busy - streamed +
                                      std::max(0.0, choice.latency_s - nccl_route_latency_[a]));
}

std::string Collectives::gather_name(double bytes) const {
  if (algorithm_ != AllReduce::kNccl || n_ < 2) return "ring";
  return nccl_choice_name(nccl_choice(bytes, NcclOp::kGather), nccl_job_);
}

std::string Collectives::all_reduce_name(double bytes) const {
  if (algorithm_ != AllReduce::kNccl || n_ < 2) return allreduce_name(algorithm_);
  return nccl_choice_name(nccl_choice(bytes), nccl_job_);
}

void Collectives::all_reduce(int w, double bytes) {
  if (n_ < 2) return;
  if (algorithm_ == AllReduce::kTree) return tree_all_reduce(w, bytes);
  if (algorithm_ == AllReduce::kNccl) return nccl_run(w, NcclOp::kAllReduce, bytes);
  if (algorithm_ == AllReduce::kRing) {
    all_.run(w, std::vector<double>(2 * (n_ - 1), bytes / n_));
    return;
  }
  const int m = n_ / g_;
  RingGroup& node = nodes_[w / g_];
  const std::vector<double> in_node(g_ - 1, bytes / g_);
  node.run(w % g_, in_node);  // reduce-scatter: worker w holds 1 / g of the node's sum
  local_rank_[w % g_].run(w / g_, std::vector<double>(2 * (m - 1), bytes / (g_ * m)));
  node.run(w % g_, in_node);  // all-gather
}

void Collectives::tree_all_reduce(int w, double bytes) {
  // A rank takes in up to 8 chunks ahead of its work and has up to 8 chunks on their way to
  // each tree's next ranks, as NCCL's 8 steps of buffer do: it sends a chunk once one of the
  // 8 before it has landed. (Without the sender's window, a leaf put all of its chunks on its
  // link at once.)
  constexpr int kWindow = 8;
  const int chunks = tree_chunks(bytes);
  const double chunk = bytes / 2.0 / chunks;
  static int token = 0;    // every chunk's payload: the receivers only count them
  void* landed = nullptr;  // where the chunks land; nobody reads them
  Network& network = cluster_.network();
  std::vector<Transfer> sends;               // still on their way when a phase ends
  for (int phase = 0; phase < 2; ++phase) {  // the reduce up, then the broadcast down
    // Tree t: the mailboxes w takes its chunks from, and those it sends them to.
    std::vector<Box*> from[2], to[2];
    for (int t = 0; t < 2; ++t) {
      const int r = t == 0 ? w : n_ - 1 - w;  // w's rank in tree t
      for (int k = 0; k < 2; ++k) {
        const int child = 2 * r + 1 + k;
        if (child >= n_) continue;
        (phase == 0 ? from[t] : to[t])
            .push_back(phase == 0 ? &tree_up_[(t * n_ + r) * 2 + k] : &tree_down_[t * n_ + child]);
      }
      if (r > 0) {
        (phase == 0 ? to[t] : from[t])
            .push_back(phase == 0 ? &tree_up_[(t * n_ + (r - 1) / 2) * 2 + (r - 1) % 2]
                                  : &tree_down_[t * n_ + r]);
      }
    }
    // receives[t][c]: chunk c's pieces from tree t, each tree's posted up to kWindow chunks
    // ahead of the one it works on; flying[t]: the chunks sent on tree t that have not all
    // landed, oldest first. The trees go on independently, so that a rank waiting in one does
    // not hold up the other.
    std::vector<std::vector<Transfer>> receives[2];
    std::deque<std::vector<Transfer>> flying[2];
    int next[2] = {0, 0};
    auto post_window = [&](int t) {
      while (static_cast<int>(receives[t].size()) < std::min(chunks, next[t] + kWindow)) {
        receives[t].emplace_back();
        for (Box* box : from[t]) receives[t].back().push_back(box->get_async(&landed));
      }
    };
    while (true) {
      // What w waits on: each tree's current chunk, and its oldest chunk sent where its
      // window is full. owner[i]: the list pending[i] came from.
      std::vector<Transfer> pending;
      std::vector<std::vector<Transfer>*> owner;
      for (int t = 0; t < 2; ++t) {
        post_window(t);
        while (next[t] < chunks && receives[t][next[t]].empty() &&
               static_cast<int>(flying[t].size()) < kWindow) {
          flying[t].emplace_back();
          for (Box* box : to[t]) flying[t].back().push_back(box->put_async(&token, chunk));
          if (flying[t].back().empty()) flying[t].pop_back();  // the root sends nothing up
          ++next[t];
          post_window(t);
        }
        std::vector<Transfer>* lists[2] = {
            next[t] < chunks ? &receives[t][next[t]] : nullptr,
            static_cast<int>(flying[t].size()) == kWindow ? &flying[t].front() : nullptr};
        for (auto* list : lists) {
          if (list == nullptr) continue;
          for (const Transfer& transfer : *list) {
            pending.push_back(transfer);
            owner.push_back(list);
          }
        }
      }
      if (pending.empty()) break;  // both trees through every chunk
      const size_t done = network.wait_any(pending);
      std::vector<Transfer>& list = *owner[done];
      const size_t first =
          static_cast<size_t>(std::find(owner.begin(), owner.end(), owner[done]) - owner.begin());
      list.erase(list.begin() + static_cast<long>(done - first));
      for (auto& tree : flying) {
        while (!tree.empty() && tree.front().empty()) tree.pop_front();
      }
    }
    for (auto& tree : flying) {
      for (auto& sent : tree) sends.insert(sends.end(), sent.begin(), sent.end());
    }
  }
  network.wait_all(sends);
}

void Collectives::all_gather(int w, const std::vector<double>& blocks) {
  if (n_ < 2) return;
  if (algorithm_ == AllReduce::kNccl) {
    double total = 0.0;
    for (double b : blocks) total += b;
    return nccl_run(w, NcclOp::kGather, total, &blocks);
  }
  std::vector<double> bytes;
  for (int i = 0; i < n_ - 1; ++i) bytes.push_back(blocks[(w - i + n_) % n_]);
  all_.run(w, bytes);
}

void Collectives::reduce_scatter(int w, double bytes) {
  if (n_ < 2) return;
  if (algorithm_ == AllReduce::kNccl) return nccl_run(w, NcclOp::kGather, bytes);
  all_.run(w, std::vector<double>(n_ - 1, bytes / n_));
}

void Collectives::all_to_all(int w, const std::vector<double>& bytes_to) {
  Network& network = cluster_.network();
  std::vector<Transfer> sends;
  // With "nccl", NCCL's send/receive pairs move at its own NVLink rate inside a node, as its
  // collectives do (nvlink_efficiency).
  const double nvlink =
      algorithm_ == AllReduce::kNccl && g_ > 1 ? nvlink_efficiency(nccl_job_.gpu) : 1.0;
  auto send = [&](int v, double bytes) {
    if (v == w || bytes <= 0.0) return;
    if (v / g_ == w / g_) bytes /= nvlink;
    sends.push_back(network.send(cluster_.workers()[first_ + w].host,
                                 cluster_.workers()[first_ + v].host, bytes));
  };
  if (all_to_all_model_ == RingModel::kAggregate) {
    // Worker w + N/2 is on another node whenever there is one (nodes of g workers in order).
    double across = 0.0, within = 0.0;
    for (int v = 0; v < n_; ++v) (v / g_ == w / g_ ? within : across) += v == w ? 0.0 : bytes_to[v];
    send((w + n_ / 2) % n_, across);
    send(w / g_ * g_ + (w % g_ + 1) % g_, within);
  } else {
    for (int v = 0; v < n_; ++v) send(v, bytes_to[v]);
  }
  network.wait_all(sends);
}

int64_t Collectives::messages_per_all_to_all() const {
  if (n_ < 2) return 0;
  return all_to_all_model_ == RingModel::kAggregate ? (g_ > 1 && n_ > g_ ? 2 : 1) : n_ - 1;
}

void Collectives::barrier() const { barrier_->wait(); }

void Collectives::step(int w, double dense_bytes, const std::vector<double>& blocks) {
  all_reduce(w, dense_bytes);
  all_gather(w, blocks);
}

int64_t Collectives::messages_per_all_reduce(int w, double bytes) const {
  if (n_ < 2) return 0;
  if (algorithm_ == AllReduce::kRing) return all_.messages(2 * (n_ - 1));
  if (algorithm_ == AllReduce::kTree) {  // a message a chunk on each edge, up and down
    int64_t edges = 0;
    for (int t = 0; t < 2; ++t) {
      const int r = t == 0 ? w : n_ - 1 - w;
      edges += (r > 0) + (2 * r + 1 < n_) + (2 * r + 2 < n_);
    }
    return edges * tree_chunks(bytes);
  }
  if (algorithm_ == AllReduce::kNccl) {
    const int a = nccl_index(nccl_choice(bytes).algorithm);
    return nccl_first_[a][w + 1] - nccl_first_[a][w];
  }
  const int nodes = n_ / g_;
  return 2 * nodes_[0].messages(g_ - 1) + local_rank_[0].messages(2 * (nodes - 1));
}

int64_t Collectives::messages_per_step(int w, double dense_bytes) const {
  if (n_ < 2) return 0;
  const int64_t gather = algorithm_ == AllReduce::kNccl ? nccl_first_[0][w + 1] - nccl_first_[0][w]
                                                        : all_.messages(n_ - 1);
  return messages_per_all_reduce(w, dense_bytes) + gather;  // and the all-gather
}

int Collectives::tree_chunks(double bytes) const {
  return std::max(1, static_cast<int>(std::ceil(bytes / 2.0 / tree_chunk_bytes_)));
}

}  // namespace gbasim
