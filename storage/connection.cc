#include "storage/connection.h"

#include <libpq-fe.h>

#include <pqxx/pqxx>
#include <string_view>
#include <utility>

namespace jackpot::storage {
namespace {

// libpq's messages span lines ("...failed: ...\n\tIs the server running...?\n"); a log line
// should not.
std::string one_line(std::string_view text) {
  std::string line;
  for (const char c : text) {
    if (c == '\n' || c == '\t' || c == '\r') {
      if (!line.empty() && line.back() != ' ') line.push_back(' ');
    } else {
      line.push_back(c);
    }
  }
  while (!line.empty() && line.back() == ' ') line.pop_back();
  return line;
}

}  // namespace

std::string redact_dsn(const std::string& dsn) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(dsn.c_str(), &error);
  if (options == nullptr) {
    PQfreemem(error);
    return "<unparsable connection string>";
  }
  std::string shown;
  for (const PQconninfoOption* option = options; option->keyword != nullptr; ++option) {
    if (option->val == nullptr || std::string_view(option->keyword) == "password") continue;
    if (!shown.empty()) shown += ' ';
    shown += option->keyword;
    shown += '=';
    shown += option->val;
  }
  PQconninfoFree(options);
  return shown;
}

std::string with_network_timeouts(const std::string& dsn) {
  char* error = nullptr;
  PQconninfoOption* options = PQconninfoParse(dsn.c_str(), &error);
  if (options == nullptr) {
    PQfreemem(error);
    return dsn;
  }
  static constexpr std::pair<std::string_view, std::string_view> kDefaults[] = {
      {"connect_timeout", "10"},    {"keepalives", "1"},       {"keepalives_idle", "10"},
      {"keepalives_interval", "5"}, {"keepalives_count", "3"}, {"tcp_user_timeout", "15000"},
  };
  std::string out;
  const auto add = [&](std::string_view keyword, std::string_view value) {
    if (!out.empty()) out += ' ';
    out += keyword;
    out += "='";
    for (const char c : value) {
      if (c == '\\' || c == '\'') out += '\\';
      out += c;
    }
    out += '\'';
  };
  for (const PQconninfoOption* option = options; option->keyword != nullptr; ++option) {
    if (option->val != nullptr) add(option->keyword, option->val);
  }
  for (const auto& [keyword, value] : kDefaults) {
    bool set = false;
    for (const PQconninfoOption* option = options; option->keyword != nullptr; ++option) {
      if (option->val != nullptr && keyword == option->keyword) set = true;
    }
    if (!set) add(keyword, value);
  }
  PQconninfoFree(options);
  return out;
}

std::unique_ptr<pqxx::connection> connect(const std::string& dsn) {
  try {
    auto connection = std::make_unique<pqxx::connection>(with_network_timeouts(dsn));
    // What the record writer's literals assume, whatever the server's defaults.
    pqxx::nontransaction(*connection, "session")
        .exec("SET standard_conforming_strings = on; SET client_encoding = 'UTF8'");
    return connection;
  } catch (const pqxx::broken_connection& error) {
    throw ConnectError("cannot connect to PostgreSQL (" + redact_dsn(dsn) +
                       "): " + one_line(error.what()));
  } catch (const pqxx::failure& error) {
    throw ConnectError("cannot connect to PostgreSQL (" + redact_dsn(dsn) +
                       "): " + one_line(error.what()));
  }
}

}  // namespace jackpot::storage
