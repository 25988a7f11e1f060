// A hidden Must-Hit-By point and its salt never leave the daemon in a form that a monitoring
// role or the server's statement log can read before the hit (docs/audit.md): not in a
// statement's text (pg_stat_activity.query, which every pg_monitor member reads), not in a bound
// parameter (which log_statement = 'all' writes to the server log). They go through COPY.
#include <gtest/gtest.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <mutex>
#include <pqxx/pqxx>
#include <set>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "controller/durability/durable.h"
#include "controller/hands/paytable_loader.h"
#include "controller/host/engine_host.h"
#include "meters/digest.h"
#include "meters/hidden_trigger.h"
#include "storage/migrations.h"
#include "tests/support/fixed_clock.h"
#include "tests/support/test_database.h"

namespace jackpot {
namespace {

using testing::FixedClock;

// A Royal Flush level and a hidden-trigger Must-Hit-By level ($100 to $250) that four $25
// wagers reach within a few rounds; one Heads Up Hold'em table plays it.
EngineConfig hidden_floor() {
  EngineConfig config;
  LinkSettings link;
  link.meters.id = LinkId("MHB");
  LevelConfig royal;
  royal.level = 1;
  royal.name = "Royal Flush";
  royal.seed = *Money::parse("1000.00");
  royal.meter_rate_ppm = 10'000;
  LevelConfig mhb;
  mhb.level = 2;
  mhb.name = "Must-Hit-By";
  mhb.seed = *Money::parse("100.00");
  mhb.meter_rate_ppm = 300'000;
  mhb.must_hit_by = *Money::parse("250.00");
  mhb.trigger = TriggerMode::hidden_uniform;
  link.meters.levels = {royal, mhb};
  link.max_wager_units = 25;
  config.links.push_back(link);
  config.tables.push_back(
      {TableId("HUH-M"), GameRule::heads_up_holdem, 6, {{LinkId("MHB"), "PT-BJS-HUH-5CP-12"}}});
  return config;
}

std::string file_tail(const std::string& path, std::streamoff from) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw std::runtime_error("cannot read " + path);
  file.seekg(from);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

std::streamoff file_size(const std::string& path) {
  std::ifstream file(path, std::ios::binary | std::ios::ate);
  if (!file) throw std::runtime_error("cannot read " + path);
  return file.tellg();
}

std::string lowercase(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

// `number` in `text` as a whole number (not part of a longer one).
bool has_number(const std::string& text, const std::string& number) {
  for (std::size_t at = text.find(number); at != std::string::npos;
       at = text.find(number, at + 1)) {
    const bool digit_before = at > 0 && std::isdigit(static_cast<unsigned char>(text[at - 1]));
    const std::size_t end = at + number.size();
    const bool digit_after =
        end < text.size() && std::isdigit(static_cast<unsigned char>(text[end]));
    if (!digit_before && !digit_after) return true;
  }
  return false;
}

TEST(TriggerSecrecy, NoHiddenPointOrSaltInStatementTextOrTheStatementLog) {
  const char* log_path = std::getenv("JACKPOTD_TEST_PG_LOG");
  ASSERT_TRUE(log_path != nullptr && *log_path != '\0')
      << "JACKPOTD_TEST_PG_LOG names the throwaway cluster's server log; ops/test sets it";
  testing::TestDatabase database;
  auto control = database.connect();
  storage::apply_migrations(*control);
  const std::string monitor = database.name() + "_monitor";
  {
    pqxx::nontransaction tx(*control);
    tx.exec("ALTER DATABASE " + database.name() + " SET log_statement = 'all'");
    tx.exec("DROP ROLE IF EXISTS " + monitor);
    tx.exec("CREATE ROLE " + monitor + " LOGIN IN ROLE pg_monitor");
  }
  struct DropRole {
    pqxx::connection& control;
    std::string role;
    ~DropRole() {
      try {
        pqxx::nontransaction(control).exec("DROP ROLE IF EXISTS " + role);
      } catch (const std::exception&) {
        // The cluster is thrown away after the run.
      }
    }
  } drop_role{*control, monitor};
  const std::streamoff log_start = file_size(log_path);

  // What a monitoring agent sees: every query text of the database's sessions, polled as fast
  // as it can while the daemon starts and plays.
  std::mutex seen_mutex;
  std::set<std::string> seen;
  std::atomic<bool> polling{true};
  std::atomic<int> polls{0};
  std::thread poller([&] {
    pqxx::connection watcher(database.dsn() + " user=" + monitor);
    while (polling) {
      pqxx::nontransaction tx(watcher);
      const auto rows = tx.exec("SELECT query FROM pg_stat_activity WHERE datname = " +
                                tx.quote(database.name()) + " AND pid <> pg_backend_pid()");
      std::lock_guard lock(seen_mutex);
      for (const auto& row : rows) {
        if (!row[0].is_null()) seen.insert(row[0].as<std::string>());
      }
      ++polls;
    }
  });

  FixedClock clock;
  SplitMix64 random(32);
  auto paytables = std::move(load_paytables(embedded_paytables())).value();
  PostgresDurability durability(database.dsn(), hidden_floor(), paytables, clock, random);
  auto opened = durability.open();
  ASSERT_TRUE(opened.ok()) << opened.error().front();
  EngineHost host(std::move(opened).value(), &durability);
  const std::vector<std::uint32_t> seats = {1, 3, 4, 6};
  const std::vector<std::vector<std::string>> pockets = {{"3c", "4d"}, {"5d", "6c"}, {"8h", "Qc"},
                                                         {"3h", "4s"}, {"5h", "6s"}, {"8d", "Qd"}};
  int hits = 0;
  for (std::uint64_t round = 1; round <= 60 && hits < 3; ++round) {
    ASSERT_TRUE(host.run([&](Engine& engine, Records& records) {
      return engine.open_round({TableId("HUH-M"), RoundId(round)}, records);
    }));
    LockWagersRequest lock{TableId("HUH-M"), RoundId(round), {}};
    for (const std::uint32_t seat : seats) lock.wagers.push_back({seat, LinkId("MHB"), 2500});
    const auto locked = host.run(
        [&](Engine& engine, Records& records) { return engine.lock_wagers(lock, records); });
    ASSERT_TRUE(locked.ok()) << locked.error().message;
    hits += static_cast<int>(locked->must_hit_by_hits.size());
    SettleRoundRequest settle{
        TableId("HUH-M"), RoundId(round), {}, {"2h", "7s", "9d", "Jc", "Ks"}, {}};
    for (const std::uint32_t seat : seats) settle.seats.push_back({seat, pockets[seat - 1], {}});
    const auto settled = host.run(
        [&](Engine& engine, Records& records) { return engine.settle_round(settle, records); });
    ASSERT_TRUE(settled.ok()) << settled.error().message;
  }
  ASSERT_EQ(hits, 3) << "the level was meant to reset three times";
  const HiddenTrigger in_force = host.read(
      [](const Engine& engine) { return *engine.link(LinkId("MHB"))->hidden_trigger(2); });
  host.stop();
  polling = false;
  poller.join();

  // Every point and salt the daemon drew (the opening one, one per reset), as the database's
  // owner reads them.
  std::vector<std::pair<std::string, std::string>> secrets;  // Point in micros, salt in hex.
  {
    pqxx::read_transaction tx(*control);
    for (const auto& row : tx.exec("SELECT point_micros::text, encode(salt, 'hex') FROM "
                                   "jackpot_private.trigger_secrets ORDER BY draw_id")) {
      secrets.emplace_back(row[0].as<std::string>(), row[1].as<std::string>());
    }
  }
  ASSERT_EQ(secrets.size(), 4u);
  EXPECT_EQ(secrets.back().first, std::to_string(in_force.point.micros()));

  const std::string log = lowercase(file_tail(log_path, log_start));
  // The log and the poll hold the daemon's statements (so that an empty one cannot pass).
  ASSERT_NE(log.find("copy jackpot_private.trigger_secrets"), std::string::npos)
      << "log_statement = 'all' logged nothing of the database's sessions";
  std::set<std::string> queries;
  {
    std::lock_guard lock(seen_mutex);
    queries = seen;
  }
  EXPECT_GT(polls.load(), 0);
  EXPECT_FALSE(queries.empty());
  // Draw i is revealed by the lock of the round that hits it: that batch's statement comes just
  // after the COPY of draw i + 1 (its reset's new point). Nothing names a point or a salt before
  // that COPY; the point in force, never hit, nowhere.
  std::vector<std::size_t> copies;
  for (std::size_t at = log.find("copy jackpot_private.trigger_secrets"); at != std::string::npos;
       at = log.find("copy jackpot_private.trigger_secrets", at + 1)) {
    copies.push_back(at);
  }
  ASSERT_EQ(copies.size(), secrets.size()) << "one COPY for the opening point and one a reset";
  for (std::size_t i = 0; i < secrets.size(); ++i) {
    const auto& [point, salt] = secrets[i];
    const std::size_t revealed = i + 1 < secrets.size() ? copies[i + 1] : std::string::npos;
    const std::string before = log.substr(0, revealed);
    EXPECT_EQ(before.find(salt), std::string::npos)
        << "the server log holds the salt of draw " << i << " before its hit";
    EXPECT_FALSE(has_number(before, point))
        << "the server log holds the point of draw " << i << " (" << point << ") before its hit";
    for (const std::string& query : queries) {
      EXPECT_EQ(lowercase(query).find(salt), std::string::npos)
          << "pg_stat_activity showed a salt in: " << query.substr(0, 300);
    }
  }
  const std::string& point = secrets.back().first;
  for (const std::string& query : queries) {
    EXPECT_FALSE(has_number(query, point))
        << "pg_stat_activity showed the point in force in: " << query.substr(0, 300);
  }
}

// A batch may hold a lock that hits a hidden level, the reset that draws its next point, and a
// later lock of the same batch that hits that point: the audit trail's reveal of the second hit
// must name the point drawn in the batch (its secret arrives by COPY ahead of the statement), not
// the one before it. Eight tables lock in one batch, $45 a lock on a $100-$250 range: at least
// two hits.
TEST(TriggerSecrecy, AHitOfAPointDrawnInTheSameBatchRevealsThatPoint) {
  testing::TestDatabase database;
  auto control = database.connect();
  storage::apply_migrations(*control);
  EngineConfig config = hidden_floor();
  for (int t = 2; t <= 8; ++t) {
    TableSettings table = config.tables.front();
    table.id = TableId("HUH-" + std::to_string(t));
    config.tables.push_back(table);
  }
  FixedClock clock;
  SplitMix64 random(3232);
  auto paytables = std::move(load_paytables(embedded_paytables())).value();
  PostgresDurability durability(database.dsn(), config, paytables, clock, random);
  auto opened = durability.open();
  ASSERT_TRUE(opened.ok()) << opened.error().front();
  Engine& engine = **opened;
  const auto commit = [&](std::vector<Records> batch) {
    for (const Records& records : batch) durability.stage(records);
    durability.seal();
    std::string error;
    ASSERT_TRUE(durability.commit(batch, error)) << error;
  };
  std::vector<Records> opens;
  for (const TableSettings& table : config.tables) {
    Records records;
    ASSERT_TRUE(engine.open_round({table.id, RoundId(1)}, records));
    opens.push_back(std::move(records));
  }
  commit(std::move(opens));
  std::vector<Records> locks;
  int hits = 0;
  for (const TableSettings& table : config.tables) {
    LockWagersRequest lock{table.id, RoundId(1), {}};
    for (const std::uint32_t seat : {1U, 2U, 3U, 4U, 5U, 6U}) {
      lock.wagers.push_back({seat, LinkId("MHB"), 2500});
    }
    Records records;
    const auto locked = engine.lock_wagers(lock, records);
    ASSERT_TRUE(locked.ok()) << locked.error().message;
    hits += static_cast<int>(locked->must_hit_by_hits.size());
    locks.push_back(std::move(records));
  }
  ASSERT_GE(hits, 2);
  commit(std::move(locks));

  // Each hit's reveal opens the commitment of the draw it names, and names a different draw: the
  // points committed before it, in order.
  pqxx::read_transaction tx(*control);
  std::vector<std::string> committed;
  for (const auto& row : tx.exec("SELECT detail->>'draw_id' FROM audit_log WHERE action = "
                                 "'must_hit_by.commit' ORDER BY seq")) {
    committed.push_back(row[0].as<std::string>());
  }
  const auto revealed = tx.exec(
      "SELECT detail->>'trigger_draw_id', detail->>'commitment', detail->>'point_micros', "
      "detail->>'salt' FROM audit_log WHERE action = 'must_hit_by.hit' ORDER BY seq");
  ASSERT_EQ(static_cast<int>(revealed.size()), hits);
  ASSERT_EQ(committed.size(), revealed.size() + 1);
  for (std::size_t i = 0; i < revealed.size(); ++i) {
    EXPECT_EQ(revealed[i][0].as<std::string>(), committed[i]) << "hit " << i;
    TriggerSalt salt{};
    const std::string salt_hex = revealed[i][3].as<std::string>();
    ASSERT_EQ(salt_hex.size(), 64u);
    for (std::size_t b = 0; b < salt.size(); ++b) {
      salt[b] = static_cast<std::uint8_t>(std::stoi(salt_hex.substr(2 * b, 2), nullptr, 16));
    }
    EXPECT_EQ(to_hex(trigger_commitment(
                  Money::from_micros(std::stoll(revealed[i][2].as<std::string>())), salt)),
              revealed[i][1].as<std::string>())
        << "hit " << i << " reveals a point that does not open its commitment";
  }
}

}  // namespace
}  // namespace jackpot
