// ops/demo as a newcomer runs it, on a private var/ and free ports: PostgreSQL, jackpotd and the
// example floor's tables come up; rounds are played; a payout waits for a supervisor and the
// jackpotctl command the demo printed approves it; the web sign it printed shows the Royal Flush
// meter above its seed in headless Chromium; the metrics URL it printed answers; SIGTERM stops
// everything cleanly; and a second run continues where the first stopped.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <optional>
#include <regex>
#include <sstream>
#include <thread>

#include "tests/support/browser.h"
#include "tests/support/daemon_process.h"
#include "tests/support/test_pki.h"

namespace jackpot {
namespace {

using namespace std::chrono_literals;
using testing::Browser;

// ops/demo as a child process in a process group of its own, everything it prints in a file.
class Demo {
 public:
  explicit Demo(const std::string& var) : var_(var) {
    output_ = var + "/../" + std::filesystem::path(var).filename().string() + ".out." +
              std::to_string(++runs_);
    pid_ = fork();
    if (pid_ == 0) {
      setpgid(0, 0);
      const int fd = ::open(output_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      dup2(fd, 1);
      dup2(fd, 2);
      if (chdir(JACKPOTD_SOURCE_DIR) != 0) _exit(127);
      execl("ops/demo", "ops/demo", "--fast", "--no-build", "--build-dir", JACKPOTD_BUILD_DIR,
            "--var", var.c_str(), "--listen", "127.0.0.1:0", "--metrics", "127.0.0.1:0", "--signs",
            "127.0.0.1:0", static_cast<char*>(nullptr));
      _exit(127);
    }
  }
  // A test that failed midway leaves nothing running: the script is asked to stop what it
  // started (its children run in sessions of their own, PostgreSQL detached), and what is left
  // then is killed by its pid file, the cluster stopped.
  ~Demo() {
    if (pid_ > 0 && !exited_ && stop(SIGTERM, std::chrono::seconds(60)) == -1 && !exited_) {
      kill(-pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    // Only a process that is still the demo's: its command line names this var/.
    for (const char* name : {"tablesim.pid", "jackpotd.pid"}) {
      std::ifstream in(var_ + "/demo/" + name);
      pid_t left = 0;
      if (!(in >> left) || left <= 0) continue;
      std::ifstream cmdline("/proc/" + std::to_string(left) + "/cmdline");
      std::stringstream arguments;
      arguments << cmdline.rdbuf();
      if (arguments.str().find(var_) != std::string::npos) kill(left, SIGKILL);
    }
    testing::run_command("cd '" JACKPOTD_SOURCE_DIR
                         "' && bash -c 'source ops/lib/pg.sh && "
                         "pg_cluster_stop \"$0\"' '" +
                         var_ + "/pg'");
    std::error_code ignored;
    std::filesystem::remove(output_, ignored);
  }
  Demo(const Demo&) = delete;
  Demo& operator=(const Demo&) = delete;

  std::string output() const {
    std::ifstream in(output_);
    std::stringstream text;
    text << in.rdbuf();
    return text.str();
  }
  // The first match of `pattern`'s group 1 in what the demo printed, waited for up to `limit`.
  std::optional<std::string> until(const std::string& pattern, std::chrono::seconds limit) {
    const std::regex expression(pattern);
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
      const std::string text = output();
      std::smatch match;
      if (std::regex_search(text, match, expression)) return match[1];
      if (exited()) return std::nullopt;
      std::this_thread::sleep_for(100ms);
    }
    return std::nullopt;
  }
  // Stops the script (not its children: it stops them) and returns its exit code, -1 when it
  // did not exit within the limit.
  int stop(int signal_number, std::chrono::seconds limit) {
    kill(pid_, signal_number);
    const auto until = std::chrono::steady_clock::now() + limit;
    while (std::chrono::steady_clock::now() < until) {
      if (exited()) return WIFEXITED(status_) ? WEXITSTATUS(status_) : -1;
      std::this_thread::sleep_for(100ms);
    }
    return -1;
  }

 private:
  bool exited() {
    if (!exited_ && waitpid(pid_, &status_, WNOHANG) == pid_) exited_ = true;
    return exited_;
  }
  static inline int runs_ = 0;
  std::string var_;
  pid_t pid_ = -1;
  int status_ = 0;
  bool exited_ = false;
  std::string output_;
};

class DemoTest : public ::testing::Test {
 protected:
  void SetUp() override {
    char name[] = "/tmp/jackpotd-demo.XXXXXX";
    root_ = mkdtemp(name);
    var_ = root_ + "/demo var";  // A space in the path, as in many a home directory.
    std::filesystem::create_directory(var_);
    // The cluster runs as the postgres user, who must be able to enter it.
    for (const std::string& dir : {root_, var_}) {
      std::filesystem::permissions(dir, std::filesystem::perms::owner_all |
                                            std::filesystem::perms::group_exec |
                                            std::filesystem::perms::others_exec);
    }
  }
  void TearDown() override {
    std::error_code ignored;
    std::filesystem::remove_all(root_, ignored);
  }
  std::string root_;
  std::string var_;
};

TEST_F(DemoTest, TheFloorPlaysAPayoutIsApprovedTheSignShowsTheMeterAndASecondRunGoesOn) {
  std::string approved_id;
  {
    Demo demo(var_);
    const auto approve = demo.until(R"(ops/demo: approve +(.*)\n)", 120s);
    ASSERT_TRUE(approve) << demo.output();
    EXPECT_NE(demo.output().find("ops/demo: created PostgreSQL cluster and database"),
              std::string::npos);
    const auto metrics_port = demo.until(R"(ops/demo: metrics +http://127\.0\.0\.1:([0-9]+)/)", 1s);
    ASSERT_TRUE(metrics_port) << demo.output();
    // The psql command as printed reaches the demo's database.
    const auto psql = demo.until(R"(ops/demo: PostgreSQL +(.*)\n)", 1s);
    ASSERT_TRUE(psql) << demo.output();
    const auto [psql_code, psql_printed] =
        testing::run_command(*psql + " -Atc 'SELECT count(*) FROM floor_versions'");
    EXPECT_EQ(psql_code, 0) << *psql << "\n" << psql_printed;
    EXPECT_EQ(psql_printed, "1\n") << *psql;

    // Rounds are played, and a payout waits for a supervisor.
    const auto rounds = demo.until(R"(tablesim: [0-9]+ s: ([1-9][0-9]*) rounds)", 60s);
    ASSERT_TRUE(rounds) << demo.output();
    const auto payout = demo.until(R"(\(payout ([0-9]+), waits for a supervisor\))", 120s);
    ASSERT_TRUE(payout) << demo.output();
    approved_id = *payout;

    // The approve command exactly as printed, with the payout and a request id filled in.
    std::string command = *approve;
    command.replace(command.find("PAYOUT_ID"), 9, *payout);
    command.replace(command.find("any-unique-text"), 15, "demo-test-" + *payout);
    // Its paths are relative to the checkout.
    const auto [code, printed] = testing::run_command("cd " JACKPOTD_SOURCE_DIR " && " + command);
    EXPECT_EQ(code, 0) << command << "\n" << printed;
    EXPECT_NE(printed.find("payout " + *payout + " PAID"), std::string::npos) << printed;

    // The Royal Flush link's page shows its meter risen above the $1,000.00 seed.
    const auto sign_port = demo.until(R"(ops/demo: signs +http://127\.0\.0\.1:([0-9]+)/sign/)", 1s);
    ASSERT_TRUE(sign_port) << demo.output();
    const Browser browser(std::stoi(*sign_port), "/sign/huh-royal");
    const auto meter = browser.until([](const std::string& snapshot) {
      std::smatch match;
      return std::regex_search(snapshot, match, std::regex(R"("huh-royal/1":([0-9]+))")) &&
             std::stoll(match[1]) > 100000;
    });
    EXPECT_TRUE(meter) << browser.log();

    const std::string metrics = testing::http_get(std::stoi(*metrics_port), "/metrics");
    EXPECT_NE(metrics.find("200 OK"), std::string::npos) << metrics;

    EXPECT_EQ(demo.stop(SIGTERM, 90s), 143) << demo.output();
    const std::string output = demo.output();
    EXPECT_NE(output.find("ops/demo: stopped the tables, jackpotd and PostgreSQL"),
              std::string::npos)
        << output;
    EXPECT_NE(output.find("tablesim: done: "), std::string::npos) << output;
    EXPECT_NE(output.find(", 0 errors"), std::string::npos) << output;
    // jackpotd kept its last committed batch: a restored older backup would be refused.
    EXPECT_TRUE(std::filesystem::exists(var_ + "/demo/commit-mark"));
  }

  // The second run: the same cluster and tables, no new cluster, rounds go on without a refusal.
  Demo again(var_);
  const auto rounds = again.until(R"(tablesim: [0-9]+ s: ([1-9][0-9]*) rounds)", 120s);
  ASSERT_TRUE(rounds) << again.output();
  EXPECT_EQ(again.output().find("created PostgreSQL cluster"), std::string::npos) << again.output();
  EXPECT_EQ(again.stop(SIGTERM, 90s), 143) << again.output();
  const std::string output = again.output();
  EXPECT_NE(output.find(", 0 refused, 0 errors"), std::string::npos) << output;
}

}  // namespace
}  // namespace jackpot
