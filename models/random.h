// Seeded random streams: every consumer draws from its own named stream of one seed,
// so adding draws in one place never shifts the numbers of another.
#pragma once

#include <cstdint>
#include <random>

namespace gbasim {

using Rng = std::mt19937_64;

inline Rng make_rng(uint64_t seed, uint64_t stream, uint64_t substream = 0) {
  std::seed_seq seq{static_cast<uint32_t>(seed),      static_cast<uint32_t>(seed >> 32),
                    static_cast<uint32_t>(stream),    static_cast<uint32_t>(stream >> 32),
                    static_cast<uint32_t>(substream), static_cast<uint32_t>(substream >> 32)};
  return Rng(seq);
}

// Stream numbers, one per consumer.
enum RngStream : uint64_t {
  kStreamTeacher = 1,
  kStreamFeatures = 2,
  kStreamLabels = 3,
  kStreamDrift = 4,
  kStreamShuffle = 5,
  kStreamInit = 6,
};

}  // namespace gbasim
