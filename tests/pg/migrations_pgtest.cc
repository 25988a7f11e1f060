// Migrations against a real PostgreSQL: apply to an empty database, are idempotent, refuse
// edited or unknown history, change nothing when one fails, and serialise concurrent starts.
#include <gtest/gtest.h>

#include <map>
#include <pqxx/pqxx>
#include <thread>

#include "storage/audit.h"
#include "storage/migrations.h"
#include "storage/record_writer.h"
#include "tests/support/test_database.h"

namespace jackpot::storage {
namespace {

using testing::TestDatabase;

// Every column of every table in the public schema, one line each: a fingerprint of the schema.
std::string schema_fingerprint(pqxx::connection& connection) {
  pqxx::read_transaction tx(connection);
  std::string fingerprint;
  for (const auto& row : tx.exec(
           "SELECT table_name, column_name, data_type, is_nullable FROM information_schema.columns "
           "WHERE table_schema = 'public' ORDER BY table_name, ordinal_position")) {
    fingerprint += row[0].c_str() + std::string(".") + row[1].c_str() + " " + row[2].c_str() + " " +
                   row[3].c_str() + "\n";
  }
  for (const auto& row : tx.exec("SELECT tgname FROM pg_trigger WHERE NOT tgisinternal "
                                 "ORDER BY tgname")) {
    fingerprint += std::string("trigger ") + row[0].c_str() + "\n";
  }
  return fingerprint;
}

bool table_exists(pqxx::connection& connection, const std::string& table) {
  pqxx::read_transaction tx(connection);
  return tx.exec_params1("SELECT to_regclass($1) IS NOT NULL", "public." + table)[0].as<bool>();
}

std::string error_of(const std::function<void()>& action) {
  try {
    action();
  } catch (const std::exception& error) {
    return error.what();
  }
  return "<no error>";
}

TEST(Migrations, ApplyToAnEmptyDatabaseAndRecordEachWithItsHash) {
  TestDatabase database;
  auto connection = database.connect();
  const auto& migrations = embedded_migrations();

  const MigrationReport report = apply_migrations(*connection);

  EXPECT_EQ(report.applied, static_cast<int>(migrations.size()));
  EXPECT_EQ(report.schema_version, static_cast<int>(migrations.size()));
  EXPECT_TRUE(table_exists(*connection, "audit_log"));
  pqxx::read_transaction tx(*connection);
  const auto rows = tx.exec("SELECT version, name, sha256 FROM schema_migrations ORDER BY version");
  ASSERT_EQ(rows.size(), migrations.size());
  for (std::size_t i = 0; i < migrations.size(); ++i) {
    EXPECT_EQ(rows[i][0].as<int>(), migrations[i].version);
    EXPECT_EQ(rows[i][1].as<std::string>(), migrations[i].name);
    EXPECT_EQ(rows[i][2].as<std::string>(), sha256_hex(migrations[i].sql));
  }
}

// Every account and transfer kind the database can hold is one the ledger knows, or the one
// retired account (breakage, which nothing ever posted to): recovery reads each by name.
TEST(Migrations, EveryStoredAccountAndTransferKindIsOneTheLedgerKnows) {
  TestDatabase database;
  auto connection = database.connect();
  apply_migrations(*connection);
  pqxx::read_transaction tx(*connection);
  std::size_t accounts = 0;
  for (const auto& row : tx.exec("SELECT unnest(enum_range(NULL::account_kind))::text")) {
    const std::string name = row[0].as<std::string>();
    if (name == kRetiredBreakageAccount) continue;
    EXPECT_NO_THROW(account_kind_named(name)) << name;
    EXPECT_EQ(to_string(account_kind_named(name)), name);
    ++accounts;
  }
  EXPECT_EQ(accounts, 7U) << "five link accounts, meter and reserve";
  for (const auto& row : tx.exec("SELECT unnest(enum_range(NULL::transfer_kind))::text")) {
    const std::string name = row[0].as<std::string>();
    EXPECT_NO_THROW(transfer_kind_named(name)) << name;
  }
}

TEST(Migrations, AreIdempotent) {
  TestDatabase database;
  auto connection = database.connect();
  apply_migrations(*connection);
  const std::string before = schema_fingerprint(*connection);

  const MigrationReport again = apply_migrations(*connection);

  EXPECT_EQ(again.applied, 0);
  EXPECT_EQ(again.schema_version, static_cast<int>(embedded_migrations().size()));
  EXPECT_EQ(schema_fingerprint(*connection), before);
  EXPECT_NE(before.find("audit_log.principal text NO"), std::string::npos) << before;
}

TEST(Migrations, RefuseAMigrationEditedAfterItWasApplied) {
  TestDatabase database;
  auto connection = database.connect();
  apply_migrations(*connection);
  std::vector<Migration> edited = embedded_migrations();
  const std::string changed_sql = std::string(edited[0].sql) + "\n-- edited\n";
  edited[0].sql = changed_sql;

  const std::string error = error_of([&] { apply_migrations(*connection, edited); });

  EXPECT_NE(error.find("migration 0001_audit_log.sql was changed after it was applied"),
            std::string::npos)
      << error;
}

TEST(Migrations, RefuseADatabaseMigratedByANewerBinary) {
  TestDatabase database;
  auto connection = database.connect();
  std::vector<Migration> newer = embedded_migrations();
  newer.push_back({static_cast<int>(newer.size()) + 1, "9999_future.sql",
                   "CREATE TABLE future_thing (id integer)"});
  apply_migrations(*connection, newer);

  const std::string error = error_of([&] { apply_migrations(*connection); });

  EXPECT_NE(error.find("that this jackpotd does not know"), std::string::npos) << error;
}

TEST(Migrations, AFailingMigrationIsNamedAndChangesNothing) {
  TestDatabase database;
  auto connection = database.connect();
  std::vector<Migration> broken = embedded_migrations();
  broken.push_back({static_cast<int>(broken.size()) + 1, "0099_broken.sql",
                    "CREATE TABLE half_done (id integer); SELECT no_such_column FROM half_done"});

  const std::string error = error_of([&] { apply_migrations(*connection, broken); });

  EXPECT_NE(error.find("migration 0099_broken.sql failed"), std::string::npos) << error;
  EXPECT_NE(error.find("no_such_column"), std::string::npos) << error;
  EXPECT_FALSE(table_exists(*connection, "half_done"));
  EXPECT_FALSE(table_exists(*connection, "audit_log"));
  EXPECT_FALSE(table_exists(*connection, "schema_migrations"));
}

TEST(Migrations, ConcurrentStartsApplyEachMigrationOnce) {
  TestDatabase database;
  constexpr int kStarters = 4;
  std::vector<int> applied(kStarters, -1);
  std::vector<std::string> errors(kStarters);
  std::vector<std::thread> starters;
  for (int i = 0; i < kStarters; ++i) {
    starters.emplace_back([&, i] {
      try {
        auto connection = database.connect();
        applied[static_cast<std::size_t>(i)] = apply_migrations(*connection).applied;
      } catch (const std::exception& error) {
        errors[static_cast<std::size_t>(i)] = error.what();
      }
    });
  }
  for (auto& starter : starters) starter.join();

  int total = 0;
  for (int i = 0; i < kStarters; ++i) {
    EXPECT_EQ(errors[static_cast<std::size_t>(i)], "");
    total += applied[static_cast<std::size_t>(i)];
  }
  EXPECT_EQ(total, static_cast<int>(embedded_migrations().size()));
}

TEST(AuditLog, KeepsEventsAndRefusesToChangeThem) {
  TestDatabase database;
  auto connection = database.connect();
  apply_migrations(*connection);

  append_audit_event(*connection, "supervisor/S7", "payout.approve",
                     {{"payout_id", "42"}, {"reason", "checked \"twice\"\nby camera"}});

  {
    pqxx::read_transaction tx(*connection);
    const auto row = tx.exec1(
        "SELECT principal, action, detail->>'payout_id', detail->>'reason' FROM audit_log");
    EXPECT_EQ(row[0].as<std::string>(), "supervisor/S7");
    EXPECT_EQ(row[1].as<std::string>(), "payout.approve");
    EXPECT_EQ(row[2].as<std::string>(), "42");
    EXPECT_EQ(row[3].as<std::string>(), "checked \"twice\"\nby camera");
  }
  for (const char* change : {"UPDATE audit_log SET action = 'payout.reject'",
                             "DELETE FROM audit_log", "TRUNCATE audit_log"}) {
    pqxx::work tx(*connection);
    const std::string error = error_of([&] { tx.exec(change); });
    EXPECT_NE(error.find("audit_log is append-only"), std::string::npos) << change << ": " << error;
  }
  pqxx::read_transaction tx(*connection);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM audit_log")[0].as<int>(), 1);
}

TEST(AuditLog, RefusesMalformedPrincipalsAndActions) {
  TestDatabase database;
  auto connection = database.connect();
  apply_migrations(*connection);

  EXPECT_NE(error_of([&] {
              append_audit_event(*connection, "nobody", "daemon.start", {});
            }).find("audit_log_principal_check"),
            std::string::npos);
  EXPECT_NE(error_of([&] {
              append_audit_event(*connection, "admin/ops", "Drop Table", {});
            }).find("audit_log_action_check"),
            std::string::npos);
}

// Migration 7 moves each command's first request and answer onto its round event: a database
// written by the schema before it keeps every answer, byte for byte.
TEST(Migrations, AnswersMoveOntoTheirRoundEvents) {
  TestDatabase database;
  auto connection = database.connect();
  const auto& all = embedded_migrations();
  ASSERT_GE(all.size(), 7U);
  apply_migrations(*connection, std::vector<Migration>(all.begin(), all.begin() + 6));
  {
    pqxx::work tx(*connection);
    tx.exec(
        "INSERT INTO rounds VALUES (1, 'T1', 1), (2, 'T1', 2);"
        "INSERT INTO round_events (round_key, phase, at) VALUES (1, 'open', now()), "
        "  (1, 'locked', now()), (1, 'voided', now()), (2, 'open', now());"
        "INSERT INTO command_answers VALUES (1, 'open', '\\x0101', '\\x0a'), "
        "  (1, 'lock', '\\x0102', '\\x0b'), (1, 'void', '\\x0103', '\\x0c'), "
        "  (2, 'open', '\\x0201', '\\x0d');");
    tx.commit();
  }
  apply_migrations(*connection);
  pqxx::work tx(*connection);
  const auto rows = tx.exec(
      "SELECT round_key, phase, encode(request, 'hex'), encode(answer, 'hex') FROM round_events "
      "ORDER BY round_key, at, phase");
  std::map<std::string, std::string> moved;
  for (const auto& row : rows) {
    moved[row[0].as<std::string>() + " " + row[1].as<std::string>()] =
        row[2].as<std::string>() + "/" + row[3].as<std::string>();
  }
  EXPECT_EQ(moved, (std::map<std::string, std::string>{{"1 open", "0101/0a"},
                                                       {"1 locked", "0102/0b"},
                                                       {"1 voided", "0103/0c"},
                                                       {"2 open", "0201/0d"}}));
  EXPECT_EQ(
      tx.exec1("SELECT count(*) FROM pg_class WHERE relname = 'command_answers'")[0].as<int>(), 0);
  // From now on an event keeps its answer.
  EXPECT_NE(
      error_of([&] {
        tx.exec("INSERT INTO round_events (round_key, phase, at) VALUES (2, 'locked', now())");
      }).find("round_events_answer_kept"),
      std::string::npos);
}

// Migration 20: a round event keeps its request and answer in a format version jackpotd reads
// (1 to 3), so that a jackpotd from before refuses the database rather than meet a row it cannot
// read; rows kept before are not read again.
TEST(Migrations, KeptCommandsAreInAFormatVersionJackpotdReads) {
  TestDatabase database;
  auto connection = database.connect();
  const auto& all = embedded_migrations();
  ASSERT_GE(all.size(), 20U);
  apply_migrations(*connection, std::vector<Migration>(all.begin(), all.begin() + 19));
  {
    pqxx::work tx(*connection);
    tx.exec(
        "INSERT INTO rounds VALUES (1, 'T1', 1), (2, 'T1', 2);"
        "INSERT INTO round_events (round_key, phase, at, request, answer) VALUES "
        "  (1, 'open', now(), '\\x09', '\\x09')");  // Not a version; kept before the check.
    tx.commit();
  }
  apply_migrations(*connection);
  const auto insert = [&](const std::string& request, const std::string& answer,
                          const std::string& phase = "open") {
    return error_of([&] {
      pqxx::work tx(*connection);
      tx.exec_params(
          "INSERT INTO round_events (round_key, phase, at, request, answer) "
          "VALUES (2, $3, now(), decode($1, 'hex'), decode($2, 'hex'))",
          request, answer, phase);
      tx.commit();
    });
  };
  for (const auto& [request, answer] : std::vector<std::pair<std::string, std::string>>{
           {"04", "0300"}, {"0300", "00"}, {"", "0300"}, {"0300", ""}, {"ff", "ff"}}) {
    EXPECT_NE(insert(request, answer).find("round_events_kept_format"), std::string::npos)
        << request << "/" << answer;
  }
  // Every version jackpotd reads, in either column (one phase per row of round 2).
  EXPECT_EQ(insert("0300", "0100"), "<no error>");
  EXPECT_EQ(insert("0200", "0200", "locked"), "<no error>");
  EXPECT_EQ(insert("0100", "0300", "voided"), "<no error>");
  // A missing answer passes this check; 0007's refuses it.
  EXPECT_NE(error_of([&] {
              pqxx::work tx(*connection);
              tx.exec(
                  "INSERT INTO round_events (round_key, phase, at, request, answer) "
                  "VALUES (1, 'locked', now(), '\\x0300', NULL)");
              tx.commit();
            }).find("round_events_answer_kept"),
            std::string::npos);
}

// Migration 22 on a database with history: the audit events already written are chained in the
// order they were written, new ones follow them, and the hidden points already drawn leave
// `draws` for the private schema with their salts.
TEST(Migrations, TheAuditChainTakesInTheEventsAndPointsAlreadyWritten) {
  TestDatabase database;
  auto connection = database.connect();
  const auto& all = embedded_migrations();
  ASSERT_GE(all.size(), 22U);
  apply_migrations(*connection, std::vector<Migration>(all.begin(), all.begin() + 21));
  append_audit_event(*connection, "daemon/old", "daemon.start", {{"floor_version", "1"}});
  append_audit_event(*connection, "admin/ops", "link.status", {{"reason", "before \"22\""}});
  {
    pqxx::work tx(*connection);
    tx.exec(
        "INSERT INTO links (link_id, levels) VALUES ('L', 2);"
        "INSERT INTO draws (draw_id, link_id, level, kind, inputs, outcome, trigger_point_micros, "
        "trigger_salt, trigger_commitment, drawn_at, trigger_above_micros, trigger_up_to_micros) "
        "VALUES (1, 'L', 2, 'hidden_trigger', 'above=50 up_to=250', 'committed', 123450000, "
        "decode(repeat('ab', 32), 'hex'), decode(repeat('cd', 32), 'hex'), now(), 50000000, "
        "250000000)");
    tx.commit();
  }
  apply_migrations(*connection);
  append_audit_event(*connection, "daemon/new", "daemon.stop", {{"signal", "SIGTERM"}});

  AuditChainPosition at;
  const AuditPage page = read_audit_page(*connection, 0, 100);
  ASSERT_EQ(page.events.size(), 4u);
  for (const AuditEvent& event : page.events) {
    EXPECT_EQ(audit_chain_break(at, event), std::nullopt);
    at = {event.seq, event.hash};
  }
  EXPECT_EQ(page.events[0].action, "daemon.start");
  EXPECT_EQ(page.events[1].action, "link.status");
  // The commitment in force goes on the chain at the migration, so that its hit opens a
  // commitment the chain holds.
  EXPECT_EQ(page.events[2].action, "must_hit_by.commit");
  EXPECT_NE(page.events[2].detail.find("cdcdcdcd"), std::string::npos) << page.events[2].detail;
  EXPECT_EQ(page.events[3].action, "daemon.stop");
  EXPECT_EQ(audit_head_break(at, page.head), std::nullopt);

  pqxx::read_transaction tx(*connection);
  const auto secret = tx.exec1(
      "SELECT point_micros, encode(salt, 'hex') FROM jackpot_private.trigger_secrets "
      "WHERE draw_id = 1");
  EXPECT_EQ(secret[0].as<std::int64_t>(), 123'450'000);
  std::string salt;
  for (int i = 0; i < 32; ++i) salt += "ab";
  EXPECT_EQ(secret[1].as<std::string>(), salt);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM information_schema.columns WHERE table_name = 'draws' "
                     "AND column_name IN ('trigger_point_micros', 'trigger_salt')")[0]
                .as<int>(),
            0);
}

TEST(FloorVersions, OneVersionPerDistinctFloorKeptAsWritten) {
  TestDatabase database;
  auto connection = database.connect();
  apply_migrations(*connection);

  const std::string first = "links { id: \"A\" }\n";
  const std::string second = "links { id: \"B\" }\n";
  const std::int64_t v1 = record_floor_version(*connection, first);
  EXPECT_EQ(record_floor_version(*connection, first), v1);  // The same floor starting again.
  const std::int64_t v2 = record_floor_version(*connection, second);
  EXPECT_GT(v2, v1);
  // A known floor starting again uses up no number: the next new floor gets the next one
  // (before, every restart left a gap).
  EXPECT_EQ(v2, v1 + 1);
  EXPECT_EQ(record_floor_version(*connection, first), v1);
  EXPECT_NE(error_of([&] {
              record_floor_version(*connection, std::string("links {\0}", 10));
            }).find("NUL"),
            std::string::npos);
  pqxx::work tx(*connection);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM floor_versions")[0].as<int>(), 2);
  EXPECT_EQ(tx.exec_params1("SELECT floor_text FROM floor_versions WHERE version = $1", v2)[0]
                .as<std::string>(),
            second);
  EXPECT_NE(
      error_of([&] { tx.exec("UPDATE floor_versions SET floor_text = ''"); }).find("append-only"),
      std::string::npos);
}

}  // namespace
}  // namespace jackpot::storage
