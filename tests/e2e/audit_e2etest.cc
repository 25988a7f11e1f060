// The audit trail and the provable hidden trigger, end to end over real mutual TLS: a hidden
// Must-Hit-By point's commitment published before the hit and opened by the hit's reveal
// (checked by `jackpotctl trigger verify`), every kind of act chained in PostgreSQL, and a row
// edited behind the daemon's back named by `jackpotctl audit verify`.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdio>
#include <fstream>
#include <optional>
#include <pqxx/pqxx>
#include <thread>

#include "jackpot/v1/admin.grpc.pb.h"
#include "jackpot/v1/supervisor.grpc.pb.h"
#include "jackpot/v1/table.grpc.pb.h"
#include "meters/digest.h"
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

// Level 2 must hit by $250 at a hidden point; half of each wager feeds it, so a few rounds of
// six $10 wagers (the most a seat may wager, so that one round cannot pass the amount) reach any
// point.
constexpr const char* kFloor = R"(
links {
  id: "audit-link"
  base_wager: "1.00"
  levels { level: 1 name: "Royal Flush" seed: "1000.00" meter_rate_ppm: 100000 }
  levels {
    level: 2
    name: "Must-Hit-By $250"
    seed: "50.00"
    meter_rate_ppm: 500000
    must_hit_by: "250.00"
    trigger: TRIGGER_HIDDEN_UNIFORM
  }
  approval_threshold: "1000.00"
  dual_approval_threshold: "10000.00"
  max_wager_units: 10
}
tables { id: "T1" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6 links { link_id: "audit-link" paytable_id: "PT-BJS-HUH-5CP-12" community: COMMUNITY_BOARD } }
)";

std::string hex(const std::string& bytes) {
  return to_hex(std::span<const std::uint8_t>(reinterpret_cast<const std::uint8_t*>(bytes.data()),
                                              bytes.size()));
}

class AuditEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/jackpotd-audit-floor.XXXXXX";
    close(mkstemp(name));
    floor_ = name;
    std::ofstream(floor_) << kFloor;
    start();
  }
  void TearDown() override {
    stop();
    unlink(floor_.c_str());
  }
  void start(const std::vector<std::string>& more = {}) {
    std::vector<std::string> args{"--db",      database_.dsn(), "--listen", "127.0.0.1:0",
                                  "--metrics", "off",           "--floor",  floor_};
    args.insert(args.end(), more.begin(), more.end());
    daemon_ = std::make_unique<DaemonProcess>(args);
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

  static void deadline(grpc::ClientContext& context) {
    context.set_deadline(std::chrono::system_clock::now() + 10s);
  }

  // One round at T1: six $10 wagers, then ordinary cards. The lock's Must-Hit-By hits.
  std::vector<pb::MustHitByHit> play_round(std::uint64_t round) {
    auto table = pb::TableService::NewStub(channel_as(address_, "table/T1"));
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
    for (std::uint32_t seat = 1; seat <= 6; ++seat) {
      auto* wager = lock.add_wagers();
      wager->set_seat(seat);
      wager->set_link_id("audit-link");
      wager->set_amount_cents(1000);
    }
    pb::LockWagersResponse locked;
    grpc::ClientContext lock_context;
    deadline(lock_context);
    const grpc::Status lock_status = table->LockWagers(&lock_context, lock, &locked);
    EXPECT_TRUE(lock_status.ok()) << lock_status.error_message();
    pb::SettleRoundRequest settle;
    settle.set_table_id("T1");
    settle.set_round_id(round);
    const char* holes[6][2] = {{"3h", "5s"}, {"6c", "8d"}, {"Th", "Qc"},
                               {"Kd", "2h"}, {"3d", "6s"}, {"8h", "Tc"}};
    for (std::uint32_t seat = 1; seat <= 6; ++seat) {
      auto* hand = settle.add_seats();
      hand->set_seat(seat);
      hand->mutable_cards()->add_cards(holes[seat - 1][0]);
      hand->mutable_cards()->add_cards(holes[seat - 1][1]);
    }
    for (const char* card : {"2c", "7d", "9h", "Js", "4c"}) settle.add_community_cards(card);
    pb::SettleRoundResponse settled;
    grpc::ClientContext settle_context;
    deadline(settle_context);
    const grpc::Status settle_status = table->SettleRound(&settle_context, settle, &settled);
    EXPECT_TRUE(settle_status.ok()) << settle_status.error_message();
    return {locked.must_hit_by_hits().begin(), locked.must_hit_by_hits().end()};
  }

  std::optional<pb::TriggerCommitment> published_commitment() {
    auto admin = pb::AdminService::NewStub(channel_as(address_, "admin/ops"));
    pb::ListMetersResponse meters;
    grpc::ClientContext context;
    deadline(context);
    EXPECT_TRUE(admin->ListMeters(&context, {}, &meters).ok());
    if (meters.trigger_commitments_size() != 1) return std::nullopt;
    return meters.trigger_commitments(0);
  }

  // jackpotctl's exit code and what it printed (both streams).
  std::pair<int, std::string> jackpotctl(const std::string& arguments,
                                         const std::string& principal = "admin/ops") {
    FILE* pipe = popen((std::string(JACKPOTCTL_BINARY) + " " +
                        testing::admin_tool_flags(address_, principal) + " " + arguments + " 2>&1")
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
  std::unique_ptr<DaemonProcess> daemon_;
  std::string address_;
};

TEST_F(AuditEndToEnd, AHiddenPointIsCommittedBeforeItsHitAndOpensAfterIt) {
  const auto before = published_commitment();
  ASSERT_TRUE(before);
  EXPECT_EQ(before->link_id(), "audit-link");
  EXPECT_EQ(before->level(), 2u);
  EXPECT_EQ(before->commitment().size(), 32u);
  EXPECT_EQ(before->up_to_micros(), 250'000'000);
  EXPECT_EQ(before->above_micros(), 50'000'000);

  std::optional<pb::MustHitByHit> hit;
  for (std::uint64_t round = 1; round <= 40 && !hit; ++round) {
    for (const pb::MustHitByHit& h : play_round(round)) hit = h;
    // Until it hits, the commitment in force stays the one published first.
    if (!hit) {
      EXPECT_EQ(published_commitment()->commitment(), before->commitment());
    }
  }
  ASSERT_TRUE(hit) << "no Must-Hit-By hit in 40 rounds";
  ASSERT_TRUE(hit->has_revealed_trigger());
  EXPECT_EQ(hit->revealed_trigger().commitment(), before->commitment());
  EXPECT_EQ(hit->trigger_salt().size(), 32u);
  const std::int64_t point = hit->trigger_point_micros();
  EXPECT_GT(point, before->above_micros());
  EXPECT_LE(point, before->up_to_micros());
  EXPECT_EQ(point % 10'000, 0);
  EXPECT_EQ(point, hit->amount_cents() * 10'000);

  // A third party's check, with nothing but what was published and revealed.
  const auto [verified, verified_printed] =
      jackpotctl("trigger verify --commitment " + hex(before->commitment()) + " --point-micros " +
                 std::to_string(point) + " --salt " + hex(hit->trigger_salt()));
  EXPECT_EQ(verified, 0) << verified_printed;
  EXPECT_NE(verified_printed.find("MATCHES"), std::string::npos) << verified_printed;
  const auto [other, other_printed] =
      jackpotctl("trigger verify --commitment " + hex(before->commitment()) + " --point-micros " +
                 std::to_string(point + 10'000) + " --salt " + hex(hit->trigger_salt()));
  EXPECT_EQ(other, 3) << other_printed;
  EXPECT_NE(other_printed.find("MISMATCH"), std::string::npos) << other_printed;
  const auto [malformed, malformed_printed] =
      jackpotctl("trigger verify --commitment 12 --point-micros 1 --salt 34");
  EXPECT_EQ(malformed, 2) << malformed_printed;

  // The reset level committed to a new point at once.
  const auto after = published_commitment();
  ASSERT_TRUE(after);
  EXPECT_NE(after->commitment(), before->commitment());

  // The chain holds the commitment before the hit that opened it.
  pqxx::connection db(database_.dsn());
  pqxx::read_transaction tx(db);
  const auto committed = tx.exec_params1(
      "SELECT seq FROM audit_log WHERE action = 'must_hit_by.commit' AND detail->>'commitment' = "
      "$1",
      hex(before->commitment()));
  const auto revealed = tx.exec_params1(
      "SELECT seq, detail->>'point_micros', detail->>'salt' FROM audit_log "
      "WHERE action = 'must_hit_by.hit' AND detail->>'commitment' = $1",
      hex(before->commitment()));
  EXPECT_LT(committed[0].as<std::int64_t>(), revealed[0].as<std::int64_t>());
  EXPECT_EQ(revealed[1].as<std::string>(), std::to_string(point));
  EXPECT_EQ(revealed[2].as<std::string>(), hex(hit->trigger_salt()));
  const auto [audited, audited_printed] = jackpotctl("audit verify");
  EXPECT_EQ(audited, 0) << audited_printed;
}

TEST_F(AuditEndToEnd, EveryActIsChainedAndAnEditedRowIsNamed) {
  play_round(1);
  auto admin = pb::AdminService::NewStub(channel_as(address_, "admin/ops"));
  for (const auto status : {pb::LINK_STATUS_CLOSED, pb::LINK_STATUS_OPEN}) {
    pb::SetLinkStatusRequest request;
    request.set_link_id("audit-link");
    request.set_status(status);
    request.set_reason("camera check");
    pb::SetLinkStatusResponse response;
    grpc::ClientContext context;
    deadline(context);
    ASSERT_TRUE(admin->SetLinkStatus(&context, request, &response).ok());
  }
  const auto [reported, reported_printed] = jackpotctl("report --from 2020-01-01");
  EXPECT_EQ(reported, 0) << reported_printed;
  const auto [balanced, balanced_printed] = jackpotctl("balances");
  EXPECT_EQ(balanced, 0) << balanced_printed;
  // A table asking for the meters, three times: refused, and on the chain as one event.
  auto as_table = pb::AdminService::NewStub(channel_as(address_, "table/T1"));
  for (int i = 0; i < 3; ++i) {
    pb::ListMetersResponse meters;
    grpc::ClientContext context;
    deadline(context);
    EXPECT_EQ(as_table->ListMeters(&context, {}, &meters).error_code(),
              grpc::StatusCode::PERMISSION_DENIED);
  }
  {
    pb::ReadAuditTrailRequest request;
    request.set_limit(501);
    pb::ReadAuditTrailResponse response;
    grpc::ClientContext context;
    deadline(context);
    EXPECT_EQ(admin->ReadAuditTrail(&context, request, &response).error_code(),
              grpc::StatusCode::INVALID_ARGUMENT);
  }
  // A supervisor's refused decisions are on the chain, with who tried what and why (#32).
  auto supervisor = pb::SupervisorService::NewStub(channel_as(address_, "supervisor/S1"));
  {
    pb::ApprovePayoutRequest request;
    request.set_payout_id(999999);
    request.set_request_id("no-such-payout");
    pb::ApprovePayoutResponse response;
    grpc::ClientContext context;
    deadline(context);
    EXPECT_EQ(supervisor->ApprovePayout(&context, request, &response).error_code(),
              grpc::StatusCode::NOT_FOUND);
  }
  {
    pb::RebaseRoundCounterRequest request;
    request.set_table_id("NO-SUCH-TABLE");
    request.set_request_id("no-such-table");
    request.set_next_round_id(5);
    request.set_reason("card swap");
    pb::RebaseRoundCounterResponse response;
    grpc::ClientContext context;
    deadline(context);
    EXPECT_EQ(supervisor->RebaseRoundCounter(&context, request, &response).error_code(),
              grpc::StatusCode::NOT_FOUND);
  }
  stop();  // The refusals go on the chain at the stop at the latest.
  start();

  const auto [verified, printed] = jackpotctl("audit verify --page 7");
  EXPECT_EQ(verified, 0) << printed;
  EXPECT_NE(printed.find("VERIFIED"), std::string::npos) << printed;
  for (const char* action :
       {"daemon.start", "daemon.stop", "round.commands", "link.status", "report.reconciliation",
        "report.balance_audit", "access.refused", "must_hit_by.commit"}) {
    EXPECT_NE(printed.find(action), std::string::npos) << action << "\n" << printed;
  }
  // The head it printed, kept elsewhere, anchors a later verify.
  const auto head_at = printed.find("; head ");
  ASSERT_NE(head_at, std::string::npos) << printed;
  const std::string head = printed.substr(head_at + 7, printed.find('\n', head_at) - head_at - 7);
  const auto [anchored, anchored_printed] = jackpotctl("audit verify --anchor " + head);
  EXPECT_EQ(anchored, 0) << anchored_printed;
  EXPECT_NE(anchored_printed.find("the anchor among them"), std::string::npos) << anchored_printed;
  std::string other_head = head;
  other_head.back() = other_head.back() == '0' ? '1' : '0';
  const auto [unanchored, unanchored_printed] = jackpotctl("audit verify --anchor " + other_head);
  EXPECT_EQ(unanchored, 3) << unanchored_printed;
  EXPECT_NE(unanchored_printed.find("not the anchor's"), std::string::npos) << unanchored_printed;

  pqxx::connection db(database_.dsn());
  {
    pqxx::read_transaction tx(db);
    // Three refusals, in one event or split by the minute's drain.
    const auto refused = tx.exec1(
        "SELECT sum((detail->>'count')::int), min(detail->>'detail'), min(principal) "
        "FROM audit_log WHERE action = 'access.refused'");
    EXPECT_EQ(refused[0].as<int>(), 3);
    EXPECT_NE(refused[1].as<std::string>().find("'table/T1' may not call"), std::string::npos);
    EXPECT_EQ(refused[2].as<std::string>().rfind("daemon/", 0), 0u);
    const auto closed = tx.exec1(
        "SELECT principal, detail->>'reason' FROM audit_log WHERE action = 'link.status' "
        "ORDER BY seq LIMIT 1");
    EXPECT_EQ(closed[0].as<std::string>(), "admin/ops");
    EXPECT_EQ(closed[1].as<std::string>(), "camera check");
    EXPECT_EQ(tx.exec1("SELECT principal FROM audit_log WHERE action = 'report.reconciliation'")[0]
                  .as<std::string>(),
              "admin/ops");
    const auto payout_refused = tx.exec1(
        "SELECT principal, detail->>'payout_id', detail->>'decision', detail->>'refusal' "
        "FROM audit_log WHERE action = 'payout.refused'");
    EXPECT_EQ(payout_refused[0].as<std::string>(), "supervisor/S1");
    EXPECT_EQ(payout_refused[1].as<std::string>(), "999999");
    EXPECT_EQ(payout_refused[2].as<std::string>(), "approve");
    EXPECT_EQ(payout_refused[3].as<std::string>(), "unknown_payout");
    const auto rebase_refused = tx.exec1(
        "SELECT principal, detail->>'table_id', detail->>'refusal' FROM audit_log "
        "WHERE action = 'round_counter.rebase_refused'");
    EXPECT_EQ(rebase_refused[0].as<std::string>(), "supervisor/S1");
    EXPECT_EQ(rebase_refused[1].as<std::string>(), "NO-SUCH-TABLE");
    EXPECT_EQ(rebase_refused[2].as<std::string>(), "unknown_table");
  }
  // Someone with the tables' owner's rights edits the reason of the link's closing.
  std::int64_t edited = 0;
  {
    pqxx::work tx(db);
    edited = tx.exec1("SELECT min(seq) FROM audit_log WHERE action = 'link.status'")[0]
                 .as<std::int64_t>();
    tx.exec("ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only");
    tx.exec_params(
        "UPDATE audit_log SET detail = detail || '{\"reason\": \"routine\"}' "
        "WHERE seq = $1",
        edited);
    tx.exec("ALTER TABLE audit_log ENABLE TRIGGER audit_log_append_only");
    tx.commit();
  }
  const auto [broken, broken_printed] = jackpotctl("audit verify");
  EXPECT_EQ(broken, 3) << broken_printed;
  EXPECT_NE(broken_printed.find("BROKEN: event " + std::to_string(edited) +
                                " (admin/ops link.status) was changed after it was chained"),
            std::string::npos)
      << broken_printed;
  // A supervisor may not read it; jackpotctl says so and exits 1.
  const auto [refused, refused_printed] = jackpotctl("audit verify", "supervisor/S1");
  EXPECT_EQ(refused, 1) << refused_printed;
  EXPECT_NE(refused_printed.find("PERMISSION_DENIED"), std::string::npos) << refused_printed;
}

// The chain's head goes to jackpotd's log on a schedule and at each stop (#32): anchors outside
// the database. Someone with the tables' owner's rights who edits an event and recomputes every
// hash after it leaves a chain that verifies on its own; the log's anchors find it out.
TEST_F(AuditEndToEnd, TheLogsAnchorsFindOutARewrittenChain) {
  stop();
  start({"--audit-anchor-interval-s", "1"});
  play_round(1);
  // A line on the schedule, once the head has moved past the start.
  const auto until = std::chrono::steady_clock::now() + 60s;
  while (daemon_->stderr_text().find("audit chain head ") == std::string::npos &&
         std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(100ms);
  }
  ASSERT_NE(daemon_->stderr_text().find("audit chain head "), std::string::npos)
      << daemon_->stderr_text();
  daemon_->send_signal(SIGTERM);
  ASSERT_EQ(daemon_->wait_for_exit(20s), 0) << daemon_->stderr_text();
  const std::string log = daemon_->stderr_text();
  daemon_.reset();
  // The stop's own line names the chain's last event, the stop.
  const auto stop_line = log.rfind("audit chain head ");
  ASSERT_GT(stop_line, log.find("audit chain head "))
      << "a line on the schedule and one at the stop";
  char log_name[] = "/tmp/jackpotd-audit-log.XXXXXX";
  close(mkstemp(log_name));
  std::ofstream(log_name) << log;
  start();

  const auto [anchored, anchored_printed] =
      jackpotctl(std::string("audit verify --anchors-from ") + log_name);
  EXPECT_EQ(anchored, 0) << anchored_printed;
  EXPECT_NE(anchored_printed.find("anchors among them"), std::string::npos) << anchored_printed;

  // Event 2 rewritten, every hash from it on recomputed, the head moved along.
  {
    pqxx::connection db(database_.dsn());
    pqxx::work tx(db);
    tx.exec("ALTER TABLE audit_log DISABLE TRIGGER audit_log_append_only");
    tx.exec(R"sql(
      DO $$
      DECLARE
        event record;
        previous bytea := '\x' || repeat('00', 32);
        edited jsonb;
      BEGIN
        FOR event IN SELECT seq, at, principal, action, detail FROM audit_log ORDER BY seq LOOP
          edited := CASE WHEN event.seq = 2 THEN event.detail || '{"note": "rewritten"}'
                         ELSE event.detail END;
          UPDATE audit_log SET detail = edited, prev_hash = previous,
                 hash = jackpot_audit_hash(previous, event.seq, event.at, event.principal,
                                           event.action, edited)
           WHERE seq = event.seq;
          SELECT hash INTO previous FROM audit_log WHERE seq = event.seq;
        END LOOP;
        UPDATE audit_chain_head SET hash = previous;
      END $$)sql");
    tx.exec("ALTER TABLE audit_log ENABLE TRIGGER audit_log_append_only");
    tx.commit();
  }
  const auto [alone, alone_printed] = jackpotctl("audit verify");
  EXPECT_EQ(alone, 0) << "a consistently rewritten chain verifies without anchors\n"
                      << alone_printed;
  const auto [found, found_printed] =
      jackpotctl(std::string("audit verify --anchors-from ") + log_name);
  EXPECT_EQ(found, 3) << found_printed;
  EXPECT_NE(found_printed.find("not the anchor's"), std::string::npos) << found_printed;
  unlink(log_name);
}

TEST_F(AuditEndToEnd, JackpotctlGivesUpWithinItsDeadline) {
  // A port that takes connections and never answers: the TLS handshake waits, the deadline ends
  // it (before, the admin client hung here for ever).
  const int silent = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_GE(silent, 0);
  sockaddr_in any{};
  any.sin_family = AF_INET;
  any.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  ASSERT_EQ(bind(silent, reinterpret_cast<sockaddr*>(&any), sizeof any), 0);
  ASSERT_EQ(listen(silent, 16), 0);
  socklen_t length = sizeof any;
  ASSERT_EQ(getsockname(silent, reinterpret_cast<sockaddr*>(&any), &length), 0);
  const std::string daemon_address = address_;
  address_ = "127.0.0.1:" + std::to_string(ntohs(any.sin_port));
  auto began = std::chrono::steady_clock::now();
  const auto [hung, hung_printed] = jackpotctl("--deadline 1 meters");
  EXPECT_EQ(hung, 4) << hung_printed;
  EXPECT_NE(hung_printed.find("DEADLINE_EXCEEDED"), std::string::npos) << hung_printed;
  EXPECT_LT(std::chrono::steady_clock::now() - began, 8s);  // Not the default deadline, 10 s.
  close(silent);
  address_ = daemon_address;

  // Numbers are decimal: 010 is payout 10, not octal 8; 0x10 and -1 are refused.
  for (const char* id : {"0x10", "-1", "1e2"}) {
    const auto [code, printed] =
        jackpotctl(std::string("payouts approve ") + id + " --request-id r", "supervisor/S1");
    EXPECT_EQ(code, 2) << id << ": " << printed;
  }
  const auto [ten, ten_printed] = jackpotctl("payouts approve 010 --request-id r", "supervisor/S1");
  EXPECT_EQ(ten, 1) << ten_printed;
  EXPECT_NE(ten_printed.find("unknown_payout"), std::string::npos) << ten_printed;
  EXPECT_NE(ten_printed.find("no payout 10"), std::string::npos) << ten_printed;

  stop();
  began = std::chrono::steady_clock::now();
  const auto [code, printed] = jackpotctl("--deadline 1 meters");
  EXPECT_EQ(code, 4) << printed;
  EXPECT_LT(std::chrono::steady_clock::now() - began, 8s);  // Not the default deadline, 10 s.
  const auto [usage, usage_printed] = jackpotctl("report --from 2025-02-30");
  EXPECT_EQ(usage, 2) << usage_printed;
  EXPECT_NE(usage_printed.find("is not a time"), std::string::npos) << usage_printed;
  FILE* pipe = popen((std::string(JACKPOTCTL_BINARY) + " payouts approve --help").c_str(), "r");
  ASSERT_NE(pipe, nullptr);
  std::string help;
  char chunk[512];
  while (std::fgets(chunk, sizeof chunk, pipe) != nullptr) help += chunk;
  EXPECT_EQ(pclose(pipe), 0);
  EXPECT_NE(help.find("--request-id"), std::string::npos) << help;
  EXPECT_NE(help.find("Exit codes"), std::string::npos) << help;
}

}  // namespace
}  // namespace jackpot
