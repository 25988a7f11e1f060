// Round ids over real gRPC (controller/engine/round_counter.h, docs/limits.md "Rounds and round
// ids"): ids out of range, commands for rounds two or more behind, OpenRound repeats after the
// round moved on, and jumps that would use up a table's counter, across restarts.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdint>
#include <fstream>
#include <memory>
#include <pqxx/pqxx>
#include <regex>
#include <string>
#include <vector>

#include "jackpot/v1/supervisor.grpc.pb.h"
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

constexpr std::uint64_t kTopRoundId = 9'223'372'036'854'775'807ULL;  // 2^63 - 1

constexpr const char* kFloor = R"(
links {
  id: "rc-link"
  base_wager: "1.00"
  levels { level: 1 name: "Royal Flush" seed: "1000.00" meter_rate_ppm: 150000 reserve_rate_ppm: 25000 }
}
tables {
  id: "T1"
  game: TABLE_GAME_HEADS_UP_HOLDEM
  seats: 6
  links { link_id: "rc-link" paytable_id: "PT-BJS-HUH-5CP-01" }
}
)";

class RoundCounterEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/jackpotd-rc-floor.XXXXXX";
    close(mkstemp(name));
    std::ofstream(name) << kFloor;
    floor_ = name;
    start();
  }
  void TearDown() override {
    stop();
    unlink(floor_.c_str());
  }
  void start() {
    daemon_ = std::make_unique<DaemonProcess>(std::vector<std::string>{
        "--db", database_.dsn(), "--listen", "127.0.0.1:0", "--metrics", "off", "--floor", floor_});
    const auto line = daemon_->read_stdout_line(30s);
    ASSERT_TRUE(line) << daemon_->stderr_text();
    std::smatch match;
    ASSERT_TRUE(std::regex_search(*line, match, std::regex("serving gRPC on (\\S+),"))) << *line;
    address_ = match[1];
    table_ = pb::TableService::NewStub(channel_as(address_, "table/T1"));
    supervisor_ = pb::SupervisorService::NewStub(channel_as(address_, "supervisor/e2e"));
  }
  void stop() {
    if (!daemon_) return;
    daemon_->send_signal(SIGTERM);
    EXPECT_EQ(daemon_->wait_for_exit(20s), 0) << daemon_->stderr_text();
    daemon_.reset();
  }
  void restart() {
    stop();
    start();
  }

  grpc::Status open(std::uint64_t round, pb::OpenRoundResponse* response = nullptr) {
    pb::OpenRoundRequest request;
    request.set_table_id("T1");
    request.set_round_id(round);
    pb::OpenRoundResponse ignored;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    return table_->OpenRound(&context, request, response ? response : &ignored);
  }
  grpc::Status lock(std::uint64_t round) {
    pb::LockWagersRequest request;
    request.set_table_id("T1");
    request.set_round_id(round);
    auto* wager = request.add_wagers();
    wager->set_seat(1);
    wager->set_link_id("rc-link");
    wager->set_amount_cents(100);
    pb::LockWagersResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    return table_->LockWagers(&context, request, &response);
  }
  grpc::Status settle(std::uint64_t round) {
    pb::SettleRoundRequest request;
    request.set_table_id("T1");
    request.set_round_id(round);
    auto* seat = request.add_seats();
    seat->set_seat(1);
    seat->mutable_cards()->add_cards("2c");
    seat->mutable_cards()->add_cards("7d");
    for (const char* card : {"3s", "9h", "Jd", "4c", "Kh"}) request.add_community_cards(card);
    pb::SettleRoundResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    return table_->SettleRound(&context, request, &response);
  }
  grpc::Status void_round(std::uint64_t round) {
    pb::VoidRoundRequest request;
    request.set_table_id("T1");
    request.set_round_id(round);
    request.set_reason("misdeal");
    pb::VoidRoundResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    return table_->VoidRound(&context, request, &response);
  }
  grpc::Status rebase(const std::string& request_id, std::uint64_t next_round,
                      const std::string& reason,
                      pb::RebaseRoundCounterResponse* response = nullptr) {
    pb::RebaseRoundCounterRequest request;
    request.set_request_id(request_id);
    request.set_table_id("T1");
    request.set_next_round_id(next_round);
    request.set_reason(reason);
    pb::RebaseRoundCounterResponse ignored;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    return supervisor_->RebaseRoundCounter(&context, request, response ? response : &ignored);
  }
  // Runs jackpotctl against the daemon: its exit code and what it printed.
  std::pair<int, std::string> admin(const std::string& command) {
    FILE* pipe =
        popen((std::string(JACKPOTCTL_BINARY) + " " +
               testing::admin_tool_flags(address_, "supervisor/e2e") + " " + command + " 2>&1")
                  .c_str(),
              "r");
    if (pipe == nullptr) return {-1, ""};
    std::string printed;
    char chunk[512];
    while (std::fgets(chunk, sizeof chunk, pipe) != nullptr) printed += chunk;
    const int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, printed};
  }
  // Plays one whole round: open, lock a $1 wager, settle a losing hand.
  void play(std::uint64_t round) {
    ASSERT_TRUE(open(round).ok()) << round;
    ASSERT_TRUE(lock(round).ok()) << round;
    ASSERT_TRUE(settle(round).ok()) << round;
  }

  TestDatabase database_;
  std::string floor_;
  std::string address_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<pb::TableService::Stub> table_;
  std::unique_ptr<pb::SupervisorService::Stub> supervisor_;
};

TEST_F(RoundCounterEndToEnd, RoundIdsOutOfRangeAreInvalidArgumentForEveryCommand) {
  play(1);
  for (const std::uint64_t id : {std::uint64_t{0}, kTopRoundId + 1, ~std::uint64_t{0}}) {
    SCOPED_TRACE(id);
    EXPECT_EQ(open(id).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(lock(id).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_EQ(settle(id).error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    const grpc::Status voided = void_round(id);
    EXPECT_EQ(voided.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_NE(voided.error_message().find("round ids are 1..9223372036854775807"),
              std::string::npos)
        << voided.error_message();
  }
  play(2);  // Nothing changed: the table plays on.
}

TEST_F(RoundCounterEndToEnd, ACommandTwoOrMoreRoundsBehindIsFailedPrecondition) {
  play(1);
  play(2);
  ASSERT_TRUE(open(3).ok());
  // Round 1 is two behind round 3: table.proto promises FAILED_PRECONDITION (was NOT_FOUND).
  for (const grpc::Status& status : {lock(1), settle(1), void_round(1)}) {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << status.error_message();
    EXPECT_NE(status.error_message().find("two or more rounds behind"), std::string::npos)
        << status.error_message();
  }
  // Round 2, one behind, still replays; a round never opened is NOT_FOUND.
  EXPECT_TRUE(settle(2).ok());
  EXPECT_EQ(void_round(4).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(lock(1000).error_code(), grpc::StatusCode::NOT_FOUND);
  restart();
  EXPECT_EQ(void_round(1).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_TRUE(lock(3).ok());
}

TEST_F(RoundCounterEndToEnd, AnOpenRepeatAnswersOnlyWhileItsRoundIsTheLatestAndOpen) {
  pb::OpenRoundResponse first;
  ASSERT_TRUE(open(1, &first).ok());
  pb::OpenRoundResponse again;
  ASSERT_TRUE(open(1, &again).ok());  // A lost answer's retry: the same answer.
  EXPECT_EQ(again.SerializeAsString(), first.SerializeAsString());
  ASSERT_TRUE(lock(1).ok());
  ASSERT_TRUE(settle(1).ok());
  play(2);
  play(3);
  // A controller whose counter restarted sends old ids: never the old round's answer.
  for (const std::uint64_t id : std::vector<std::uint64_t>{1, 2, 3}) {
    pb::OpenRoundResponse old;
    const grpc::Status status = open(id, &old);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::FAILED_PRECONDITION) << id;
    EXPECT_EQ(old.round_id(), 0u) << id;
  }
  const grpc::Status latest = open(3);
  EXPECT_NE(latest.error_message().find("round 3 at table T1 was opened before and is now SETTLED"),
            std::string::npos)
      << latest.error_message();
  restart();
  EXPECT_EQ(open(3).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  play(4);
}

TEST_F(RoundCounterEndToEnd, ARoundIdJumpPastTheLimitIsRefusedSoNoIdCanBrickTheTable) {
  play(1);
  // Before: OpenRound then VoidRound with 2^63-1 succeeded and every later id was refused, for
  // good, across restarts. Now the open is refused and nothing changes.
  const grpc::Status brick = open(kTopRoundId);
  EXPECT_EQ(brick.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(brick.error_message().find("more than 1000000 above the table's counter (1)"),
            std::string::npos)
      << brick.error_message();
  EXPECT_EQ(void_round(kTopRoundId).error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(open(1 + 1'000'001).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  play(1 + 1'000'000);  // Exactly the limit is allowed.
  restart();
  EXPECT_EQ(open(kTopRoundId).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  play(1'000'002);
}

TEST_F(RoundCounterEndToEnd, ASupervisorRebaseLetsATableWhoseCounterRestartedPlayAgain) {
  play(1);
  play(2);
  play(3);
  // The controller card is swapped and its counter restarts at 1: refused, never the old round.
  EXPECT_EQ(open(1).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  ASSERT_TRUE(open(4).ok());
  // Refused while the latest round is OPEN (and LOCKED), with nothing journaled.
  const grpc::Status while_open = rebase("swap-1", 1, "controller card swapped");
  EXPECT_EQ(while_open.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(while_open.error_message().find("round 4 at table T1 is OPEN"), std::string::npos)
      << while_open.error_message();
  ASSERT_TRUE(lock(4).ok());
  EXPECT_EQ(rebase("swap-1", 1, "controller card swapped").error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  ASSERT_TRUE(void_round(4).ok());
  EXPECT_EQ(rebase("swap-1", 1, "").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(rebase("swap-1", 1, " \t\r\n").error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(rebase("swap-1", 1, std::string(513, 'x')).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(rebase("", 1, "controller card swapped").error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(rebase("swap-1", 0, "controller card swapped").error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  // The supervisor re-bases the counter with jackpotctl.
  const auto [exit_code, printed] =
      admin("rebase T1 1 --request-id swap-1 --reason 'controller card swapped'");
  EXPECT_EQ(exit_code, 0) << printed;
  EXPECT_NE(printed.find("table T1: round counter re-based (epoch 1): latest round was 4, next "
                         "round id 1; by supervisor/"),
            std::string::npos)
      << printed;
  // A repeat answers the same; another request with the same id is refused.
  pb::RebaseRoundCounterResponse again;
  ASSERT_TRUE(rebase("swap-1", 1, "controller card swapped", &again).ok());
  EXPECT_EQ(again.epoch(), 1u);
  EXPECT_EQ(again.last_round_id(), 4u);
  EXPECT_EQ(again.next_round_id(), 1u);
  const grpc::Status other = rebase("swap-1", 7, "controller card swapped");
  EXPECT_EQ(other.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(other.error_message().find("was used for another re-base"), std::string::npos)
      << other.error_message();
  const auto [other_exit, other_printed] =
      admin("rebase T1 7 --request-id swap-1 --reason 'controller card swapped'");
  EXPECT_EQ(other_exit, 1) << other_printed;

  // The table plays again from round 1; rounds from before the re-base answer nothing.
  play(1);
  play(2);
  // Round 4 was played before the re-base: in the new epoch it was never opened.
  EXPECT_EQ(void_round(4).error_code(), grpc::StatusCode::NOT_FOUND);
  restart();
  EXPECT_EQ(open(2).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  play(3);
  pb::RebaseRoundCounterResponse after_restart;
  ASSERT_TRUE(rebase("swap-1", 1, "controller card swapped", &after_restart).ok());
  EXPECT_EQ(after_restart.SerializeAsString(), again.SerializeAsString());

  // Journaled once, and in the audit trail.
  auto db = database_.connect();
  pqxx::read_transaction tx(*db);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM round_counter_rebases")[0].as<int>(), 1);
  EXPECT_EQ(tx.exec1("SELECT count(*) FROM audit_log WHERE action = 'round_counter.rebase' AND "
                     "detail->>'reason' = 'controller card swapped' AND principal LIKE "
                     "'supervisor/%'")[0]
                .as<int>(),
            1);
  EXPECT_EQ(
      tx.exec1("SELECT count(*) FROM rounds WHERE table_id = 'T1' AND round_id = 1")[0].as<int>(),
      2);
}

TEST_F(RoundCounterEndToEnd, ARebaseRepairsATableWhoseCounterMovedPastTheJumpLimit) {
  play(1);
  // A new controller card starts at 5,000,000: past the jump limit, so refused until re-based.
  EXPECT_EQ(open(5'000'000).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  ASSERT_TRUE(rebase("card-2", 5'000'000, "controller card replaced").ok());
  play(5'000'000);
}

}  // namespace
}  // namespace jackpot
