#include "sim/collectives.h"

#include <xbt/config.hpp>

#include <string>

namespace gbasim {

Ring::Ring(const Cluster& cluster, RingModel model)
    : n_(static_cast<int>(cluster.workers().size())), model_(model) {
  for (int w = 0; w < n_; ++w)
    mailboxes_.push_back(simgrid::s4u::Mailbox::by_name("ring-" + std::to_string(w)));
  if (model_ == RingModel::kAggregate && n_ > 1) {
    barrier_ = simgrid::s4u::Barrier::create(static_cast<unsigned>(n_));
    for (int w = 0; w < n_; ++w) {
      std::vector<simgrid::s4u::Link*> links;
      double latency = 0.0;
      cluster.workers()[w].host->route_to(cluster.workers()[(w + 1) % n_].host, links, &latency);
      latency_.push_back(latency);
    }
  }
}

int64_t Ring::messages_per_step() const {
  if (n_ < 2) return 0;
  return model_ == RingModel::kAggregate ? 1 : 3 * (n_ - 1);
}

void Ring::pass(int w, double bytes) {
  auto send = mailboxes_[(w + 1) % n_]->put_async(new int(w), bytes);
  mailboxes_[w]->get_unique<int>();
  send->wait();
}

void Ring::step(int w, double dense_bytes, const std::vector<double>& blocks) {
  if (n_ < 2) return;
  if (model_ == RingModel::kAggregate) return aggregate(w, dense_bytes, blocks);
  for (int i = 0; i < 2 * (n_ - 1); ++i) pass(w, dense_bytes / n_);
  for (int i = 0; i < n_ - 1; ++i) pass(w, blocks[(w - i + n_) % n_]);
}

void Ring::aggregate(int w, double dense_bytes, const std::vector<double>& blocks) {
  barrier_->wait();  // no pass of a ring gets further than its last worker to arrive
  double bytes = 2.0 * (n_ - 1) * (dense_bytes / n_);
  for (int i = 0; i < n_ - 1; ++i) bytes += blocks[(w - i + n_) % n_];
  pass(w, bytes);
  // The other passes' latencies, as the network model charges each message's (LV08
  // multiplies the route's latency by its latency factor).
  const double factor = simgrid::config::get_value<double>("network/latency-factor");
  simgrid::s4u::this_actor::sleep_for((3.0 * (n_ - 1) - 1.0) * latency_[w] * factor);
}

}  // namespace gbasim
