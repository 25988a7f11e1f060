#pragma once

#include <cstdint>
#include <pqxx/connection>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jackpot::storage {

// Key/value details of an audit event, stored as a JSON object of strings.
using AuditDetail = std::vector<std::pair<std::string, std::string>>;

// Appends one event to the audit trail in its own transaction. `principal` is e.g.
// "daemon/host-1" or "supervisor/S7"; `action` is dotted lower case, e.g. "daemon.start".
void append_audit_event(pqxx::connection& connection, std::string_view principal,
                        std::string_view action, const AuditDetail& detail);

// Records the floor configuration the daemon runs, once per distinct text, and returns its
// version number (the same number each time the same floor starts again).
std::int64_t record_floor_version(pqxx::connection& connection, const std::string& floor_text);

// A JSON object of string values, with every string escaped as RFC 8259 requires.
std::string json_object(const AuditDetail& detail);

}  // namespace jackpot::storage
