// jackpotd restarted with an edited floor (docs/architecture.md §7b): an edit that kept state
// cannot go on under refuses the start, naming the table, round, link or level and why; an edit
// that may change carries every kept state over.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <regex>

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

// One link: a Royal Flush level and a hidden-trigger Must-Hit-By level that no paytable row
// names (so that its amount may be edited); one six-seat table.
struct Floor {
  std::string royal_seed = "1000.00";
  std::string must_hit_by = "150.00";
  int seats = 6;
  std::string paytable = "PT-BJS-HUH-5CP-01";

  std::string text() const {
    return R"(
links {
  id: "edit-link"
  approval_threshold: "100.00"
  max_wager_units: 10
  levels { level: 1 name: "Royal Flush" seed: ")" +
           royal_seed + R"(" meter_rate_ppm: 150000 reserve_rate_ppm: 25000 }
  levels { level: 2 name: "Must-Hit-By" seed: "50.00" meter_rate_ppm: 100000 must_hit_by: ")" +
           must_hit_by + R"(" trigger: TRIGGER_HIDDEN_UNIFORM }
}
tables { id: "T1" game: TABLE_GAME_HEADS_UP_HOLDEM seats: )" +
           std::to_string(seats) + R"( links { link_id: "edit-link" paytable_id: ")" + paytable +
           R"(" } }
)";
  }
};

std::string write_floor(const Floor& floor) {
  char name[] = "/tmp/jackpotd-floor-change.XXXXXX";
  close(mkstemp(name));
  std::ofstream(name) << floor.text();
  return name;
}

std::vector<std::string> args(const std::string& dsn, const std::string& floor_file) {
  return {"--db", dsn, "--listen", "127.0.0.1:0", "--metrics", "off", "--floor", floor_file};
}

// A daemon that started and serves, with its clients.
struct Serving {
  explicit Serving(const std::string& dsn, const Floor& floor)
      : process(args(dsn, write_floor(floor))) {
    const auto line = process.read_stdout_line(30s);
    if (!line) {
      ADD_FAILURE() << "the daemon did not start: " << process.stderr_text();
      return;
    }
    std::smatch match;
    if (!std::regex_search(*line, match, std::regex("serving gRPC on (\\S+),"))) {
      ADD_FAILURE() << "unexpected serving line: " << *line;
      return;
    }
    table = pb::TableService::NewStub(channel_as(match[1], "table/T1"));
    admin = pb::AdminService::NewStub(channel_as(match[1], "admin/e2e"));
  }
  void stop() {
    process.send_signal(SIGTERM);
    EXPECT_EQ(process.wait_for_exit(20s), 0) << process.stderr_text();
  }
  pb::LevelBalance level(std::uint32_t number) {
    grpc::ClientContext context;
    pb::ListMetersResponse response;
    EXPECT_TRUE(admin->ListMeters(&context, {}, &response).ok());
    return response.levels(static_cast<int>(number - 1));
  }

  DaemonProcess process;
  std::unique_ptr<pb::TableService::Stub> table;
  std::unique_ptr<pb::AdminService::Stub> admin;
};

// Starts the daemon on a floor it must refuse; the reason it gives.
std::string refused_start(const std::string& dsn, const Floor& floor) {
  DaemonProcess daemon(args(dsn, write_floor(floor)));
  const auto code = daemon.wait_for_exit(30s);
  EXPECT_EQ(code, 1) << daemon.stderr_text();
  return daemon.stderr_text();
}

TEST(FloorChange, ARestartRefusesEditsKeptStateCannotFollowAndCarriesOverTheRest) {
  TestDatabase database;
  const Floor original;
  {
    // Round 1 at T1 is LOCKED with a wager at seat 6.
    Serving daemon(database.dsn(), original);
    ASSERT_TRUE(daemon.table);
    grpc::ClientContext open_context;
    pb::OpenRoundRequest open;
    open.set_table_id("T1");
    open.set_round_id(1);
    pb::OpenRoundResponse opened;
    ASSERT_TRUE(daemon.table->OpenRound(&open_context, open, &opened).ok());
    grpc::ClientContext lock_context;
    pb::LockWagersRequest lock;
    lock.set_table_id("T1");
    lock.set_round_id(1);
    auto* wager = lock.add_wagers();
    wager->set_seat(6);
    wager->set_link_id("edit-link");
    wager->set_amount_cents(100);
    pb::LockWagersResponse locked;
    ASSERT_TRUE(daemon.table->LockWagers(&lock_context, lock, &locked).ok());
    daemon.stop();
  }

  // Four seats: the locked wager at seat 6 could never be settled (it was a SIGSEGV at
  // SettleRound, on every retry).
  Floor four_seats = original;
  four_seats.seats = 4;
  const std::string seats_reason = refused_start(database.dsn(), four_seats);
  EXPECT_NE(seats_reason.find("round 1 at table T1 is LOCKED with a wager at seat 6 on link "
                              "'edit-link', but the floor gives the table 4 seats"),
            std::string::npos)
      << seats_reason;
  EXPECT_NE(seats_reason.find("not starting"), std::string::npos) << seats_reason;

  // A lowered Must-Hit-By amount: the committed hidden point was drawn up to $150 and may lie
  // above $100 (it was kept, and the level paid more than its amount).
  Floor lowered = original;
  lowered.must_hit_by = "100.00";
  const std::string amount_reason = refused_start(database.dsn(), lowered);
  EXPECT_NE(amount_reason.find("link 'edit-link' level 2 (Must-Hit-By): its hidden trigger was "
                               "committed for a Must-Hit-By amount of 150.00, above the amount "
                               "100.00 the floor now gives it"),
            std::string::npos)
      << amount_reason;

  // Another paytable: seat 6 wagered under 5CP-01's pays (the journal records no round's
  // paytable; the floor of the last start names it).
  Floor swapped = original;
  swapped.paytable = "PT-BJS-HUH-5CP-02";
  const std::string paytable_reason = refused_start(database.dsn(), swapped);
  EXPECT_NE(paytable_reason.find("round 1 of table 'T1' is LOCKED under paytable "
                                 "PT-BJS-HUH-5CP-01 on link 'edit-link', but the floor now gives "
                                 "the table paytable PT-BJS-HUH-5CP-02 there"),
            std::string::npos)
      << paytable_reason;

  // A new Royal Flush seed may change: the meter carries over and the seed takes effect at the
  // next reset, here the locked round's Royal Flush at seat 6.
  Floor reseeded = original;
  reseeded.royal_seed = "2000.00";
  Serving daemon(database.dsn(), reseeded);
  ASSERT_TRUE(daemon.table);
  const pb::LevelBalance before = daemon.level(1);
  EXPECT_EQ(before.meter_micros(), 1'000'150'000);  // $1,000 + 15% of the $1 wager.
  EXPECT_EQ(before.reserve_micros(), 25'000);
  grpc::ClientContext settle_context;
  pb::SettleRoundRequest settle;
  settle.set_table_id("T1");
  settle.set_round_id(1);
  auto* hand = settle.add_seats();
  hand->set_seat(6);
  hand->set_keyed_hand("FLOPPED_ROYAL_FLUSH_SUIT_SPECIFIC");  // 100% of level 1 on 5CP-01.
  pb::SettleRoundResponse settled;
  const grpc::Status status = daemon.table->SettleRound(&settle_context, settle, &settled);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(settled.results_size(), 1);
  // (A Must-Hit-By hit at the lock, about one chance in a thousand, would be the seat's other
  // award.)
  std::int64_t royal_cents = 0;
  for (const pb::Award& award : settled.results(0).awards()) {
    if (award.level() == 1) royal_cents += award.amount_cents();
  }
  EXPECT_EQ(royal_cents, 100'015);
  const pb::LevelBalance after = daemon.level(1);
  EXPECT_EQ(after.meter_micros(), 2'000'025'000);  // The new seed and the released reserve.
  EXPECT_EQ(after.reserve_micros(), 0);
  daemon.stop();
}

}  // namespace
}  // namespace jackpot
