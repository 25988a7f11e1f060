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

// Each place that writes gets its own interval, so one flooding kind of line does not silence
// the others; past kMaxSources places, the rest share one.
TEST(SourceLogThrottle, HoldsBackEachSourceApart) {
  SourceLogThrottle throttle(10s);
  const LogThrottle::Clock::time_point start{};
  EXPECT_TRUE(throttle.offer("ssl_transport_security.cc:1", start).write);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_FALSE(throttle.offer("ssl_transport_security.cc:1", start + 1ms * i).write);
  }
  EXPECT_TRUE(throttle.offer("chttp2_server.cc:2", start + 1s).write) << "another source";
  const auto next = throttle.offer("ssl_transport_security.cc:1", start + 10s);
  EXPECT_TRUE(next.write);
  EXPECT_EQ(next.held_back, 1000U);
  for (std::size_t i = 2; i < SourceLogThrottle::kMaxSources; ++i) {
    EXPECT_TRUE(throttle.offer("file.cc:" + std::to_string(i + 100), start).write);
  }
  // Full: the next new sources share one throttle.
  EXPECT_TRUE(throttle.offer("new.cc:1", start).write);
  EXPECT_FALSE(throttle.offer("new.cc:2", start + 1s).write);
}

}  // namespace
}  // namespace jackpot
