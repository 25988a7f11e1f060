// The durable host against a real PostgreSQL with a commit failure injected in the database
// itself (a trigger that refuses transfers while a flag is set): the callers of the failed batch
// get UNAVAILABLE, the engine keeps nothing of it, and once commits succeed again the host has
// rebuilt the engine from the database, exactly as it was before the failed batch.
#include <gtest/gtest.h>
#include <signal.h>

#include <algorithm>
#include <condition_variable>
#include <csignal>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <pqxx/pqxx>
#include <stdexcept>
#include <string>
#include <thread>

#include "controller/durability/durable.h"
#include "controller/engine/engine_codec.h"
#include "controller/hands/paytable_loader.h"
#include "controller/host/engine_host.h"
#include "storage/migrations.h"
#include "storage/state_loader.h"
#include "tests/support/codec_v2_writer.h"
#include "tests/support/fail_stop_gate.h"
#include "tests/support/fixed_clock.h"
#include "tests/support/hex.h"
#include "tests/support/payout_decisions.h"
#include "tests/support/test_database.h"

namespace jackpot {
namespace {

using namespace std::chrono_literals;

using testing::FixedClock;

// A one-level Royal Flush link and a six-seat Heads Up Hold'em table that plays it.
void add_link_and_table(EngineConfig& config, const std::string& link_id,
                        const std::string& table_id, const std::string& seed,
                        std::uint32_t meter_rate_ppm) {
  LinkSettings link;
  link.meters.id = LinkId(link_id);
  LevelConfig royal;
  royal.level = 1;
  royal.name = "Royal Flush";
  royal.seed = *Money::parse(seed);
  royal.meter_rate_ppm = meter_rate_ppm;
  link.meters.levels = {royal};
  config.links.push_back(link);
  config.tables.push_back({TableId(table_id),
                           GameRule::heads_up_holdem,
                           6,
                           {{LinkId(link_id), "PT-BJS-HUH-5CP-01", CommunitySource::board}}});
}

EngineConfig floor_config() {
  EngineConfig config;
  add_link_and_table(config, "f-link", "T1", "1000.00", 150'000);
  return config;
}

// A database with the schema, a durable host on the floor above, and a connection of the test's
// own to the same database.
struct DurableFloor {
  explicit DurableFloor(std::uint64_t seed,
                        std::chrono::milliseconds commit_timeout = std::chrono::seconds(10))
      : control(database.connect()), random(seed) {
    storage::apply_migrations(*control);
    DurabilityOptions options;
    options.commit_timeout = commit_timeout;
    durability = std::make_unique<PostgresDurability>(database.dsn(), floor_config(), paytables,
                                                      clock, random, options);
    auto opened = durability->open();
    if (!opened) throw std::runtime_error(opened.error().front());
    host = std::make_unique<EngineHost>(std::move(opened).value(), durability.get());
  }
  ~DurableFloor() { host->stop(); }

  Result<OpenRoundAnswer, EngineFailure> open(std::uint64_t round) {
    return host->run([&](Engine& engine, Records& records) {
      return engine.open_round({TableId("T1"), RoundId(round)}, records);
    });
  }
  Result<VoidRoundAnswer, EngineFailure> void_round(std::uint64_t round) {
    return host->run([&](Engine& engine, Records& records) {
      return engine.void_round({TableId("T1"), RoundId(round), "misdeal"}, records);
    });
  }

  testing::TestDatabase database;
  std::unique_ptr<pqxx::connection> control;
  FixedClock clock;
  SplitMix64 random;
  std::vector<Paytable> paytables = std::move(load_paytables(embedded_paytables())).value();
  std::unique_ptr<PostgresDurability> durability;
  std::unique_ptr<EngineHost> host;
};

// A trigger that refuses every transfer while set_failing(true): a commit failure injected in
// the database itself.
void install_failure_switch(pqxx::connection& connection) {
  pqxx::work tx(connection);
  tx.exec("CREATE TABLE fail_commits (on_ boolean)");
  tx.exec(
      "CREATE FUNCTION refuse_when_failing() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN "
      "IF EXISTS (SELECT 1 FROM fail_commits) THEN RAISE EXCEPTION 'injected commit failure'; "
      "END IF; RETURN NEW; END $$");
  tx.exec(
      "CREATE TRIGGER injected_failure BEFORE INSERT ON transfers FOR EACH ROW "
      "EXECUTE FUNCTION refuse_when_failing()");
  tx.commit();
}

void set_failing(pqxx::connection& connection, bool failing) {
  pqxx::work tx(connection);
  tx.exec(failing ? "INSERT INTO fail_commits VALUES (true)" : "DELETE FROM fail_commits");
  tx.commit();
}

TEST(DurableHost, AFailedCommitLeavesNothingInMemoryAndRecoveryRestoresTheEngine) {
  DurableFloor floor(4);
  auto& control = floor.control;
  EngineHost& host = *floor.host;
  install_failure_switch(*control);

  const auto lock = [&](std::uint64_t round, std::int64_t cents) {
    return host.run([&](Engine& engine, Records& records) {
      return engine.lock_wagers({TableId("T1"), RoundId(round), {{1, LinkId("f-link"), cents}}},
                                records);
    });
  };
  const auto open = [&](std::uint64_t round) {
    return host.run([&](Engine& engine, Records& records) {
      return engine.open_round({TableId("T1"), RoundId(round)}, records);
    });
  };
  ASSERT_TRUE(open(1).ok());
  ASSERT_TRUE(lock(1, 500).ok());
  const EngineSnapshot before = host.read([](const Engine& engine) { return engine.snapshot(); });

  set_failing(*control, true);
  testing::FailStopGate gate(host);
  ASSERT_TRUE(host.run([](Engine& engine, Records& records) {
                    return engine.void_round({TableId("T1"), RoundId(1), "misdeal"}, records);
                  })
                  .error()
                  .code == EngineError::link_unavailable);
  ASSERT_TRUE(gate.wait_failed(60s));
  EXPECT_TRUE(host.failed());
  EXPECT_EQ(open(2).error().code, EngineError::link_unavailable);  // Fail-stop: nothing runs.
  // Nor does anyone read meters the database may not hold.
  EXPECT_FALSE(host.read_durable([](const Engine& engine) { return engine.snapshot(); }));

  set_failing(*control, false);
  gate.release();
  for (int attempt = 0; attempt < 600 && host.failed(); ++attempt)
    std::this_thread::sleep_for(50ms);
  ASSERT_FALSE(host.failed());
  // The failed void left nothing behind: the engine is the one before it, rebuilt from storage.
  EXPECT_EQ(host.read([](const Engine& engine) { return engine.snapshot(); }), before);
  EXPECT_EQ(host.read_durable([](const Engine& engine) { return engine.snapshot(); }), before);
  // The table retries the same request, and it goes through.
  EXPECT_TRUE(host.run([](Engine& engine, Records& records) {
                    return engine.void_round({TableId("T1"), RoundId(1), "misdeal"}, records);
                  })
                  .ok());
  EXPECT_GE(host.batches_committed(), 3u);
  host.stop();
}

// A view kept from the commit observer's batches (the sign feed) starts again from the rebuilt
// engine at the failure's place in the commit order: a batch committed before the failure whose
// observation comes late (the responder busy) is heard before the restart, never after it, where
// it would count twice.
TEST(DurableHost, AnOrderedRecoveryObserverRestartsAfterTheBatchesBeforeTheFailure) {
  DurableFloor floor(5);
  EngineHost& host = *floor.host;
  install_failure_switch(*floor.control);
  ASSERT_TRUE(floor.open(1).ok());

  std::mutex mutex;
  std::condition_variable changed;
  std::vector<std::string> heard;
  bool held = false;       // The responder is inside the observer, holding the lock's batch.
  bool recovered = false;  // The rebuild happened.
  host.observe_commits([&](const std::vector<Records>& batch, double, bool ok) {
    std::unique_lock lock(mutex);
    const bool locks = std::any_of(batch.begin(), batch.end(),
                                   [](const Records& records) { return !records.wagers.empty(); });
    if (ok && locks) {
      held = true;
      changed.notify_all();
      // Kept until the rebuild (at most 60 s), as a busy responder would be.
      changed.wait_for(lock, std::chrono::seconds(60), [&] { return recovered; });
      heard.push_back("the lock's batch");
    }
  });
  host.observe_recoveries([&](const Engine&) {
    std::lock_guard lock(mutex);
    recovered = true;
    changed.notify_all();
  });
  host.observe_recoveries_in_commit_order([&](const Engine&) -> std::function<void()> {
    return [&] {
      std::lock_guard lock(mutex);
      heard.push_back("restart");
      changed.notify_all();
    };
  });
  testing::FailStopGate gate(host);

  std::jthread locking([&] {
    EXPECT_TRUE(host.run([](Engine& engine, Records& records) {
                      return engine.lock_wagers(
                          {TableId("T1"), RoundId(1), {{1, LinkId("f-link"), 500}}}, records);
                    })
                    .ok());
  });
  {
    std::unique_lock lock(mutex);
    ASSERT_TRUE(changed.wait_for(lock, std::chrono::seconds(60), [&] { return held; }));
  }
  set_failing(*floor.control, true);
  std::jthread voiding([&] { EXPECT_FALSE(floor.void_round(1).ok()); });
  // The fail-stop itself, held as it happens: recovery may rebuild the engine at once (it only
  // reads), so a poll of host.failed() can fall between the failure and the rebuild and miss it.
  ASSERT_TRUE(gate.wait_failed(60s));
  set_failing(*floor.control, false);
  gate.release();
  locking.join();
  voiding.join();
  {
    std::unique_lock lock(mutex);
    EXPECT_TRUE(
        changed.wait_for(lock, std::chrono::seconds(60), [&] { return heard.size() == 2; }));
    EXPECT_EQ(heard, (std::vector<std::string>{"the lock's batch", "restart"}));
  }
  host.stop();  // While the observers' state is still alive.
}

}  // namespace
}  // namespace jackpot

namespace jackpot {
namespace {

TEST(DurableHost, ALinkAddedToTheFloorOpensAtItsSeedsBesideTheKeptState) {
  testing::TestDatabase database;
  auto control = database.connect();
  storage::apply_migrations(*control);
  FixedClock clock;
  SplitMix64 random(5);
  auto paytables = std::move(load_paytables(embedded_paytables())).value();
  Money meter_before;
  {
    PostgresDurability durability(database.dsn(), floor_config(), paytables, clock, random);
    auto opened = durability.open();
    ASSERT_TRUE(opened.ok()) << opened.error().front();
    EngineHost host(std::move(opened).value(), &durability);
    ASSERT_TRUE(host.run([](Engine& engine, Records& records) {
      return engine.open_round({TableId("T1"), RoundId(1)}, records);
    }));
    ASSERT_TRUE(host.run([](Engine& engine, Records& records) {
      return engine.lock_wagers({TableId("T1"), RoundId(1), {{2, LinkId("f-link"), 700}}}, records);
    }));
    meter_before = host.read([](const Engine& e) { return e.link(LinkId("f-link"))->meter(1); });
    host.stop();
  }
  EngineConfig grown = floor_config();
  add_link_and_table(grown, "g-link", "T2", "500.00", 100'000);
  std::optional<EngineSnapshot> second;
  {
    PostgresDurability durability(database.dsn(), grown, paytables, clock, random);
    auto reopened = durability.open();
    ASSERT_TRUE(reopened.ok()) << reopened.error().front();
    const auto& engine = **reopened;
    EXPECT_EQ(engine.link(LinkId("f-link"))->meter(1), meter_before);  // Kept, with round 1.
    EXPECT_EQ(engine.link(LinkId("g-link"))->meter(1), *Money::parse("500.00"));
    EXPECT_FALSE(engine.check_invariants());
    second = engine.snapshot();
  }  // A daemon's stop: the floor's lock goes with its commit session.
  // And a third start finds the new link in the database as it left it.
  PostgresDurability again(database.dsn(), grown, paytables, clock, random);
  auto third = again.open();
  ASSERT_TRUE(third.ok()) << third.error().front();
  EXPECT_EQ((*third)->snapshot(), *second);
}

}  // namespace
}  // namespace jackpot

namespace jackpot {
namespace {

// What a callback-API handler sees: the answer arrives once, after its batch commits, on
// another thread; a batch that fails answers UNAVAILABLE and leaves nothing behind.
template <typename Answer>
class Answered {
 public:
  void set(Answer answer) {
    {
      std::lock_guard lock(mutex_);
      ++calls_;
      answer_.emplace(std::move(answer));
    }
    changed_.notify_all();
  }
  // The answer, once given within `timeout`.
  std::optional<Answer> wait(std::chrono::milliseconds timeout) {
    std::unique_lock lock(mutex_);
    changed_.wait_for(lock, timeout, [&] { return answer_.has_value(); });
    return answer_;
  }
  int calls() {
    std::lock_guard lock(mutex_);
    return calls_;
  }

 private:
  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<Answer> answer_;
  int calls_ = 0;
};

TEST(DurableHost, SubmittedCommandsAreAnsweredOnlyOnceTheirBatchCommits) {
  DurableFloor floor(6);
  auto& control = floor.control;
  EngineHost& host = *floor.host;
  install_failure_switch(*control);

  // A transaction of the test's holds the rounds table, so the host's commit waits for it.
  Answered<Result<OpenRoundAnswer, EngineFailure>> open;
  {
    pqxx::work blocker(*control);
    blocker.exec("LOCK TABLE rounds IN ACCESS EXCLUSIVE MODE");
    host.submit(
        [](Engine& engine, Records& records) {
          return engine.open_round({TableId("T1"), RoundId(1)}, records);
        },
        [&](auto answer) { open.set(std::move(answer)); });
    EXPECT_FALSE(open.wait(300ms)) << "answered before its batch committed";
    blocker.commit();
  }
  const auto opened_answer = open.wait(10s);
  ASSERT_TRUE(opened_answer);
  EXPECT_TRUE(opened_answer->ok());
  EXPECT_EQ(open.calls(), 1);
  pqxx::work check(*control);
  EXPECT_EQ(check.exec1("SELECT count(*) FROM rounds")[0].as<int>(), 1);
  check.commit();

  // A replay of a committed command is answered at once, on the caller's thread.
  Answered<Result<OpenRoundAnswer, EngineFailure>> replay;
  host.submit(
      [](Engine& engine, Records& records) {
        return engine.open_round({TableId("T1"), RoundId(1)}, records);
      },
      [&](auto answer) { replay.set(std::move(answer)); });
  ASSERT_EQ(replay.calls(), 1);
  const auto replayed = replay.wait(0ms);
  ASSERT_TRUE(replayed && replayed->ok());
  EXPECT_EQ(**replayed, **opened_answer);

  // A batch that fails to commit answers UNAVAILABLE, and the engine keeps nothing of it.
  const EngineSnapshot before = host.read([](const Engine& engine) { return engine.snapshot(); });
  set_failing(*control, true);
  testing::FailStopGate gate(host);
  Answered<Result<LockWagersAnswer, EngineFailure>> lock;
  host.submit(
      [](Engine& engine, Records& records) {
        return engine.lock_wagers({TableId("T1"), RoundId(1), {{1, LinkId("f-link"), 500}}},
                                  records);
      },
      [&](auto answer) { lock.set(std::move(answer)); });
  const auto locked = lock.wait(10s);
  ASSERT_TRUE(locked);
  ASSERT_FALSE(locked->ok());
  EXPECT_EQ(locked->error().code, EngineError::link_unavailable);
  ASSERT_TRUE(gate.wait_failed(60s));
  // While failed, a submitted command is refused at once.
  Answered<Result<LockWagersAnswer, EngineFailure>> refused;
  host.submit(
      [](Engine& engine, Records& records) {
        return engine.lock_wagers({TableId("T1"), RoundId(1), {{1, LinkId("f-link"), 500}}},
                                  records);
      },
      [&](auto answer) { refused.set(std::move(answer)); });
  ASSERT_EQ(refused.calls(), 1);
  EXPECT_EQ(refused.wait(0ms)->error().code, EngineError::link_unavailable);
  set_failing(*control, false);
  gate.release();
  for (int attempt = 0; attempt < 600 && host.failed(); ++attempt)
    std::this_thread::sleep_for(50ms);
  ASSERT_FALSE(host.failed());
  EXPECT_EQ(host.read([](const Engine& engine) { return engine.snapshot(); }), before);
  EXPECT_EQ(lock.calls(), 1);
  host.stop();
}

}  // namespace
}  // namespace jackpot

namespace jackpot {
namespace {

// A commit that waits longer than the commit timeout (here on a lock someone else holds) fails,
// and the floor fails stop instead of waiting without end; once the lock is gone it serves again.
TEST(DurableHost, ACommitThatWaitsPastItsTimeoutFailsStop) {
  DurableFloor floor(8, 300ms);
  auto& control = floor.control;
  EngineHost& host = *floor.host;
  ASSERT_TRUE(floor.open(1).ok());
  const auto void_round = [&] { return floor.void_round(1); };
  const EngineSnapshot before = host.read([](const Engine& engine) { return engine.snapshot(); });
  {
    // Someone holds the table the void writes to until the void is answered: far past the
    // 300 ms timeout. Released by itself after 30 s, so that a host without the timeout makes
    // this test fail (the void commits then), not hang.
    pqxx::work blocker(*control);
    blocker.exec("LOCK TABLE round_events IN ACCESS EXCLUSIVE MODE");
    Answered<bool> answered;
    std::thread release([&] {
      answered.wait(30s);
      blocker.commit();
    });
    const auto started = std::chrono::steady_clock::now();
    const auto refused = void_round();
    const auto waited = std::chrono::steady_clock::now() - started;
    const bool failed = host.failed();
    answered.set(true);
    release.join();
    ASSERT_FALSE(refused.ok()) << "committed after the lock went away instead";
    EXPECT_EQ(refused.error().code, EngineError::link_unavailable);
    EXPECT_LT(waited, 10s) << "waited for the lock instead";
    EXPECT_TRUE(failed);
  }
  for (int attempt = 0; attempt < 600 && host.failed(); ++attempt)
    std::this_thread::sleep_for(50ms);
  ASSERT_FALSE(host.failed());
  EXPECT_EQ(host.read([](const Engine& engine) { return engine.snapshot(); }), before);
  EXPECT_TRUE(void_round().ok());  // The table's retry goes through.
  host.stop();
}

}  // namespace
}  // namespace jackpot

namespace jackpot {
namespace {

// The server process of the commit connection stops (SIGSTOP) while the network stays up: no
// error ever arrives. The daemon gives up at its own deadline, fails stop, and once the process
// runs again, recovery ends it before reading the state; the table's retry then goes through
// (answered as a replay if the stopped process committed the void after all).
TEST(DurableHost, ACommitServerProcessThatStopsAnsweringFailsStop) {
  DurableFloor floor(9, 300ms);  // Statement timeout 300 ms: the daemon waits 600 ms at most.
  EngineHost& host = *floor.host;
  ASSERT_TRUE(floor.open(1).ok());
  const auto void_round = [&] { return floor.void_round(1); };
  int pid = 0;
  {
    pqxx::work tx(*floor.control);
    pid = tx.exec1(
                "SELECT pid FROM pg_stat_activity WHERE application_name = 'jackpotd-commit' "
                "AND datname = current_database()")[0]
              .as<int>();
  }
  ASSERT_EQ(::kill(pid, SIGSTOP), 0) << "the test needs to signal the server's processes (root)";
  // Resumed once the void is answered, or after 30 s whatever happens, so that a host without
  // its own deadline fails this test (the void then commits late) instead of hanging it.
  Answered<bool> answered;
  std::thread watchdog([pid, &answered] {
    answered.wait(30s);
    ::kill(pid, SIGCONT);
  });
  struct Join {
    Answered<bool>& answered;
    std::thread& thread;
    ~Join() {
      answered.set(true);
      thread.join();
    }
  } join{answered, watchdog};

  const auto started = std::chrono::steady_clock::now();
  const auto refused = void_round();
  const auto waited = std::chrono::steady_clock::now() - started;
  answered.set(true);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().code, EngineError::link_unavailable);
  EXPECT_LT(waited, 10s);
  EXPECT_TRUE(host.failed());

  ::kill(pid, SIGCONT);
  for (int attempt = 0; attempt < 600 && host.failed(); ++attempt)
    std::this_thread::sleep_for(50ms);
  ASSERT_FALSE(host.failed());
  {
    pqxx::work tx(*floor.control);
    EXPECT_EQ(
        tx.exec_params1("SELECT count(*) FROM pg_stat_activity WHERE pid = $1", pid)[0].as<int>(),
        0)
        << "the stopped process is still there";
  }
  EXPECT_TRUE(void_round().ok());
  EXPECT_FALSE(host.read([](const Engine& engine) { return engine.check_invariants(); }));
}

}  // namespace
}  // namespace jackpot

namespace jackpot {
namespace {

// Recovery reads each table's last two rounds and the payouts still waiting for a supervisor
// directly, without reading the history before them. Whatever way it finds them, a start must
// rebuild exactly the engine that wrote the history: here a floor of four tables that played
// many rounds each (interleaved, with gaps in their round ids, voids, and a round left open or
// locked by the crash) and many payouts: paid at once, approved and paid, rejected, approved
// once of two, and still pending.
TEST(DurableHost, RecoveryAfterManyRoundsAndPayoutsEqualsTheEngine) {
  testing::TestDatabase database;
  auto control = database.connect();
  storage::apply_migrations(*control);
  FixedClock clock;
  SplitMix64 random(13);
  auto paytables = std::move(load_paytables(embedded_paytables())).value();
  EngineConfig config = floor_config();
  // A Royal Flush pays 10% of the meter (at least $100) and a Straight Flush $200: both wait
  // for a supervisor, the Straight Flush for two. A Flush ($5) and a Full House ($10) are paid
  // at once.
  config.links[0].approval_threshold = *Money::parse("100.00");
  config.links[0].dual_approval_threshold = *Money::parse("150.00");
  for (const char* id : {"T2", "T3", "T4"}) {
    TableSettings table = config.tables[0];
    table.id = TableId(id);
    config.tables.push_back(table);
  }

  auto durability =
      std::make_unique<PostgresDurability>(database.dsn(), config, paytables, clock, random);
  auto opened = durability->open();
  ASSERT_TRUE(opened.ok()) << opened.error().front();
  EngineHost host(std::move(opened).value(), durability.get());
  const auto play = [&](const TableId& table, std::uint64_t round, int n) {
    const RoundId id(round);
    ASSERT_TRUE(host.run([&](Engine& e, Records& r) { return e.open_round({table, id}, r); }));
    if (n % 11 == 6) {  // A misdeal before the wagers lock.
      ASSERT_TRUE(host.run([&](Engine& e, Records& r) {
        return e.void_round({table, id, "misdeal"}, r);
      }));
      return;
    }
    const LockWagersRequest lock{
        table,
        id,
        {{1, LinkId("f-link"), 100}, {2, LinkId("f-link"), 200}, {3, LinkId("f-link"), 100}}};
    ASSERT_TRUE(host.run([&](Engine& e, Records& r) { return e.lock_wagers(lock, r); }));
    if (n % 5 == 2) {
      ASSERT_TRUE(host.run([&](Engine& e, Records& r) {
        return e.void_round({table, id, "misdeal"}, r);
      }));
      return;
    }
    const char* keyed = n % 7 == 3   ? "ROYAL_FLUSH"
                        : n % 9 == 5 ? "STRAIGHT_FLUSH"
                        : n % 2 == 0 ? "FLUSH"
                                     : "FULL_HOUSE";
    // Seats 1 and 3 hold nothing on this board; seat 2's hand is keyed by the dealer.
    const SettleRoundRequest settle{table,
                                    id,
                                    {{1, {"2c", "7d"}, std::nullopt},
                                     {2, {}, std::string(keyed)},
                                     {3, {"3s", "8h"}, std::nullopt}},
                                    {"9h", "Js", "4c", "5d", "Kh"},
                                    {}};
    const auto settled = host.run([&](Engine& e, Records& r) { return e.settle_round(settle, r); });
    ASSERT_TRUE(settled.ok()) << settled.error().message;
  };
  // Rounds 1..30 at each table in turn, T3 counting in tens; then each table's last round left
  // as a crash finds it: T1 locked, T2 open, T3 voided, T4 settled.
  const std::vector<TableId> tables = {TableId("T1"), TableId("T2"), TableId("T3"), TableId("T4")};
  int n = 0;
  for (std::uint64_t round = 1; round <= 30; ++round) {
    for (const TableId& table : tables) {
      play(table, table.value() == "T3" ? 10 * round : round, n++);
      if (HasFatalFailure()) return;
    }
  }
  ASSERT_TRUE(host.run([](Engine& e, Records& r) {
    return e.open_round({TableId("T1"), RoundId(31)}, r);
  }));
  ASSERT_TRUE(host.run([](Engine& e, Records& r) {
    return e.lock_wagers({TableId("T1"), RoundId(31), {{4, LinkId("f-link"), 500}}}, r);
  }));
  ASSERT_TRUE(host.run([](Engine& e, Records& r) {
    return e.open_round({TableId("T2"), RoundId(31)}, r);
  }));
  ASSERT_TRUE(host.run([](Engine& e, Records& r) {
    return e.open_round({TableId("T3"), RoundId(310)}, r);
  }));
  ASSERT_TRUE(host.run([](Engine& e, Records& r) {
    return e.void_round({TableId("T3"), RoundId(310), "table closed"}, r);
  }));

  // Supervisors: approve the first two waiting payouts (the Royal Flush of the fourth round is
  // paid at one approval, the Straight Flush of the sixth waits for a second), reject the third
  // (two rejections when it needs two supervisors), ask to reject the first other one that needs
  // two (it waits for a second supervisor: recovery must keep the request), leave the rest.
  const std::vector<Payout> waiting =
      host.read([](const Engine& e) { return e.pending_payouts(); });
  ASSERT_GE(waiting.size(), 6u);
  for (std::size_t i = 0; i < 3; ++i) {
    const PayoutId id = waiting[i].id;
    const auto done = host.run([&](Engine& e, Records& r) {
      return i < 2 ? testing::approve_payout(e, id, "supervisor/S1", r)
                   : testing::reject_payout(e, id, "supervisor/S2", "camera review", r);
    });
    ASSERT_TRUE(done.ok()) << done.error().message;
    if (i == 2 && done->state == PayoutState::pending) {
      const auto second = host.run([&](Engine& e, Records& r) {
        return testing::reject_payout(e, id, "supervisor/S3", "camera review", r);
      });
      ASSERT_TRUE(second.ok()) << second.error().message;
      EXPECT_EQ(second->state, PayoutState::rejected);
    }
  }
  bool requested = false;
  for (std::size_t i = 3; i < waiting.size() && !requested; ++i) {
    if (waiting[i].approvals_required < 2) continue;
    const PayoutId id = waiting[i].id;
    const auto asked = host.run([&](Engine& e, Records& r) {
      return testing::reject_payout(e, id, "supervisor/S2", "dealer error", r);
    });
    ASSERT_TRUE(asked.ok()) << asked.error().message;
    EXPECT_EQ(asked->rejection_requested_by, (std::vector<std::string>{"supervisor/S2"}));
    requested = true;
  }
  EXPECT_TRUE(requested) << "no waiting payout needs two supervisors";
  const EngineSnapshot before = host.read([](const Engine& e) { return e.snapshot(); });
  host.stop();
  durability.reset();  // Its session holds the floor's lock; the next start takes it.

  // The history holds every kind of payout the pending query must tell apart.
  {
    pqxx::read_transaction tx(*control);
    const auto count = [&](const std::string& where) {
      return tx.exec1("SELECT count(*) FROM payouts p WHERE " + where)[0].as<int>();
    };
    const std::string ended =
        "EXISTS (SELECT 1 FROM payout_events e WHERE e.payout_id = p.payout_id AND e.state = ";
    EXPECT_GT(count("approvals_required = 0 AND " + ended + "'paid')"), 10) << "paid at once";
    EXPECT_GE(count("approvals_required > 0 AND " + ended + "'paid')"), 1) << "approved, paid";
    EXPECT_EQ(count(ended + "'rejected')"), 1);
    EXPECT_EQ(count("NOT " + ended + "'paid') AND " + ended + "'approved')"), 1)
        << "approved once of two";
    EXPECT_GE(count("NOT EXISTS (SELECT 1 FROM payout_events e WHERE e.payout_id = p.payout_id "
                    "AND e.state IN ('paid', 'rejected'))"),
              3)
        << "still pending";
  }

  // The stored state has each table's two highest round ids, oldest first.
  const storage::StoredState stored = storage::load_state(*control);
  std::map<std::string, std::vector<std::uint64_t>> kept;
  for (const storage::StoredRound& round : stored.rounds) {
    kept[round.table.value()].push_back(round.round.value());
  }
  EXPECT_EQ(kept, (std::map<std::string, std::vector<std::uint64_t>>{
                      {"T1", {30, 31}}, {"T2", {30, 31}}, {"T3", {300, 310}}, {"T4", {29, 30}}}));

  PostgresDurability again(database.dsn(), config, paytables, clock, random);
  auto reopened = again.open();
  ASSERT_TRUE(reopened.ok()) << reopened.error().front();
  const EngineSnapshot after = (*reopened)->snapshot();
  EXPECT_EQ(after.links, before.links);
  EXPECT_EQ(after.pending, before.pending);
  EXPECT_EQ(after.tables, before.tables);
  EXPECT_EQ(after, before);
  EXPECT_FALSE((*reopened)->check_invariants());
}

}  // namespace
}  // namespace jackpot

namespace jackpot {
namespace {

using testing::hex;
using testing::unhex;

// A kept request or answer (the given version-3 bytes) rewritten in version 2.
template <typename T>
std::string in_version_2(const std::string& bytes) {
  const std::optional<T> value = decode<T>(bytes);
  if (!value) throw std::runtime_error("a kept message does not decode");
  return testing::encode_version_2(*value);
}

// Journals written before the Protobuf format keep each command's first request and answer in
// the hand-written version 2. After an upgrade, a restart reads them: a repeated command returns
// the answer kept, a different one under the same ids is refused, play goes on, and a journal
// that holds both formats restarts again.
TEST(DurableHost, AJournalKeptInTheOlderFormatStillReplays) {
  testing::TestDatabase database;
  auto control = database.connect();
  storage::apply_migrations(*control);
  FixedClock clock;
  SplitMix64 random(17);
  auto paytables = std::move(load_paytables(embedded_paytables())).value();
  EngineConfig config = floor_config();
  TableSettings second = config.tables[0];
  second.id = TableId("T2");
  config.tables.push_back(second);
  const auto start = [&] {
    auto durability =
        std::make_unique<PostgresDurability>(database.dsn(), config, paytables, clock, random);
    auto opened = durability->open();
    if (!opened) throw std::runtime_error(opened.error().front());
    auto host = std::make_unique<EngineHost>(std::move(opened).value(), durability.get());
    return std::make_pair(std::move(durability), std::move(host));
  };
  const auto open = [](EngineHost& host, const OpenRoundRequest& request) {
    return host.run([&](Engine& e, Records& r) { return e.open_round(request, r); });
  };
  const auto lock = [](EngineHost& host, const LockWagersRequest& request) {
    return host.run([&](Engine& e, Records& r) { return e.lock_wagers(request, r); });
  };
  const auto settle = [](EngineHost& host, const SettleRoundRequest& request) {
    return host.run([&](Engine& e, Records& r) { return e.settle_round(request, r); });
  };
  const auto void_round = [](EngineHost& host, const VoidRoundRequest& request) {
    return host.run([&](Engine& e, Records& r) { return e.void_round(request, r); });
  };
  // T1: round 1 settled, seat 2's keyed Flush paid (its payout's state in the answer), round 2
  // open. T2: round 1 voided after its lock, round 2 locked.
  const LockWagersRequest lock_t1{
      TableId("T1"), RoundId(1), {{1, LinkId("f-link"), 100}, {2, LinkId("f-link"), 200}}};
  const SettleRoundRequest settle_t1{TableId("T1"),
                                     RoundId(1),
                                     {{1, {"2c", "7d"}, std::nullopt}, {2, {}, "FLUSH"}},
                                     {"9h", "Js", "4c", "5d", "Kh"},
                                     {}};
  const VoidRoundRequest void_t2{TableId("T2"), RoundId(1), "misdeal"};
  const LockWagersRequest lock_t2{TableId("T2"), RoundId(2), {{3, LinkId("f-link"), 500}}};

  auto [durability, host] = start();
  ASSERT_TRUE(open(*host, {TableId("T1"), RoundId(1)}).ok());
  ASSERT_TRUE(lock(*host, lock_t1).ok());
  const auto settled_t1 = settle(*host, settle_t1);
  ASSERT_TRUE(settled_t1.ok()) << settled_t1.error().message;
  ASSERT_EQ(settled_t1->results.size(), 2u);
  ASSERT_EQ(settled_t1->results[0].awards.size(), 1u);  // Seat 2's Flush.
  ASSERT_TRUE(settled_t1->results[0].awards[0].payout_state.has_value());
  ASSERT_TRUE(open(*host, {TableId("T2"), RoundId(1)}).ok());
  ASSERT_TRUE(lock(*host, {TableId("T2"), RoundId(1), {{1, LinkId("f-link"), 100}}}).ok());
  const auto voided_t2 = void_round(*host, void_t2);
  ASSERT_TRUE(voided_t2.ok()) << voided_t2.error().message;
  ASSERT_TRUE(open(*host, {TableId("T2"), RoundId(2)}).ok());
  const auto locked_t2 = lock(*host, lock_t2);
  ASSERT_TRUE(locked_t2.ok()) << locked_t2.error().message;
  const OpenRoundRequest open_t1{TableId("T1"), RoundId(2)};  // Left OPEN.
  const auto opened_t1 = open(*host, open_t1);
  ASSERT_TRUE(opened_t1.ok()) << opened_t1.error().message;
  host->stop();
  host.reset();
  durability.reset();

  // The journal as a release before the Protobuf format would have kept it.
  {
    pqxx::work tx(*control);
    tx.exec("SET LOCAL session_replication_role = replica");  // Past the append-only triggers.
    const pqxx::result kept = tx.exec(
        "SELECT round_key, phase, encode(request, 'hex'), encode(answer, 'hex') "
        "FROM round_events WHERE request IS NOT NULL");
    ASSERT_EQ(kept.size(), 9u);
    for (const auto& row : kept) {
      const std::string phase = row[1].as<std::string>();
      const std::string request = unhex(row[2].as<std::string>());
      const std::string answer = unhex(row[3].as<std::string>());
      ASSERT_EQ(request.front(), '\x03');
      ASSERT_EQ(answer.front(), '\x03');
      std::pair<std::string, std::string> old;
      if (phase == "open") {
        old = {in_version_2<OpenRoundRequest>(request), in_version_2<OpenRoundAnswer>(answer)};
      } else if (phase == "locked") {
        old = {in_version_2<LockWagersRequest>(request), in_version_2<LockWagersAnswer>(answer)};
      } else if (phase == "settled") {
        old = {in_version_2<SettleRoundRequest>(request), in_version_2<SettleRoundAnswer>(answer)};
      } else {
        ASSERT_EQ(phase, "voided");
        old = {in_version_2<VoidRoundRequest>(request), in_version_2<VoidRoundAnswer>(answer)};
      }
      tx.exec_params(
          "UPDATE round_events SET request = decode($1, 'hex'), answer = decode($2, 'hex') "
          "WHERE round_key = $3 AND phase = $4",
          hex(old.first), hex(old.second), row[0].as<std::int64_t>(), phase);
    }
    tx.commit();
  }
  const auto kept_in = [&](int version) {
    pqxx::nontransaction check(*control);
    return check
        .exec1("SELECT count(*) FROM round_events WHERE get_byte(request, 0) = " +
               std::to_string(version) + " AND get_byte(answer, 0) = " + std::to_string(version))[0]
        .as<int>();
  };
  ASSERT_EQ(kept_in(2), 9);

  auto [durability_after, host_after] = start();
  const auto settled_again = settle(*host_after, settle_t1);
  ASSERT_TRUE(settled_again.ok()) << settled_again.error().message;
  EXPECT_EQ(*settled_again, *settled_t1);
  const auto voided_again = void_round(*host_after, void_t2);
  ASSERT_TRUE(voided_again.ok()) << voided_again.error().message;
  EXPECT_EQ(*voided_again, *voided_t2);
  const auto locked_again = lock(*host_after, lock_t2);
  ASSERT_TRUE(locked_again.ok()) << locked_again.error().message;
  EXPECT_EQ(*locked_again, *locked_t2);
  const auto opened_again = open(*host_after, open_t1);
  ASSERT_TRUE(opened_again.ok()) << opened_again.error().message;
  EXPECT_EQ(*opened_again, *opened_t1);
  LockWagersRequest other = lock_t2;
  other.wagers[0].amount_cents = 1000;
  EXPECT_EQ(lock(*host_after, other).error().code, EngineError::replay_differs);
  const SettleRoundRequest settle_t2{TableId("T2"),
                                     RoundId(2),
                                     {{3, {"2c", "7d"}, std::nullopt}},
                                     {"9h", "Js", "4c", "5d", "Kh"},
                                     {}};
  const auto settled_t2 = settle(*host_after, settle_t2);
  ASSERT_TRUE(settled_t2.ok()) << settled_t2.error().message;
  host_after->stop();
  host_after.reset();
  durability_after.reset();
  EXPECT_EQ(kept_in(3), 1);  // T2's settlement, beside the nine older ones.

  // A journal holding both formats restarts: both settlements replay.
  auto [durability_mixed, host_mixed] = start();
  const auto settled_t1_mixed = settle(*host_mixed, settle_t1);
  ASSERT_TRUE(settled_t1_mixed.ok()) << settled_t1_mixed.error().message;
  EXPECT_EQ(*settled_t1_mixed, *settled_t1);
  const auto settled_t2_mixed = settle(*host_mixed, settle_t2);
  ASSERT_TRUE(settled_t2_mixed.ok()) << settled_t2_mixed.error().message;
  EXPECT_EQ(*settled_t2_mixed, *settled_t2);
  host_mixed->stop();
}

}  // namespace
}  // namespace jackpot
