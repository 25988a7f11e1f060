#include "storage/audit.h"

#include <cstdio>
#include <pqxx/pqxx>

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

void append_audit_event(pqxx::connection& connection, std::string_view principal,
                        std::string_view action, const AuditDetail& detail) {
  pqxx::work tx(connection, "append_audit_event");
  tx.exec_params("INSERT INTO audit_log (principal, action, detail) VALUES ($1, $2, $3::jsonb)",
                 std::string(principal), std::string(action), json_object(detail));
  tx.commit();
}

}  // namespace jackpot::storage
