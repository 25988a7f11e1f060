#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "meters/digest.h"

namespace jackpot {

// One event of the audit trail as the database keeps it (storage/migrations/0022_audit_chain.sql).
struct AuditEvent {
  std::int64_t seq = 0;    // 1, 2, 3, ... in chain order.
  std::int64_t at_us = 0;  // Microseconds since 1970-01-01 00:00:00 UTC.
  std::string principal;   // e.g. "supervisor/S7".
  std::string action;      // e.g. "payout.approve".
  std::string detail;      // The JSON object as PostgreSQL prints it (jsonb's text).
  Sha256Digest prev_hash{};
  Sha256Digest hash{};
};

// Where a walk of the chain stands: the last event checked (seq 0 and 32 zero bytes before the
// first).
struct AuditChainPosition {
  std::int64_t seq = 0;
  Sha256Digest hash{};
  friend bool operator==(const AuditChainPosition&, const AuditChainPosition&) = default;
};

// An event's hash, the chain's one rule:
//   SHA-256(prev_hash || i64(seq) || i64(at_us) || str(principal) || str(action) || str(detail))
// with i64(x) 8 bytes big-endian two's complement and str(s) = i64(byte length of s) || s.
Sha256Digest audit_event_hash(const Sha256Digest& prev_hash, std::int64_t seq, std::int64_t at_us,
                              std::string_view principal, std::string_view action,
                              std::string_view detail);

// Why the chain breaks at an event, or nothing when `event` follows `previous` as the chain
// requires: the next number, the previous event's hash, and a hash that matches its contents.
std::optional<std::string> audit_chain_break(const AuditChainPosition& previous,
                                             const AuditEvent& event);

// Why the chain's end disagrees with its head (the database's record of its last event), or
// nothing when the walk ended at the head: events removed from the end show here.
std::optional<std::string> audit_head_break(const AuditChainPosition& last,
                                            const AuditChainPosition& head);

}  // namespace jackpot
