// The wall clock, for what a run costs (never for what it simulates).
#pragma once

#include <chrono>

namespace gbasim {

using WallClock = std::chrono::steady_clock;

inline double seconds_since(WallClock::time_point start) {
  return std::chrono::duration<double>(WallClock::now() - start).count();
}

}  // namespace gbasim
