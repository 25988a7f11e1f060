// The period of a reconciliation report as a client asked for it, checked and read as the
// report uses it: one rule, one pure function (AdminService.GetReconciliationReport).
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "meters/result.h"

namespace jackpot {

// A google.protobuf.Timestamp as it came off the wire, before any check.
struct WireTime {
  std::int64_t seconds = 0;
  std::int64_t nanos = 0;
};

// The range google.protobuf.Timestamp defines: 0001-01-01T00:00:00Z to
// 9999-12-31T23:59:59.999999999Z, nanos within a second.
inline constexpr std::int64_t kMinTimestampSeconds = -62'135'596'800;
inline constexpr std::int64_t kMaxTimestampSeconds = 253'402'300'799;
inline constexpr std::int64_t kMaxTimestampNanos = 999'999'999;

// What the report reads: Unix microseconds (a bound's nanoseconds below the microsecond are
// dropped once the bounds are known to be in order).
struct ReportPeriod {
  std::optional<std::int64_t> from_us;  // Nothing: the beginning of the ledger.
  std::optional<std::int64_t> to_us;    // Nothing: up to now (the report records the end).
};

// Checks a report's period, in this order, and says what it means:
// 1. each bound present is a valid Timestamp (seconds within kMin..kMaxTimestampSeconds, nanos
//    within 0..kMaxTimestampNanos), else an error naming the field;
// 2. `from` is not after `to`, compared to the nanosecond, else an error;
// 3. a bound later than `now_us` reads as now: `from` as now_us, `to` as "up to now" (nothing),
//    so that a far-future to_time reports what happened up to the request, not only up to the
//    latest snapshot, and a client clock ahead of the daemon's changes nothing.
// The error is a message for INVALID_ARGUMENT.
Result<ReportPeriod, std::string> check_report_period(const std::optional<WireTime>& from,
                                                      const std::optional<WireTime>& to,
                                                      std::int64_t now_us);

}  // namespace jackpot
