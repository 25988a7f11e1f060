// Supervisors approve and reject payouts over real mutual TLS: the two-person rule above the
// link's dual threshold, every refusal with its status and nothing changed, repeats answered
// with the first answer also after a restart, and who decided what in the journal.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <map>
#include <pqxx/pqxx>

#include "jackpot/v1/admin.grpc.pb.h"
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

// PT-BJS-HUH-5CP-08: Royal Flush 100% of the meter, Four-of-a-Kind $100, Full House $10. Pays
// of $100 and more wait for a supervisor; above $10,000 they need two.
constexpr const char* kFloor = R"(
links {
  id: "sup-link"
  levels { level: 1 name: "Royal Flush" seed: "20000.00" meter_rate_ppm: 10000 }
  approval_threshold: "100.00"
  dual_approval_threshold: "10000.00"
}
tables { id: "T1" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6 links { link_id: "sup-link" paytable_id: "PT-BJS-HUH-5CP-08" } }
)";

class SupervisorEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/jackpotd-supervisor-floor.XXXXXX";
    close(mkstemp(name));
    floor_ = name;
    std::ofstream(floor_) << kFloor;
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
    address_ = testing::serving_address(*line);
    ASSERT_FALSE(address_.empty()) << *line;
  }
  void stop() {
    if (!daemon_) return;
    daemon_->send_signal(SIGTERM);
    EXPECT_EQ(daemon_->wait_for_exit(20s), 0) << daemon_->stderr_text();
    daemon_.reset();
  }

  // Round `round` at T1: seats 1, 2 and 3 wager $1 and are keyed Royal Flush, Four-of-a-Kind and
  // Full House. The payout ids of their awards, by seat.
  std::map<std::uint32_t, pb::Award> play_round(std::uint64_t round) {
    auto table = pb::TableService::NewStub(channel_as(address_, "table/T1"));
    const auto deadline = [](grpc::ClientContext& context) {
      context.set_deadline(std::chrono::system_clock::now() + 10s);
    };
    pb::OpenRoundRequest open;
    open.set_table_id("T1");
    open.set_round_id(round);
    pb::OpenRoundResponse opened;
    grpc::ClientContext open_context;
    deadline(open_context);
    EXPECT_TRUE(table->OpenRound(&open_context, open, &opened).ok());
    pb::LockWagersRequest lock;
    lock.set_table_id("T1");
    lock.set_round_id(round);
    for (std::uint32_t seat = 1; seat <= 3; ++seat) {
      auto* wager = lock.add_wagers();
      wager->set_seat(seat);
      wager->set_link_id("sup-link");
      wager->set_amount_cents(100);
    }
    pb::LockWagersResponse locked;
    grpc::ClientContext lock_context;
    deadline(lock_context);
    EXPECT_TRUE(table->LockWagers(&lock_context, lock, &locked).ok());
    pb::SettleRoundRequest settle;
    settle.set_table_id("T1");
    settle.set_round_id(round);
    for (const auto& [seat, hand] : std::vector<std::pair<std::uint32_t, std::string>>{
             {1, "Royal Flush"}, {2, "Four-of-a-Kind"}, {3, "Full House"}}) {
      auto* keyed = settle.add_seats();
      keyed->set_seat(seat);
      keyed->set_keyed_hand(hand);
    }
    pb::SettleRoundResponse settled;
    grpc::ClientContext settle_context;
    deadline(settle_context);
    const grpc::Status status = table->SettleRound(&settle_context, settle, &settled);
    EXPECT_TRUE(status.ok()) << status.error_message();
    std::map<std::uint32_t, pb::Award> awards;
    for (const pb::SeatResult& result : settled.results()) {
      if (result.awards_size() > 0) awards[result.seat()] = result.awards(0);
    }
    return awards;
  }

  grpc::Status approve(const std::string& principal, std::uint64_t payout,
                       const std::string& request_id, pb::Payout* out = nullptr) {
    auto stub = pb::SupervisorService::NewStub(channel_as(address_, principal));
    pb::ApprovePayoutRequest request;
    request.set_payout_id(payout);
    request.set_request_id(request_id);
    pb::ApprovePayoutResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    const grpc::Status status = stub->ApprovePayout(&context, request, &response);
    if (out != nullptr) *out = response.payout();
    return status;
  }

  grpc::Status reject(const std::string& principal, std::uint64_t payout,
                      const std::string& request_id, const std::string& reason,
                      pb::Payout* out = nullptr) {
    auto stub = pb::SupervisorService::NewStub(channel_as(address_, principal));
    pb::RejectPayoutRequest request;
    request.set_payout_id(payout);
    request.set_request_id(request_id);
    request.set_reason(reason);
    pb::RejectPayoutResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    const grpc::Status status = stub->RejectPayout(&context, request, &response);
    if (out != nullptr) *out = response.payout();
    return status;
  }

  // What a refused decision must leave as it was: the ledger's balances and every payout event.
  std::string ledger() {
    auto db = database_.connect();
    pqxx::read_transaction tx(*db);
    std::string text;
    for (const auto& row : tx.exec(
             "SELECT link_id, account_kind, level, balance_micros FROM account_balances ORDER BY "
             "1, 2, 3")) {
      for (const auto& field : row) text += field.c_str() + std::string(" ");
      text += "\n";
    }
    for (const auto& row :
         tx.exec("SELECT payout_id, seq, state, supervisor, reason, coalesce(request_id, '-') FROM "
                 "payout_events ORDER BY 1, 2")) {
      for (const auto& field : row) text += field.c_str() + std::string(" ");
      text += "\n";
    }
    return text;
  }

  long ledger_sum() {
    auto db = database_.connect();
    pqxx::read_transaction tx(*db);
    return tx.exec1("SELECT coalesce(sum(balance_micros), 0) FROM account_balances")[0].as<long>();
  }

  TestDatabase database_;
  std::string floor_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::string address_;
};

TEST_F(SupervisorEndToEnd, TwoSupervisorsPayARoyalAndRepeatsAnswerTheFirstAnswer) {
  auto awards = play_round(1);
  ASSERT_EQ(awards.size(), 3U);
  const std::uint64_t royal = awards[1].payout_id();
  const std::uint64_t four = awards[2].payout_id();
  const std::uint64_t full_house = awards[3].payout_id();
  EXPECT_EQ(awards[1].payout_state(), pb::PAYOUT_STATE_PENDING);
  EXPECT_EQ(awards[2].payout_state(), pb::PAYOUT_STATE_PENDING);
  EXPECT_EQ(awards[3].payout_state(), pb::PAYOUT_STATE_PAID);
  const std::string at_start = ledger();

  // Refusals, each with its status and nothing changed.
  struct Refused {
    std::string what;
    grpc::Status status;
    grpc::StatusCode code;
    std::string message;  // How it starts.
  };
  const std::vector<Refused> refused = {
      {"an admin", approve("admin/ops", royal, "a1"), grpc::StatusCode::PERMISSION_DENIED,
       "role_not_allowed: 'admin/ops' may not call"},
      {"a table", approve("table/T1", royal, "a1"), grpc::StatusCode::PERMISSION_DENIED,
       "role_not_allowed: 'table/T1' may not call"},
      {"no request id", approve("supervisor/alice", royal, ""), grpc::StatusCode::INVALID_ARGUMENT,
       "request_id_invalid: "},
      {"a request id over 64 bytes", approve("supervisor/alice", royal, std::string(65, 'r')),
       grpc::StatusCode::INVALID_ARGUMENT, "request_id is 65 bytes"},
      {"an unknown payout", approve("supervisor/alice", 999, "a1"), grpc::StatusCode::NOT_FOUND,
       "unknown_payout: "},
      {"a payout paid at once", approve("supervisor/alice", full_house, "a1"),
       grpc::StatusCode::FAILED_PRECONDITION, "payout_not_pending: "},
      {"a rejection without a reason", reject("supervisor/alice", four, "a1", " "),
       grpc::StatusCode::INVALID_ARGUMENT, "reason_missing: "},
  };
  for (const Refused& r : refused) {
    EXPECT_EQ(r.status.error_code(), r.code) << r.what << ": " << r.status.error_message();
    EXPECT_EQ(r.status.error_message().rfind(r.message, 0), 0U)
        << r.what << ": " << r.status.error_message();
  }
  EXPECT_EQ(ledger(), at_start);

  // Alice's approval is one of the two the royal needs; her repeat answers the same.
  pb::Payout half;
  ASSERT_TRUE(approve("supervisor/alice", royal, "alice-1", &half).ok());
  EXPECT_EQ(half.state(), pb::PAYOUT_STATE_PENDING);
  EXPECT_EQ(half.approvals_required(), 2U);
  EXPECT_EQ(std::vector<std::string>(half.approved_by().begin(), half.approved_by().end()),
            std::vector<std::string>{"supervisor/alice"});
  const std::string after_alice = ledger();
  pb::Payout repeated;
  ASSERT_TRUE(approve("supervisor/alice", royal, "alice-1", &repeated).ok());
  EXPECT_EQ(repeated.SerializeAsString(), half.SerializeAsString());
  // Alice again under another id, and her id used by Bob: refused, nothing changed.
  const grpc::Status twice = approve("supervisor/alice", royal, "alice-2");
  EXPECT_EQ(twice.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(twice.error_message().rfind("already_approved: ", 0), 0U) << twice.error_message();
  const grpc::Status borrowed = approve("supervisor/bob", royal, "alice-1");
  EXPECT_EQ(borrowed.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(borrowed.error_message().rfind("replay_differs: ", 0), 0U) << borrowed.error_message();
  EXPECT_EQ(ledger(), after_alice);

  // Bob's approval pays it; Carol rejects the Four-of-a-Kind.
  pb::Payout paid;
  ASSERT_TRUE(approve("supervisor/bob", royal, "bob-1", &paid).ok());
  EXPECT_EQ(paid.state(), pb::PAYOUT_STATE_PAID);
  EXPECT_EQ(std::vector<std::string>(paid.approved_by().begin(), paid.approved_by().end()),
            (std::vector<std::string>{"supervisor/alice", "supervisor/bob"}));
  pb::Payout rejected;
  ASSERT_TRUE(reject("supervisor/carol", four, "carol-1", "camera review", &rejected).ok());
  EXPECT_EQ(rejected.state(), pb::PAYOUT_STATE_REJECTED);
  EXPECT_EQ(rejected.rejected_by(), "supervisor/carol");
  EXPECT_EQ(rejected.rejected_reason(), "camera review");
  const grpc::Status late = approve("supervisor/dave", royal, "dave-1");
  EXPECT_EQ(late.error_code(), grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(ledger_sum(), 0);
  const std::string decided = ledger();

  // After a restart every repeat answers its first answer and changes nothing.
  stop();
  ASSERT_NO_FATAL_FAILURE(start());
  pb::Payout again;
  ASSERT_TRUE(approve("supervisor/bob", royal, "bob-1", &again).ok());
  EXPECT_EQ(again.SerializeAsString(), paid.SerializeAsString());
  ASSERT_TRUE(approve("supervisor/alice", royal, "alice-1", &again).ok());
  EXPECT_EQ(again.SerializeAsString(), half.SerializeAsString());
  ASSERT_TRUE(reject("supervisor/carol", four, "carol-1", "camera review", &again).ok());
  EXPECT_EQ(again.SerializeAsString(), rejected.SerializeAsString());
  EXPECT_EQ(reject("supervisor/carol", four, "carol-1", "other reason").error_code(),
            grpc::StatusCode::FAILED_PRECONDITION);
  EXPECT_EQ(ledger(), decided);

  // The journal names who decided what, with each decision's request id.
  auto db = database_.connect();
  pqxx::read_transaction tx(*db);
  const auto events = tx.exec(
      "SELECT payout_id, state, supervisor, reason, request_id FROM payout_events WHERE "
      "request_id IS NOT NULL ORDER BY request_id");
  ASSERT_EQ(events.size(), 3U);
  EXPECT_EQ(events[0][1].as<std::string>() + " " + events[0][2].as<std::string>() + " " +
                events[0][4].as<std::string>(),
            "approved supervisor/alice alice-1");
  EXPECT_EQ(events[1][1].as<std::string>() + " " + events[1][2].as<std::string>() + " " +
                events[1][4].as<std::string>(),
            "paid supervisor/bob bob-1");
  EXPECT_EQ(events[2][1].as<std::string>() + " " + events[2][2].as<std::string>() + " " +
                events[2][3].as<std::string>() + " " + events[2][4].as<std::string>(),
            "rejected supervisor/carol camera review carol-1");
}

// A supervisor's screen: the payouts waiting at once, then each new one and each change, as
// committed; again after a restart. Payouts paid at once never appear.
TEST_F(SupervisorEndToEnd, TheWatchShowsWhatWaitsThenEachChangeAndAgainAfterARestart) {
  auto first = play_round(1);
  const std::uint64_t royal = first[1].payout_id();
  const std::uint64_t four = first[2].payout_id();
  ASSERT_LT(four, royal);  // Awards are made from the highest seat down.

  auto stub = pb::SupervisorService::NewStub(channel_as(address_, "supervisor/alice"));
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + 60s);
  pb::WatchPendingPayoutsRequest request;
  request.add_link_ids("sup-link");
  auto stream = stub->WatchPendingPayouts(&context, request);
  // A watch jackpotd took says so at once.
  stream->WaitForInitialMetadata();
  const auto opened = context.GetServerInitialMetadata().find("jackpot-watch");
  ASSERT_NE(opened, context.GetServerInitialMetadata().end());
  EXPECT_EQ(std::string(opened->second.data(), opened->second.size()), "open");
  const auto next = [&] {
    pb::PayoutEvent event;
    EXPECT_TRUE(stream->Read(&event));
    const pb::Payout& payout = event.payout();
    std::string approvers;
    for (const std::string& who : payout.approved_by()) approvers += " " + who;
    return std::to_string(payout.payout_id()) + " " + pb::PayoutState_Name(payout.state()) +
           approvers +
           (payout.rejected_reason().empty() ? "" : " (" + payout.rejected_reason() + ")");
  };
  const std::string id_four = std::to_string(four);
  const std::string id_royal = std::to_string(royal);
  EXPECT_EQ(next(), id_four + " PAYOUT_STATE_PENDING");
  EXPECT_EQ(next(), id_royal + " PAYOUT_STATE_PENDING");

  ASSERT_TRUE(approve("supervisor/alice", royal, "a-1").ok());
  EXPECT_EQ(next(), id_royal + " PAYOUT_STATE_PENDING supervisor/alice");
  ASSERT_TRUE(approve("supervisor/alice", royal, "a-1").ok());  // A repeat changes nothing.
  ASSERT_TRUE(approve("supervisor/bob", royal, "b-1").ok());
  EXPECT_EQ(next(), id_royal + " PAYOUT_STATE_PAID supervisor/alice supervisor/bob");
  ASSERT_TRUE(reject("supervisor/bob", four, "b-2", "dealer error").ok());
  EXPECT_EQ(next(), id_four + " PAYOUT_STATE_REJECTED (dealer error)");
  auto second = play_round(2);
  EXPECT_EQ(next(), std::to_string(second[2].payout_id()) + " PAYOUT_STATE_PENDING");
  EXPECT_EQ(next(), std::to_string(second[1].payout_id()) + " PAYOUT_STATE_PENDING");

  // Who may watch, and what.
  {
    auto table = pb::SupervisorService::NewStub(channel_as(address_, "table/T1"));
    grpc::ClientContext table_context;
    pb::PayoutEvent event;
    auto refused = table->WatchPendingPayouts(&table_context, pb::WatchPendingPayoutsRequest());
    EXPECT_FALSE(refused->Read(&event));
    EXPECT_EQ(refused->Finish().error_code(), grpc::StatusCode::PERMISSION_DENIED);
    grpc::ClientContext unknown_context;
    pb::WatchPendingPayoutsRequest unknown;
    unknown.add_link_ids("no-such-link");
    auto not_found = stub->WatchPendingPayouts(&unknown_context, unknown);
    EXPECT_FALSE(not_found->Read(&event));
    EXPECT_EQ(unknown_context.GetServerInitialMetadata().count("jackpot-watch"), 0u);
    const grpc::Status status = not_found->Finish();
    EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
    EXPECT_EQ(status.error_message(), "unknown_link: no link 'no-such-link'");
  }

  // The daemon stops: the watch ends OK; after the restart the payouts still waiting come first.
  stop();
  pb::PayoutEvent after;
  EXPECT_FALSE(stream->Read(&after));
  EXPECT_TRUE(stream->Finish().ok());
  ASSERT_NO_FATAL_FAILURE(start());
  auto again = pb::SupervisorService::NewStub(channel_as(address_, "supervisor/alice"));
  grpc::ClientContext again_context;
  again_context.set_deadline(std::chrono::system_clock::now() + 30s);
  auto rewatch = again->WatchPendingPayouts(&again_context, pb::WatchPendingPayoutsRequest());
  pb::PayoutEvent event;
  ASSERT_TRUE(rewatch->Read(&event));
  EXPECT_EQ(event.payout().payout_id(), second[2].payout_id());
  ASSERT_TRUE(rewatch->Read(&event));
  EXPECT_EQ(event.payout().payout_id(), second[1].payout_id());
  EXPECT_EQ(event.payout().state(), pb::PAYOUT_STATE_PENDING);
  again_context.TryCancel();
}

// The floor supervisor's command line: `payouts watch` lists what waits and each change, and
// `payouts approve` / `reject` decide as the caller, with the exit codes jackpotctl documents.
TEST_F(SupervisorEndToEnd, JackpotctlWatchesApprovesAndRejects) {
  auto awards = play_round(1);
  const std::string royal = std::to_string(awards[1].payout_id());
  const std::string four = std::to_string(awards[2].payout_id());
  const auto jackpotctl = [&](const std::string& principal, const std::string& arguments) {
    return testing::run_tool(JACKPOTCTL_BINARY, address_, principal, arguments);
  };
  const auto [watched, listed] = jackpotctl("supervisor/alice", "payouts watch --exit-when-idle 5");
  EXPECT_EQ(watched, 0) << listed;
  EXPECT_NE(listed.find("payout " + four + " PENDING"), std::string::npos) << listed;
  EXPECT_NE(listed.find("payout " + royal + " PENDING"), std::string::npos) << listed;
  EXPECT_NE(listed.find("  2 waiting"), std::string::npos) << listed;

  const auto [approved, approved_printed] =
      jackpotctl("supervisor/alice", "payouts approve " + royal + " --request-id ctl-a-1");
  EXPECT_EQ(approved, 0) << approved_printed;
  EXPECT_NE(approved_printed.find("payout " + royal + " PENDING"), std::string::npos)
      << approved_printed;
  EXPECT_NE(approved_printed.find("approvals 1 of 2 by supervisor/alice"), std::string::npos)
      << approved_printed;
  // The same supervisor again under another id: refused (exit 1, the refusal's name printed).
  const auto [again, again_printed] =
      jackpotctl("supervisor/alice", "payouts approve " + royal + " --request-id ctl-a-2");
  EXPECT_EQ(again, 1) << again_printed;
  EXPECT_NE(again_printed.find("FAILED_PRECONDITION: already_approved"), std::string::npos)
      << again_printed;
  const auto [paid, paid_printed] =
      jackpotctl("supervisor/bob", "payouts approve " + royal + " --request-id ctl-b-1");
  EXPECT_EQ(paid, 0) << paid_printed;
  EXPECT_NE(paid_printed.find("PAID"), std::string::npos) << paid_printed;
  const auto [rejected, rejected_printed] = jackpotctl(
      "supervisor/bob", "payouts reject " + four + " --request-id ctl-b-2 --reason 'dealer error'");
  EXPECT_EQ(rejected, 0) << rejected_printed;
  EXPECT_NE(rejected_printed.find("REJECTED"), std::string::npos) << rejected_printed;
  EXPECT_NE(rejected_printed.find("rejected by supervisor/bob: dealer error"), std::string::npos)
      << rejected_printed;
  // An admin may not approve; a reject without a reason is a usage error.
  const auto [admin, admin_printed] =
      jackpotctl("admin/ops", "payouts approve " + royal + " --request-id ctl-x");
  EXPECT_EQ(admin, 1) << admin_printed;
  EXPECT_NE(admin_printed.find("PERMISSION_DENIED"), std::string::npos) << admin_printed;
  const auto [usage, usage_printed] =
      jackpotctl("supervisor/bob", "payouts reject " + four + " --request-id ctl-b-3");
  EXPECT_EQ(usage, 2) << usage_printed;
  // Nothing waits now.
  const auto [empty, empty_printed] =
      jackpotctl("supervisor/alice", "payouts watch --exit-when-idle 1");
  EXPECT_EQ(empty, 0) << empty_printed;
  EXPECT_EQ(empty_printed.find("PENDING"), std::string::npos) << empty_printed;
}

}  // namespace
}  // namespace jackpot
