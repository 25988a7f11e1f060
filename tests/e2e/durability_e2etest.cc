// jackpotd over gRPC against PostgreSQL across restarts and crashes: meters, open rounds and
// first answers survive a clean stop and a SIGKILL; what was acknowledged is there exactly once.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <csignal>
#include <fstream>
#include <map>
#include <mutex>
#include <pqxx/pqxx>
#include <random>
#include <regex>
#include <thread>

#include "jackpot/v1/admin.grpc.pb.h"
#include "jackpot/v1/table.grpc.pb.h"
#include "tests/support/daemon_process.h"
#include "tests/support/test_database.h"
#include "tests/support/test_pki.h"

namespace jackpot {
namespace {

using namespace std::chrono_literals;
using testing::channel_as;
using testing::DaemonProcess;
using testing::TestDatabase;
namespace pb = ::jackpot::v1;

constexpr const char* kFloor = R"(
links {
  id: "dur-link"
  approval_threshold: "100.00"
  levels { level: 1 name: "Royal Flush" seed: "1000.00" meter_rate_ppm: 150000 reserve_rate_ppm: 25000 }
  levels { level: 2 name: "Must-Hit-By $250" seed: "50.00" meter_rate_ppm: 100000 must_hit_by: "250.00" trigger: TRIGGER_HIDDEN_UNIFORM }
}
tables { id: "T1" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6 links { link_id: "dur-link" paytable_id: "PT-BJS-HUH-5CP-12" } }
tables { id: "T2" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6 links { link_id: "dur-link" paytable_id: "PT-BJS-HUH-5CP-12" } }
tables { id: "T3" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6 links { link_id: "dur-link" paytable_id: "PT-BJS-HUH-5CP-12" } }
tables { id: "T4" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6 links { link_id: "dur-link" paytable_id: "PT-BJS-HUH-5CP-12" } }
)";

// A daemon on the test's database, restartable; the clients follow its address.
class Daemon {
 public:
  Daemon(const std::string& dsn, const std::string& floor) : dsn_(dsn), floor_(floor) { start(); }

  void start() {
    process_ = std::make_unique<DaemonProcess>(std::vector<std::string>{
        "--db", dsn_, "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--floor", floor_});
    const auto line = process_->read_stdout_line(30s);
    ASSERT_TRUE(line) << process_->stderr_text();
    std::smatch match;
    ASSERT_TRUE(std::regex_search(
        *line, match, std::regex("serving gRPC on (\\S+), metrics on http://127.0.0.1:([0-9]+)")));
    metrics_port = std::stoi(match[2]);
    std::lock_guard lock(mutex_);
    tables_.clear();
    for (const char* id : {"T1", "T2", "T3", "T4"}) {
      tables_[id] = pb::TableService::NewStub(channel_as(match[1], std::string("table/") + id));
    }
    admin = pb::AdminService::NewStub(channel_as(match[1], "admin/e2e"));
  }
  // The stub of table `id` (with its certificate) at the daemon running now, for clients on
  // other threads.
  std::shared_ptr<pb::TableService::Stub> table_stub(const std::string& id) {
    std::lock_guard lock(mutex_);
    return tables_.at(id);
  }
  void stop(int signal_number) {
    process_->send_signal(signal_number);
    const auto code = process_->wait_for_exit(20s);
    if (signal_number == SIGTERM) {
      EXPECT_EQ(code, 0) << process_->stderr_text();
    }
  }
  std::string stderr_text() const { return process_->stderr_text(); }

  std::int64_t meter_micros(std::uint32_t level) {
    grpc::ClientContext context;
    pb::ListMetersResponse response;
    EXPECT_TRUE(admin->ListMeters(&context, {}, &response).ok());
    return response.levels(static_cast<int>(level - 1)).meter_micros();
  }

  std::unique_ptr<pb::AdminService::Stub> admin;
  int metrics_port = 0;

 private:
  std::mutex mutex_;
  std::map<std::string, std::shared_ptr<pb::TableService::Stub>> tables_;
  std::string dsn_;
  std::string floor_;
  std::unique_ptr<DaemonProcess> process_;
};

std::string write_floor() {
  char name[] = "/tmp/jackpotd-durable-floor.XXXXXX";
  close(mkstemp(name));
  std::ofstream(name) << kFloor;
  return name;
}

// One table's rounds as serialized requests; each is retried with the same ids until answered.
class Table {
 public:
  Table(std::string id, std::uint64_t seed) : id_(std::move(id)), shuffle_(seed) {
    for (const char rank : std::string("23456789TJQKA")) {
      for (const char suit : std::string("shdc")) deck_.push_back({rank, suit});
    }
  }

  // The next round's three requests.
  std::vector<std::pair<std::string, std::string>> next_round() {
    ++round_;
    pb::OpenRoundRequest open;
    open.set_table_id(id_);
    open.set_round_id(round_);
    pb::LockWagersRequest lock;
    lock.set_table_id(id_);
    lock.set_round_id(round_);
    pb::SettleRoundRequest settle;
    settle.set_table_id(id_);
    settle.set_round_id(round_);
    std::shuffle(deck_.begin(), deck_.end(), shuffle_);
    for (std::uint32_t seat = 1; seat <= 6; ++seat) {
      if (shuffle_() % 3 == 0) continue;
      auto* wager = lock.add_wagers();
      wager->set_seat(seat);
      wager->set_link_id("dur-link");
      wager->set_amount_cents(100 * static_cast<std::int64_t>(1 + seat % 3));
      auto* hand = settle.add_seats();
      hand->set_seat(seat);
      hand->mutable_cards()->add_cards(deck_[2 * seat]);
      hand->mutable_cards()->add_cards(deck_[2 * seat + 1]);
    }
    for (int i = 0; i < 5; ++i) settle.add_community_cards(deck_[20 + static_cast<std::size_t>(i)]);
    return {{"open", open.SerializeAsString()},
            {"lock", lock.SerializeAsString()},
            {"settle", settle.SerializeAsString()}};
  }

 private:
  std::string id_;
  std::mt19937_64 shuffle_;
  std::vector<std::string> deck_;
  std::uint64_t round_ = 0;
};

// Sends one serialized request; the serialized answer, or nothing on any error.
std::optional<std::string> send(pb::TableService::Stub& stub, const std::string& kind,
                                const std::string& bytes) {
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 5s);
  grpc::Status status;
  std::string answer;
  if (kind == "open") {
    pb::OpenRoundRequest request;
    request.ParseFromString(bytes);
    pb::OpenRoundResponse response;
    status = stub.OpenRound(&context, request, &response);
    answer = response.SerializeAsString();
  } else if (kind == "lock") {
    pb::LockWagersRequest request;
    request.ParseFromString(bytes);
    pb::LockWagersResponse response;
    status = stub.LockWagers(&context, request, &response);
    answer = response.SerializeAsString();
  } else {
    pb::SettleRoundRequest request;
    request.ParseFromString(bytes);
    pb::SettleRoundResponse response;
    status = stub.SettleRound(&context, request, &response);
    answer = response.SerializeAsString();
  }
  if (!status.ok()) return std::nullopt;
  return answer;
}

struct Acknowledged {
  std::string table;
  std::uint64_t round = 0;
  std::string kind;
  std::string request;
  std::string answer;
};

Acknowledged acknowledged_of(const std::string& kind, const std::string& request,
                             const std::string& answer) {
  pb::OpenRoundRequest ids;  // Every request starts with table_id = 1, round_id = 2.
  ids.ParseFromString(request);
  return {ids.table_id(), ids.round_id(), kind, request, answer};
}

// Replays answer within a table's last two rounds; older rounds are checked in the database.
// An OpenRound repeat answers only while its round is the table's latest and OPEN; where these
// tests replay, none is, so each is refused (expect_replay).
bool replayable(const Acknowledged& first, const std::map<std::string, std::uint64_t>& last) {
  return first.round + 1 >= last.at(first.table);
}

// A repeat of an acknowledged command after the restart: the first answer, exactly; or, for an
// OpenRound whose round moved on, a refusal.
void expect_replay(pb::TableService::Stub& stub, const Acknowledged& first) {
  const auto again = send(stub, first.kind, first.request);
  if (first.kind == "open") {
    EXPECT_FALSE(again) << "round " << first.round << ": an open repeat after the round moved on";
  } else {
    EXPECT_EQ(again, first.answer) << first.kind;
  }
}

// Each acknowledged command is in the database exactly once, with its answer (round events are
// keyed by round and phase; rounds by table and round id).
void expect_recorded(TestDatabase& database, const std::vector<Acknowledged>& acknowledged) {
  auto connection = database.connect();
  pqxx::read_transaction tx(*connection);
  for (const Acknowledged& first : acknowledged) {
    const std::string phase = first.kind == "open"     ? "open"
                              : first.kind == "lock"   ? "locked"
                              : first.kind == "settle" ? "settled"
                                                       : "voided";
    EXPECT_EQ(tx.exec_params1("SELECT count(*) FROM round_events e JOIN rounds r USING "
                              "(round_key) WHERE r.table_id = $1 AND r.round_id = $2 AND "
                              "e.phase = $3 AND e.answer IS NOT NULL",
                              first.table, static_cast<std::int64_t>(first.round), phase)[0]
                  .as<int>(),
              1)
        << first.table << " round " << first.round << " " << first.kind;
  }
}

TEST(Durability, ACleanRestartKeepsMetersOpenRoundsAndFirstAnswers) {
  TestDatabase database;
  const std::string floor = write_floor();
  Daemon daemon(database.dsn(), floor);
  Table t1("T1", 1);
  std::vector<Acknowledged> acknowledged;
  for (int round = 0; round < 40; ++round) {
    for (const auto& [kind, request] : t1.next_round()) {
      const auto answer = send(*daemon.table_stub("T1"), kind, request);
      ASSERT_TRUE(answer) << kind << " round " << round << "\n" << daemon.stderr_text();
      acknowledged.push_back(acknowledged_of(kind, request, *answer));
    }
  }
  const auto open_next = t1.next_round();  // Leave round 41 open and locked across the restart.
  for (std::size_t i = 0; i < 2; ++i) {
    const auto answer = send(*daemon.table_stub("T1"), open_next[i].first, open_next[i].second);
    ASSERT_TRUE(answer);
    acknowledged.push_back(acknowledged_of(open_next[i].first, open_next[i].second, *answer));
  }
  const std::int64_t meter = daemon.meter_micros(1);
  const std::int64_t must_hit_by = daemon.meter_micros(2);
  // The metrics say what happened: 40 settled rounds, committed in batches, the meters (read
  // once a second: polled for up to 30 s).
  const std::string meter_series =
      "jackpotd_meter{level=\"1\",link=\"dur-link\"} " + std::to_string(meter / 1'000'000);
  std::string metrics = testing::http_get(daemon.metrics_port, "/metrics");
  for (int i = 0; i < 150 && metrics.find(meter_series) == std::string::npos; ++i) {
    std::this_thread::sleep_for(200ms);
    metrics = testing::http_get(daemon.metrics_port, "/metrics");
  }
  EXPECT_NE(metrics.find(meter_series), std::string::npos) << metrics;
  EXPECT_NE(metrics.find("jackpotd_rounds_total{phase=\"settled\"} 40"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("jackpotd_commit_batch_commands_count"), std::string::npos);

  daemon.stop(SIGTERM);
  daemon.start();
  EXPECT_EQ(daemon.meter_micros(1), meter);
  EXPECT_EQ(daemon.meter_micros(2), must_hit_by);
  const std::map<std::string, std::uint64_t> last = {{"T1", 41}};
  int replayed = 0;
  for (const Acknowledged& first : acknowledged) {  // Replays: the first answer, exactly.
    if (!replayable(first, last)) continue;
    expect_replay(*daemon.table_stub(first.table), first);
    ++replayed;
  }
  EXPECT_EQ(replayed, 5);
  expect_recorded(database, acknowledged);
  EXPECT_TRUE(send(*daemon.table_stub("T1"), open_next[2].first,
                   open_next[2].second));  // Settles round 41.
  daemon.stop(SIGTERM);
  unlink(floor.c_str());
}

// JACKPOTD_CRASH_KILLS sets how many times the daemon is killed (default 8; ops/crash-test runs
// the long version).
int kills_wanted() {
  const char* text = std::getenv("JACKPOTD_CRASH_KILLS");
  return text == nullptr ? 8 : std::max(1, std::atoi(text));
}

TEST(Durability, SigkillAtRandomMomentsLosesNothingAcknowledged) {
  const int kills_target = kills_wanted();
  TestDatabase database;
  const std::string floor = write_floor();
  Daemon daemon(database.dsn(), floor);
  // Four tables drive rounds concurrently, each retrying every request with the same ids until
  // it is answered, while this thread kills the daemon at random moments and restarts it. With
  // four, the batch in flight when the kill comes usually holds several tables' commands.
  std::mutex acknowledged_mutex;
  std::vector<Acknowledged> acknowledged;
  std::atomic<bool> done{false};     // Stop after the round in hand.
  std::atomic<bool> abandon{false};  // Stop now: the daemon no longer answers.
  std::atomic<int> rounds_played{0};
  constexpr std::size_t kTables = 4;
  std::array<std::atomic<std::size_t>, kTables> answers{};  // Per table.
  const auto drive = [&](std::size_t index, std::uint64_t seed) {
    const std::string id = "T" + std::to_string(index + 1);
    Table table(id, seed);
    while (!done) {
      for (const auto& [kind, request] : table.next_round()) {
        for (;;) {
          if (abandon) return;
          if (const auto answer = send(*daemon.table_stub(id), kind, request)) {
            std::lock_guard lock(acknowledged_mutex);
            acknowledged.push_back(acknowledged_of(kind, request, *answer));
            ++answers[index];
            break;
          }
          std::this_thread::sleep_for(5ms);
        }
      }
      ++rounds_played;
    }
  };
  const auto answered_now = [&] {
    std::array<std::size_t, kTables> now{};
    for (std::size_t t = 0; t < kTables; ++t) now[t] = answers[t];
    return now;
  };
  // Waits until some table (`every` false) or every table (`every` true) has had `count` more
  // commands answered than in `since`; false past a generous deadline (a daemon that no longer
  // answers, not a slow machine).
  const auto answered_after = [&](const std::array<std::size_t, kTables>& since, std::size_t count,
                                  bool every) {
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    for (;;) {
      std::size_t tables_done = 0;
      for (std::size_t t = 0; t < kTables; ++t) tables_done += answers[t] >= since[t] + count;
      if (tables_done >= (every ? kTables : 1)) return true;
      if (std::chrono::steady_clock::now() > deadline) return false;
      std::this_thread::sleep_for(1ms);
    }
  };
  std::vector<std::thread> tables;
  for (std::size_t t = 0; t < kTables; ++t) tables.emplace_back(drive, t, 7 + t);
  const auto stop_tables = [&](bool now) {
    (now ? abandon : done) = true;
    for (std::thread& table : tables) table.join();
  };
  // Most kills come at a random moment once the restarted daemon answers again, so they land
  // on a daemon with commands in flight however slow the machine is; one in four comes at once,
  // while the restarted daemon may still be answering the retries of the last crash's commands.
  std::mt19937_64 chance(2026);
  int kills = 0;
  for (; kills < kills_target; ++kills) {
    if (chance() % 4 != 0 && !answered_after(answered_now(), 1, false)) {
      ADD_FAILURE() << "no answer after restart " << kills << "\n" << daemon.stderr_text();
      stop_tables(true);
      return;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(chance() % 60));
    daemon.stop(SIGKILL);
    daemon.start();
  }
  // After the last restart every table goes on: two more rounds each.
  const int rounds_before = rounds_played;
  if (!answered_after(answered_now(), 2 * 3, true)) {
    ADD_FAILURE() << "a table stopped after the last restart\n" << daemon.stderr_text();
    stop_tables(true);
    return;
  }
  stop_tables(false);
  std::printf("killed jackpotd %d times during %d rounds; %zu commands acknowledged\n", kills,
              rounds_played.load(), acknowledged.size());
  EXPECT_GT(rounds_played.load(), rounds_before);
  daemon.stop(SIGKILL);
  daemon.start();
  // Every acknowledged request is there exactly once; the recent ones replay their answer.
  std::map<std::string, std::uint64_t> last;
  for (const Acknowledged& first : acknowledged) {
    last[first.table] = std::max(last[first.table], first.round);
  }
  for (const Acknowledged& first : acknowledged) {
    if (!replayable(first, last)) continue;
    expect_replay(*daemon.table_stub(first.table), first);
  }
  expect_recorded(database, acknowledged);
  // The ledger sums to zero, meters equal the sum of their transfers, no payout paid twice.
  auto connection = database.connect();
  pqxx::read_transaction tx(*connection);
  EXPECT_EQ(tx.exec1("SELECT coalesce(sum(balance_micros), 0) FROM account_balances")[0]
                .as<std::int64_t>(),
            0);
  for (std::uint32_t level = 1; level <= 2; ++level) {
    EXPECT_EQ(tx.exec_params1("SELECT balance_micros FROM account_balances WHERE account_kind = "
                              "'meter' AND level = $1",
                              static_cast<std::int64_t>(level))[0]
                  .as<std::int64_t>(),
              daemon.meter_micros(level));
  }
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM (SELECT payout_id FROM payout_events WHERE state = "
                     "'paid' GROUP BY payout_id HAVING count(*) > 1) twice")[0]
                .as<int>(),
            0);
  daemon.stop(SIGTERM);
  unlink(floor.c_str());
}

}  // namespace
}  // namespace jackpot
