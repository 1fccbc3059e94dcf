// The collectives of a sync step, message by message on a ring of the workers: each pass
// sends to the next worker and receives from the previous one.
#pragma once

#include <simgrid/s4u.hpp>

#include <vector>

namespace gbasim {

class Ring {
 public:
  explicit Ring(int workers);
  // Worker w's part of a ring all-reduce of `bytes`: 2(N - 1) passes of bytes / N.
  void allreduce(int w, double bytes);
  // Worker w's part of a ring all-gather of every worker's block (`blocks`, by worker):
  // N - 1 passes, the block of worker w - i at pass i.
  void allgather(int w, const std::vector<double>& blocks);
  // Point-to-point messages of one step's all-reduce and all-gather, per worker.
  int64_t messages_per_step() const { return 3 * (n_ - 1); }

 private:
  void pass(int w, double bytes);

  int n_;
  std::vector<simgrid::s4u::Mailbox*> mailboxes_;
};

}  // namespace gbasim
