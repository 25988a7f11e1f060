#include "storage/audit.h"

#include <algorithm>
#include <cstdio>
#include <pqxx/pqxx>
#include <stdexcept>

#include "meters/digest.h"

namespace jackpot::storage {
namespace {

void append_json_string(std::string& out, std::string_view text) {
  out.push_back('"');
  for (const char c : text) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned>(c));
          out += escaped;
        } else {
          out.push_back(c);
        }
    }
  }
  out.push_back('"');
}

}  // namespace

std::string json_object(const AuditDetail& detail) {
  std::string out = "{";
  for (const auto& [key, value] : detail) {
    if (out.size() > 1) out.push_back(',');
    append_json_string(out, key);
    out.push_back(':');
    append_json_string(out, value);
  }
  out.push_back('}');
  return out;
}

namespace {

void insert_audit_event(pqxx::transaction_base& tx, std::string_view principal,
                        std::string_view action, const AuditDetail& detail) {
  tx.exec_params("INSERT INTO audit_log (principal, action, detail) VALUES ($1, $2, $3::jsonb)",
                 std::string(principal), std::string(action), json_object(detail));
}

Sha256Digest digest_of(const pqxx::field& field, const std::string& which) {
  Sha256Digest digest{};
  if (field.is_null()) throw AuditTrailAltered(which + " is missing");
  const pqxx::binarystring bytes(field);
  if (bytes.size() != digest.size()) {
    throw AuditTrailAltered(which + " is " + std::to_string(bytes.size()) + " bytes, not 32");
  }
  std::copy(bytes.begin(), bytes.end(), digest.begin());
  return digest;
}

std::int64_t insert_floor_version(pqxx::transaction_base& tx, const std::string& floor_text) {
  // libpq sends text parameters as C strings: a NUL would store a cut copy.
  if (floor_text.find('\0') != std::string::npos) {
    throw std::invalid_argument("the floor text contains a NUL character");
  }
  const std::string digest = to_hex(sha256(floor_text));
  // A known floor keeps its number and uses up none: the INSERT below would take a value of the
  // identity even when it inserts nothing, leaving a gap for every restart.
  const auto known = tx.exec_params("SELECT version FROM floor_versions WHERE sha256 = $1", digest);
  if (!known.empty()) return known[0][0].as<std::int64_t>();
  tx.exec_params(
      "INSERT INTO floor_versions (sha256, floor_text) VALUES ($1, $2) "
      "ON CONFLICT (sha256) DO NOTHING",
      digest, floor_text);
  return tx.exec_params1("SELECT version FROM floor_versions WHERE sha256 = $1", digest)[0]
      .as<std::int64_t>();
}

}  // namespace

void append_audit_event(pqxx::connection& connection, std::string_view principal,
                        std::string_view action, const AuditDetail& detail) {
  append_audit_events(connection, {{std::string(principal), std::string(action), detail}});
}

void append_audit_events(pqxx::connection& connection, const std::vector<AuditAppend>& events) {
  if (events.empty()) return;
  // quote() would cut a text at a NUL, and jsonb cannot hold one.
  for (const AuditAppend& event : events) {
    bool nul = event.principal.find('\0') != std::string::npos ||
               event.action.find('\0') != std::string::npos;
    for (const auto& [key, value] : event.detail) {
      nul = nul || key.find('\0') != std::string::npos || value.find('\0') != std::string::npos;
    }
    if (nul) throw std::invalid_argument("an audit event's text contains a NUL character");
  }
  // One statement in autocommit: the chain's head is locked only while it runs, never while a
  // client holds a transaction open, so that no append can hold up a journal commit.
  pqxx::nontransaction statement(connection, "append_audit_events");
  std::string sql = "INSERT INTO audit_log (principal, action, detail) VALUES ";
  for (std::size_t i = 0; i < events.size(); ++i) {
    if (i > 0) sql += ", ";
    sql += "(" + statement.quote(events[i].principal) + ", " + statement.quote(events[i].action) +
           ", " + statement.quote(json_object(events[i].detail)) + "::jsonb)";
  }
  statement.exec(sql);
}

std::int64_t record_floor_version(pqxx::connection& connection, const std::string& floor_text) {
  pqxx::work tx(connection, "floor_version");
  const std::int64_t version = insert_floor_version(tx, floor_text);
  tx.commit();
  return version;
}

std::int64_t record_start(pqxx::connection& connection, std::string_view principal,
                          const std::optional<std::string>& floor_text, AuditDetail detail) {
  pqxx::work tx(connection, "record_start");
  const std::int64_t version = floor_text ? insert_floor_version(tx, *floor_text) : 0;
  detail.emplace_back("floor_version", floor_text ? std::to_string(version) : "none");
  insert_audit_event(tx, principal, "daemon.start", detail);
  tx.commit();
  return version;
}

AuditPage read_audit_page(pqxx::connection& connection, std::int64_t after_seq, int limit) {
  // One snapshot for the page and the head, so that the head is never behind the page.
  pqxx::transaction<pqxx::repeatable_read, pqxx::read_only> tx(connection);
  AuditPage page = read_audit_page(tx, after_seq, limit);
  tx.commit();
  return page;
}

AuditPage read_audit_page(pqxx::transaction_base& tx, std::int64_t after_seq, int limit) {
  AuditPage page;
  for (const auto& row : tx.exec_params(
           "SELECT seq, CASE WHEN isfinite(at) THEN (extract(epoch FROM at) * 1000000)::bigint "
           "END, "
           "principal, action, "
           "detail::text, prev_hash, hash, id FROM audit_log WHERE seq > $1 ORDER BY seq LIMIT $2",
           after_seq, limit)) {
    AuditEvent event;
    if (row[0].is_null() || row[1].is_null() || row[2].is_null() || row[3].is_null() ||
        row[4].is_null()) {
      throw AuditTrailAltered("the audit event with id " + row[7].as<std::string>() +
                              " has a column emptied or a time that is not finite");
    }
    event.seq = row[0].as<std::int64_t>();
    event.at_us = row[1].as<std::int64_t>();
    event.principal = row[2].as<std::string>();
    event.action = row[3].as<std::string>();
    event.detail = row[4].as<std::string>();
    const std::string which = "the hash of audit event " + std::to_string(event.seq);
    event.prev_hash = digest_of(row[5], "the previous " + which);
    event.hash = digest_of(row[6], which);
    page.events.push_back(std::move(event));
  }
  const auto head = tx.exec("SELECT seq, hash FROM audit_chain_head WHERE one");
  if (head.size() != 1 || head[0][0].is_null()) {
    throw AuditTrailAltered("the audit chain's head is missing");
  }
  page.head = {head[0][0].as<std::int64_t>(), digest_of(head[0][1], "the chain head's hash")};
  return page;
}

}  // namespace jackpot::storage
