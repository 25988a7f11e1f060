#pragma once

#include <cstdint>
#include <optional>
#include <pqxx/connection>
#include <stdexcept>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "journal/audit_chain.h"

namespace jackpot::storage {

// Key/value details of an audit event, stored as a JSON object of strings.
using AuditDetail = std::vector<std::pair<std::string, std::string>>;

// Appends one event to the audit trail in one statement of its own (autocommit: the chain's
// head is locked only while it runs). `principal` is e.g. "daemon/host-1" or "supervisor/S7";
// `action` is dotted lower case, e.g. "daemon.start". Text may not hold NUL (jsonb cannot).
void append_audit_event(pqxx::connection& connection, std::string_view principal,
                        std::string_view action, const AuditDetail& detail);

// Several events in one statement, in order: all are on record, or none.
struct AuditAppend {
  std::string principal;
  std::string action;
  AuditDetail detail;
};
void append_audit_events(pqxx::connection& connection, const std::vector<AuditAppend>& events);

// Records the floor configuration the daemon runs, once per distinct text, and returns its
// version number (the same number each time the same floor starts again).
std::int64_t record_floor_version(pqxx::connection& connection, const std::string& floor_text);

// Records a daemon's start in one transaction, so that a start either is on record whole or not
// at all: the floor's text when it runs one (as record_floor_version, whose number the event
// names as floor_version; "none" without a floor) and the daemon.start audit event with
// `detail`. Returns the floor's version, 0 without a floor.
std::int64_t record_start(pqxx::connection& connection, std::string_view principal,
                          const std::optional<std::string>& floor_text, AuditDetail detail);

// A row of the audit trail that the chain's schema would refuse: altered behind the daemon's back.
class AuditTrailAltered : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// A page of the audit trail: up to `limit` events after event `after_seq`, in chain order, and
// the chain's head (its last event) as of the same snapshot.
struct AuditPage {
  std::vector<AuditEvent> events;
  AuditChainPosition head;
};
// The first in a read-only repeatable-read transaction of its own; the second in `tx`.
AuditPage read_audit_page(pqxx::connection& connection, std::int64_t after_seq, int limit);
AuditPage read_audit_page(pqxx::transaction_base& tx, std::int64_t after_seq, int limit);

// A JSON object of string values, with every string escaped as RFC 8259 requires.
std::string json_object(const AuditDetail& detail);

}  // namespace jackpot::storage
