#include "strategies/rules.h"

namespace gbasim {

Admission AsyncRule::admit(int worker) { return grant(worker, true); }

std::optional<Gradient> AsyncRule::receive(int worker, int64_t token, Gradient gradient) {
  take(worker, token);
  ++metrics_.gradients_full;
  advance();
  return gradient;
}

}  // namespace gbasim
