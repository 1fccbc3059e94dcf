#include "sim/collectives.h"

#include <string>

namespace gbasim {

Ring::Ring(int workers) : n_(workers) {
  for (int w = 0; w < n_; ++w)
    mailboxes_.push_back(simgrid::s4u::Mailbox::by_name("ring-" + std::to_string(w)));
}

void Ring::pass(int w, double bytes) {
  auto send = mailboxes_[(w + 1) % n_]->put_async(new int(w), bytes);
  mailboxes_[w]->get_unique<int>();
  send->wait();
}

void Ring::allreduce(int w, double bytes) {
  for (int i = 0; i < 2 * (n_ - 1); ++i) pass(w, bytes / n_);
}

void Ring::allgather(int w, const std::vector<double>& blocks) {
  for (int i = 0; i < n_ - 1; ++i) pass(w, blocks[(w - i + n_) % n_]);
}

}  // namespace gbasim
