#pragma once

// What the log says of a committed batch: the events an operator looks for, each one line with
// the ids it concerns (docs/operations.md, "Logs"). Not every round: a floor plays thousands an
// hour, and the journal and the metrics keep them. A pure function, table-tested
// (tests/unit/log_test.cc). Field names never repeat the line's own keys ("level" is the log
// level: a meter's level is "meter_level"); round and payout ids are strings, since they may
// exceed what a JSON number holds exactly.

#include <vector>

#include "controller/engine/engine_types.h"
#include "controller/log/log.h"

namespace jackpot {

// In the records' order: progressive hits (percent and Must-Hit-By awards), payouts that wait
// for a supervisor, approvals and rejections, voids with their reason, link status changes,
// meter adjustments and round-counter re-bases.
std::vector<LogEvent> commit_events(const Records& records);

}  // namespace jackpot
