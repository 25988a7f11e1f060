// Signs watch the floor over real mutual TLS (SignService.WatchMeters): a snapshot with the
// placards at once, then committed changes in sequence order (a contribution, the Dynamic Pays of
// a round, a hit with its reset), heartbeats while nothing changes, the hidden trigger's
// commitment and never its point, and every refusal with its status. The web sign in headless
// Chromium (Debian's chromium): the committed meter, a live update after a round played over
// gRPC, the Dynamic Pay lit on the placard and the hit banner; a screenshot is kept.
#include <arpa/inet.h>
#include <fcntl.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <pqxx/pqxx>
#include <regex>
#include <sstream>
#include <thread>

#include "jackpot/v1/admin.grpc.pb.h"
#include "jackpot/v1/sign.grpc.pb.h"
#include "jackpot/v1/table.grpc.pb.h"
#include "tests/support/browser.h"
#include "tests/support/daemon_process.h"
#include "tests/support/test_database.h"
#include "tests/support/test_pki.h"

namespace jackpot {
namespace {

using namespace std::chrono_literals;
using testing::Browser;
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
                                 "off", "--floor", floor_, "--sign-hit-seconds", "30",
                                 "--sign-http", "127.0.0.1:0", "--sign-streams-per-peer-max", "2"});
    const auto line = daemon_->read_stdout_line(30s);
    ASSERT_TRUE(line) << daemon_->stderr_text();
    address_ = testing::serving_address(*line);
    ASSERT_FALSE(address_.empty()) << *line;
    std::smatch match;
    ASSERT_TRUE(std::regex_search(*line, match, std::regex("signs on http://127.0.0.1:([0-9]+)/")))
        << *line;
    web_port_ = std::stoi(match[1]);
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
  int web_port_ = 0;
};

// One HTTP request to the web sign; the answer, read until the server closes it (it closes every
// answer but an event stream), until it holds `stop_at` when one is given, or for 10 s at most.
std::string http(int port, const std::string& method, const std::string& path,
                 const std::string& stop_at = "") {
  const int for_ms = 10000;
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_port = htons(static_cast<std::uint16_t>(port));
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  timeval timeout{for_ms / 1000, (for_ms % 1000) * 1000};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, sizeof timeout);
  std::string answer;
  if (connect(fd, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0) {
    const std::string request = method + " " + path + " HTTP/1.1\r\nHost: x\r\n\r\n";
    if (send(fd, request.data(), request.size(), 0) == static_cast<ssize_t>(request.size())) {
      const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(for_ms);
      char buffer[4096];
      while (std::chrono::steady_clock::now() < until) {
        const ssize_t got = recv(fd, buffer, sizeof buffer, 0);
        if (got <= 0) break;
        answer.append(buffer, static_cast<std::size_t>(got));
        if (!stop_at.empty() && answer.find(stop_at) != std::string::npos) break;
      }
    }
  }
  close(fd);
  return answer;
}

// A screenshot of the page as headless Chromium shows it once loaded.
void screenshot(int port, const std::string& path, const std::string& file) {
  char profile[] = "/tmp/jackpotd-chromium.XXXXXX";
  const std::string profile_dir = mkdtemp(profile);
  std::filesystem::create_directories(std::filesystem::path(file).parent_path());
  const std::string command =
      "timeout 60 chromium --headless --no-sandbox --disable-gpu --disable-dev-shm-usage "
      "--user-data-dir=" +
      profile_dir + "/profile --window-size=1280,900 --timeout=3000 --screenshot=" + file +
      " 'http://127.0.0.1:" + std::to_string(port) + path + "' >/dev/null 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  std::error_code ignored;
  std::filesystem::remove_all(profile_dir, ignored);
}

// Cents as the web sign shows them: "$1,001.00".
std::string dollars(std::int64_t cents) {
  std::string units = std::to_string(cents / 100);
  for (int at = static_cast<int>(units.size()) - 3; at > 0; at -= 3) {
    units.insert(static_cast<std::size_t>(at), ",");
  }
  const std::int64_t rest = cents % 100;
  return "$" + units + "." + (rest < 10 ? "0" : "") + std::to_string(rest);
}

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
  // Due after 2 s and a publication interval (sign.proto); the bound leaves a loaded machine
  // some room.
  EXPECT_LT(std::chrono::steady_clock::now() - before, 6s);
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
  // A third watch from this host passes --sign-streams-per-peer-max (2 here).
  auto third = watch("sign/lobby", "lobby", {}, {});
  pb::SignUpdate refused;
  EXPECT_FALSE(third->reader->Read(&refused));
  const grpc::Status exhausted = third->reader->Finish();
  EXPECT_EQ(exhausted.error_code(), grpc::RESOURCE_EXHAUSTED);
  EXPECT_NE(exhausted.error_message().find("--sign-streams-per-peer-max"), std::string::npos)
      << exhausted.error_message();
  lobby->context.TryCancel();
  bar->context.TryCancel();
}

// A sign that stops reading holds nothing up: while it stalls, a fast sign sees every change as
// it is published and the last one within a few seconds, and the tables and admins are answered;
// when the stalled sign reads again it gets what the network buffered, then the latest.
TEST_F(SignEndToEnd, AStalledSignNeitherSlowsAFastOneNorTheFloor) {
  auto stalled = watch("sign/lobby", "lobby", {"sign-link"}, {});
  pb::SignUpdate update;
  ASSERT_TRUE(stalled->reader->Read(&update));  // Then it reads nothing.
  std::uint64_t stalled_sequence = update.meters().sequence();
  auto fast = watch("sign/bar", "bar", {"sign-link"}, {});
  ASSERT_TRUE(fast->reader->Read(&update));
  std::uint64_t sequence = update.meters().sequence();
  auto admin = pb::AdminService::NewStub(channel_as(address_, "admin/e2e"));
  const int adjustments = 60;
  for (int i = 1; i <= adjustments; ++i) {
    pb::AdjustMeterRequest request;
    request.set_link_id("sign-link");
    request.set_level(1);
    request.set_amount_micros(10'000);
    request.set_reason("stall test");
    request.set_request_id("stall-" + std::to_string(i));
    pb::AdjustMeterResponse response;
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + 10s);
    ASSERT_TRUE(admin->AdjustMeter(&context, request, &response).ok());
    std::this_thread::sleep_for(20ms);
  }
  const auto last_asked = std::chrono::steady_clock::now();
  const std::int64_t last = 100000 + adjustments;
  const auto seen =
      until(*fast, sequence, [&](const pb::MeterSnapshot& s) { return level_cents(s, 1) == last; });
  ASSERT_TRUE(seen);
  // About 300 ms (commit, the feed's pacing of 4 a second, the write). The stalled sign reads
  // nothing until after this, so a feed it held would show nothing at all; a feed that sent
  // every change one by one at its pace would take 15 s.
  EXPECT_LT(std::chrono::steady_clock::now() - last_asked, 5s);
  // The stalled sign, reading again: snapshots in sequence order, ending on the latest.
  const auto caught_up = until(*stalled, stalled_sequence, [&](const pb::MeterSnapshot& s) {
    return level_cents(s, 1) == last;
  });
  ASSERT_TRUE(caught_up);
  stalled->context.TryCancel();
  fast->context.TryCancel();
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
      {"257 link ids",
       "sign/lobby",
       "lobby",
       std::vector<std::string>(257, "sign-link"),
       {},
       grpc::INVALID_ARGUMENT},
      {"257 table ids",
       "sign/lobby",
       "lobby",
       {},
       std::vector<std::string>(257, "T1"),
       grpc::INVALID_ARGUMENT},
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

TEST_F(SignEndToEnd, TheWebSignAnswersEachPathWithItsStatus) {
  struct Case {
    const char* method;
    std::string path;
    const char* status;
    const char* contains;
  };
  const Case cases[] = {
      {"GET", "/sign/", "HTTP/1.1 200", "/sign/table/T1"},
      {"GET", "/sign/sign-link", "HTTP/1.1 200", "/sign/sign.js"},
      {"GET", "/sign/table/T1", "HTTP/1.1 200", "Content-Security-Policy: default-src 'self'"},
      {"GET", "/sign/sign.js", "HTTP/1.1 200", "EventSource"},
      {"GET", "/sign/sign.css", "HTTP/1.1 200", "text/css"},
      {"GET", "/sign/status", "HTTP/1.1 200", "\"event_streams_max\":256"},
      {"GET", "/sign/nope", "HTTP/1.1 404", "no such link"},
      {"GET", "/sign/table/T9", "HTTP/1.1 404", "no such table"},
      {"GET", "/sign/events", "HTTP/1.1 400", "name one link= or one table="},
      {"GET", "/sign/events?link=sign-link&table=T1", "HTTP/1.1 400", "name one"},
      {"GET", "/sign/events?link=nope", "HTTP/1.1 404", "no such link"},
      {"GET", "/sign/events?table=" + std::string(65, 'x'), "HTTP/1.1 400", "longer than 64"},
      {"POST", "/sign/", "HTTP/1.1 405", "read-only"},
      {"GET", "/metrics", "HTTP/1.1 404", ""},
  };
  for (const Case& c : cases) {
    const std::string answer = http(web_port_, c.method, c.path);
    EXPECT_EQ(answer.substr(0, 12), c.status) << c.method << " " << c.path << "\n" << answer;
    EXPECT_NE(answer.find(c.contains), std::string::npos) << c.path << "\n" << answer;
  }
  // An event stream: the snapshot at once, as JSON, with the table's placard; never a reserve or
  // a hidden point.
  const std::string events = http(web_port_, "GET", "/sign/events?table=T1", "}\n\n");
  EXPECT_NE(events.find("Content-Type: text/event-stream"), std::string::npos) << events;
  EXPECT_NE(events.find("event: snapshot\ndata: {\"sequence\":\""), std::string::npos) << events;
  EXPECT_NE(events.find("\"paytables\":[{\"table\":\"T1\""), std::string::npos) << events;
  EXPECT_NE(events.find("\"commitment\":\""), std::string::npos) << events;
  EXPECT_EQ(events.find("reserve"), std::string::npos) << events;
  // The hidden point, as the database keeps it apart, is nowhere in what a sign gets, nor its
  // salt. In micros (a point in cents could equal a pay on the placard by chance); the point may
  // be the range's top, which the commitment publishes.
  auto connection = database_.connect();
  pqxx::read_transaction tx(*connection);
  const auto secret = tx.exec1(
      "SELECT point_micros, encode(salt, 'hex') FROM jackpot_private.trigger_secrets "
      "ORDER BY draw_id DESC LIMIT 1");
  const std::int64_t point = secret[0].as<std::int64_t>();
  // As a whole number, not as part of a longer one.
  const auto holds_number = [](const std::string& text, std::int64_t number) {
    return std::regex_search(text,
                             std::regex("(^|[^0-9])" + std::to_string(number) + "([^0-9]|$)"));
  };
  const bool at_the_top = point == 250'000'000;
  EXPECT_TRUE(at_the_top || !holds_number(events, point)) << point << "\n" << events;
  EXPECT_EQ(events.find(secret[1].as<std::string>()), std::string::npos) << events;
  std::string grpc_text;
  {
    auto bar = watch("sign/bar", "bar", {}, {});
    pb::SignUpdate update;
    ASSERT_TRUE(bar->reader->Read(&update));
    grpc_text = update.DebugString();
    bar->context.TryCancel();
  }
  EXPECT_TRUE(at_the_top || !holds_number(grpc_text, point)) << point << "\n" << grpc_text;
}

// The table's sign in a real browser: the committed meters at once, then, while the page stays
// open, a round played over gRPC: the royal flush's banner with the meter after its reset, and
// the next round's Dynamic Pays lit on the placard.
TEST_F(SignEndToEnd, TheWebSignInABrowserShowsTheRoundAsItIsPlayed) {
  const Browser browser(web_port_, "/sign/table/T1");
  const auto first = browser.until_shown({"\"sign-link/1\":100000"});
  ASSERT_TRUE(first) << browser.log();
  EXPECT_NE(first->find("\"status\":\"open\""), std::string::npos) << *first;
  EXPECT_NE(first->find("\"banner\":\"\""), std::string::npos) << *first;

  open("T1", 1);
  lock("T1", 1, 1000);
  settle("T1", 1, "Royal Flush");
  const pb::OpenRoundResponse next = open("T1", 2);
  ASSERT_GT(next.dynamic_pays_size(), 0);
  std::vector<std::string> expected = {
      "\"sign-link/1\":100000",
      "\"banner\":\"Royal Flush" + dollars(100100) + "Royal Flush hit at table T1, seat 1",
      "now " + dollars(100000)};
  // Each lit row: the hand, its default struck, the pay drawn, the tag.
  for (const pb::DynamicPay& pay : next.dynamic_pays(0).pays()) {
    expected.push_back(pay.hand() + "$");
    expected.push_back(dollars(pay.amount_cents()) + "DYNAMIC PAY");
  }
  const auto played = browser.until_shown(expected);
  ASSERT_TRUE(played) << browser.log();
  // The page never showed more than was committed, and its sequences rose.
  std::uint64_t last = 0;
  for (const std::string& snapshot : browser.shown()) {
    std::smatch match;
    ASSERT_TRUE(std::regex_search(snapshot, match, std::regex("\"sequence\":\"([0-9]+)\"")));
    const std::uint64_t sequence = std::stoull(match[1]);
    EXPECT_GT(sequence, last) << snapshot;
    last = sequence;
    ASSERT_TRUE(std::regex_search(snapshot, match, std::regex("\"sign-link/1\":([0-9]+)")));
    EXPECT_TRUE(match[1] == "100000" || match[1] == "100100") << snapshot;
  }

  // A screenshot as the test's artifact (look at it: tests/artifacts/ in the build directory).
  const std::string shot = std::string(JACKPOTD_ARTIFACT_DIR) + "/web-sign-table.png";
  screenshot(web_port_, "/sign/table/T1", shot);
  EXPECT_TRUE(std::filesystem::exists(shot));
  std::printf("web sign screenshot: %s\n", shot.c_str());
}

// jackpot-sign, the operators' terminal sign: the snapshot as a table (--once), a refusal with
// its exit code, and a usage error.
TEST_F(SignEndToEnd, TheTerminalSignPrintsTheFloor) {
  const auto jackpot_sign = [&](const std::string& principal, const std::string& arguments) {
    return testing::run_tool(JACKPOT_SIGN_BINARY, address_, principal, arguments);
  };
  auto lobby = watch("sign/lobby", "lobby", {}, {});
  pb::SignUpdate first;
  ASSERT_TRUE(lobby->reader->Read(&first));
  std::uint64_t sequence = first.meters().sequence();
  open("T1", 1);
  lock("T1", 1, 1000);
  settle("T1", 1, "Royal Flush");
  // The feed publishes at most four times a second: --once prints the latest published state,
  // so wait until a sign has been sent the hit.
  ASSERT_TRUE(
      until(*lobby, sequence, [](const pb::MeterSnapshot& s) { return s.hits_size() > 0; }));
  const auto [shown, printed] = jackpot_sign("sign/lobby", "--once --table T1");
  EXPECT_EQ(shown, 0) << printed;
  for (const char* part :
       {"\nsign-link       OPEN         1 Royal Flush                      $1,000.00\n",
        "2 Must-Hit-By $250                    $50.50         $250.00  hidden trigger ",
        "\nother-link      OPEN         1 Royal Flush                        $500.00\n", "HITS\n",
        "Royal Flush                $1,001.00  table T1 round 1 seat 1  (now $1,000.00)",
        "TABLES\n  T1          round 1\n"}) {
    EXPECT_NE(printed.find(part), std::string::npos) << part << "\n" << printed;
  }
  const auto [refused, refusal] = jackpot_sign("sign/lobby", "--once --link nope");
  EXPECT_EQ(refused, 1) << refusal;
  EXPECT_NE(refusal.find("no link"), std::string::npos) << refusal;
  const auto [not_a_sign, not_a_sign_printed] = jackpot_sign("admin/e2e", "--once");
  EXPECT_EQ(not_a_sign, 2) << not_a_sign_printed;
}

}  // namespace
}  // namespace jackpot
