// Seeded random streams, all made here: every consumer draws from its own numbered stream of
// the run's seed, so adding draws in one place never shifts the numbers of another.
#pragma once

#include <cstdint>
#include <random>

namespace gbasim {

using Rng = std::mt19937_64;

// Stream numbers, one per consumer of make_rng.
enum RngStream : uint64_t {
  kStreamTeacher = 1,
  kStreamFeatures = 2,
  kStreamLabels = 3,
  kStreamDrift = 4,
  kStreamShuffle = 5,
  kStreamInit = 6,
};

// The data, the teacher and the initial parameters.
inline Rng make_rng(uint64_t seed, uint64_t stream, uint64_t substream = 0) {
  std::seed_seq seq{static_cast<uint32_t>(seed),      static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(stream),    static_cast<uint32_t>(stream >> 32),
                    static_cast<uint32_t>(substream), static_cast<uint32_t>(substream >> 32)};
  return Rng(seq);
}

// The straggler models' streams (`which` numbers them in traces/straggler_models.cc). Their
// seed words predate make_rng's layout and are kept as they are, so that the straggler
// realisations of committed results stay the same.
inline Rng straggler_rng(uint64_t seed, uint64_t which, uint64_t substream) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(which), static_cast<uint32_t>(substream),
                    static_cast<uint32_t>(substream >> 32)};
  return Rng(seq);
}

// The random assignment of trace workers or machines to simulated workers (kept as above).
inline Rng trace_mapping_rng(uint64_t seed) {
  std::seed_seq seq{static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32), 106u};
  return Rng(seq);
}

// A simulated server's order of service (cluster.ps_service_seed; kept as above).
inline Rng service_order_rng(uint64_t seed) { return Rng(seed); }

}  // namespace gbasim
