#include "controller/api/report_period.h"

#include <algorithm>
#include <tuple>

namespace jackpot {
namespace {

std::optional<std::string> invalid(const char* field, const WireTime& time) {
  if (time.seconds < kMinTimestampSeconds || time.seconds > kMaxTimestampSeconds) {
    return std::string(field) + " is outside 0001-01-01T00:00:00Z..9999-12-31T23:59:59Z (seconds " +
           std::to_string(time.seconds) + ")";
  }
  if (time.nanos < 0 || time.nanos > kMaxTimestampNanos) {
    return std::string(field) + ".nanos must be within 0..999999999 (got " +
           std::to_string(time.nanos) + ")";
  }
  return std::nullopt;
}

// Valid times only: no overflow within the Timestamp range (about 2.5e17 microseconds).
std::int64_t unix_us(const WireTime& time) { return time.seconds * 1'000'000 + time.nanos / 1'000; }

}  // namespace

Result<ReportPeriod, std::string> check_report_period(const std::optional<WireTime>& from,
                                                      const std::optional<WireTime>& to,
                                                      std::int64_t now_us) {
  if (from) {
    if (auto problem = invalid("from_time", *from)) return *problem;
  }
  if (to) {
    if (auto problem = invalid("to_time", *to)) return *problem;
  }
  if (from && to && std::tie(from->seconds, from->nanos) > std::tie(to->seconds, to->nanos)) {
    return std::string("from_time is after to_time");
  }
  ReportPeriod period;
  if (from) period.from_us = std::min(unix_us(*from), now_us);
  if (to && unix_us(*to) <= now_us) period.to_us = unix_us(*to);
  return period;
}

}  // namespace jackpot
