// jackpot-tablesim against the real jackpotd over mutual TLS: its tables play every game's deal
// (Hold'em with the flop for Five-Card Linked, Stud with link cards, High Card Flush) without a
// refusal; it rides out a jackpotd killed with SIGKILL and restarted by sending the same requests
// again, every round it finished is in the database exactly once and every round it opened is
// finished; killed itself mid-round, its next run resumes the round from its state directory.
// The ledger balances after each run.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <pqxx/pqxx>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/support/daemon_process.h"
#include "tests/support/test_database.h"
#include "tests/support/test_pki.h"

namespace jackpot {
namespace {

using namespace std::chrono_literals;
using testing::DaemonProcess;
using testing::TestDatabase;
using testing::TestPki;

constexpr const char* kFloor = R"(
links {
  id: "royal"
  approval_threshold: "100.00"
  max_wager_units: 5
  levels { level: 1 name: "Royal Flush" seed: "1000.00" meter_rate_ppm: 150000 reserve_rate_ppm: 25000 }
  levels { level: 2 name: "Must-Hit-By $250" seed: "50.00" meter_rate_ppm: 100000 must_hit_by: "250.00" trigger: TRIGGER_HIDDEN_UNIFORM }
}
links { id: "five" levels { level: 1 name: "5-Card" seed: "2500.00" meter_rate_ppm: 120000 } approval_threshold: "1000.00" }
links { id: "flush" levels { level: 1 name: "7-Card SF" seed: "10000.00" meter_rate_ppm: 150000 } approval_threshold: "1000.00" }
tables { id: "T1" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6
  links { link_id: "royal" paytable_id: "PT-BJS-HUH-5CP-12" }
  links { link_id: "five" paytable_id: "PT-BJS-5CL-01" community: COMMUNITY_FLOP } }
tables { id: "T2" game: TABLE_GAME_MISSISSIPPI_STUD seats: 6
  links { link_id: "five" paytable_id: "PT-BJS-5CL-01" community: COMMUNITY_LINK_CARDS } }
tables { id: "T3" game: TABLE_GAME_HIGH_CARD_FLUSH seats: 7
  links { link_id: "flush" paytable_id: "HCF-PROG-PAYTABLE-1" } }
)";
const std::vector<std::string> kTables = {"T1", "T2", "T3"};

std::string temporary_directory() {
  char name[] = "/tmp/jackpotd-tablesim.XXXXXX";
  return mkdtemp(name);
}

// jackpotd on the test's database at a fixed address once it has one, restartable there.
class Daemon {
 public:
  Daemon(std::string dsn, std::string floor) : dsn_(std::move(dsn)), floor_(std::move(floor)) {}
  void start(const std::string& listen = "127.0.0.1:0") {
    process_ = std::make_unique<DaemonProcess>(std::vector<std::string>{
        "--db", dsn_, "--listen", listen, "--metrics", "off", "--floor", floor_});
    const auto line = process_->read_stdout_line(30s);
    ASSERT_TRUE(line) << process_->stderr_text();
    address = testing::serving_address(*line);
    ASSERT_NE(address, "") << *line;
  }
  void kill_hard() {
    process_->send_signal(SIGKILL);
    process_->wait_for_exit(20s);
  }
  std::string stderr_text() const { return process_->stderr_text(); }
  std::string address;

 private:
  std::string dsn_, floor_;
  std::unique_ptr<DaemonProcess> process_;
};

// jackpot-tablesim as a child process, its stdout and stderr in a file.
class Simulator {
 public:
  explicit Simulator(const std::vector<std::string>& args) {
    output_ = temporary_directory() + "/tablesim.out";
    pid_ = fork();
    if (pid_ == 0) {
      const int fd = ::open(output_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(fd, 1);
      dup2(fd, 2);
      std::vector<char*> argv;
      std::string binary = JACKPOT_TABLESIM_BINARY;
      argv.push_back(binary.data());
      std::vector<std::string> copy = args;
      for (std::string& arg : copy) argv.push_back(arg.data());
      argv.push_back(nullptr);
      execv(binary.c_str(), argv.data());
      _exit(127);
    }
  }
  ~Simulator() {
    if (pid_ > 0 && !exited_) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    std::error_code ignored;
    std::filesystem::remove_all(std::filesystem::path(output_).parent_path(), ignored);
  }
  Simulator(const Simulator&) = delete;
  Simulator& operator=(const Simulator&) = delete;

  // The exit code, or -1 when it did not exit in time (or died of a signal).
  int wait(std::chrono::seconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    int status = 0;
    while (std::chrono::steady_clock::now() < until) {
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        exited_ = true;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(50ms);
    }
    return -1;
  }
  void signal(int number) { kill(pid_, number); }
  std::string output() const {
    std::ifstream in(output_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // Waits until the last value `pattern` captures reaches `at_least`; that value, or the last
  // seen (-1 for none) when 60 s pass first: a simulator that stopped playing, not a slow one.
  long long until_at_least(const std::string& pattern, long long at_least) const {
    const auto until = std::chrono::steady_clock::now() + 60s;
    long long value = last(pattern);
    while (value < at_least && std::chrono::steady_clock::now() < until) {
      std::this_thread::sleep_for(100ms);
      value = last(pattern);
    }
    return value;
  }
  // The number after `label` in the last line that has it ("123 rounds"), or -1.
  long long last(const std::string& pattern) const {
    const std::string text = output();
    const std::regex expression(pattern);
    long long value = -1;
    for (auto it = std::sregex_iterator(text.begin(), text.end(), expression);
         it != std::sregex_iterator(); ++it) {
      value = std::stoll((*it)[1]);
    }
    return value;
  }

 private:
  pid_t pid_ = -1;
  bool exited_ = false;
  std::string output_;
};

class TablesimTest : public ::testing::Test {
 protected:
  void SetUp() override {
    for (const std::string& table : kTables) TestPki::site().certificate_file("table/" + table);
    work_ = temporary_directory();
    floor_ = work_ + "/floor.textproto";
    std::ofstream(floor_) << kFloor;
    daemon_ = std::make_unique<Daemon>(database_.dsn(), floor_);
    daemon_->start();
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(work_, ignored);
  }

  std::vector<std::string> simulator_args(const std::vector<std::string>& more) const {
    std::vector<std::string> args = {"--target",
                                     daemon_->address,
                                     "--pki",
                                     TestPki::site().dir(),
                                     "--floor",
                                     floor_,
                                     "--state-dir",
                                     work_ + "/state",
                                     "--seed",
                                     "e2e",
                                     "--progress-seconds",
                                     "1"};
    args.insert(args.end(), more.begin(), more.end());
    return args;
  }

  long long count(const std::string& sql) {
    pqxx::connection connection(database_.dsn());
    pqxx::work work(connection);
    return work.exec1(sql)[0].as<long long>();
  }
  // Rounds jackpotd opened that neither settled nor voided.
  long long unfinished_rounds() {
    return count(
        "SELECT count(*) FROM rounds r WHERE round_id > 0 AND NOT EXISTS (SELECT 1 FROM "
        "round_events e WHERE e.round_key = r.round_key AND e.phase IN ('settled', 'voided'))");
  }
  long long finished_rounds(const std::string& phase) {
    return count("SELECT count(*) FROM round_events WHERE phase = '" + phase + "'");
  }
  void expect_balanced() {
    const auto [code, printed] =
        testing::run_tool(JACKPOTCTL_BINARY, daemon_->address, "admin/e2e", "report");
    EXPECT_EQ(code, 0) << printed;
  }

  TestDatabase database_;
  std::string work_, floor_;
  std::unique_ptr<Daemon> daemon_;
};

TEST_F(TablesimTest, RidesOutAJackpotdKilledAndRestartedAndFinishesEveryRoundOnce) {
  // Progress lines come every second; the tables play until told to stop. Each step waits for
  // what it needs to see, however slow the machine.
  const std::string progress_rounds = R"(tablesim: [0-9]+ s: ([0-9]+) rounds)";
  Simulator simulator(simulator_args({"--fast", "--void-probability", "0.1"}));
  const long long before_kill = simulator.until_at_least(progress_rounds, 1);
  ASSERT_GT(before_kill, 0) << simulator.output();
  daemon_->kill_hard();
  std::this_thread::sleep_for(1500ms);  // The tables' requests fail meanwhile, and are retried.
  // No round finishes while jackpotd is down, and a progress line came meanwhile: this counts
  // every round played before the restart.
  const long long at_restart = simulator.last(progress_rounds);
  daemon_->start(daemon_->address);
  EXPECT_GT(simulator.until_at_least(progress_rounds, at_restart + 30), at_restart + 29)
      << simulator.output();
  EXPECT_GT(simulator.until_at_least(R"(tablesim: [0-9]+ s: [0-9]+ rounds \(([0-9]+) voided)", 1),
            0)
      << simulator.output();
  simulator.signal(SIGINT);  // Each table finishes its round, then the simulator reports.
  ASSERT_EQ(simulator.wait(40s), 0) << simulator.output();

  const std::string output = simulator.output();
  EXPECT_NE(output.find("; sending it again"), std::string::npos) << output;
  EXPECT_NE(output.find(" answered"), std::string::npos) << output;
  EXPECT_GT(simulator.last(R"(([0-9]+) retries)"), 0) << output;
  EXPECT_EQ(simulator.last(R"(([0-9]+) errors)"), 0) << output;
  EXPECT_EQ(simulator.last(R"(([0-9]+) refused)"), 0) << output;
  const long long rounds = simulator.last(R"(done: [0-9]+ s: ([0-9]+) rounds)");
  const long long voided = simulator.last(R"(done: [0-9]+ s: [0-9]+ rounds \(([0-9]+) voided)");
  EXPECT_GT(rounds, at_restart + 29) << output;  // It played on after the restart.
  EXPECT_GT(voided, 0) << output;
  // Every round it finished, once: a retried request whose first answer was lost is not
  // counted twice by either side.
  EXPECT_EQ(finished_rounds("settled") + finished_rounds("voided"), rounds);
  EXPECT_EQ(finished_rounds("voided"), voided);
  EXPECT_EQ(unfinished_rounds(), 0);
  expect_balanced();
}

TEST_F(TablesimTest, ANextRunResumesTheRoundsAKilledRunLeftAndGoesOn) {
  {
    Simulator first(simulator_args({"--fast"}));
    // Killed once every table keeps a record of a later round than its first (60 s at most):
    // mid-round, most likely.
    const auto deadline = std::chrono::steady_clock::now() + 60s;
    const auto past_first_round = [&] {
      for (const std::string& table : kTables) {
        std::ifstream in(work_ + "/state/" + table + ".round");
        long long round = 0;
        if (!(in >> round) || round < 2) return false;
      }
      return true;
    };
    while (!past_first_round() && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(20ms);
    }
    first.signal(SIGKILL);
    first.wait(10s);
  }
  std::map<std::string, std::pair<long long, std::string>> left;  // Table -> round, phase.
  for (const std::string& table : kTables) {
    std::ifstream in(work_ + "/state/" + table + ".round");
    long long round = 0;
    std::string phase;
    ASSERT_TRUE(in >> round >> phase) << table;
    left[table] = {round, phase};
  }
  const long long opened_before = count("SELECT count(*) FROM rounds WHERE round_id > 0");

  Simulator second(simulator_args({"--fast", "--rounds", "60"}));
  ASSERT_EQ(second.wait(40s), 0) << second.output();
  const std::string output = second.output();
  for (const auto& [table, state] : left) {
    const bool resumed =
        output.find(table + ": resuming round " + std::to_string(state.first)) != std::string::npos;
    EXPECT_EQ(resumed, state.second == "open") << table << " " << state.second << "\n" << output;
  }
  EXPECT_EQ(second.last(R"(([0-9]+) errors)"), 0) << output;
  EXPECT_EQ(second.last(R"(([0-9]+) refused)"), 0) << output;
  EXPECT_GT(count("SELECT count(*) FROM rounds WHERE round_id > 0"), opened_before);
  EXPECT_EQ(unfinished_rounds(), 0);
  expect_balanced();
}

TEST_F(TablesimTest, RefusesAFloorItCannotDealAndATableNotOnIt) {
  std::ofstream(work_ + "/bad.textproto") << "links { id: \"x\" ";
  Simulator bad_floor({"--target", daemon_->address, "--pki", TestPki::site().dir(), "--floor",
                       work_ + "/bad.textproto"});
  EXPECT_EQ(bad_floor.wait(20s), 2) << bad_floor.output();
  Simulator unknown(simulator_args({"--tables", "T9"}));
  EXPECT_EQ(unknown.wait(20s), 2);
  EXPECT_NE(unknown.output().find("no table T9 on the floor"), std::string::npos)
      << unknown.output();
}

}  // namespace
}  // namespace jackpot
