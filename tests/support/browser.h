#pragma once

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <vector>

namespace jackpot::testing {

// Headless Chromium (Debian's chromium) showing one page of the web sign until it is destroyed,
// its console (one "jackpot-sign {...}" line per snapshot the page showed) in a file.
class Browser {
 public:
  Browser(int port, const std::string& path);
  ~Browser();
  Browser(const Browser&) = delete;
  Browser& operator=(const Browser&) = delete;

  // The snapshots the page showed so far, as the JSON its console line carries.
  std::vector<std::string> shown() const;
  // Waits up to `limit` for a snapshot shown that holds every one of `parts`.
  std::optional<std::string> until_shown(
      const std::vector<std::string>& parts,
      std::chrono::seconds limit = std::chrono::seconds(90)) const;
  // Waits up to `limit` for a snapshot shown that `wanted` accepts.
  std::optional<std::string> until(const std::function<bool(const std::string&)>& wanted,
                                   std::chrono::seconds limit = std::chrono::seconds(90)) const;
  // Everything Chromium wrote.
  std::string log() const;

 private:
  std::string profile_;
  std::string log_;
  pid_t pid_ = -1;
};

}  // namespace jackpot::testing
