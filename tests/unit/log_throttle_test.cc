#include "controller/daemon/log_throttle.h"

#include <gtest/gtest.h>

#include <vector>

namespace jackpot {
namespace {

using namespace std::chrono_literals;

TEST(LogThrottle, WritesOneLinePerIntervalAndCountsTheRest) {
  struct Case {
    const char* name;
    LogThrottle::Clock::duration offset;
    bool write;
    std::uint64_t held_back;
  };
  const std::vector<Case> cases = {
      {"the first line is written", 0s, true, 0},
      {"within the interval: held back", 1s, false, 0},
      {"still within: held back", 9s, false, 0},
      {"one interval after the last written line: written, two held back", 10s, true, 2},
      {"just before the next interval: held back", 19s + 999ms, false, 0},
      {"a long quiet spell: written, one held back", 60s, true, 1},
      {"right after: held back", 60s + 1ms, false, 0},
  };
  LogThrottle throttle(10s);
  const LogThrottle::Clock::time_point start{};
  for (const Case& c : cases) {
    const auto verdict = throttle.offer(start + c.offset);
    EXPECT_EQ(verdict.write, c.write) << c.name;
    if (verdict.write) {
      EXPECT_EQ(verdict.held_back, c.held_back) << c.name;
    }
  }
}

}  // namespace
}  // namespace jackpot
