#include "tests/support/browser.h"

#include <fcntl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>
#include <thread>

namespace jackpot::testing {

Browser::Browser(int port, const std::string& path) {
  char profile[] = "/tmp/jackpotd-chromium.XXXXXX";
  profile_ = mkdtemp(profile);
  log_ = profile_ + "/console.log";
  const std::string url = "http://127.0.0.1:" + std::to_string(port) + path;
  const std::string profile_arg = "--user-data-dir=" + profile_ + "/profile";
  pid_ = fork();
  if (pid_ == 0) {
    setpgid(0, 0);  // Chromium's own processes go with it.
    const int fd = ::open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    dup2(fd, 2);
    dup2(fd, 1);
    execlp("chromium", "chromium", "--headless", "--no-sandbox", "--disable-gpu",
           "--disable-dev-shm-usage", "--enable-logging=stderr", "--v=0", profile_arg.c_str(),
           url.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
}

Browser::~Browser() {
  if (pid_ > 0) {
    kill(-pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
    kill(-pid_, SIGKILL);  // Any helper process left behind.
  }
  std::error_code ignored;
  std::filesystem::remove_all(profile_, ignored);
}

std::vector<std::string> Browser::shown() const {
  std::ifstream in(log_);
  std::vector<std::string> lines;
  const std::regex line_pattern("\"jackpot-sign (\\{.*\\})\", source:");
  for (std::string line; std::getline(in, line);) {
    std::smatch match;
    if (std::regex_search(line, match, line_pattern)) lines.push_back(match[1]);
  }
  return lines;
}

std::optional<std::string> Browser::until(const std::function<bool(const std::string&)>& wanted,
                                          std::chrono::seconds limit) const {
  const auto until = std::chrono::steady_clock::now() + limit;
  while (std::chrono::steady_clock::now() < until) {
    for (const std::string& snapshot : shown()) {
      if (wanted(snapshot)) return snapshot;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return std::nullopt;
}

std::optional<std::string> Browser::until_shown(const std::vector<std::string>& parts,
                                                std::chrono::seconds limit) const {
  return until(
      [&parts](const std::string& snapshot) {
        return std::all_of(parts.begin(), parts.end(), [&](const std::string& part) {
          return snapshot.find(part) != std::string::npos;
        });
      },
      limit);
}

std::string Browser::log() const {
  std::ifstream in(log_);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

}  // namespace jackpot::testing
