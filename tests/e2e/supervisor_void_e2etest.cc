// SupervisorService.VoidRound over real gRPC (issue #32): a round whose lock hit a hidden
// Must-Hit-By level is refused to the table and voided by two supervisors (its hit payout needs
// two), as the proto documents, with what the table sees afterwards; kept across a restart.
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
#include <thread>
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

// A hit is about $50 to $250: pending, and needing two supervisors above $20.
constexpr const char* kFloor = R"(
links {
  id: "mhb-link"
  base_wager: "1.00"
  levels { level: 1 name: "Royal Flush" seed: "1000.00" meter_rate_ppm: 10000 }
  levels {
    level: 2 name: "Must-Hit-By" seed: "50.00" meter_rate_ppm: 300000 must_hit_by: "250.00"
    trigger: TRIGGER_HIDDEN_UNIFORM
  }
  max_wager_units: 10
  approval_threshold: "10.00"
  dual_approval_threshold: "20.00"
}
tables {
  id: "T1"
  game: TABLE_GAME_HEADS_UP_HOLDEM
  seats: 6
  links { link_id: "mhb-link" paytable_id: "PT-BJS-HUH-5CP-12" }
}
)";

class SupervisorVoidEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/jackpotd-sv-floor.XXXXXX";
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
    ann_ = pb::SupervisorService::NewStub(channel_as(address_, "supervisor/ann"));
    bob_ = pb::SupervisorService::NewStub(channel_as(address_, "supervisor/bob"));
  }
  void stop() {
    if (!daemon_) return;
    daemon_->send_signal(SIGTERM);
    EXPECT_EQ(daemon_->wait_for_exit(20s), 0) << daemon_->stderr_text();
    daemon_.reset();
  }

  static void deadline(grpc::ClientContext& context) {
    context.set_deadline(std::chrono::system_clock::now() + 20s);
  }

  // Plays rounds of two $10 wagers until a lock hits the Must-Hit-By level; that round is left
  // LOCKED and returned with its lock's answer.
  std::uint64_t play_until_hit(pb::LockWagersResponse& hit) {
    for (std::uint64_t round = 1; round <= 200; ++round) {
      pb::OpenRoundRequest open;
      open.set_table_id("T1");
      open.set_round_id(round);
      pb::OpenRoundResponse opened;
      grpc::ClientContext open_context;
      deadline(open_context);
      EXPECT_TRUE(table_->OpenRound(&open_context, open, &opened).ok());
      pb::LockWagersRequest lock;
      lock.set_table_id("T1");
      lock.set_round_id(round);
      for (const std::uint32_t seat : {2U, 5U}) {
        auto* wager = lock.add_wagers();
        wager->set_seat(seat);
        wager->set_link_id("mhb-link");
        wager->set_amount_cents(1000);
      }
      grpc::ClientContext lock_context;
      deadline(lock_context);
      hit.Clear();
      const grpc::Status locked = table_->LockWagers(&lock_context, lock, &hit);
      EXPECT_TRUE(locked.ok()) << locked.error_message();
      if (!locked.ok()) return 0;
      if (hit.must_hit_by_hits_size() > 0) return round;
      EXPECT_TRUE(settle(round).ok());
    }
    return 0;
  }
  grpc::Status settle(std::uint64_t round) {
    pb::SettleRoundRequest request;
    request.set_table_id("T1");
    request.set_round_id(round);
    const std::vector<std::pair<std::uint32_t, std::vector<const char*>>> hands = {
        {2, {"3c", "4d"}}, {5, {"8h", "Qc"}}};
    for (const auto& [number, cards] : hands) {
      auto* seat = request.add_seats();
      seat->set_seat(number);
      for (const char* card : cards) seat->mutable_cards()->add_cards(card);
    }
    for (const char* card : {"2h", "7s", "9d", "Jc", "Ks"}) request.add_community_cards(card);
    pb::SettleRoundResponse response;
    grpc::ClientContext context;
    deadline(context);
    return table_->SettleRound(&context, request, &response);
  }
  grpc::Status table_void(std::uint64_t round, const std::string& reason,
                          pb::VoidRoundResponse* response = nullptr) {
    pb::VoidRoundRequest request;
    request.set_table_id("T1");
    request.set_round_id(round);
    request.set_reason(reason);
    pb::VoidRoundResponse ignored;
    grpc::ClientContext context;
    deadline(context);
    return table_->VoidRound(&context, request, response ? response : &ignored);
  }
  grpc::Status supervisor_void(pb::SupervisorService::Stub& stub, const std::string& request_id,
                               std::uint64_t round, const std::string& reason,
                               pb::SupervisorVoidRoundResponse* response = nullptr) {
    pb::SupervisorVoidRoundRequest request;
    request.set_request_id(request_id);
    request.set_table_id("T1");
    request.set_round_id(round);
    request.set_reason(reason);
    pb::SupervisorVoidRoundResponse ignored;
    grpc::ClientContext context;
    deadline(context);
    return stub.VoidRound(&context, request, response ? response : &ignored);
  }

  // Runs jackpotctl as supervisor/bob: its exit code and what it printed.
  std::pair<int, std::string> ctl(const std::string& command) {
    FILE* pipe =
        popen((std::string(JACKPOTCTL_BINARY) + " " +
               testing::admin_tool_flags(address_, "supervisor/bob") + " " + command + " 2>&1")
                  .c_str(),
              "r");
    if (pipe == nullptr) return {-1, ""};
    std::string printed;
    char chunk[512];
    while (std::fgets(chunk, sizeof chunk, pipe) != nullptr) printed += chunk;
    const int status = pclose(pipe);
    return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, printed};
  }

  TestDatabase database_;
  std::string floor_;
  std::string address_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::unique_ptr<pb::TableService::Stub> table_;
  std::unique_ptr<pb::SupervisorService::Stub> ann_;
  std::unique_ptr<pb::SupervisorService::Stub> bob_;
};

TEST_F(SupervisorVoidEndToEnd, TwoSupervisorsVoidAHitRoundAndTheTableSeesItVoided) {
  pb::LockWagersResponse hit;
  const std::uint64_t round = play_until_hit(hit);
  ASSERT_NE(round, 0U);
  ASSERT_EQ(hit.must_hit_by_hits(0).payout_state(), pb::PAYOUT_STATE_PENDING);

  const grpc::Status by_table = table_void(round, "misdeal");
  EXPECT_EQ(by_table.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(by_table.error_message().find("must_hit_by_needs_supervisor"), std::string::npos)
      << by_table.error_message();
  // A table cannot call the supervisors' void.
  auto as_table = pb::SupervisorService::NewStub(channel_as(address_, "table/T1"));
  EXPECT_EQ(supervisor_void(*as_table, "t-1", round, "misdeal").error_code(),
            grpc::StatusCode::PERMISSION_DENIED);
  // Bad requests: the documented statuses.
  EXPECT_EQ(supervisor_void(*ann_, "", round, "misdeal").error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(supervisor_void(*ann_, std::string(65, 'x'), round, "misdeal").error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(supervisor_void(*ann_, "v-x", round, " ").error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(supervisor_void(*ann_, "v-x", round, std::string(513, 'r')).error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(supervisor_void(*ann_, "v-x", round + 5, "misdeal").error_code(),
            grpc::StatusCode::NOT_FOUND);
  EXPECT_EQ(supervisor_void(*ann_, "v-x", 0, "misdeal").error_code(),
            grpc::StatusCode::INVALID_ARGUMENT);

  pb::SupervisorVoidRoundResponse requested;
  ASSERT_TRUE(supervisor_void(*ann_, "v-ann", round, "misdeal", &requested).ok());
  EXPECT_EQ(requested.state(), pb::ROUND_VOID_STATE_REQUESTED);
  EXPECT_EQ(requested.reversed_micros(), 0);
  ASSERT_EQ(requested.payout_ids_size(), 1);
  EXPECT_EQ(requested.requested_by(), "supervisor/ann");
  // The same supervisor again is not the second person.
  const grpc::Status again = supervisor_void(*ann_, "v-ann-2", round, "misdeal");
  EXPECT_EQ(again.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_NE(again.error_message().find("already_approved"), std::string::npos);

  // The refusal is on the audit trail, within moments (a queue of its own writes it).
  {
    auto connection = database_.connect();
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    int refused = 0;
    while (refused == 0 && std::chrono::steady_clock::now() < deadline) {
      pqxx::read_transaction tx(*connection);
      refused = tx.exec1(
                      "SELECT count(*) FROM audit_log WHERE action = 'round.void_refused' "
                      "AND principal = 'supervisor/ann' AND detail->>'request_id' = 'v-ann-2' "
                      "AND detail->>'refusal' = 'already_approved'")[0]
                    .as<int>();
      if (refused == 0) std::this_thread::sleep_for(100ms);
    }
    EXPECT_EQ(refused, 1);
  }

  pb::SupervisorVoidRoundResponse voided;
  ASSERT_TRUE(supervisor_void(*bob_, "v-bob", round, "misdeal", &voided).ok());
  EXPECT_EQ(voided.state(), pb::ROUND_VOID_STATE_VOIDED);
  EXPECT_EQ(voided.reversed_micros(), 6'200'000);  // 1% and 30% of two $10 wagers.
  EXPECT_EQ(voided.payout_ids(0), requested.payout_ids(0));

  // The table: its settlement is refused, its void with the same reason answers the void.
  EXPECT_EQ(settle(round).error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  pb::VoidRoundResponse table_answer;
  ASSERT_TRUE(table_void(round, "misdeal", &table_answer).ok());
  EXPECT_EQ(table_answer.reversed_micros(), 6'200'000);

  // Journaled and audited; replays answer the first answers, also after a restart.
  {
    auto connection = database_.connect();
    pqxx::read_transaction tx(*connection);
    EXPECT_EQ(tx.exec1("SELECT count(*) FROM supervisor_voids")[0].as<int>(), 2);
    EXPECT_EQ(tx.exec1("SELECT count(*) FROM audit_log WHERE action = 'round.supervisor_void'")[0]
                  .as<int>(),
              1);
    EXPECT_EQ(tx.exec1("SELECT state FROM payout_events WHERE payout_id = " +
                       std::to_string(voided.payout_ids(0)) + " ORDER BY seq DESC LIMIT 1")[0]
                  .as<std::string>(),
              "rejected");
  }
  stop();
  start();
  pb::SupervisorVoidRoundResponse replayed;
  ASSERT_TRUE(supervisor_void(*bob_, "v-bob", round, "misdeal", &replayed).ok());
  EXPECT_EQ(replayed.state(), pb::ROUND_VOID_STATE_VOIDED);
  EXPECT_EQ(replayed.reversed_micros(), voided.reversed_micros());
  EXPECT_EQ(replayed.voided_time().seconds(), voided.voided_time().seconds());
  EXPECT_EQ(supervisor_void(*bob_, "v-bob", round, "other reason").error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  // jackpotctl void-round answers the same repeat.
  const auto [code, printed] =
      ctl("void-round T1 " + std::to_string(round) + " --request-id v-bob --reason misdeal");
  EXPECT_EQ(code, 0) << printed;
  EXPECT_NE(printed.find("VOIDED"), std::string::npos) << printed;
}

}  // namespace
}  // namespace jackpot
