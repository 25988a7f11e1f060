#pragma once

#include <cstdint>

#include "controller/engine/engine.h"

namespace jackpot::testing {

// The engine's clock stopped at one moment (2027-01-15 08:00 UTC), for tests and benchmarks
// whose records must not depend on when they run.
class FixedClock final : public Clock {
 public:
  std::int64_t now_us() override { return 1'800'000'000'000'000; }
};

}  // namespace jackpot::testing
