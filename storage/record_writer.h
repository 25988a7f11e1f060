#pragma once

#include <cstdint>
#include <pqxx/connection>
#include <pqxx/transaction>
#include <span>
#include <string>
#include <vector>

#include "meters/records.h"

namespace jackpot::storage {

// The links the engine runs, with their level counts; written once at start (existing rows are
// kept, a link whose level count changed is refused by the caller's validation).
struct LinkRow {
  std::string link_id;
  std::uint32_t levels = 0;
};
void write_links(pqxx::work& tx, const std::vector<LinkRow>& links);

// Writes one batch of engine records in the caller's transaction: rounds and their phases,
// wagers, hands, draws, transfers and payouts with their state changes. Rows are written in an
// order that satisfies every foreign key; a constraint violation throws and the caller's
// transaction rolls back as a whole.
void write_records(pqxx::work& tx, const Records& records);

// The SQL that writes the records of a whole batch of commands, in command order: statements
// without a transaction of their own, for the caller to run in one.
std::string records_sql(pqxx::connection_base& connection, std::span<const Records> batch);

// "2026-11-29 17:05:29.123456+00" for microseconds since the Unix epoch.
std::string timestamp_text(std::int64_t unix_us);

// The enum values named as the database stores them; throws on a name it does not know.
AccountKind account_kind_named(const std::string& name);
TransferKind transfer_kind_named(const std::string& name);

}  // namespace jackpot::storage
