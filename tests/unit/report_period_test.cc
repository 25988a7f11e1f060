#include "controller/api/report_period.h"

#include <gtest/gtest.h>

#include <optional>
#include <string>

namespace jackpot {
namespace {

constexpr std::int64_t kNowUs = 1'800'000'000'000'000;  // 2027-01-15T08:00:00Z.
constexpr std::int64_t kNowSeconds = kNowUs / 1'000'000;

struct Case {
  const char* name;
  std::optional<WireTime> from;
  std::optional<WireTime> to;
  // Either an error containing this text, or the period.
  const char* error;
  std::optional<std::int64_t> from_us;
  std::optional<std::int64_t> to_us;
};

const Case kCases[] = {
    {"unbounded", std::nullopt, std::nullopt, nullptr, std::nullopt, std::nullopt},
    {"a past period", WireTime{100, 0}, WireTime{200, 500'000}, nullptr, 100'000'000, 200'000'500},
    {"from equals to", WireTime{100, 7}, WireTime{100, 7}, nullptr, 100'000'000, 100'000'000},
    {"from after to by a nanosecond", WireTime{100, 1'000}, WireTime{100, 999}, "after", {}, {}},
    {"from after to within one microsecond",
     WireTime{100, 999'999'999},
     WireTime{100, 999'999'000},
     "after",
     {},
     {}},
    {"from after to by seconds", WireTime{200, 0}, WireTime{100, 0}, "after", {}, {}},
    {"from after an unset to is fine", WireTime{100, 0}, std::nullopt, nullptr, 100'000'000,
     std::nullopt},
    {"the first instant", WireTime{kMinTimestampSeconds, 0}, WireTime{0, 0}, nullptr,
     kMinTimestampSeconds * 1'000'000, 0},
    {"before year 1",
     WireTime{kMinTimestampSeconds - 1, 999'999'999},
     std::nullopt,
     "from_time",
     {},
     {}},
    {"the last instant reads as now", std::nullopt,
     WireTime{kMaxTimestampSeconds, kMaxTimestampNanos}, nullptr, std::nullopt, std::nullopt},
    {"after year 9999", std::nullopt, WireTime{kMaxTimestampSeconds + 1, 0}, "to_time", {}, {}},
    {"a huge bound", WireTime{0, 0}, WireTime{INT64_MAX, 0}, "to_time", {}, {}},
    {"a huge negative bound", WireTime{INT64_MIN, 0}, std::nullopt, "from_time", {}, {}},
    {"negative nanos", WireTime{100, -1}, std::nullopt, "from_time.nanos", {}, {}},
    {"a second of nanos", std::nullopt, WireTime{100, 1'000'000'000}, "to_time.nanos", {}, {}},
    {"an invalid bound is named before the order",
     WireTime{300, -5},
     WireTime{100, 0},
     "from_time.nanos",
     {},
     {}},
    {"a far-future to reads as now", WireTime{100, 0}, WireTime{kNowSeconds + 86'400, 0}, nullptr,
     100'000'000, std::nullopt},
    {"a to slightly ahead reads as now", std::nullopt, WireTime{kNowSeconds, 1'000}, nullptr,
     std::nullopt, std::nullopt},
    {"a to of exactly now is kept", std::nullopt, WireTime{kNowSeconds, 0}, nullptr, std::nullopt,
     kNowUs},
    {"both far ahead read as now", WireTime{kNowSeconds + 10, 0}, WireTime{kNowSeconds + 20, 0},
     nullptr, kNowUs, std::nullopt},
    {"a future from after a future to is still refused",
     WireTime{kNowSeconds + 20, 0},
     WireTime{kNowSeconds + 10, 0},
     "after",
     {},
     {}},
};

TEST(ReportPeriod, EveryCase) {
  for (const Case& c : kCases) {
    SCOPED_TRACE(c.name);
    const auto period = check_report_period(c.from, c.to, kNowUs);
    if (c.error != nullptr) {
      ASSERT_FALSE(period.ok());
      EXPECT_NE(period.error().find(c.error), std::string::npos) << period.error();
      continue;
    }
    ASSERT_TRUE(period.ok()) << period.error();
    EXPECT_EQ(period->from_us, c.from_us);
    EXPECT_EQ(period->to_us, c.to_us);
  }
}

}  // namespace
}  // namespace jackpot
