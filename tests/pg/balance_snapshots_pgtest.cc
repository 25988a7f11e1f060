// Balance snapshots against a real PostgreSQL: the sequencer's in-memory balances recorded with
// the batch they end, the reconciliation report bounded by them (so a transfer lost or doubled
// behind the daemon's back makes its level unbalanced), and recovery that starts from the latest
// snapshot and checks what follows it.
#include <gtest/gtest.h>

#include <memory>
#include <pqxx/pqxx>
#include <stdexcept>
#include <string>

#include "controller/durability/durable.h"
#include "controller/hands/paytable_loader.h"
#include "controller/host/engine_host.h"
#include "storage/migrations.h"
#include "storage/reports.h"
#include "storage/state_loader.h"
#include "tests/support/fail_stop_gate.h"
#include "tests/support/fixed_clock.h"
#include "tests/support/test_database.h"

namespace jackpot {
namespace {

using testing::FixedClock;

// Two one-level Royal Flush links, each played by its own six-seat Heads Up Hold'em table.
EngineConfig two_links() {
  EngineConfig config;
  for (const auto& [link_id, table_id] : {std::pair{"a-link", "TA"}, std::pair{"b-link", "TB"}}) {
    LinkSettings link;
    link.meters.id = LinkId(link_id);
    LevelConfig royal;
    royal.level = 1;
    royal.name = "Royal Flush";
    royal.seed = *Money::parse("1000.00");
    royal.meter_rate_ppm = 150'000;
    royal.reserve_rate_ppm = 20'000;
    link.meters.levels = {royal};
    config.links.push_back(link);
    config.tables.push_back({TableId(table_id),
                             GameRule::heads_up_holdem,
                             6,
                             {{LinkId(link_id), "PT-BJS-HUH-5CP-01", CommunitySource::board}}});
  }
  return config;
}

struct Floor {
  Floor() : control(database.connect()), random(7) {
    storage::apply_migrations(*control);
    durability =
        std::make_unique<PostgresDurability>(database.dsn(), two_links(), paytables, clock, random);
    auto opened = durability->open();
    if (!opened) throw std::runtime_error(opened.error().front());
    host = std::make_unique<EngineHost>(std::move(opened).value(), durability.get());
  }
  ~Floor() { host->stop(); }

  // Opens and locks round `round` at both tables: contributions to both links.
  void play(std::uint64_t round) {
    for (const auto& [table, link] : {std::pair{"TA", "a-link"}, std::pair{"TB", "b-link"}}) {
      const auto opened = host->run([&](Engine& engine, Records& records) {
        return engine.open_round({TableId(table), RoundId(round)}, records);
      });
      ASSERT_TRUE(opened.ok()) << opened.error().message;
      const auto locked = host->run([&](Engine& engine, Records& records) {
        return engine.lock_wagers({TableId(table), RoundId(round), {{1, LinkId(link), 500}}},
                                  records);
      });
      ASSERT_TRUE(locked.ok()) << locked.error().message;
      // Seat 1 holds nothing: the round ends without an award.
      const auto settled = host->run([&](Engine& engine, Records& records) {
        return engine.settle_round({TableId(table),
                                    RoundId(round),
                                    {{1, {"2c", "7d"}, std::nullopt}},
                                    {"3h", "9s", "Jd", "4c", "8h"},
                                    {}},
                                   records);
      });
      ASSERT_TRUE(settled.ok()) << settled.error().message;
    }
  }

  std::vector<BalanceSnapshotRecord> snapshot() {
    auto taken = host->snapshot_balances(SnapshotReason::request);
    if (!taken) throw std::runtime_error("no snapshot");
    return *taken;
  }

  // The report over the whole ledger up to the latest snapshot, as the AdminService asks it.
  std::vector<LinkReconciliation> report() {
    auto report = durability->reconcile({}, std::nullopt, std::nullopt);
    if (!report) throw std::runtime_error(report.error().message);
    return *report;
  }

  std::vector<std::pair<AccountRef, Money>> balances(const std::string& link) {
    return host->read(
        [&](const Engine& engine) { return engine.link(LinkId(link))->ledger().balances(); });
  }

  void exec(const std::string& sql) {
    pqxx::work tx(*control);
    tx.exec(sql);
    tx.commit();
  }
  std::int64_t value(const std::string& sql) {
    pqxx::work tx(*control);
    return tx.exec1(sql)[0].as<std::int64_t>();
  }

  testing::TestDatabase database;
  std::unique_ptr<pqxx::connection> control;
  FixedClock clock;
  SplitMix64 random;
  std::vector<Paytable> paytables = std::move(load_paytables(embedded_paytables())).value();
  std::unique_ptr<PostgresDurability> durability;
  std::unique_ptr<EngineHost> host;
};

// The level of `link` in the report.
const LevelReconciliation& level_of(const std::vector<LinkReconciliation>& report,
                                    const std::string& link, std::uint32_t level) {
  for (const LinkReconciliation& entry : report) {
    if (entry.link.value() != link) continue;
    for (const LevelReconciliation& reconciled : entry.levels) {
      if (reconciled.level == level) return reconciled;
    }
  }
  throw std::runtime_error("no level " + std::to_string(level) + " of " + link + " in the report");
}

// A contribution of `link`'s level 1 in round `round_id` of its table: (transfer id, amount).
std::pair<std::int64_t, std::int64_t> contribution(Floor& floor, const std::string& link,
                                                   int round_id) {
  pqxx::work tx(*floor.control);
  const auto row = tx.exec_params1(
      "SELECT t.transfer_id, t.amount_micros FROM transfers t JOIN rounds r USING (round_key) "
      "WHERE t.link_id = $1 AND r.round_id = $2 AND t.kind = 'contribution' "
      "AND t.credit_kind = 'meter' ORDER BY t.transfer_id LIMIT 1",
      link, round_id);
  return {row[0].as<std::int64_t>(), row[1].as<std::int64_t>()};
}

TEST(BalanceSnapshots, ASnapshotHoldsTheBalancesOfExactlyTheTransfersCommittedBeforeIt) {
  Floor floor;
  floor.play(1);
  floor.play(2);
  for (const BalanceSnapshotRecord& snapshot : floor.snapshot()) {
    const std::string link = snapshot.link.value();
    EXPECT_EQ(static_cast<std::int64_t>(snapshot.through.value()),
              floor.value("SELECT max(transfer_id) FROM transfers WHERE link_id = '" + link + "'"));
    // Every account as the sum of the transfers up to it, to the micro.
    EXPECT_EQ(floor.value(
                  "SELECT count(*) FROM (SELECT account_kind, level, balance_micros FROM "
                  "balance_snapshots WHERE link_id = '" +
                  link + "' AND through_transfer_id = " + std::to_string(snapshot.through.value()) +
                  ") s FULL JOIN (SELECT account_kind, level, balance_micros FROM "
                  "account_balances WHERE link_id = '" +
                  link +
                  "') b USING (account_kind, level) WHERE coalesce(s.balance_micros, 0) "
                  "<> coalesce(b.balance_micros, 0)"),
              0)
        << link;
  }
  floor.play(3);
  floor.host->stop();
  // A clean stop records the balances the next start must find.
  EXPECT_EQ(floor.value("SELECT max(through_transfer_id) FROM balance_snapshots WHERE "
                        "link_id = 'a-link' AND reason = 'stop'"),
            floor.value("SELECT max(transfer_id) FROM transfers WHERE link_id = 'a-link'"));
}

TEST(BalanceSnapshots, AnUntouchedJournalReconcilesBetweenAnyTwoSnapshots) {
  Floor floor;
  floor.play(1);
  const auto first = floor.snapshot();
  floor.play(2);
  floor.play(3);
  floor.snapshot();
  for (const LinkReconciliation& link : floor.report()) {
    ASSERT_TRUE(link.end_observed);
    EXPECT_EQ(link.start_through_transfer, 0u);  // From the beginning of the ledger.
    for (const LevelReconciliation& level : link.levels) {
      EXPECT_TRUE(level.balanced) << link.link.value() << " level " << level.level;
      EXPECT_EQ(level.difference, Money());
      EXPECT_GT(level.contributions, Money());
    }
  }
  // From the first snapshot on: its holdings start the period, its transfer id bounds the sum.
  pqxx::work tx(*floor.control);
  const std::int64_t first_taken_us = tx.exec1(
                                            "SELECT (extract(epoch FROM max(taken_at)) * "
                                            "1000000)::bigint FROM balance_snapshots WHERE "
                                            "reason = 'request' AND through_transfer_id = " +
                                            std::to_string(first.front().through.value()))[0]
                                          .as<std::int64_t>();
  tx.commit();
  const auto later = floor.durability->reconcile({LinkId("a-link")}, first_taken_us, std::nullopt);
  ASSERT_TRUE(later.ok());
  ASSERT_EQ(later->size(), 1u);
  EXPECT_EQ(later->front().start_through_transfer, first.front().through.value());
  EXPECT_TRUE(later->front().levels.front().balanced);
  EXPECT_GT(later->front().levels.front().start, Money());
}

TEST(BalanceSnapshots, ATransferLostBehindTheDaemonsBackMakesItsLevelUnbalanced) {
  Floor floor;
  floor.play(1);
  floor.play(2);
  floor.play(3);
  floor.snapshot();
  const auto [id, amount] = contribution(floor, "a-link", 2);
  floor.exec("ALTER TABLE transfers DISABLE TRIGGER transfers_append_only");
  floor.exec("DELETE FROM transfers WHERE link_id = 'a-link' AND transfer_id = " +
             std::to_string(id));
  const auto report = floor.report();
  const LevelReconciliation& lost = level_of(report, "a-link", 1);
  EXPECT_FALSE(lost.balanced);
  EXPECT_EQ(lost.difference, Money::from_micros(amount));  // The end holds what the sum lacks.
  EXPECT_TRUE(level_of(report, "b-link", 1).balanced);
}

TEST(BalanceSnapshots, ATransferDoubledBehindTheDaemonsBackMakesItsLevelUnbalanced) {
  Floor floor;
  floor.play(1);
  floor.play(2);
  floor.snapshot();
  floor.play(3);
  floor.snapshot();
  const auto [id, amount] = contribution(floor, "b-link", 2);
  // A row written twice (a restore replayed twice, say): only without the primary key.
  floor.exec("ALTER TABLE transfers DROP CONSTRAINT transfers_pkey CASCADE");
  floor.exec(
      "INSERT INTO transfers SELECT * FROM transfers WHERE link_id = 'b-link' AND "
      "transfer_id = " +
      std::to_string(id));
  const auto report = floor.report();
  const LevelReconciliation& doubled = level_of(report, "b-link", 1);
  EXPECT_FALSE(doubled.balanced);
  EXPECT_EQ(doubled.difference, Money::from_micros(-amount));
  EXPECT_TRUE(level_of(report, "a-link", 1).balanced);
}

TEST(BalanceSnapshots, NoSnapshotAtOrBeforeTheEndMeansTheEndCannotBeObserved) {
  Floor floor;
  floor.play(1);
  floor.snapshot();
  const auto report = floor.durability->reconcile({}, std::nullopt, 1'000'000);  // 1970.
  ASSERT_TRUE(report.ok());
  for (const LinkReconciliation& link : *report) {
    EXPECT_FALSE(link.end_observed);
    EXPECT_TRUE(link.levels.empty());
  }
}

TEST(BalanceSnapshots, RecoveryStartsFromTheLatestSnapshotAndAddsOnlyTheTransfersAfterIt) {
  Floor floor;
  floor.play(1);
  floor.play(2);
  floor.snapshot();
  floor.play(3);
  floor.play(4);
  const auto expected = floor.balances("a-link");
  // A transfer before the snapshot disappears: recovery no longer reads it, the audit does.
  const auto [id, amount] = contribution(floor, "a-link", 1);
  floor.exec("ALTER TABLE transfers DISABLE TRIGGER transfers_append_only");
  floor.exec("DELETE FROM transfers WHERE link_id = 'a-link' AND transfer_id = " +
             std::to_string(id));

  const storage::StoredState state = storage::load_state(*floor.control);
  for (const storage::StoredLink& link : state.links) {
    if (link.id.value() != "a-link") continue;
    for (const auto& [account, balance] : expected) {
      Money stored;
      for (const auto& [stored_account, stored_balance] : link.balances) {
        if (stored_account == account) stored = stored_balance;
      }
      EXPECT_EQ(stored, balance) << to_string(account);
    }
  }

  const storage::BalanceAudit audit = storage::audit_balances(*floor.control);
  EXPECT_FALSE(audit.consistent);
  for (const storage::AccountAudit& account : audit.accounts) {
    const bool touched =
        account.link_id == "a-link" && (account.account == AccountRef::meter(1) ||
                                        account.account == AccountRef::link(AccountKind::wagers));
    EXPECT_EQ(account.from_snapshot != account.full_sum, touched)
        << account.link_id << " " << to_string(account.account);
    if (account.account == AccountRef::meter(1) && account.link_id == "a-link") {
      EXPECT_EQ(account.from_snapshot.micros() - account.full_sum.micros(), amount);
    }
  }
}

TEST(BalanceSnapshots, RecoveryRefusesATransferMissingAfterTheLatestSnapshot) {
  Floor floor;
  floor.play(1);
  floor.snapshot();
  floor.play(2);
  floor.play(3);
  const auto [id, amount] = contribution(floor, "b-link", 2);
  floor.exec("ALTER TABLE transfers DISABLE TRIGGER transfers_append_only");
  floor.exec("DELETE FROM transfers WHERE link_id = 'b-link' AND transfer_id = " +
             std::to_string(id));
  try {
    storage::load_state(*floor.control);
    FAIL() << "recovery accepted a gap in the transfers after the snapshot";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("link 'b-link'"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("missing or doubled"), std::string::npos);
  }
}

// A snapshot taken again at the same transfer id is the same observation and is kept once; one
// that disagrees with the stored rows means the balances and the journal have parted, and its
// batch fails (the daemon fails stop) instead of being dropped without a word.
TEST(BalanceSnapshots, ASnapshotThatDisagreesWithTheStoredOneAtItsTransferFailsItsBatch) {
  Floor floor;
  floor.play(1);
  floor.snapshot();
  EXPECT_NO_THROW(floor.snapshot()) << "the same observation again is kept once";
  floor.exec("ALTER TABLE balance_snapshots DISABLE TRIGGER balance_snapshots_append_only");
  floor.exec(
      "UPDATE balance_snapshots SET balance_micros = balance_micros + 1 WHERE "
      "link_id = 'a-link' AND account_kind = 'meter'");
  testing::FailStopGate gate(*floor.host);
  EXPECT_FALSE(floor.host->snapshot_balances(SnapshotReason::request));
  EXPECT_TRUE(gate.wait_failed(std::chrono::seconds(60))) << "the batch failed without a fail-stop";
  EXPECT_TRUE(floor.host->failed());
  gate.release();
}

// A journal cut at its tail, down to the snapshot's own last transfer: nothing follows the
// snapshot to number, yet the snapshot includes a transfer that is gone, and its id would be
// handed out again.
TEST(BalanceSnapshots, RecoveryRefusesASnapshotWhoseLastTransferIsGone) {
  Floor floor;
  floor.play(1);
  floor.snapshot();
  floor.exec("ALTER TABLE transfers DISABLE TRIGGER transfers_append_only");
  floor.exec(
      "DELETE FROM transfers WHERE link_id = 'b-link' AND transfer_id = (SELECT "
      "max(through_transfer_id) FROM balance_snapshots WHERE link_id = 'b-link')");
  try {
    storage::load_state(*floor.control);
    FAIL() << "recovery accepted a snapshot whose last transfer the journal lost";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("link 'b-link'"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("no longer holds"), std::string::npos);
  }
}

TEST(BalanceSnapshots, RecoveryRefusesASnapshotThatDoesNotSumToZero) {
  Floor floor;
  floor.play(1);
  floor.snapshot();
  floor.exec("ALTER TABLE balance_snapshots DISABLE TRIGGER balance_snapshots_append_only");
  floor.exec(
      "UPDATE balance_snapshots SET balance_micros = balance_micros + 1 WHERE "
      "link_id = 'a-link' AND account_kind = 'meter'");
  try {
    storage::load_state(*floor.control);
    FAIL() << "recovery accepted a snapshot that does not sum to zero";
  } catch (const std::runtime_error& error) {
    EXPECT_NE(std::string(error.what()).find("link 'a-link'"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("not zero"), std::string::npos);
  }
}

// Snapshots taken while the ledger had a `breakage` account (nothing ever posted to it; removed
// in #15) hold a zero row of it. Such a database still recovers and audits; a breakage row that
// is not zero is refused, naming the link.
TEST(BalanceSnapshots, ASnapshotWithTheRetiredBreakageAccountStillRecoversWhenItIsZero) {
  Floor floor;
  floor.play(1);
  floor.snapshot();
  const std::string through =
      std::to_string(floor.value("SELECT max(through_transfer_id) FROM balance_snapshots WHERE "
                                 "link_id = 'a-link'"));
  floor.exec(
      "INSERT INTO balance_snapshots (link_id, through_transfer_id, account_kind, level, "
      "balance_micros, reason) VALUES ('a-link', " +
      through + ", 'breakage', 0, 0, 'request')");
  const auto expected = floor.balances("a-link");
  const storage::StoredState state = storage::load_state(*floor.control);
  bool found = false;
  for (const storage::StoredLink& link : state.links) {
    if (link.id.value() != "a-link") continue;
    found = true;
    for (const auto& [account, balance] : expected) {
      Money stored;
      for (const auto& [stored_account, stored_balance] : link.balances) {
        if (stored_account == account) stored = stored_balance;
      }
      EXPECT_EQ(stored, balance) << to_string(account);
    }
  }
  EXPECT_TRUE(found);
  EXPECT_TRUE(storage::audit_balances(*floor.control).consistent);

  floor.exec("ALTER TABLE balance_snapshots DISABLE TRIGGER balance_snapshots_append_only");
  floor.exec(
      "UPDATE balance_snapshots SET balance_micros = 5 WHERE link_id = 'a-link' AND "
      "account_kind = 'breakage'");
  try {
    storage::load_state(*floor.control);
    FAIL() << "recovery accepted money on the breakage account";
  } catch (const storage::SnapshotMismatch& error) {
    EXPECT_NE(std::string(error.what()).find("link 'a-link'"), std::string::npos) << error.what();
    EXPECT_NE(std::string(error.what()).find("breakage"), std::string::npos) << error.what();
  }
}

}  // namespace
}  // namespace jackpot
