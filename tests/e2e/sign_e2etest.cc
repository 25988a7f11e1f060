// Signs watch the floor over real mutual TLS (SignService.WatchMeters): a snapshot with the
// placards at once, then committed changes in sequence order (a contribution, the Dynamic Pays of
// a round, a hit with its reset), heartbeats while nothing changes, the hidden trigger's
// commitment and never its point, and every refusal with its status.
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <csignal>
#include <fstream>
#include <functional>

#include "jackpot/v1/admin.grpc.pb.h"
#include "jackpot/v1/sign.grpc.pb.h"
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

// Level 2 must hit by $250 at a hidden point. T1 plays the link on a Dynamic Pay paytable, T2 on
// a plain one.
constexpr const char* kFloor = R"(
links {
  id: "sign-link"
  levels { level: 1 name: "Royal Flush" seed: "1000.00" meter_rate_ppm: 100000 }
  levels {
    level: 2
    name: "Must-Hit-By $250"
    seed: "50.00"
    meter_rate_ppm: 50000
    must_hit_by: "250.00"
    trigger: TRIGGER_HIDDEN_UNIFORM
  }
  approval_threshold: "10000.00"
  max_wager_units: 10
}
links { id: "other-link" levels { level: 1 name: "Royal Flush" seed: "500.00" meter_rate_ppm: 100000 } }
tables { id: "T1" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6 links { link_id: "sign-link" paytable_id: "PT-PRG-HUH-D01" } }
tables { id: "T2" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6 links { link_id: "sign-link" paytable_id: "PT-BJS-HUH-5CP-12" } links { link_id: "other-link" paytable_id: "PT-BJS-HUH-5CP-01" } }
)";

class SignEndToEnd : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/jackpotd-sign-floor.XXXXXX";
    close(mkstemp(name));
    floor_ = name;
    std::ofstream(floor_) << kFloor;
    daemon_ = std::make_unique<DaemonProcess>(
        std::vector<std::string>{"--db", database_.dsn(), "--listen", "127.0.0.1:0", "--metrics",
                                 "off", "--floor", floor_, "--sign-hit-seconds", "30"});
    const auto line = daemon_->read_stdout_line(30s);
    ASSERT_TRUE(line) << daemon_->stderr_text();
    address_ = testing::serving_address(*line);
    ASSERT_FALSE(address_.empty()) << *line;
  }
  void TearDown() override {
    if (daemon_) {
      daemon_->send_signal(SIGTERM);
      EXPECT_EQ(daemon_->wait_for_exit(20s), 0) << daemon_->stderr_text();
    }
    unlink(floor_.c_str());
  }

  // A watch as `principal`, for sign `sign_id`.
  struct Watch {
    std::unique_ptr<pb::SignService::Stub> stub;
    grpc::ClientContext context;
    std::unique_ptr<grpc::ClientReader<pb::SignUpdate>> reader;
  };
  std::unique_ptr<Watch> watch(const std::string& principal, const std::string& sign_id,
                               std::vector<std::string> links, std::vector<std::string> tables) {
    auto made = std::make_unique<Watch>();
    made->stub = pb::SignService::NewStub(channel_as(address_, principal));
    made->context.set_deadline(std::chrono::system_clock::now() + 120s);
    pb::WatchMetersRequest request;
    request.set_sign_id(sign_id);
    for (const std::string& link : links) request.add_link_ids(link);
    for (const std::string& table : tables) request.add_table_ids(table);
    made->reader = made->stub->WatchMeters(&made->context, request);
    return made;
  }

  // Reads snapshots (checking that sequences rise) until one satisfies `wanted`; nothing when
  // the stream ends or `limit` passes first.
  std::optional<pb::MeterSnapshot> until(
      Watch& watch, std::uint64_t& sequence,
      const std::function<bool(const pb::MeterSnapshot&)>& wanted,
      std::chrono::seconds limit = 10s) {
    const auto began = std::chrono::steady_clock::now();
    pb::SignUpdate update;
    while (std::chrono::steady_clock::now() - began < limit && watch.reader->Read(&update)) {
      if (update.has_heartbeat()) {
        EXPECT_EQ(update.heartbeat().sequence(), sequence);
        continue;
      }
      EXPECT_GT(update.meters().sequence(), sequence);
      sequence = update.meters().sequence();
      EXPECT_EQ(update.meters().paytables_size(), 0) << "placards come in the first snapshot only";
      if (wanted(update.meters())) return update.meters();
    }
    return std::nullopt;
  }

  template <typename Request, typename Response, typename Call>
  grpc::Status table_call(const std::string& table, Call call, const Request& request,
                          Response& response) {
    auto stub = pb::TableService::NewStub(channel_as(address_, "table/" + table));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    return ((*stub).*call)(&context, request, &response);
  }

  pb::OpenRoundResponse open(const std::string& table, std::uint64_t round) {
    pb::OpenRoundRequest request;
    request.set_table_id(table);
    request.set_round_id(round);
    pb::OpenRoundResponse response;
    const grpc::Status status =
        table_call(table, &pb::TableService::Stub::OpenRound, request, response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }
  void lock(const std::string& table, std::uint64_t round, std::int64_t cents) {
    pb::LockWagersRequest request;
    request.set_table_id(table);
    request.set_round_id(round);
    auto* wager = request.add_wagers();
    wager->set_seat(1);
    wager->set_link_id("sign-link");
    wager->set_amount_cents(cents);
    pb::LockWagersResponse response;
    const grpc::Status status =
        table_call(table, &pb::TableService::Stub::LockWagers, request, response);
    EXPECT_TRUE(status.ok()) << status.error_message();
  }
  pb::SettleRoundResponse settle(const std::string& table, std::uint64_t round,
                                 const std::string& hand) {
    pb::SettleRoundRequest request;
    request.set_table_id(table);
    request.set_round_id(round);
    auto* keyed = request.add_seats();
    keyed->set_seat(1);
    keyed->set_keyed_hand(hand);
    pb::SettleRoundResponse response;
    const grpc::Status status =
        table_call(table, &pb::TableService::Stub::SettleRound, request, response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    return response;
  }
  // Each level's meter as AdminService lists it, in whole cents rounded down.
  std::vector<std::int64_t> list_meters() {
    auto admin = pb::AdminService::NewStub(channel_as(address_, "admin/e2e"));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    pb::ListMetersRequest request;
    request.add_link_ids("sign-link");
    pb::ListMetersResponse response;
    EXPECT_TRUE(admin->ListMeters(&context, request, &response).ok());
    std::vector<std::int64_t> cents;
    for (const pb::LevelBalance& level : response.levels()) {
      cents.push_back(level.meter_micros() / 10'000);
    }
    return cents;
  }

  TestDatabase database_;
  std::string floor_;
  std::unique_ptr<DaemonProcess> daemon_;
  std::string address_;
};

std::int64_t level_cents(const pb::MeterSnapshot& snapshot, std::uint32_t level) {
  for (const pb::LevelMeter& meter : snapshot.levels()) {
    if (meter.link_id() == "sign-link" && meter.level() == level) return meter.amount_cents();
  }
  return -1;
}

TEST_F(SignEndToEnd, ASignSeesTheSnapshotThenEachCommittedChangeInOrder) {
  auto lobby = watch("sign/lobby", "lobby", {"sign-link"}, {"T1"});
  pb::SignUpdate first;
  ASSERT_TRUE(lobby->reader->Read(&first));
  ASSERT_TRUE(first.has_meters());
  const pb::MeterSnapshot& snapshot = first.meters();
  std::uint64_t sequence = snapshot.sequence();
  // The sequence starts from the daemon's start time in microseconds: it rises across restarts.
  EXPECT_GT(sequence, 1'700'000'000'000'000u);
  ASSERT_EQ(snapshot.levels_size(), 2);  // sign-link only.
  EXPECT_EQ(level_cents(snapshot, 1), 100000);
  EXPECT_EQ(level_cents(snapshot, 2), 5000);
  EXPECT_EQ(snapshot.levels(1).must_hit_by_cents(), 25000);
  ASSERT_EQ(snapshot.links_size(), 1);
  EXPECT_EQ(snapshot.links(0).status(), pb::LINK_STATUS_OPEN);
  // The hidden point's commitment, as ListMeters publishes it; nothing else about the point.
  ASSERT_EQ(snapshot.trigger_commitments_size(), 1);
  EXPECT_EQ(snapshot.trigger_commitments(0).level(), 2u);
  EXPECT_EQ(snapshot.trigger_commitments(0).commitment().size(), 32u);
  EXPECT_EQ(snapshot.trigger_commitments(0).up_to_micros(), 250'000'000);
  // T1's placard: the Dynamic Pay rows with their ten options.
  ASSERT_EQ(snapshot.paytables_size(), 1);
  EXPECT_EQ(snapshot.paytables(0).table_id(), "T1");
  EXPECT_EQ(snapshot.paytables(0).paytable_id(), "PT-PRG-HUH-D01");
  EXPECT_EQ(snapshot.paytables(0).lines(0).hand(), "Royal Flush");
  EXPECT_EQ(snapshot.paytables(0).lines(0).kind(), pb::PaytableLine::KIND_PERCENT);
  EXPECT_EQ(snapshot.paytables(0).lines(1).kind(), pb::PaytableLine::KIND_DYNAMIC);
  EXPECT_EQ(snapshot.paytables(0).lines(1).amount_cents(), 20000);
  EXPECT_EQ(snapshot.paytables(0).lines(1).option_cents_size(), 10);
  ASSERT_EQ(snapshot.tables_size(), 1);
  EXPECT_EQ(snapshot.tables(0).round_id(), 0u);

  // A round opens on T1 with its Dynamic Pays: the sign shows what the table was told.
  const pb::OpenRoundResponse opened = open("T1", 1);
  ASSERT_GT(opened.dynamic_pays_size(), 0);
  ASSERT_GT(opened.dynamic_pays(0).pays_size(), 0);
  auto shown = until(*lobby, sequence, [](const pb::MeterSnapshot& s) {
    return s.tables(0).round_id() == 1 && s.tables(0).selections(0).pays_size() > 0;
  });
  ASSERT_TRUE(shown);
  ASSERT_EQ(shown->tables(0).selections(0).pays_size(), opened.dynamic_pays(0).pays_size());
  for (int i = 0; i < opened.dynamic_pays(0).pays_size(); ++i) {
    EXPECT_EQ(shown->tables(0).selections(0).pays(i).hand(), opened.dynamic_pays(0).pays(i).hand());
    EXPECT_EQ(shown->tables(0).selections(0).pays(i).amount_cents(),
              opened.dynamic_pays(0).pays(i).amount_cents());
  }

  // $10 locked: $1 to level 1, $0.50 to level 2, shown once committed and equal to ListMeters.
  lock("T1", 1, 1000);
  shown = until(*lobby, sequence,
                [](const pb::MeterSnapshot& s) { return level_cents(s, 1) == 100100; });
  ASSERT_TRUE(shown);
  EXPECT_EQ(level_cents(*shown, 2), 5050);
  const auto meters = list_meters();
  EXPECT_EQ(meters, (std::vector<std::int64_t>{100100, 5050}));

  // A royal flush takes level 1: the hit on show with the reset value, the Dynamic Pays gone.
  settle("T1", 1, "Royal Flush");
  shown = until(*lobby, sequence, [](const pb::MeterSnapshot& s) { return s.hits_size() > 0; });
  ASSERT_TRUE(shown);
  const pb::HitAnnouncement& hit = shown->hits(0);
  EXPECT_EQ(hit.link_id(), "sign-link");
  EXPECT_EQ(hit.level(), 1u);
  EXPECT_EQ(hit.table_id(), "T1");
  EXPECT_EQ(hit.round_id(), 1u);
  EXPECT_EQ(hit.seat(), 1u);
  EXPECT_EQ(hit.hand(), "Royal Flush");
  EXPECT_EQ(hit.amount_cents(), 100100);
  EXPECT_EQ(hit.reset_cents(), 100000);
  EXPECT_EQ(level_cents(*shown, 1), 100000);
  EXPECT_EQ(shown->tables(0).selections(0).pays_size(), 0);

  // Nothing changes: a heartbeat within about 2 s, with the latest sequence.
  pb::SignUpdate quiet;
  const auto before = std::chrono::steady_clock::now();
  do {
    ASSERT_TRUE(lobby->reader->Read(&quiet));
  } while (!quiet.has_heartbeat());
  EXPECT_LT(std::chrono::steady_clock::now() - before, 4s);
  EXPECT_EQ(quiet.heartbeat().sequence(), sequence);

  // Another sign watching every link sees other-link too, and no tables.
  auto bar = watch("sign/bar", "bar", {}, {});
  pb::SignUpdate all;
  ASSERT_TRUE(bar->reader->Read(&all));
  EXPECT_EQ(all.meters().links_size(), 2);
  EXPECT_EQ(all.meters().levels_size(), 3);
  EXPECT_EQ(all.meters().tables_size(), 0);
  EXPECT_EQ(all.meters().paytables_size(), 0);
  EXPECT_EQ(all.meters().hits_size(), 1);
  lobby->context.TryCancel();
  bar->context.TryCancel();
}

TEST_F(SignEndToEnd, RefusalsNameTheirStatus) {
  struct Case {
    const char* what;
    std::string principal;
    std::string sign_id;
    std::vector<std::string> links;
    std::vector<std::string> tables;
    grpc::StatusCode code;
  };
  const Case cases[] = {
      {"a sign acting for another", "sign/lobby", "bar", {}, {}, grpc::PERMISSION_DENIED},
      {"a table is not a sign", "table/T1", "T1", {}, {}, grpc::PERMISSION_DENIED},
      {"an admin is not a sign", "admin/e2e", "e2e", {}, {}, grpc::PERMISSION_DENIED},
      {"an unknown link", "sign/lobby", "lobby", {"nope"}, {}, grpc::NOT_FOUND},
      {"an unknown table", "sign/lobby", "lobby", {}, {"T9"}, grpc::NOT_FOUND},
      {"a link id too long",
       "sign/lobby",
       "lobby",
       {std::string(65, 'x')},
       {},
       grpc::INVALID_ARGUMENT},
      {"no sign id", "sign/lobby", "", {}, {}, grpc::PERMISSION_DENIED},
  };
  for (const Case& c : cases) {
    auto refused = watch(c.principal, c.sign_id, c.links, c.tables);
    pb::SignUpdate update;
    EXPECT_FALSE(refused->reader->Read(&update)) << c.what;
    EXPECT_EQ(refused->reader->Finish().error_code(), c.code) << c.what;
  }
}

// The daemon stops: every sign's watch ends OK, so that the sign shows it lost the controller
// and watches again.
TEST_F(SignEndToEnd, WatchesEndWhenTheDaemonStops) {
  auto lobby = watch("sign/lobby", "lobby", {}, {});
  pb::SignUpdate update;
  ASSERT_TRUE(lobby->reader->Read(&update));
  daemon_->send_signal(SIGTERM);
  while (lobby->reader->Read(&update)) {
  }
  EXPECT_TRUE(lobby->reader->Finish().ok());
  EXPECT_EQ(daemon_->wait_for_exit(20s), 0) << daemon_->stderr_text();
  daemon_.reset();
}

}  // namespace
}  // namespace jackpot
