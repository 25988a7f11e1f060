// The real jackpotd over real gRPC does what proto/jackpot/v1/table.proto says (issue #14): a
// keyed hand is the paytable row as printed; an award says whether its payout was paid at once;
// a replay spelt otherwise is a replay; link cards at a table that draws none and a blank void
// reason are refused.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <map>
#include <regex>

#include "jackpot/v1/table.grpc.pb.h"
#include "tests/support/daemon_process.h"
#include "tests/support/test_database.h"
#include "tests/support/test_pki.h"

namespace jackpot {
namespace {

using namespace std::chrono_literals;
using testing::DaemonProcess;
using testing::TestDatabase;
namespace pb = ::jackpot::v1;

// PT-BJS-HUH-5CP-01 pays Full House 10.00 and Four-of-a-Kind 50.00 for 1 from the tray; payouts
// from 20.00 up wait for a supervisor.
constexpr const char* kFloor =
    R"(
links {
  id: "sem-link"
  base_wager: "1.00"
  approval_threshold: "20.00"
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
  links { link_id: "sem-link" paytable_id: "PT-BJS-HUH-5CP-01" }
}
)"
    // Two Must-Hit-By $250 links whose meter resets to $248.50 and takes 40 cents of each $1 wager:
    // with both seats of T2 wagering, the second lock after a reset crosses $250, so each link hits
    // within two rounds. The first pays its hits at once (threshold $500), the second waits.
    R"(
links {
  id: "mhb-paid"
  base_wager: "1.00"
  max_wager_units: 1
  approval_threshold: "500.00"
  levels { level: 1 name: "Royal Flush" seed: "1000.00" meter_rate_ppm: 10000 }
  levels { level: 2 name: "Must-Hit-By $250" seed: "248.50" meter_rate_ppm: 400000 must_hit_by: "250.00" trigger: TRIGGER_HIDDEN_UNIFORM }
}
links {
  id: "mhb-waits"
  base_wager: "1.00"
  max_wager_units: 1
  approval_threshold: "20.00"
  levels { level: 1 name: "Royal Flush" seed: "1000.00" meter_rate_ppm: 10000 }
  levels { level: 2 name: "Must-Hit-By $250" seed: "248.50" meter_rate_ppm: 400000 must_hit_by: "250.00" trigger: TRIGGER_HIDDEN_UNIFORM }
}
tables {
  id: "T2"
  game: TABLE_GAME_HEADS_UP_HOLDEM
  seats: 2
  links { link_id: "mhb-paid" paytable_id: "PT-BJS-HUH-5CP-12" }
  links { link_id: "mhb-waits" paytable_id: "PT-BJS-HUH-5CP-12" }
}
)";

class ApiSemanticsEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/jackpotd-floor.XXXXXX";
    close(mkstemp(name));
    floor_ = name;
    std::ofstream(floor_) << kFloor;
    daemon_ = std::make_unique<DaemonProcess>(std::vector<std::string>{
        "--db", database_.dsn(), "--listen", "127.0.0.1:0", "--metrics", "off", "--floor", floor_});
    const auto line = daemon_->read_stdout_line(30s);
    ASSERT_TRUE(line) << daemon_->stderr_text();
    std::smatch match;
    ASSERT_TRUE(std::regex_search(*line, match, std::regex("serving gRPC on (\\S+),"))) << *line;
    tables_ = std::make_unique<testing::StubsByPrincipal<pb::TableService>>(match[1]);
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

  // Opens `round` at T1 and locks $1 for each of `seats`.
  void open_and_lock(std::uint64_t round, const std::vector<std::uint32_t>& seats) {
    pb::OpenRoundRequest open;
    open.set_table_id("T1");
    open.set_round_id(round);
    pb::OpenRoundResponse opened;
    ASSERT_TRUE(call(&pb::TableService::Stub::OpenRound, open, &opened).ok());
    pb::LockWagersRequest lock;
    lock.set_table_id("T1");
    lock.set_round_id(round);
    for (const std::uint32_t seat : seats) {
      auto* wager = lock.add_wagers();
      wager->set_seat(seat);
      wager->set_link_id("sem-link");
      wager->set_amount_cents(100);
    }
    pb::LockWagersResponse locked;
    ASSERT_TRUE(call(&pb::TableService::Stub::LockWagers, lock, &locked).ok());
  }

  static pb::SettleRoundRequest keyed_settle(
      std::uint64_t round, const std::vector<std::pair<std::uint32_t, std::string>>& seats) {
    pb::SettleRoundRequest settle;
    settle.set_table_id("T1");
    settle.set_round_id(round);
    for (const auto& [seat, keyed] : seats) {
      auto* hand = settle.add_seats();
      hand->set_seat(seat);
      hand->set_keyed_hand(keyed);
    }
    return settle;
  }

  static const pb::SeatResult* result_of(const pb::SettleRoundResponse& response,
                                         std::uint32_t seat) {
    for (const pb::SeatResult& result : response.results()) {
      if (result.seat() == seat) return &result;
    }
    return nullptr;
  }

  TestDatabase database_;
  std::string floor_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<testing::StubsByPrincipal<pb::TableService>> tables_;  // Each as itself.
};

// The proto documents keyed_hand as the paytable row, e.g. "Full House": a table that keys the
// rows as printed (in any case, with or without spaces and hyphens) is paid those rows.
TEST_F(ApiSemanticsEndToEnd, AKeyedHandIsThePaytableRowAsPrinted) {
  open_and_lock(1, {1, 2, 3});
  pb::SettleRoundResponse refused;
  const auto unknown =
      call(&pb::TableService::Stub::SettleRound,
           keyed_settle(1, {{1, "Full House"}, {2, "Fulll House"}, {3, "Flush"}}), &refused);
  EXPECT_EQ(unknown.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_NE(unknown.error_message().find("'Fulll House' is no row of the table's paytables"),
            std::string::npos)
      << unknown.error_message();

  pb::SettleRoundResponse settled;
  const auto status =
      call(&pb::TableService::Stub::SettleRound,
           keyed_settle(1, {{1, "Full House"}, {2, "four of a kind"}, {3, "FLUSH"}}), &settled);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const pb::SeatResult* full_house = result_of(settled, 1);
  ASSERT_NE(full_house, nullptr);
  EXPECT_EQ(full_house->hand(), "Full House");
  EXPECT_TRUE(full_house->dealer_keyed());
  ASSERT_EQ(full_house->awards_size(), 1);
  EXPECT_EQ(full_house->awards(0).amount_cents(), 1000);
  const pb::SeatResult* four = result_of(settled, 2);
  ASSERT_NE(four, nullptr);
  EXPECT_EQ(four->hand(), "Four-of-a-Kind");
  EXPECT_EQ(four->total_cents(), 5000);
  const pb::SeatResult* flush = result_of(settled, 3);
  ASSERT_NE(flush, nullptr);
  EXPECT_EQ(flush->hand(), "Flush");
}

TEST_F(ApiSemanticsEndToEnd, AnAwardSaysWhetherItWasPaidAtOnceOrWaitsForASupervisor) {
  open_and_lock(1, {1, 2});
  pb::SettleRoundResponse settled;
  const auto status = call(&pb::TableService::Stub::SettleRound,
                           keyed_settle(1, {{1, "Full House"}, {2, "Four-of-a-Kind"}}), &settled);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const pb::SeatResult* tray = result_of(settled, 1);
  ASSERT_TRUE(tray != nullptr && tray->awards_size() == 1);
  EXPECT_EQ(tray->awards(0).amount_cents(), 1000);  // Below the $20 threshold: paid now.
  EXPECT_EQ(tray->awards(0).payout_state(), pb::PAYOUT_STATE_PAID);
  EXPECT_NE(tray->awards(0).payout_id(), 0U);
  const pb::SeatResult* waits = result_of(settled, 2);
  ASSERT_TRUE(waits != nullptr && waits->awards_size() == 1);
  EXPECT_EQ(waits->awards(0).amount_cents(), 5000);
  EXPECT_EQ(waits->awards(0).payout_state(), pb::PAYOUT_STATE_PENDING);
  EXPECT_NE(waits->awards(0).payout_id(), 0U);
  EXPECT_NE(waits->awards(0).payout_id(), tray->awards(0).payout_id());
}

// A Must-Hit-By hit is a payout from its lock on: the lock's answer says whether it was paid at
// once or waits, as the settlement's MUST_HIT_BY award does, and a replay says the same.
TEST_F(ApiSemanticsEndToEnd, AMustHitByHitSaysWhetherItWasPaidAtOnceOrWaits) {
  std::map<std::string, int> hits;  // By link.
  for (std::uint64_t round = 1; round <= 2; ++round) {
    pb::OpenRoundRequest open;
    open.set_table_id("T2");
    open.set_round_id(round);
    pb::OpenRoundResponse opened;
    ASSERT_TRUE(call(&pb::TableService::Stub::OpenRound, open, &opened).ok());
    pb::LockWagersRequest lock;
    lock.set_table_id("T2");
    lock.set_round_id(round);
    for (const char* link : {"mhb-paid", "mhb-waits"}) {
      for (std::uint32_t seat : {1U, 2U}) {
        auto* wager = lock.add_wagers();
        wager->set_seat(seat);
        wager->set_link_id(link);
        wager->set_amount_cents(100);
      }
    }
    pb::LockWagersResponse locked;
    const auto status = call(&pb::TableService::Stub::LockWagers, lock, &locked);
    ASSERT_TRUE(status.ok()) << status.error_message();
    std::map<std::pair<std::string, std::uint32_t>, pb::PayoutState> at_lock;  // (link, seat).
    for (const pb::MustHitByHit& hit : locked.must_hit_by_hits()) {
      ++hits[hit.link_id()];
      EXPECT_EQ(hit.payout_state(),
                hit.link_id() == "mhb-paid" ? pb::PAYOUT_STATE_PAID : pb::PAYOUT_STATE_PENDING)
          << hit.link_id() << " " << hit.amount_cents();
      EXPECT_GT(hit.amount_cents(), 24850);
      EXPECT_LE(hit.amount_cents(), 25000);
      at_lock[{hit.link_id(), hit.seat()}] = hit.payout_state();
    }
    pb::LockWagersResponse replayed;
    ASSERT_TRUE(call(&pb::TableService::Stub::LockWagers, lock, &replayed).ok());
    EXPECT_EQ(replayed.SerializeAsString(), locked.SerializeAsString());

    pb::SettleRoundRequest settle;
    settle.set_table_id("T2");
    settle.set_round_id(round);
    // Hands that pay nothing: the round's only awards are its hits.
    for (const auto& [seat, cards] :
         std::vector<std::pair<std::uint32_t, std::vector<const char*>>>{{1, {"2c", "7d"}},
                                                                         {2, {"2d", "8h"}}}) {
      auto* hand = settle.add_seats();
      hand->set_seat(seat);
      for (const char* card : cards) hand->mutable_cards()->add_cards(card);
    }
    for (const char* card : {"3h", "9s", "Jd", "4c", "Kh"}) settle.add_community_cards(card);
    pb::SettleRoundResponse settled;
    const auto settled_status = call(&pb::TableService::Stub::SettleRound, settle, &settled);
    ASSERT_TRUE(settled_status.ok()) << settled_status.error_message();
    std::size_t must_hit_by_awards = 0;
    for (const pb::SeatResult& result : settled.results()) {
      for (const pb::Award& award : result.awards()) {
        if (award.kind() != pb::AWARD_KIND_MUST_HIT_BY) continue;
        ++must_hit_by_awards;
        const auto found = at_lock.find({award.link_id(), result.seat()});
        ASSERT_NE(found, at_lock.end()) << award.link_id() << " seat " << result.seat();
        EXPECT_EQ(award.payout_state(), found->second);
      }
    }
    EXPECT_EQ(must_hit_by_awards, at_lock.size());
  }
  EXPECT_GE(hits["mhb-paid"], 1);  // Certain within two rounds.
  EXPECT_GE(hits["mhb-waits"], 1);
}

TEST_F(ApiSemanticsEndToEnd, ARequestSpeltOtherwiseIsAReplayAndAnotherOneIsRefused) {
  pb::OpenRoundRequest open;
  open.set_table_id("T1");
  open.set_round_id(1);
  pb::OpenRoundResponse opened;
  ASSERT_TRUE(call(&pb::TableService::Stub::OpenRound, open, &opened).ok());
  const auto lock_of = [](std::vector<std::uint32_t> seats) {
    pb::LockWagersRequest lock;
    lock.set_table_id("T1");
    lock.set_round_id(1);
    for (const std::uint32_t seat : seats) {
      auto* wager = lock.add_wagers();
      wager->set_seat(seat);
      wager->set_link_id("sem-link");
      wager->set_amount_cents(100);
    }
    return lock;
  };
  pb::LockWagersResponse locked;
  ASSERT_TRUE(call(&pb::TableService::Stub::LockWagers, lock_of({1, 2}), &locked).ok());
  pb::LockWagersResponse replayed_lock;
  const auto lock_replay =
      call(&pb::TableService::Stub::LockWagers, lock_of({2, 1}), &replayed_lock);
  ASSERT_TRUE(lock_replay.ok()) << lock_replay.error_message();
  EXPECT_EQ(replayed_lock.SerializeAsString(), locked.SerializeAsString());

  const auto settle_of = [](std::vector<std::string> seat1, std::vector<std::string> seat2,
                            std::vector<std::string> board) {
    pb::SettleRoundRequest settle;
    settle.set_table_id("T1");
    settle.set_round_id(1);
    for (const auto& [seat, cards] : {std::pair{1U, seat1}, std::pair{2U, seat2}}) {
      auto* hand = settle.add_seats();
      hand->set_seat(seat);
      for (const std::string& card : cards) hand->mutable_cards()->add_cards(card);
    }
    for (const std::string& card : board) settle.add_community_cards(card);
    return settle;
  };
  pb::SettleRoundResponse settled;
  ASSERT_TRUE(call(&pb::TableService::Stub::SettleRound,
                   settle_of({"Ts", "Th"}, {"2c", "7d"}, {"Td", "5s", "5h", "9c", "Kd"}), &settled)
                  .ok());
  pb::SettleRoundResponse replayed;
  const auto replay =
      call(&pb::TableService::Stub::SettleRound,
           settle_of({"10h", "ts"}, {"7D", "2c"}, {"10d", "5S", "5h", "9c", "kd"}), &replayed);
  ASSERT_TRUE(replay.ok()) << replay.error_message();
  EXPECT_EQ(replayed.SerializeAsString(), settled.SerializeAsString());
  const auto other =
      call(&pb::TableService::Stub::SettleRound,
           settle_of({"Ts", "Th"}, {"2c", "8d"}, {"Td", "5s", "5h", "9c", "Kd"}), &replayed);
  EXPECT_EQ(other.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(other.error_message().find("already settled with other hands"), std::string::npos)
      << other.error_message();
}

TEST_F(ApiSemanticsEndToEnd, LinkCardsWhereNoneAreDrawnAndABlankVoidReasonAreRefused) {
  open_and_lock(1, {1});
  pb::SettleRoundRequest settle = keyed_settle(1, {{1, "Flush"}});
  for (const char* card : {"9d", "9h", "9c"}) settle.add_link_cards(card);
  pb::SettleRoundResponse settled;
  const auto refused = call(&pb::TableService::Stub::SettleRound, settle, &settled);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(refused.error_message(),
            "link_cards_unexpected: link cards sent to table T1, whose links draw none");

  pb::VoidRoundRequest void_round;
  void_round.set_table_id("T1");
  void_round.set_round_id(1);
  pb::VoidRoundResponse voided;
  for (const char* blank : {"", "   ", "\t\n"}) {
    void_round.set_reason(blank);
    const auto status = call(&pb::TableService::Stub::VoidRound, void_round, &voided);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << "'" << blank << "'";
  }
  void_round.set_reason("misdeal");
  ASSERT_TRUE(call(&pb::TableService::Stub::VoidRound, void_round, &voided).ok());
  EXPECT_GT(voided.reversed_micros(), 0);
  pb::VoidRoundResponse again;
  ASSERT_TRUE(call(&pb::TableService::Stub::VoidRound, void_round, &again).ok());
  EXPECT_EQ(again.SerializeAsString(), voided.SerializeAsString());
}

}  // namespace
}  // namespace jackpot
