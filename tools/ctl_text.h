#pragma once

// What jackpotctl reads and prints, as pure functions (tests/unit/audit_chain_test.cc): amounts,
// times, hex, and the two checks it makes itself, a hidden trigger against its commitment and
// the audit trail's chain.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "journal/audit_chain.h"

namespace jackpot::tools {

// A whole number written in decimal digits only (no sign, no "0x", no spaces; leading zeros are
// decimal: "010" is 10) and at most `max`; nothing otherwise.
std::optional<std::uint64_t> parse_decimal(std::string_view text, std::uint64_t max);

// "12.345678" for 12,345,678 micros; "-0.010000" for -10,000.
std::string money_text(std::int64_t micros);

// A time given on the command line as Unix seconds ("1764547200") or as UTC in RFC 3339 form
// ("2025-12-01T00:00:00Z", seconds optional: "2025-12-01T00:00Z", or a date alone:
// "2025-12-01"); nothing when it is neither or out of range (years 1970..9999).
std::optional<std::int64_t> parse_time(std::string_view text);
// "2025-12-01T00:00:00.000000Z" for Unix microseconds.
std::string time_text(std::int64_t unix_us);

// Bytes from exactly `size` bytes of hex digits (either case); nothing otherwise.
std::optional<std::vector<std::uint8_t>> parse_hex(std::string_view text, std::size_t size);

// Whether `point_micros` and `salt` (32 bytes) open `commitment` (32 bytes), and why not
// (common.proto TriggerCommitment): nothing when they do.
std::optional<std::string> trigger_mismatch(std::int64_t point_micros,
                                            const std::vector<std::uint8_t>& salt,
                                            const std::vector<std::uint8_t>& commitment);

// "SEQ:HASH" (an event number from 1, a colon, 64 hex digits), as `audit verify` prints its
// head; nothing otherwise.
std::optional<AuditChainPosition> parse_anchor(std::string_view text);

// What jackpotd's log says of the audit chain's head, in order: every line that is its anchor
// line whole (written on a schedule and at each stop), in text,
//   jackpotd: audit chain head (seq=N, hash=HEX)
// after whatever prefix a log collector puts before "jackpotd: ", or in JSON,
//   {"time":"...","level":"info","message":"audit chain head","seq":N,"hash":"HEX"}
// Text that a client had logged (a void's reason, a request id) is always inside a quoted field
// or an escaped string, so it never makes such a line. Anchors kept outside the database, for
// `audit verify --anchors-from`.
std::vector<AuditChainPosition> anchors_in_log(std::string_view log);

// A walk of the audit trail, fed one page at a time in chain order (ReadAuditTrail).
class AuditWalk {
 public:
  // Starts the walk at `anchor`'s event instead of event 1: its first event must be that event
  // with that hash (its own contents checked, the hash before it taken as given).
  void start_at(const AuditChainPosition& anchor);
  // False, with the break in `broken()`, at the first event that does not follow the one before.
  bool feed(const AuditEvent& event);
  // At the end (a page shorter than asked for): false when the walk did not end at the head.
  bool finish(const AuditChainPosition& head);
  const AuditChainPosition& position() const { return at_; }
  const std::string& broken() const { return broken_; }

 private:
  AuditChainPosition at_;
  std::optional<AuditChainPosition> anchor_;  // Until its event is fed.
  std::string broken_;
};

}  // namespace jackpot::tools
