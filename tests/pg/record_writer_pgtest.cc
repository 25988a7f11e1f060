// The engine's records written to a real PostgreSQL: after hundreds of commands the ledger in
// SQL (the account_balances view over the transfers) equals the engine's to the micro, sums to
// zero per link, and the schema refuses duplicates, edits and a payout paid twice.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <map>
#include <optional>
#include <pqxx/pqxx>
#include <random>
#include <set>
#include <thread>

#include "controller/durability/recovery.h"
#include "controller/engine/engine.h"
#include "controller/hands/paytable_loader.h"
#include "journal/audit_chain.h"
#include "meters/hidden_trigger.h"
#include "storage/audit.h"
#include "storage/commit_connection.h"
#include "storage/migrations.h"
#include "storage/record_writer.h"
#include "storage/state_loader.h"
#include "tests/support/payout_decisions.h"
#include "tests/support/test_database.h"

namespace jackpot {
namespace {

using testing::TestDatabase;

class StepClock final : public Clock {
 public:
  std::int64_t now_us() override { return now_ += 1'000; }

 private:
  std::int64_t now_ = 1'800'000'000'000'000;
};

Money usd(const char* text) { return *Money::parse(text); }

EngineConfig floor_config() {
  EngineConfig config;
  LinkSettings link;
  link.meters.id = LinkId("pg-link");
  LevelConfig royal;
  royal.level = 1;
  royal.name = "Royal Flush";
  royal.seed = usd("1000.00");
  royal.meter_rate_ppm = 150'000;
  royal.reserve_rate_ppm = 25'000;
  LevelConfig must_hit_by;
  must_hit_by.level = 2;
  must_hit_by.name = "Must-Hit-By $250";
  must_hit_by.seed = usd("50.00");
  must_hit_by.meter_rate_ppm = 100'000;
  must_hit_by.must_hit_by = usd("250.00");
  must_hit_by.trigger = TriggerMode::hidden_uniform;
  link.meters.levels = {royal, must_hit_by};
  link.approval_threshold = usd("100.00");
  config.links.push_back(link);
  for (const char* id : {"T1", "T2"}) {
    TableSettings table;
    table.id = TableId(id);
    table.seats = 6;
    table.links.push_back({LinkId("pg-link"), "PT-BJS-HUH-5CP-12", CommunitySource::board});
    config.tables.push_back(table);
  }
  // A table with Dynamic Pays, for the selection a void keeps.
  TableSettings dynamic;
  dynamic.id = TableId("D1");
  dynamic.seats = 6;
  dynamic.links.push_back({LinkId("pg-link"), "PT-PRG-HUH-D01", CommunitySource::board});
  config.tables.push_back(dynamic);
  return config;
}

class RecordWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    connection_ = database_.connect();
    storage::apply_migrations(*connection_);
    auto paytables = std::move(load_paytables(embedded_paytables())).value();
    Records created;
    auto engine = Engine::create(floor_config(), std::move(paytables), clock_, random_, created);
    ASSERT_TRUE(engine.ok());
    engine_ = std::move(engine).value();
    pqxx::work tx(*connection_);
    storage::write_links(tx, {{"pg-link", 2}});
    storage::write_records(tx, created);
    tx.commit();
    history_.push_back(std::move(created));
  }

  // Runs one command and writes its records in a transaction of their own.
  template <typename Command>
  auto run(Command command) {
    Records records;
    auto result = command(*engine_, records);
    pqxx::work tx(*connection_);
    storage::write_records(tx, records);
    tx.commit();
    history_.push_back(records);
    last_ = std::move(records);
    return result;
  }

  void play_rounds(int count, bool settle_payouts = true) {
    std::mt19937_64 shuffle(7);
    std::vector<std::string> deck;
    for (const char rank : std::string("23456789TJQKA")) {
      for (const char suit : std::string("shdc")) deck.push_back({rank, suit});
    }
    std::map<std::string, std::uint64_t> next = {{"T1", 1}, {"T2", 1}};
    for (int n = 0; n < count; ++n) {
      const TableId table(n % 2 == 0 ? "T1" : "T2");
      const RoundId round(next[table.value()]++);
      ASSERT_TRUE(run([&](Engine& e, Records& r) { return e.open_round({table, round}, r); }));
      LockWagersRequest lock{table, round, {}};
      for (std::uint32_t seat = 1; seat <= 6; ++seat) {
        lock.wagers.push_back({seat, LinkId("pg-link"), 100 * (1 + seat % 3)});
      }
      ASSERT_TRUE(run([&](Engine& e, Records& r) { return e.lock_wagers(lock, r); }));
      const bool locked_must_hit_by = !last_.payouts.empty();
      if (n % 9 == 4 && !locked_must_hit_by) {
        ASSERT_TRUE(run([&](Engine& e, Records& r) {
          return e.void_round({table, round, "misdeal"}, r);
        }));
        continue;
      }
      std::shuffle(deck.begin(), deck.end(), shuffle);
      SettleRoundRequest settle{table, round, {}, {}, {}};
      for (std::uint32_t seat = 1; seat <= 6; ++seat) {
        if (n % 25 == 3 && seat == 4) {
          settle.seats.push_back({seat, {}, std::string("ROYAL_FLUSH")});
          continue;
        }
        settle.seats.push_back({seat, {deck[2 * seat], deck[2 * seat + 1]}, std::nullopt});
      }
      settle.board.assign(deck.begin() + 20, deck.begin() + 25);
      const auto settled = run([&](Engine& e, Records& r) { return e.settle_round(settle, r); });
      ASSERT_TRUE(settled.ok()) << settled.error().message;
    }
    // Supervisors settle what waits: approve the even payouts, reject the odd ones.
    if (!settle_payouts) return;
    for (const Payout& pending : engine_->pending_payouts()) {
      const auto done = run([&](Engine& e, Records& r) {
        return pending.id.value() % 2 == 0
                   ? testing::approve_payout(e, pending.id, "supervisor/S1", r)
                   : testing::reject_payout(e, pending.id, "supervisor/S2", "camera review", r);
      });
      ASSERT_TRUE(done.ok()) << done.error().message;
    }
  }

  std::int64_t sql_balance(const std::string& kind, std::uint32_t level) {
    pqxx::read_transaction tx(*connection_);
    const auto rows = tx.exec_params(
        "SELECT balance_micros FROM account_balances WHERE link_id = 'pg-link' "
        "AND account_kind = $1::account_kind AND level = $2",
        kind, static_cast<std::int64_t>(level));
    return rows.empty() ? 0 : rows[0][0].as<std::int64_t>();
  }

  StepClock clock_;
  SplitMix64 random_{99};
  TestDatabase database_;
  std::unique_ptr<pqxx::connection> connection_;
  std::unique_ptr<Engine> engine_;
  Records last_;
  std::vector<Records> history_;  // Every command's records as written, the opening first.
};

// Every row of a table, as text, sorted, without the columns the server fills with its clock
// (`server_time`): two databases hold the same rows when these are equal.
std::vector<std::string> rows_of(pqxx::connection& connection, const std::string& table,
                                 const std::string& server_time = "") {
  pqxx::read_transaction tx(connection);
  std::vector<std::string> rows;
  for (const auto& row : tx.exec("SELECT (to_jsonb(t) - '" + server_time + "')::text FROM " +
                                 table + " t ORDER BY 1")) {
    rows.push_back(row[0].as<std::string>());
  }
  return rows;
}

TEST_F(RecordWriterTest, TheLedgerInSqlEqualsTheEngineToTheMicro) {
  play_rounds(400);
  ASSERT_FALSE(engine_->check_invariants().has_value());
  const Link& link = *engine_->link(LinkId("pg-link"));
  for (const auto& [account, balance] : link.ledger().balances()) {
    EXPECT_EQ(sql_balance(std::string(to_string(account.kind)), account.level), balance.micros())
        << to_string(account);
  }
  pqxx::read_transaction tx(*connection_);
  EXPECT_EQ(tx.exec1("SELECT coalesce(sum(balance_micros), 0) FROM account_balances")[0]
                .as<std::int64_t>(),
            0);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM account_balances WHERE balance_micros < 0 AND "
                     "account_kind IN ('meter', 'reserve', 'awards_payable', 'paid')")[0]
                .as<int>(),
            0);
  // Every round opened once and ended once; nothing waits for a supervisor any more.
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM rounds")[0].as<int>(), 400);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM round_events WHERE phase IN ('settled', 'voided')")[0]
                .as<int>(),
            400);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM payouts p WHERE NOT EXISTS (SELECT 1 FROM "
                     "payout_events e WHERE e.payout_id = p.payout_id AND e.state IN "
                     "('paid', 'rejected'))")[0]
                .as<int>(),
            0);
  EXPECT_GT(tx.exec1("SELECT count(*) FROM payout_events WHERE state = 'rejected'")[0].as<int>(),
            0);
  EXPECT_GT(tx.exec1("SELECT count(*) FROM draws WHERE kind = 'must_hit_by_winner'")[0].as<int>(),
            0);
}

// Recovery: the state read back from PostgreSQL is the engine's state, exactly, and an engine
// restored from it answers like the original (open rounds, pending payouts, replays included).
TEST_F(RecordWriterTest, RecoveryRebuildsTheEngineExactly) {
  play_rounds(300, /*settle_payouts=*/false);
  // Leave a round open at each table and a link closed, as a crash might.
  ASSERT_TRUE(run([](Engine& e, Records& r) {
    return e.open_round({TableId("T1"), RoundId(1000)}, r);
  }));
  const LockWagersRequest lock{TableId("T1"), RoundId(1000), {{2, LinkId("pg-link"), 300}}};
  const auto locked = run([&](Engine& e, Records& r) { return e.lock_wagers(lock, r); });
  ASSERT_TRUE(locked.ok());
  ASSERT_TRUE(run([](Engine& e, Records& r) {
    return e.open_round({TableId("T2"), RoundId(1000)}, r);
  }));
  ASSERT_FALSE(engine_->pending_payouts().empty());

  const auto stored = storage::load_state(*connection_);
  const auto rebuilt = snapshot_from(stored, floor_config());
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.error().front();
  const EngineSnapshot original = engine_->snapshot();
  EXPECT_EQ(rebuilt->links, original.links);
  EXPECT_EQ(rebuilt->pending, original.pending);
  for (std::size_t t = 0; t < original.tables.size(); ++t) {
    EXPECT_EQ(rebuilt->tables[t], original.tables[t]) << "table " << t;
  }
  EXPECT_EQ(*rebuilt, original);

  StepClock clock;
  SplitMix64 random(1);
  auto restored =
      Engine::restore(floor_config(), std::move(load_paytables(embedded_paytables())).value(),
                      clock, random, *rebuilt);
  ASSERT_TRUE(restored.ok()) << restored.error().front();
  Records replay;
  EXPECT_EQ(*(*restored)->lock_wagers(lock, replay), *locked);  // The first answer, again.
  EXPECT_TRUE(replay.empty());
}

// A rejected Must-Hit-By payout returns the award to the meter and posts the excess as an
// overflow under the hit round's key: recovery must still give the round the lock's
// contributions only, and keep the engine's order.
TEST_F(RecordWriterTest, RecoveryAfterARejectedMustHitByPayoutEqualsTheEngine) {
  std::mt19937_64 shuffle(11);
  std::vector<std::string> deck;
  for (const char rank : std::string("23456789TJQKA")) {
    for (const char suit : std::string("shdc")) deck.push_back({rank, suit});
  }
  const TableId table("T1");
  std::optional<PayoutId> hit;
  std::uint64_t id = 0;
  while (!hit && id < 5000) {
    const RoundId round(++id);
    ASSERT_TRUE(run([&](Engine& e, Records& r) { return e.open_round({table, round}, r); }));
    LockWagersRequest lock{table, round, {}};
    for (std::uint32_t seat = 1; seat <= 6; ++seat) {
      lock.wagers.push_back({seat, LinkId("pg-link"), 300});
    }
    ASSERT_TRUE(run([&](Engine& e, Records& r) { return e.lock_wagers(lock, r); }));
    if (!last_.hits.empty()) hit = last_.hits.front().payout;
    std::shuffle(deck.begin(), deck.end(), shuffle);
    SettleRoundRequest settle{table, round, {}, {}, {}};
    for (std::uint32_t seat = 1; seat <= 6; ++seat) {
      settle.seats.push_back({seat, {deck[2 * seat], deck[2 * seat + 1]}, std::nullopt});
    }
    settle.board.assign(deck.begin() + 20, deck.begin() + 25);
    const auto settled = run([&](Engine& e, Records& r) { return e.settle_round(settle, r); });
    ASSERT_TRUE(settled.ok()) << settled.error().message;
  }
  ASSERT_TRUE(hit.has_value()) << "no Must-Hit-By hit in " << id << " rounds";
  const auto rejected = run([&](Engine& e, Records& r) {
    return testing::reject_payout(e, *hit, "supervisor/S2", "camera review", r);
  });
  ASSERT_TRUE(rejected.ok()) << rejected.error().message;

  const auto rebuilt = snapshot_from(storage::load_state(*connection_), floor_config());
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.error().front();
  EXPECT_EQ(*rebuilt, engine_->snapshot());
}

// A void after another table's royal refunds from the house (house_funded_refund, migration
// 0015): the journal takes the new kind, recovery gives the locked round the levels awarded since
// its lock exactly as the engine noted them, and the SQL ledger equals the engine's. A void's
// Dynamic Pay selection carries over to the next round (a dynamic_carried_over record) and
// survives a rebuild from the database.
TEST_F(RecordWriterTest, VoidsAfterAnotherTablesRoyalAndKeptDynamicPaysRoundTrip) {
  const auto rebuilt_equals_engine = [&](const char* when) {
    const auto rebuilt = snapshot_from(storage::load_state(*connection_), floor_config());
    ASSERT_TRUE(rebuilt.ok()) << when << ": " << rebuilt.error().front();
    EXPECT_EQ(*rebuilt, engine_->snapshot()) << when;
  };
  const LockWagersRequest lock{
      TableId("T1"), RoundId(1), {{1, LinkId("pg-link"), 500}, {2, LinkId("pg-link"), 500}}};
  ASSERT_TRUE(run([](Engine& e, Records& r) {
    return e.open_round({TableId("T1"), RoundId(1)}, r);
  }));
  ASSERT_TRUE(run([&](Engine& e, Records& r) { return e.lock_wagers(lock, r); }));
  ASSERT_TRUE(last_.hits.empty());
  ASSERT_TRUE(run([](Engine& e, Records& r) {
    return e.open_round({TableId("T2"), RoundId(1)}, r);
  }));
  ASSERT_TRUE(run([](Engine& e, Records& r) {
    return e.lock_wagers({TableId("T2"), RoundId(1), {{4, LinkId("pg-link"), 100}}}, r);
  }));
  ASSERT_TRUE(run([](Engine& e, Records& r) {
    return e.settle_round(
        {TableId("T2"), RoundId(1), {{4, {}, std::string("ROYAL_FLUSH")}}, {}, {}}, r);
  }));
  rebuilt_equals_engine("after the royal");  // T1's locked round noted level 1 as awarded.
  const auto voided = run([](Engine& e, Records& r) {
    return e.void_round({TableId("T1"), RoundId(1), "misdeal"}, r);
  });
  ASSERT_TRUE(voided.ok()) << voided.error().message;
  bool refunded = false;
  for (const TransferRecord& record : last_.transfers) {
    refunded |= record.transfer.kind == TransferKind::house_funded_refund;
  }
  EXPECT_TRUE(refunded);
  rebuilt_equals_engine("after the void");
  const Link& link = *engine_->link(LinkId("pg-link"));
  for (const auto& [account, amount] : link.ledger().balances()) {
    EXPECT_EQ(sql_balance(std::string(to_string(account.kind)), account.level), amount.micros())
        << to_string(account);
  }
  {
    pqxx::read_transaction tx(*connection_);
    EXPECT_EQ(tx.exec1("SELECT count(*) FROM transfers WHERE kind = 'house_funded_refund' "
                       "AND corrects IS NOT NULL")[0]
                  .as<int>(),
              static_cast<int>(std::count_if(
                  last_.transfers.begin(), last_.transfers.end(), [](const TransferRecord& record) {
                    return record.transfer.kind == TransferKind::house_funded_refund;
                  })));
  }

  // Dynamic Pays: open, void, rebuild the engine from the database, open again: the same pays.
  const auto opened = run([](Engine& e, Records& r) {
    return e.open_round({TableId("D1"), RoundId(1)}, r);
  });
  ASSERT_TRUE(opened.ok());
  ASSERT_TRUE(run([](Engine& e, Records& r) {
    return e.void_round({TableId("D1"), RoundId(1), "misdeal"}, r);
  }));
  const auto rebuilt = snapshot_from(storage::load_state(*connection_), floor_config());
  ASSERT_TRUE(rebuilt.ok()) << rebuilt.error().front();
  auto restored =
      Engine::restore(floor_config(), std::move(load_paytables(embedded_paytables())).value(),
                      clock_, random_, *rebuilt);
  ASSERT_TRUE(restored.ok()) << restored.error().front();
  engine_ = std::move(restored).value();
  const auto again = run([](Engine& e, Records& r) {
    return e.open_round({TableId("D1"), RoundId(2)}, r);
  });
  ASSERT_TRUE(again.ok());
  EXPECT_EQ(again->dynamic_pays, opened->dynamic_pays);
  ASSERT_EQ(last_.draws.size(), 1U);
  EXPECT_EQ(last_.draws[0].kind, DrawKind::dynamic_carried_over);
  rebuilt_equals_engine("after the kept selection");
  pqxx::read_transaction tx(*connection_);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM draws WHERE kind = 'dynamic_carried_over'")[0].as<int>(),
            1);
}

TEST_F(RecordWriterTest, HiddenTriggerCommitmentsVerifyFromTheDatabase) {
  play_rounds(200);
  pqxx::read_transaction tx(*connection_);
  const auto rows = tx.exec(
      "SELECT s.point_micros, encode(s.salt, 'hex'), encode(d.trigger_commitment, 'hex') "
      "FROM draws d JOIN jackpot_private.trigger_secrets s USING (draw_id) "
      "WHERE d.kind = 'hidden_trigger'");
  ASSERT_GT(rows.size(), 1u);
  for (const auto& row : rows) {
    const Money point = Money::from_micros(row[0].as<std::int64_t>());
    const std::string salt_hex = row[1].as<std::string>();
    TriggerSalt salt{};
    for (std::size_t i = 0; i < salt.size(); ++i) {
      salt[i] = static_cast<std::uint8_t>(std::stoi(salt_hex.substr(2 * i, 2), nullptr, 16));
    }
    EXPECT_EQ(to_hex(trigger_commitment(point, salt)), row[2].as<std::string>());
  }
}

TEST_F(RecordWriterTest, TheSchemaRefusesDuplicatesEditsAndDoublePayment) {
  const auto opened = run([](Engine& e, Records& r) {
    return e.open_round({TableId("T1"), RoundId(1)}, r);
  });
  ASSERT_TRUE(opened.ok());
  LockWagersRequest lock{TableId("T1"), RoundId(1), {{1, LinkId("pg-link"), 500}}};
  ASSERT_TRUE(run([&](Engine& e, Records& r) { return e.lock_wagers(lock, r); }).ok());
  const Records locked = last_;

  const auto refused = [&](const std::function<void(pqxx::work&)>& change) {
    try {
      pqxx::work tx(*connection_);
      change(tx);
      tx.commit();
    } catch (const pqxx::sql_error& error) {
      return std::string(error.what());
    }
    return std::string("<accepted>");
  };
  // The same records twice: the whole batch rolls back on the duplicate transfer.
  EXPECT_NE(refused([&](pqxx::work& tx) { storage::write_records(tx, locked); }), "<accepted>");
  EXPECT_NE(refused([](pqxx::work& tx) {
              tx.exec("UPDATE transfers SET amount_micros = 1");
            }).find("append-only"),
            std::string::npos);
  EXPECT_NE(refused([](pqxx::work& tx) { tx.exec("DELETE FROM draws"); }).find("append-only"),
            std::string::npos);
  // Every table of the journal refuses changes and removals of its rows, and being emptied:
  // each has both triggers (empty tables fire no row trigger, so the catalog is the check)...
  {
    pqxx::read_transaction catalog(*connection_);
    const auto unguarded = catalog.exec(
        "SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace "
        "WHERE n.nspname IN ('public', 'jackpot_private') AND c.relkind = 'r' "
        // The state a daemon keeps, not its journal: the chain's head, the floor's owner (each
        // claim changes its one row, which is never removed).
        "AND c.relname NOT IN ('schema_migrations', 'audit_chain_head', 'floor_owner') "
        "AND (SELECT count(*) FROM pg_trigger t JOIN pg_proc p ON p.oid = t.tgfoid "
        "     WHERE t.tgrelid = c.oid AND p.proname = 'jackpot_forbid_change' "
        "     AND (t.tgtype & 1 = 1 AND t.tgtype & 2 = 2 AND t.tgtype & 24 = 24 "  // row, before,
        "          OR t.tgtype & 32 = 32)) < 2 "  // upd+del; truncate
        "ORDER BY 1");
    std::string names;
    for (const auto& row : unguarded) names += row[0].as<std::string>() + " ";
    EXPECT_EQ(names, "") << "tables that can be rewritten";
    EXPECT_GE(catalog
                  .exec1("SELECT count(*) FROM pg_class c JOIN pg_namespace n ON "
                         "n.oid = c.relnamespace WHERE n.nspname = 'public' AND "
                         "c.relkind = 'r'")[0]
                  .as<int>(),
              15);
  }
  // ...and the triggers work on tables that hold rows.
  for (const std::string change : {"UPDATE rounds SET round_id = round_id + 1",
                                   "DELETE FROM wagers", "UPDATE round_events SET reason = 'x'",
                                   "TRUNCATE rounds CASCADE", "TRUNCATE links CASCADE"}) {
    EXPECT_NE(refused([&](pqxx::work& tx) { tx.exec(change); }).find("append-only"),
              std::string::npos)
        << change;
  }
  EXPECT_NE(refused([](pqxx::work& tx) {
              tx.exec(
                  "INSERT INTO transfers (link_id, transfer_id, debit_kind, debit_level, "
                  "credit_kind, credit_level, amount_micros, kind) VALUES ('pg-link', 999999, "
                  "'wagers', 0, 'meter', 1, -5, 'contribution')");
            }).find("transfers_amount_micros_check"),
            std::string::npos);
  // A hand only for a seat that wagered on that link in that round (seat 1 did, seat 5 did not).
  EXPECT_NE(refused([](pqxx::work& tx) {
              tx.exec(
                  "INSERT INTO hands (round_key, seat, link_id, cards, dealer_keyed, hand) "
                  "SELECT round_key, 5, 'pg-link', 'As Kd', false, '' FROM rounds");
            }).find("hands_wager_exists"),
            std::string::npos);
  pqxx::read_transaction tx(*connection_);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM wagers")[0].as<int>(), 1);
}

// Every reference of the busiest tables is checked once per statement by a trigger instead of a
// foreign key (migration 0008): each orphan is refused with foreign_key_violation, naming the
// check, whether it comes alone or among valid rows, and nothing of its statement is kept.
TEST_F(RecordWriterTest, EveryReferenceIsCheckedOncePerStatement) {
  ASSERT_TRUE(run([](Engine& e, Records& r) {
    return e.open_round({TableId("T1"), RoundId(1)}, r);
  }));
  LockWagersRequest lock{TableId("T1"), RoundId(1), {{1, LinkId("pg-link"), 500}}};
  ASSERT_TRUE(run([&](Engine& e, Records& r) { return e.lock_wagers(lock, r); }));
  const auto count = [&](const std::string& table) {
    pqxx::read_transaction tx(*connection_);
    return tx.exec1("SELECT count(*) FROM " + table)[0].as<std::int64_t>();
  };
  struct Orphan {
    std::string table;
    std::string check;
    std::string insert;  // A valid row first where one can be made, then the orphan.
  };
  const std::string transfer_columns =
      "INSERT INTO transfers (link_id, transfer_id, debit_kind, debit_level, credit_kind, "
      "credit_level, amount_micros, kind, corrects) VALUES ";
  // A payout of 5.00 on seat 1, then its table, round, link and award transfer.
  const std::string payout_columns =
      "INSERT INTO payouts (payout_id, seat, kind, level, hand, amount_micros, "
      "approvals_required, created_at, table_id, round_id, link_id, award_transfer_id) "
      "SELECT 987654, 1, 'fixed', 0, 'Flush', 5000000, 0, now(), ";
  const std::string draw_columns =
      "INSERT INTO draws (draw_id, level, kind, inputs, outcome, drawn_at, round_key, link_id) "
      "SELECT d, 0, 'dynamic_count', '', '', now(), r, l FROM (VALUES ";
  const std::vector<Orphan> orphans = {
      {"round_events", "round_events_round_exists",
       "INSERT INTO round_events (round_key, phase, at, request, answer) "
       "SELECT round_key, 'settled', now(), '\\x0300'::bytea, '\\x0300'::bytea FROM rounds UNION "
       "ALL "
       "SELECT 987654, 'open', now(), '\\x0300'::bytea, '\\x0300'::bytea"},
      {"wagers", "wagers_round_and_link_exist",
       "INSERT INTO wagers (round_key, seat, link_id, amount_micros, units) "
       "SELECT round_key, 2, 'pg-link', 5000000, 1 FROM rounds UNION ALL "
       "SELECT 987654, 1, 'pg-link', 5000000, 1"},
      {"wagers", "wagers_round_and_link_exist",
       "INSERT INTO wagers (round_key, seat, link_id, amount_micros, units) "
       "SELECT round_key, 3, 'no-such-link', 5000000, 1 FROM rounds"},
      {"hands", "hands_wager_exists",
       "INSERT INTO hands (round_key, seat, link_id, cards, dealer_keyed, hand) "
       "SELECT round_key, 1, 'pg-link', 'As Kd', false, '' FROM rounds UNION ALL "
       "SELECT round_key, 6, 'pg-link', 'Qs Jd', false, '' FROM rounds"},
      {"transfers", "transfers_link_and_corrected_exist",
       transfer_columns + "('no-such-link', 1, 'wagers', 0, 'meter', 1, 10, 'contribution', NULL)"},
      {"transfers", "transfers_link_and_corrected_exist",
       transfer_columns +
           "('pg-link', 900001, 'wagers', 0, 'meter', 1, 10, 'contribution', NULL), "
           "('pg-link', 900002, 'meter', 1, 'wagers', 0, 10, 'contribution_reversal', 900999)"},
      {"payouts", "payouts_references_exist", payout_columns + "'T1', 1, 'no-such-link', 1"},
      {"payouts", "payouts_references_exist", payout_columns + "'T9', 99, 'pg-link', 1"},
      {"payouts", "payouts_references_exist", payout_columns + "'T1', 1, 'pg-link', 999999"},
      {"payout_events", "payout_events_payout_exists",
       "INSERT INTO payout_events (payout_id, seq, state) VALUES (987654, 1, 'pending')"},
      {"draws", "draws_references_exist",
       draw_columns +
           "(987001, NULL::bigint, 'no-such-link'), (987002, NULL, 'pg-link')) v(d, r, l)"},
      {"draws", "draws_references_exist", draw_columns + "(987003, 987654, 'pg-link')) v(d, r, l)"},
      {"dynamic_pays", "dynamic_pays_references_exist",
       "INSERT INTO dynamic_pays (round_key, link_id, row_index, option) "
       "SELECT round_key, 'pg-link', 0, 1 FROM rounds UNION ALL SELECT 987654, 'pg-link', 1, 1"},
      {"dynamic_pays", "dynamic_pays_references_exist",
       "INSERT INTO dynamic_pays (round_key, link_id, row_index, option) "
       "SELECT round_key, 'no-such-link', 0, 1 FROM rounds"},
  };
  for (const Orphan& orphan : orphans) {
    const std::int64_t before = count(orphan.table);
    try {
      pqxx::work tx(*connection_);
      tx.exec(orphan.insert);
      tx.commit();
      ADD_FAILURE() << orphan.table << ": accepted " << orphan.insert;
    } catch (const pqxx::sql_error& error) {
      EXPECT_EQ(error.sqlstate(), "23503") << error.what();
      EXPECT_NE(std::string(error.what()).find(orphan.check), std::string::npos) << error.what();
    }
    EXPECT_EQ(count(orphan.table), before) << orphan.table;
  }
  // A correction of a transfer written by the same statement is not an orphan.
  pqxx::work tx(*connection_);
  EXPECT_NO_THROW(
      tx.exec(transfer_columns +
              "('pg-link', 900001, 'wagers', 0, 'meter', 1, 10, 'contribution', NULL), "
              "('pg-link', 900002, 'meter', 1, 'wagers', 0, 10, 'contribution_reversal', 900001)"));
}

// The reference checks probe their parents' keys, never scanning a whole parent (a scan would grow
// with the journal), and find their parents in public: a session's temporary table of the same
// name hides nothing from them (migration 0009).
TEST_F(RecordWriterTest, ReferenceChecksProbeKeysAndIgnoreTemporaryTables) {
  const auto parent_scans = [&] {
    pqxx::nontransaction(*connection_).exec("SELECT pg_stat_force_next_flush()");
    pqxx::read_transaction tx(*connection_);
    return tx
        .exec1(
            "SELECT coalesce(sum(seq_scan), 0) FROM pg_stat_user_tables "
            "WHERE relname IN ('rounds', 'links', 'wagers', 'transfers', 'payouts')")[0]
        .as<std::int64_t>();
  };
  const std::int64_t before = parent_scans();
  play_rounds(30, /*settle_payouts=*/false);
  EXPECT_EQ(parent_scans(), before) << "whole-table scans of a parent while writing rounds";

  const std::vector<std::pair<std::string, std::string>> shadows = {
      {"CREATE TEMP TABLE rounds (round_key bigint); INSERT INTO rounds VALUES (987654)",
       "INSERT INTO round_events (round_key, phase, at, request, answer) "
       "VALUES (987654, 'open', now(), '\\x0300'::bytea, '\\x0300'::bytea)"},
      {"CREATE TEMP TABLE links (link_id text); INSERT INTO links VALUES ('ghost')",
       "INSERT INTO wagers (round_key, seat, link_id, amount_micros, units) "
       "SELECT round_key, 1, 'ghost', 5000000, 1 FROM public.rounds LIMIT 1"},
      {"CREATE TEMP TABLE wagers (round_key bigint, seat integer, link_id text); "
       "INSERT INTO wagers SELECT round_key, 20, 'pg-link' FROM public.rounds",
       "INSERT INTO public.hands (round_key, seat, link_id, cards, dealer_keyed, hand) "
       "SELECT round_key, 20, 'pg-link', 'As Kd', false, '' FROM public.rounds LIMIT 1"},
      {"CREATE TEMP TABLE links (link_id text); INSERT INTO links VALUES ('ghost')",
       "INSERT INTO public.transfers (link_id, transfer_id, debit_kind, debit_level, credit_kind, "
       "credit_level, amount_micros, kind) "
       "VALUES ('ghost', 1, 'wagers', 0, 'meter', 1, 10, 'contribution')"},
      {"CREATE TEMP TABLE rounds (table_id text, round_id bigint); "
       "INSERT INTO rounds VALUES ('T9', 99)",
       "INSERT INTO public.payouts (payout_id, table_id, round_id, seat, link_id, kind, level, "
       "hand, amount_micros, approvals_required, award_transfer_id, created_at) "
       "VALUES (987654, 'T9', 99, 1, 'pg-link', 'fixed', 0, 'Flush', 5000000, 0, 1, now())"},
      {"CREATE TEMP TABLE payouts (payout_id bigint); INSERT INTO payouts VALUES (987654)",
       "INSERT INTO public.payout_events (payout_id, seq, state) VALUES (987654, 1, 'pending')"},
      {"CREATE TEMP TABLE rounds (round_key bigint); INSERT INTO rounds VALUES (987654)",
       "INSERT INTO public.draws (draw_id, round_key, link_id, level, kind, inputs, outcome, "
       "drawn_at) VALUES (987001, 987654, 'pg-link', 0, 'dynamic_count', '', '', now())"},
      {"CREATE TEMP TABLE rounds (round_key bigint); INSERT INTO rounds VALUES (987654)",
       "INSERT INTO public.dynamic_pays (round_key, link_id, row_index, option) "
       "VALUES (987654, 'pg-link', 0, 1)"},
  };
  for (const auto& [temporary, orphan] : shadows) {
    try {
      pqxx::work tx(*connection_);  // Rolled back: the temporary table goes with it.
      tx.exec(temporary);
      tx.exec(orphan);
      ADD_FAILURE() << "accepted behind a temporary table: " << orphan;
    } catch (const pqxx::sql_error& error) {
      EXPECT_EQ(error.sqlstate(), "23503") << error.what();
    }
  }
}

// journal_orphans (migration 0011) re-checks every reference that triggers enforce: empty after
// real rounds, and it names each orphan written while a superuser bypassed the triggers.
TEST_F(RecordWriterTest, JournalOrphansFindsRowsWrittenPastTheChecks) {
  play_rounds(10, /*settle_payouts=*/true);
  {
    pqxx::read_transaction tx(*connection_);
    EXPECT_EQ(tx.exec1("SELECT count(*) FROM journal_orphans")[0].as<int>(), 0);
  }
  pqxx::work tx(*connection_);  // Never committed.
  tx.exec("SET LOCAL session_replication_role = replica");
  tx.exec(
      "INSERT INTO round_events (round_key, phase, at, request, answer) "
      "VALUES (987654, 'open', now(), '\\x0300'::bytea, '\\x0300'::bytea);"
      "INSERT INTO wagers (round_key, seat, link_id, amount_micros, units) "
      "VALUES (987654, 1, 'ghost', 5000000, 1);"
      "INSERT INTO hands (round_key, seat, link_id, cards, dealer_keyed, hand) "
      "VALUES (987654, 1, 'pg-link', 'As Kd', false, '');"
      "INSERT INTO transfers (link_id, transfer_id, debit_kind, debit_level, credit_kind, "
      "credit_level, amount_micros, kind, corrects) VALUES "
      "('ghost', 1, 'wagers', 0, 'meter', 1, 10, 'contribution', NULL), "
      "('pg-link', 900002, 'meter', 1, 'wagers', 0, 10, 'contribution_reversal', 900999);"
      "INSERT INTO payouts (payout_id, table_id, round_id, seat, link_id, kind, level, hand, "
      "amount_micros, approvals_required, award_transfer_id, created_at) "
      "VALUES (987654, 'T9', 99, 1, 'ghost', 'fixed', 0, 'Flush', 5000000, 0, 999999, now());"
      "INSERT INTO payout_events (payout_id, seq, state) VALUES (987655, 1, 'pending');"
      "INSERT INTO draws (draw_id, round_key, link_id, level, kind, inputs, outcome, drawn_at) "
      "VALUES (987001, 987654, 'ghost', 0, 'dynamic_count', '', '', now());"
      "INSERT INTO dynamic_pays (round_key, link_id, row_index, option) "
      "VALUES (987654, 'ghost', 0, 1);");
  std::string found;
  for (const auto& row : tx.exec("SELECT DISTINCT reference FROM journal_orphans ORDER BY 1")) {
    found += row[0].as<std::string>() + "; ";
  }
  EXPECT_EQ(found,
            "draws -> links; draws -> rounds; dynamic_pays -> links; dynamic_pays -> rounds; "
            "hands -> wagers; payout_events -> payouts; payouts -> award transfer; "
            "payouts -> links; payouts -> rounds; round_events -> rounds; "
            "transfers -> corrected transfer; transfers -> links; wagers -> links; "
            "wagers -> rounds; ");
}

// Text goes into the batch's SQL as array elements inside string literals: quotes, backslashes,
// braces, commas and non-ASCII characters come back exactly as written, and a NUL (which would
// cut libpq's query string) is refused before anything is sent.
TEST_F(RecordWriterTest, TextComesBackExactlyAsWritten) {
  const std::string awkward = "it's \"odd\" \\ back\\\\slash {a,b} NULL, \u00fcber 10\u20ac";
  ASSERT_TRUE(run([](Engine& e, Records& r) {
    return e.open_round({TableId("T1"), RoundId(1)}, r);
  }));
  ASSERT_TRUE(run([&](Engine& e, Records& r) {
    return e.void_round({TableId("T1"), RoundId(1), awkward}, r);
  }));
  ASSERT_TRUE(run([&](Engine& e, Records& r) {
    return e.set_link_status(LinkId("pg-link"), LinkStatus::closed, "ops/o'neil", awkward, r);
  }));
  {
    pqxx::read_transaction tx(*connection_);
    EXPECT_EQ(
        tx.exec1("SELECT reason FROM round_events WHERE phase = 'voided'")[0].as<std::string>(),
        awkward);
    const auto status = tx.exec1("SELECT changed_by, reason FROM link_status_events");
    EXPECT_EQ(status[0].as<std::string>(), "ops/o'neil");
    EXPECT_EQ(status[1].as<std::string>(), awkward);
  }

  Records poisoned;
  poisoned.link_statuses.push_back(
      {LinkId("pg-link"), LinkStatus::open, 1, "ops", std::string("a\0b", 3)});
  storage::BatchRows rows;
  EXPECT_THROW(rows.add(poisoned), std::invalid_argument);
  // The refused row left nothing behind (unnest would pad a shorter column with NULLs), and a
  // batch's status changes keep their order: the last one is the link's status.
  Records changes;
  for (const auto& [status, why] : std::vector<std::pair<LinkStatus, std::string>>{
           {LinkStatus::open, "one"}, {LinkStatus::closed, "two"}, {LinkStatus::open, "three"}}) {
    changes.link_statuses.push_back({LinkId("pg-link"), status, 2, "ops", why});
  }
  rows.add(changes);
  {
    pqxx::work tx(*connection_);
    tx.exec(rows.sql());
    tx.commit();
  }
  pqxx::read_transaction tx(*connection_);
  const auto last = tx.exec(
      "SELECT status, reason FROM link_status_events WHERE changed_by = 'ops' ORDER BY seq");
  ASSERT_EQ(last.size(), 3U);
  EXPECT_EQ(last[0][1].as<std::string>(), "one");
  EXPECT_EQ(last[2][0].as<std::string>(), "open");
  EXPECT_EQ(last[2][1].as<std::string>(), "three");
}

// The committer writes batches as one prepared statement with binary arrays; the rows it stores
// are exactly those the text SQL stores. One database gets each command's records as text, the
// other the same records in batches of 1 to 7 commands through the committer's connection (so a
// round's lock and settle often share a statement), and every table is compared row by row.
TEST_F(RecordWriterTest, BinaryBatchesStoreWhatTheTextSqlStores) {
  play_rounds(150, /*settle_payouts=*/true);
  const std::string awkward = "it's \"odd\" \\ {a,b} NULL, \u00fcber 10\u20ac";
  ASSERT_TRUE(run([&](Engine& e, Records& r) {
    return e.set_link_status(LinkId("pg-link"), LinkStatus::closed, "ops/o'neil", awkward, r);
  }));
  ASSERT_TRUE(run([&](Engine& e, Records& r) {
    return e.set_link_status(LinkId("pg-link"), LinkStatus::open, "ops", "review done", r);
  }));

  TestDatabase binary_database;
  auto binary_connection = binary_database.connect();
  storage::apply_migrations(*binary_connection);
  {
    pqxx::work tx(*binary_connection);
    storage::write_links(tx, {{"pg-link", 2}});
    tx.commit();
  }
  storage::CommitConnection committer(binary_database.dsn());
  std::map<std::string, std::uint32_t> oids;
  for (const char* type : {"account_kind", "transfer_kind"}) {
    oids[type] = static_cast<std::uint32_t>(std::stoul(committer.exec(
        std::string("SELECT '") + type + "'::regtype::oid::text", std::chrono::seconds(10))));
  }
  storage::BatchRows batch(storage::BatchRows::Format::binary);
  std::set<std::string> statements;
  std::size_t next = 0;
  for (std::size_t size = 1; next < history_.size(); size = size % 7 + 1) {
    batch.clear();
    for (std::size_t n = 0; n < size && next < history_.size(); ++n) batch.add(history_[next++]);
    const auto parameters =
        batch.finish_binary([&](const std::string& type) { return oids.at(type); });
    statements.insert(batch.statement_name());
    committer.prepare(batch.statement_name(), batch.statement_sql(), std::chrono::seconds(10));
    committer.exec_prepared(batch.statement_name(), parameters.values, parameters.lengths,
                            parameters.formats, std::chrono::seconds(10));
  }
  EXPECT_GT(statements.size(), 3U);  // Batches with different tables took different statements.

  // Tables, each with the column its server's clock fills (the time of the write).
  for (const auto& [table, server_time] :
       std::vector<std::pair<std::string, std::string>>{{"links", ""},
                                                        {"rounds", ""},
                                                        {"round_events", ""},
                                                        {"wagers", ""},
                                                        {"hands", ""},
                                                        {"draws", ""},
                                                        {"transfers", "posted_at"},
                                                        {"payouts", ""},
                                                        {"payout_events", "at"},
                                                        {"dynamic_pays", ""},
                                                        {"must_hit_by_hits", ""},
                                                        {"link_status_events", ""}}) {
    const auto text_rows = rows_of(*connection_, table, server_time);
    EXPECT_EQ(rows_of(*binary_connection, table, server_time), text_rows) << table;
    if (table != "dynamic_pays") {  // This link has no Dynamic Pay.
      EXPECT_FALSE(text_rows.empty()) << table;
    }
  }
}

// A binary batch refuses what SQL cannot carry before anything is sent, and a refused command
// leaves no partial row behind (unnest would pad the shorter columns with NULLs).
TEST_F(RecordWriterTest, ABinaryBatchRefusesNulAndOversizedIntegers) {
  storage::BatchRows batch(storage::BatchRows::Format::binary);
  Records poisoned;
  poisoned.link_statuses.push_back(
      {LinkId("pg-link"), LinkStatus::open, 1, "ops", std::string("a\0b", 3)});
  EXPECT_THROW(batch.add(poisoned), std::invalid_argument);
  Records too_large;
  too_large.dynamic_pays.push_back({1, LinkId("pg-link"), 1U << 31, 1});
  EXPECT_THROW(batch.add(too_large), std::invalid_argument);

  ASSERT_TRUE(run([](Engine& e, Records& r) {
    return e.open_round({TableId("T1"), RoundId(1)}, r);
  }));
  Records status;
  status.link_statuses.push_back({LinkId("pg-link"), LinkStatus::closed, 2, "ops", "why"});
  batch.add(status);
  storage::CommitConnection committer(database_.dsn());
  const auto parameters = batch.finish_binary([](const std::string&) -> std::uint32_t {
    throw std::logic_error("no enum column in these rows");
  });
  committer.prepare(batch.statement_name(), batch.statement_sql(), std::chrono::seconds(10));
  committer.exec_prepared(batch.statement_name(), parameters.values, parameters.lengths,
                          parameters.formats, std::chrono::seconds(10));
  pqxx::read_transaction tx(*connection_);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM dynamic_pays")[0].as<int>(), 0);
  const auto rows =
      tx.exec("SELECT status, reason FROM link_status_events WHERE changed_by = 'ops'");
  ASSERT_EQ(rows.size(), 1U);
  EXPECT_EQ(rows[0][0].as<std::string>(), "closed");
  EXPECT_EQ(rows[0][1].as<std::string>(), "why");
}

// The whole audit trail walked page by page as `jackpotctl audit verify` walks it: the first
// break, or nothing when every event follows the one before and the walk ends at the head.
std::optional<std::string> first_audit_break(pqxx::transaction_base& tx,
                                             std::vector<AuditEvent>* events = nullptr) {
  AuditChainPosition at;
  for (;;) {
    const storage::AuditPage page = storage::read_audit_page(tx, at.seq, 50);
    for (const AuditEvent& event : page.events) {
      if (auto broken = audit_chain_break(at, event)) return broken;
      at = {event.seq, event.hash};
      if (events != nullptr) events->push_back(event);
    }
    if (page.events.size() < 50) return audit_head_break(at, page.head);
  }
}

std::string detail_field(const AuditEvent& event, const std::string& key) {
  const std::string quoted = "\"" + key + "\": \"";
  const auto start = event.detail.find(quoted);
  if (start == std::string::npos) return "";
  const auto from = start + quoted.size();
  return event.detail.substr(from, event.detail.find('"', from) - from);
}

TEST_F(RecordWriterTest, TheAuditTrailChainsEveryActInItsOwnTransaction) {
  play_rounds(200);
  pqxx::read_transaction tx(*connection_);
  std::vector<AuditEvent> events;
  EXPECT_EQ(first_audit_break(tx, &events), std::nullopt);
  std::map<std::string, int> actions;
  for (const AuditEvent& event : events) ++actions[event.action];
  for (const char* action : {"round.commands", "round.void", "payout.approve", "payout.reject",
                             "must_hit_by.commit", "must_hit_by.hit"}) {
    EXPECT_GT(actions[action], 0) << action;
  }
  // The round commands counted per table and batch add up to the journal's round events.
  int counted = 0;
  for (const AuditEvent& event : events) {
    if (event.action != "round.commands") continue;
    for (const char* phase : {"opened", "locked", "settled", "voided"}) {
      counted += std::stoi(detail_field(event, phase));
    }
  }
  EXPECT_EQ(counted, tx.exec1("SELECT count(*) FROM round_events")[0].as<int>());
  EXPECT_EQ(actions["round.void"],
            tx.exec1("SELECT count(*) FROM round_events WHERE phase = 'voided'")[0].as<int>());
  // Each hit reveals the point and salt of a commitment the chain holds from before it.
  std::map<std::string, std::pair<std::int64_t, std::string>> commitments;  // By draw id.
  int revealed = 0;
  for (const AuditEvent& event : events) {
    if (event.action == "must_hit_by.commit") {
      commitments[detail_field(event, "draw_id")] = {event.seq, detail_field(event, "commitment")};
    }
    if (event.action != "must_hit_by.hit") continue;
    ++revealed;
    const auto committed = commitments.find(detail_field(event, "trigger_draw_id"));
    ASSERT_NE(committed, commitments.end()) << event.detail;
    EXPECT_LT(committed->second.first, event.seq);
    EXPECT_EQ(detail_field(event, "commitment"), committed->second.second);
    const std::string salt_hex = detail_field(event, "salt");
    TriggerSalt salt{};
    ASSERT_EQ(salt_hex.size(), 64u);
    for (std::size_t i = 0; i < salt.size(); ++i) {
      salt[i] = static_cast<std::uint8_t>(std::stoi(salt_hex.substr(2 * i, 2), nullptr, 16));
    }
    const Money point = Money::from_micros(std::stoll(detail_field(event, "point_micros")));
    EXPECT_EQ(to_hex(trigger_commitment(point, salt)), committed->second.second);
    EXPECT_EQ(point.micros(), std::stoll(detail_field(event, "amount_micros")));
  }
  EXPECT_EQ(revealed, tx.exec1("SELECT count(*) FROM must_hit_by_hits")[0].as<int>());
  // The approvals and rejections name their supervisor and request id.
  for (const AuditEvent& event : events) {
    if (event.action == "payout.approve") {
      EXPECT_EQ(event.principal, "supervisor/S1");
    }
    if (event.action == "payout.reject") {
      EXPECT_EQ(event.principal, "supervisor/S2");
      EXPECT_EQ(detail_field(event, "reason"), "camera review");
    }
    if (event.action.starts_with("payout.")) {
      EXPECT_NE(detail_field(event, "request_id"), "");
    }
  }
}

TEST_F(RecordWriterTest, TamperingWithTheAuditTrailIsFound) {
  play_rounds(20);
  struct Tamper {
    const char* what;
    const char* sql;
    const char* found;
  };
  const Tamper tampers[] = {
      {"a detail rewritten",
       "UPDATE audit_log SET detail = detail || '{\"edited\": \"1\"}' "
       "WHERE seq = 5",
       "event 5 ("},
      {"a principal rewritten", "UPDATE audit_log SET principal = 'admin/x' WHERE seq = 3",
       "event 3 ("},
      {"a time moved", "UPDATE audit_log SET at = at - interval '1 hour' WHERE seq = 4",
       "event 4 ("},
      {"an event removed", "DELETE FROM audit_log WHERE seq = 7", "event 8 follows event 6"},
      {"the last events removed",
       "DELETE FROM audit_log WHERE seq > (SELECT seq - 2 FROM audit_chain_head)",
       "events are missing from the end"},
      {"an event rewritten with its own hash recomputed",
       "UPDATE audit_log SET principal = 'admin/x', hash = jackpot_audit_hash(prev_hash, seq, at, "
       "'admin/x', action, detail) WHERE seq = 6",
       "event 7 names"},
      {"two events swapped",
       "UPDATE audit_log SET seq = CASE seq WHEN 9 THEN 10 ELSE 9 END "
       "WHERE seq IN (9, 10)",
       "event 9 names"},
  };
  for (const Tamper& tamper : tampers) {
    pqxx::work tx(*connection_);
    ASSERT_EQ(first_audit_break(tx), std::nullopt) << tamper.what;
    // Someone with the rights of the tables' owner: the append-only rule is a trigger they
    // can switch off, which is what the chain is for.
    tx.exec("ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only");
    // A swap of two events' numbers passes through a moment where both hold one number.
    tx.exec("ALTER TABLE audit_log DROP CONSTRAINT audit_log_seq_unique");
    tx.exec(tamper.sql);
    const auto broken = first_audit_break(tx);
    ASSERT_NE(broken, std::nullopt) << tamper.what;
    EXPECT_NE(broken->find(tamper.found), std::string::npos) << tamper.what << ": " << *broken;
    tx.abort();
  }
}

// A savepoint rolled back takes its events and their links with it: the chain goes on from the
// last event kept, in the same transaction and after it; a forged link cannot move the head.
TEST_F(RecordWriterTest, ASavepointRolledBackLeavesNoLinkAndAForgedLinkIsRefused) {
  play_rounds(3);
  {
    pqxx::work tx(*connection_);
    tx.exec("INSERT INTO audit_log (principal, action) VALUES ('admin/a', 'link.status')");
    tx.exec("SAVEPOINT s");
    tx.exec(
        "INSERT INTO audit_log (principal, action) VALUES ('admin/gone', 'link.status'), "
        "('admin/gone', 'link.status')");
    tx.exec("ROLLBACK TO SAVEPOINT s");
    tx.exec(
        "DO $$ BEGIN INSERT INTO audit_log (principal, action) VALUES ('admin/gone', 'x.y'); "
        "RAISE EXCEPTION 'undo'; EXCEPTION WHEN raise_exception THEN NULL; END $$");
    tx.exec("INSERT INTO audit_log (principal, action) VALUES ('admin/c', 'link.status')");
    tx.commit();
  }
  storage::append_audit_event(*connection_, "admin/d", "report.reconciliation", {});
  {
    pqxx::read_transaction tx(*connection_);
    std::vector<AuditEvent> events;
    EXPECT_EQ(first_audit_break(tx, &events), std::nullopt);
    ASSERT_GE(events.size(), 3u);
    EXPECT_EQ(events[events.size() - 3].principal, "admin/a");
    EXPECT_EQ(events[events.size() - 2].principal, "admin/c");
    EXPECT_EQ(events[events.size() - 1].principal, "admin/d");
  }
  pqxx::work tx(*connection_);
  tx.exec(
      "SELECT set_config('jackpot.audit_link', txid_current()::text || ':1:' || repeat('00', 32), "
      "true)");
  EXPECT_THROW(tx.exec("INSERT INTO audit_log (principal, action) VALUES ('admin/forger', 'x.y')"),
               pqxx::sql_error);
  tx.abort();
}

// Rows the chain's schema would refuse are named as altered, not read as a failure to retry; an
// act that rolls back leaves no event and no gap.
TEST_F(RecordWriterTest, AnAlteredRowIsNamedAndARolledBackActLeavesNoLink) {
  play_rounds(5);
  {
    pqxx::work tx(*connection_);
    tx.exec("ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only");
    tx.exec("ALTER TABLE audit_log DROP CONSTRAINT audit_log_hash_lengths");
    tx.exec("UPDATE audit_log SET hash = substr(hash, 1, 31) WHERE seq = 4");
    try {
      storage::read_audit_page(tx, 0, 50);
      ADD_FAILURE() << "a 31-byte hash was read";
    } catch (const storage::AuditTrailAltered& error) {
      EXPECT_NE(std::string(error.what()).find("audit event 4 is 31 bytes"), std::string::npos)
          << error.what();
    }
    tx.abort();
  }
  const auto head_before = [&] {
    pqxx::read_transaction tx(*connection_);
    return storage::read_audit_page(tx, 0, 1).head;
  }();
  {
    pqxx::work tx(*connection_);
    // An act whose transaction ends without a commit, after its event.
    tx.exec("INSERT INTO audit_log (principal, action) VALUES ('admin/x', 'link.status')");
    tx.abort();
  }
  storage::append_audit_event(*connection_, "admin/y", "report.reconciliation", {});
  pqxx::read_transaction tx(*connection_);
  EXPECT_EQ(first_audit_break(tx), std::nullopt);
  const storage::AuditPage page = storage::read_audit_page(tx, head_before.seq, 50);
  ASSERT_EQ(page.events.size(), 1u);
  EXPECT_EQ(page.events[0].seq, head_before.seq + 1);
  EXPECT_EQ(page.events[0].prev_hash, head_before.hash);
  EXPECT_EQ(page.events[0].principal, "admin/y");
}

// Two writers at once: the second waits for the first's transaction (it holds the head from its
// first event on), then follows its last event; a transaction's several statements chain on.
TEST_F(RecordWriterTest, ConcurrentWritersChainOneTransactionAtATime) {
  play_rounds(3);
  auto other = database_.connect();
  auto watcher = database_.connect();
  std::atomic<bool> appended{false};
  {
    pqxx::work first(*connection_);
    first.exec("INSERT INTO audit_log (principal, action) VALUES ('admin/a', 'link.status')");
    std::thread second([&] {
      storage::append_audit_event(*other, "admin/b", "report.reconciliation", {});
      appended = true;
    });
    // The second writer waits on the head's lock (seen by a third session), not merely late.
    bool waiting = false;
    for (int i = 0; i < 1500 && !waiting; ++i) {  // 30 s at most.
      pqxx::nontransaction look(*watcher);
      waiting = look.exec1(
                        "SELECT count(*) FROM pg_stat_activity WHERE datname = "
                        "current_database() AND wait_event_type = 'Lock'")[0]
                    .as<int>() == 1;
      if (!waiting) std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    EXPECT_TRUE(waiting) << "the second writer did not wait for the head";
    EXPECT_FALSE(appended.load());
    try {
      first.exec(
          "INSERT INTO audit_log (principal, action) VALUES ('admin/a', 'link.status'), "
          "('admin/a', 'meter.adjust')");
      // A statement that inserts nothing moves nothing.
      first.exec("INSERT INTO audit_log (principal, action) SELECT 'admin/z', 'x.y' WHERE false");
      first.commit();
    } catch (const std::exception& error) {
      ADD_FAILURE() << error.what();
    }
    second.join();
  }
  EXPECT_TRUE(appended.load());
  pqxx::read_transaction tx(*connection_);
  std::vector<AuditEvent> events;
  EXPECT_EQ(first_audit_break(tx, &events), std::nullopt);
  ASSERT_GE(events.size(), 4u);
  const std::vector<std::string> last = {
      events[events.size() - 4].principal, events[events.size() - 3].principal,
      events[events.size() - 2].principal, events[events.size() - 1].principal};
  EXPECT_EQ(last, (std::vector<std::string>{"admin/a", "admin/a", "admin/a", "admin/b"}));
}

TEST_F(RecordWriterTest, AReportingRoleReadsCommitmentsButNeverAHiddenPoint) {
  play_rounds(60);
  pqxx::work tx(*connection_);
  const std::string role =
      "jackpot_reporting_" + tx.exec1("SELECT current_database()")[0].as<std::string>();
  tx.exec("CREATE ROLE " + tx.quote_name(role) + " NOLOGIN");
  tx.exec("GRANT USAGE ON SCHEMA public TO " + tx.quote_name(role));
  tx.exec("GRANT SELECT ON ALL TABLES IN SCHEMA public TO " + tx.quote_name(role));
  // The points still hidden: the newest commitment of each hidden-trigger level.
  const auto hidden = tx.exec(
      "SELECT DISTINCT ON (link_id, level) draw_id::text FROM draws "
      "WHERE kind = 'hidden_trigger' ORDER BY link_id, level, draw_id DESC");
  ASSERT_FALSE(hidden.empty());
  tx.exec("SET LOCAL ROLE " + tx.quote_name(role));
  EXPECT_GT(
      tx.exec1("SELECT count(*) FROM draws WHERE trigger_commitment IS NOT NULL")[0].as<int>(), 0);
  // No column of the journal holds a point; the audit trail reveals only points already hit.
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM information_schema.columns WHERE table_schema = "
                     "'public' AND (column_name LIKE '%point%' OR column_name LIKE '%salt%')")[0]
                .as<int>(),
            0);
  for (const auto& row : hidden) {
    EXPECT_EQ(tx.exec_params1("SELECT count(*) FROM audit_log WHERE detail->>'trigger_draw_id' = "
                              "$1",
                              row[0].as<std::string>())[0]
                  .as<int>(),
              0);
  }
  for (const char* read : {"SELECT point_micros FROM jackpot_private.trigger_secrets",
                           "SELECT count(*) FROM jackpot_private.trigger_secrets"}) {
    pqxx::subtransaction attempt(tx, "secrets");
    EXPECT_THROW(attempt.exec(read), pqxx::insufficient_privilege) << read;
  }
  tx.abort();
}

}  // namespace
}  // namespace jackpot
