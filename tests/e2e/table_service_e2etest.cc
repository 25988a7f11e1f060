// The real jackpotd over real gRPC: a few hundred rounds on two tables sharing one link, with
// the meter checked after every round against an independent computation; replays, bad input
// and an operator closing the link.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <fstream>
#include <map>
#include <pqxx/pqxx>
#include <random>
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
__extension__ typedef __int128 i128;

constexpr const char* kFloor = R"(
links {
  id: "e2e-link"
  base_wager: "1.00"
  levels {
    level: 1
    name: "Royal Flush"
    seed: "1000.00"
    meter_rate_ppm: 150000
    reserve_rate_ppm: 25000
  }
}
tables {
  id: "T1"
  game: TABLE_GAME_HEADS_UP_HOLDEM
  seats: 6
  links { link_id: "e2e-link" paytable_id: "PT-BJS-HUH-5CP-01" }
}
tables {
  id: "T2"
  game: TABLE_GAME_HEADS_UP_HOLDEM
  seats: 6
  links { link_id: "e2e-link" paytable_id: "PT-BJS-HUH-5CP-01" }
}
)";

// The link's level 1, computed independently of the daemon: micros, exactly.
struct MeterModel {
  i128 meter = 1'000'000'000;  // The seed.
  i128 reserve = 0;

  void contribute(std::int64_t units) {
    meter += i128{units} * 150'000;
    reserve += i128{units} * 25'000;
  }
  void reverse(std::int64_t units) {
    meter -= i128{units} * 150'000;
    reserve -= i128{units} * 25'000;
  }
  // PT-BJS-HUH-5CP-01 pays these rows from level 1; everything else from the tray.
  std::int64_t award(const std::string& hand) {
    static const std::map<std::string, int> percent = {{"Flopped Royal Flush (Suit Specific)", 100},
                                                       {"Flopped Royal Flush", 10},
                                                       {"Royal Flush", 10},
                                                       {"Community Royal Flush", 10}};
    const auto it = percent.find(hand);
    if (it == percent.end()) return 0;
    const i128 amount = meter * it->second / 100 / 10'000 * 10'000;  // Floored to the cent.
    meter -= amount;
    if (it->second == 100) {
      meter += 1'000'000'000 + reserve;
      reserve = 0;
    }
    return static_cast<std::int64_t>(amount);
  }
};

std::string write_floor() {
  char name[] = "/tmp/jackpotd-floor.XXXXXX";
  const int fd = mkstemp(name);
  close(fd);
  std::ofstream(name) << kFloor;
  return name;
}

class TableServiceEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    floor_ = write_floor();
    daemon_ = std::make_unique<DaemonProcess>(std::vector<std::string>{
        "--db", database_.dsn(), "--listen", "127.0.0.1:0", "--metrics", "off", "--floor", floor_});
    const auto line = daemon_->read_stdout_line(30s);
    ASSERT_TRUE(line) << daemon_->stderr_text();
    std::smatch match;
    ASSERT_TRUE(std::regex_search(*line, match, std::regex("serving gRPC on (\\S+),"))) << *line;
    address_ = match[1];
    tables_ = std::make_unique<testing::StubsByPrincipal<pb::TableService>>(address_);
    admin_ = pb::AdminService::NewStub(channel_as(address_, "admin/e2e"));
  }
  void TearDown() override {
    daemon_->send_signal(SIGTERM);
    EXPECT_EQ(daemon_->wait_for_exit(20s), 0) << daemon_->stderr_text();
    unlink(floor_.c_str());
  }

  template <typename Request, typename Response, typename Call>
  grpc::Status call(Call method, const Request& request, Response* response) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    return ((tables_->for_table(request.table_id())).*method)(&context, request, response);
  }

  // Runs jackpotctl against the daemon: its exit code and what it printed.
  std::pair<int, std::string> admin(const std::string& command) {
    FILE* pipe = popen((std::string(JACKPOTCTL_BINARY) + " " +
                        testing::admin_tool_flags(address_, "admin/e2e") + " " + command)
                           .c_str(),
                       "r");
    if (pipe == nullptr) return {-1, ""};
    std::string printed;
    char chunk[512];
    while (std::fgets(chunk, sizeof chunk, pipe) != nullptr) printed += chunk;
    const int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, printed};
  }

  std::int64_t meter_micros() {
    grpc::ClientContext context;
    pb::ListMetersResponse response;
    EXPECT_TRUE(admin_->ListMeters(&context, {}, &response).ok());
    return response.levels(0).meter_micros();
  }

  TestDatabase database_;
  std::string address_;
  std::string floor_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<testing::StubsByPrincipal<pb::TableService>> tables_;  // Each as itself.
  std::unique_ptr<pb::AdminService::Stub> admin_;
};

std::vector<std::string> deck(std::mt19937_64& shuffle) {
  std::vector<std::string> cards;
  for (const char rank : std::string("23456789TJQKA")) {
    for (const char suit : std::string("shdc")) cards.push_back({rank, suit});
  }
  std::shuffle(cards.begin(), cards.end(), shuffle);
  return cards;
}

TEST_F(TableServiceEndToEnd, HundredsOfRoundsKeepTheMeterExact) {
  std::mt19937_64 shuffle(20261129);
  MeterModel model;
  std::map<std::string, std::uint64_t> next_round = {{"T1", 1}, {"T2", 1}};
  int settled = 0;
  int voided = 0;
  int percent_awards = 0;
  std::int64_t net_units = 0;
  for (int n = 0; n < 300; ++n) {
    const std::string table = n % 2 == 0 ? "T1" : "T2";
    const std::uint64_t round = next_round[table]++;
    SCOPED_TRACE(table + " round " + std::to_string(round));
    pb::OpenRoundRequest open;
    open.set_table_id(table);
    open.set_round_id(round);
    pb::OpenRoundResponse opened;
    ASSERT_TRUE(call(&pb::TableService::Stub::OpenRound, open, &opened).ok());

    pb::LockWagersRequest lock;
    lock.set_table_id(table);
    lock.set_round_id(round);
    std::vector<std::uint32_t> seats;
    std::int64_t units = 0;
    for (std::uint32_t seat = 1; seat <= 6; ++seat) {
      if (shuffle() % 3 == 0) continue;
      const auto wager_units = static_cast<std::int64_t>(1 + shuffle() % 5);
      auto* wager = lock.add_wagers();
      wager->set_seat(seat);
      wager->set_link_id("e2e-link");
      wager->set_amount_cents(wager_units * 100);
      seats.push_back(seat);
      units += wager_units;
    }
    pb::LockWagersResponse locked;
    ASSERT_TRUE(call(&pb::TableService::Stub::LockWagers, lock, &locked).ok());
    model.contribute(units);
    net_units += units;
    // A replay answers byte for byte and changes nothing.
    pb::LockWagersResponse replayed;
    ASSERT_TRUE(call(&pb::TableService::Stub::LockWagers, lock, &replayed).ok());
    EXPECT_EQ(replayed.SerializeAsString(), locked.SerializeAsString());

    if (n % 10 == 7) {
      pb::VoidRoundRequest void_request;
      void_request.set_table_id(table);
      void_request.set_round_id(round);
      void_request.set_reason("misdeal");
      pb::VoidRoundResponse void_response;
      ASSERT_TRUE(call(&pb::TableService::Stub::VoidRound, void_request, &void_response).ok());
      model.reverse(units);
      net_units -= units;
      EXPECT_EQ(void_response.reversed_micros(), units * 175'000);
      ++voided;
    } else {
      pb::SettleRoundRequest settle;
      settle.set_table_id(table);
      settle.set_round_id(round);
      const auto cards = deck(shuffle);
      const bool keyed_jackpot = n % 50 == 11;
      for (std::size_t i = 0; i < seats.size(); ++i) {
        auto* hand = settle.add_seats();
        hand->set_seat(seats[i]);
        if (keyed_jackpot) {
          // Seat order decides: the highest seat's 10% comes off the full meter first.
          hand->set_keyed_hand(i == 0 ? "FLOPPED_ROYAL_FLUSH_SUIT_SPECIFIC" : "ROYAL_FLUSH");
        } else {
          hand->mutable_cards()->add_cards(cards[2 * i]);
          hand->mutable_cards()->add_cards(cards[2 * i + 1]);
        }
      }
      if (!keyed_jackpot) {
        for (std::size_t i = 0; i < 5; ++i) settle.add_community_cards(cards[20 + i]);
      }
      pb::SettleRoundResponse result;
      const auto status = call(&pb::TableService::Stub::SettleRound, settle, &result);
      ASSERT_TRUE(status.ok()) << status.error_message();
      ASSERT_EQ(result.results_size(), static_cast<int>(seats.size()));
      for (const auto& seat : result.results()) {  // Highest seat first.
        const std::int64_t expected = model.award(seat.hand());
        std::int64_t from_meter = 0;
        for (const auto& award : seat.awards()) {
          if (award.kind() == pb::AWARD_KIND_PERCENT) from_meter += award.amount_cents() * 10'000;
        }
        EXPECT_EQ(from_meter, expected) << "seat " << seat.seat() << " " << seat.hand();
        if (expected > 0) ++percent_awards;
      }
      ++settled;
    }
    ASSERT_EQ(meter_micros(), static_cast<std::int64_t>(model.meter));
  }
  EXPECT_EQ(settled + voided, 300);
  EXPECT_GT(percent_awards, 10);

  // The auditor's reconciliation over the whole history balances and agrees with the model.
  grpc::ClientContext context;
  pb::ReconciliationReportRequest request;
  pb::ReconciliationReport report;
  ASSERT_TRUE(admin_->GetReconciliationReport(&context, request, &report).ok());
  ASSERT_EQ(report.levels_size(), 1);
  const auto& level = report.levels(0);
  EXPECT_TRUE(level.balanced());
  EXPECT_EQ(level.start_micros(), 0);
  EXPECT_EQ(level.contributions_micros(), net_units * 175'000);
  EXPECT_EQ(level.end_micros(), static_cast<std::int64_t>(model.meter + model.reserve));
  EXPECT_EQ(level.start_micros() + level.contributions_micros() + level.seeds_micros() +
                level.overflow_in_micros() + level.adjustments_micros() - level.awards_micros() -
                level.overflow_out_micros(),
            level.end_micros());

  // The operator's command line prints the same report and exits 0 when everything balances.
  FILE* pipe = popen((std::string(JACKPOTCTL_BINARY) + " " +
                      testing::admin_tool_flags(address_, "admin/e2e") + " report")
                         .c_str(),
                     "r");
  ASSERT_NE(pipe, nullptr);
  std::string printed;
  char chunk[512];
  while (std::fgets(chunk, sizeof chunk, pipe) != nullptr) printed += chunk;
  EXPECT_EQ(pclose(pipe), 0) << printed;
  EXPECT_NE(printed.find("e2e-link level 1: start 0.000000 + contributions "), std::string::npos)
      << printed;
  EXPECT_NE(printed.find("BALANCED"), std::string::npos) << printed;
  // Its end is a snapshot of the balances recorded for the report, through the last transfer.
  EXPECT_EQ(level.difference_micros(), 0);
  EXPECT_GT(level.end_through_transfer_id(), 0u);
  EXPECT_EQ(level.start_through_transfer_id(), 0u);

  // The full re-sum agrees with what recovery would read (the latest snapshot and after it).
  const auto [audit_exit, audit_printed] = admin("balances");
  EXPECT_EQ(audit_exit, 0) << audit_printed;
  EXPECT_NE(audit_printed.find("CONSISTENT"), std::string::npos) << audit_printed;
}

TEST_F(TableServiceEndToEnd, ATransferLostBehindTheDaemonsBackShowsInTheReportAndTheAudit) {
  for (std::uint64_t round = 1; round <= 3; ++round) {
    pb::OpenRoundRequest open;
    open.set_table_id("T1");
    open.set_round_id(round);
    pb::OpenRoundResponse opened;
    ASSERT_TRUE(call(&pb::TableService::Stub::OpenRound, open, &opened).ok());
    pb::LockWagersRequest lock;
    lock.set_table_id("T1");
    lock.set_round_id(round);
    auto* wager = lock.add_wagers();
    wager->set_seat(1);
    wager->set_link_id("e2e-link");
    wager->set_amount_cents(200);
    pb::LockWagersResponse locked;
    ASSERT_TRUE(call(&pb::TableService::Stub::LockWagers, lock, &locked).ok());
    // Seat 1 holds nothing: the round ends without an award.
    pb::SettleRoundRequest settle;
    settle.set_table_id("T1");
    settle.set_round_id(round);
    auto* hand = settle.add_seats();
    hand->set_seat(1);
    hand->mutable_cards()->add_cards("2c");
    hand->mutable_cards()->add_cards("7d");
    for (const char* card : {"3h", "9s", "Jd", "4c", "8h"}) settle.add_community_cards(card);
    pb::SettleRoundResponse settled;
    ASSERT_TRUE(call(&pb::TableService::Stub::SettleRound, settle, &settled).ok());
  }
  const auto [snapshot_exit, snapshot_printed] = admin("snapshot");
  ASSERT_EQ(snapshot_exit, 0) << snapshot_printed;
  EXPECT_NE(snapshot_printed.find("e2e-link: balances through transfer "), std::string::npos)
      << snapshot_printed;
  {
    const auto [exit, printed] = admin("report");
    EXPECT_EQ(exit, 0) << printed;
  }
  {
    // Round 2's meter contribution (2 units x 15%) disappears from the journal.
    auto db = database_.connect();
    pqxx::work tx(*db);
    tx.exec("ALTER TABLE transfers DISABLE TRIGGER transfers_append_only");
    tx.exec(
        "DELETE FROM transfers WHERE link_id = 'e2e-link' AND kind = 'contribution' AND "
        "credit_kind = 'meter' AND round_key = (SELECT round_key FROM rounds WHERE "
        "table_id = 'T1' AND round_id = 2)");
    tx.commit();
  }
  const auto [exit, printed] = admin("report");
  EXPECT_EQ(exit, 3) << printed;
  EXPECT_NE(printed.find("e2e-link level 1: "), std::string::npos) << printed;
  EXPECT_NE(printed.find("DOES NOT BALANCE by 0.300000"), std::string::npos) << printed;

  grpc::ClientContext context;
  pb::ReconciliationReport report;
  ASSERT_TRUE(admin_->GetReconciliationReport(&context, {}, &report).ok());
  ASSERT_EQ(report.levels_size(), 1);
  EXPECT_FALSE(report.levels(0).balanced());
  EXPECT_EQ(report.levels(0).difference_micros(), 300'000);

  const auto [audit_exit, audit_printed] = admin("balances");
  EXPECT_EQ(audit_exit, 3) << audit_printed;
  EXPECT_NE(audit_printed.find("INCONSISTENT"), std::string::npos) << audit_printed;
}

TEST_F(TableServiceEndToEnd, RefusesBadRequestsWithTheRightStatus) {
  pb::OpenRoundRequest open;
  open.set_table_id("T9");
  open.set_round_id(1);
  pb::OpenRoundResponse opened;
  EXPECT_EQ(call(&pb::TableService::Stub::OpenRound, open, &opened).error_code(),
            grpc::StatusCode::NOT_FOUND);
  open.set_table_id("T1");
  ASSERT_TRUE(call(&pb::TableService::Stub::OpenRound, open, &opened).ok());
  open.set_round_id(2);
  EXPECT_EQ(call(&pb::TableService::Stub::OpenRound, open, &opened).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);  // Round 1 is still open.

  pb::LockWagersRequest lock;
  lock.set_table_id("T1");
  lock.set_round_id(1);
  auto* wager = lock.add_wagers();
  wager->set_seat(7);
  wager->set_link_id("e2e-link");
  wager->set_amount_cents(100);
  pb::LockWagersResponse locked;
  EXPECT_EQ(call(&pb::TableService::Stub::LockWagers, lock, &locked).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  wager->set_seat(1);
  wager->set_amount_cents(150);  // Not a whole number of $1 wagers.
  EXPECT_EQ(call(&pb::TableService::Stub::LockWagers, lock, &locked).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  const std::int64_t before = meter_micros();
  wager->set_amount_cents(200);
  ASSERT_TRUE(call(&pb::TableService::Stub::LockWagers, lock, &locked).ok());
  EXPECT_EQ(meter_micros(), before + 300'000);

  pb::SettleRoundRequest settle;
  settle.set_table_id("T1");
  settle.set_round_id(1);
  auto* hand = settle.add_seats();
  hand->set_seat(1);
  hand->mutable_cards()->add_cards("As");
  hand->mutable_cards()->add_cards("As");
  for (const char* card : {"2c", "3c", "4d", "9h", "Jd"}) settle.add_community_cards(card);
  pb::SettleRoundResponse result;
  const auto duplicate = call(&pb::TableService::Stub::SettleRound, settle, &result);
  EXPECT_EQ(duplicate.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(duplicate.error_message(), "card_dealt_twice: cards of seat 1: As appears twice");
  EXPECT_EQ(meter_micros(), before + 300'000);
}

TEST_F(TableServiceEndToEnd, TablesHearWhenAnOperatorClosesTheLink) {
  grpc::ClientContext watch_context;
  pb::WatchLinkStatusRequest watch;
  watch.set_table_id("T2");
  auto stream = tables_->for_table(watch.table_id()).WatchLinkStatus(&watch_context, watch);
  pb::LinkStatusUpdate update;
  ASSERT_TRUE(stream->Read(&update));
  EXPECT_EQ(update.link_id(), "e2e-link");
  EXPECT_EQ(update.status(), pb::LINK_STATUS_OPEN);

  const auto set_status = [&](pb::LinkStatus status) {
    grpc::ClientContext context;
    pb::SetLinkStatusRequest request;
    request.set_link_id("e2e-link");
    request.set_status(status);
    request.set_reason("sign maintenance");
    pb::SetLinkStatusResponse response;
    return admin_->SetLinkStatus(&context, request, &response);
  };
  ASSERT_TRUE(set_status(pb::LINK_STATUS_CLOSED).ok());
  ASSERT_TRUE(stream->Read(&update));
  EXPECT_EQ(update.status(), pb::LINK_STATUS_CLOSED);

  pb::OpenRoundRequest open;
  open.set_table_id("T2");
  open.set_round_id(1);
  pb::OpenRoundResponse opened;
  EXPECT_EQ(call(&pb::TableService::Stub::OpenRound, open, &opened).error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);

  ASSERT_TRUE(set_status(pb::LINK_STATUS_OPEN).ok());
  ASSERT_TRUE(stream->Read(&update));
  EXPECT_EQ(update.status(), pb::LINK_STATUS_OPEN);
  EXPECT_TRUE(call(&pb::TableService::Stub::OpenRound, open, &opened).ok());
  watch_context.TryCancel();

  // Each change is on record with its reason and its caller (the principal its certificate
  // names), and so is the floor the daemon started with.
  auto db = database_.connect();
  pqxx::read_transaction tx(*db);
  const auto changes = tx.exec(
      "SELECT status, reason, changed_by FROM link_status_events WHERE link_id = 'e2e-link' "
      "ORDER BY seq");
  ASSERT_EQ(changes.size(), 2U);
  EXPECT_EQ(changes[0][0].as<std::string>(), "closed");
  EXPECT_EQ(changes[1][0].as<std::string>(), "open");
  EXPECT_EQ(changes[0][1].as<std::string>(), "sign maintenance");
  EXPECT_EQ(changes[0][2].as<std::string>(), "admin/e2e");
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM floor_versions")[0].as<int>(), 1);
  EXPECT_EQ(tx.exec1("SELECT detail->>'floor_version' FROM audit_log WHERE action = "
                     "'daemon.start'")[0]
                .as<std::string>(),
            tx.exec1("SELECT version::text FROM floor_versions")[0].as<std::string>());
}

}  // namespace
}  // namespace jackpot
