#include "sim/batch_rows.h"

#include <stdexcept>
#include <string>

namespace gbasim {

BatchRows::BatchRows(const std::vector<int64_t>& cardinalities) {
  uint64_t bits = 0;
  for (const int64_t c : cardinalities) {
    if (c < 0 || c > int64_t{1} << 31)
      throw std::logic_error("BatchRows: a field of " + std::to_string(c) + " ids");
    offset_.push_back(bits);
    bits += static_cast<uint64_t>(c);
  }
  seen_.assign(bits / 64 + 1, 0);
}

}  // namespace gbasim
