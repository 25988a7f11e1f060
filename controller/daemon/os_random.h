#pragma once

#include <cstdint>

#include "controller/engine/engine.h"
#include "meters/random.h"

namespace jackpot {

// The operating system's CSPRNG (getrandom(2)), the daemon's random source for every draw.
// Buffered: one system call per 512 draws.
class OsRandom final : public RandomSource {
 public:
  std::uint64_t next_u64() override;

 private:
  std::uint64_t buffer_[64] = {};
  unsigned used_ = 64;
};

// Wall-clock microseconds since the Unix epoch.
class SystemClock final : public Clock {
 public:
  std::int64_t now_us() override;
};

}  // namespace jackpot
