#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <string_view>

namespace jackpot {

// Lets a noisy source write at most one line per interval, counting the lines it holds back, so
// that a client cannot fill the log: protobuf writes a line for every request whose string
// field is not UTF-8 (each such request is refused as INVALID_ARGUMENT; the log only needs to
// say that it happens). Not thread-safe: its owner locks.
class LogThrottle {
 public:
  using Clock = std::chrono::steady_clock;

  explicit LogThrottle(Clock::duration interval) : interval_(interval) {}

  // Whether a line offered at `now` is written. When it is, `held_back` is how many lines were
  // not written since the previous one (the caller says so in the line).
  struct Verdict {
    bool write = false;
    std::uint64_t held_back = 0;
  };
  Verdict offer(Clock::time_point now) {
    if (written_ && now - last_ < interval_) {
      ++held_back_;
      return {};
    }
    written_ = true;
    last_ = now;
    const Verdict verdict{true, held_back_};
    held_back_ = 0;
    return verdict;
  }

 private:
  Clock::duration interval_;
  bool written_ = false;  // Whether a line was written yet; last_ is its time.
  Clock::time_point last_{};
  std::uint64_t held_back_ = 0;
};

// A LogThrottle per source (the place in a library that writes the line, "file:line"): a flood of
// one kind of line (a TLS handshake that failed, for each connection anyone opens) is held back
// without silencing the others. At most kMaxSources are told apart; the rest share one. Not
// thread-safe: its owner locks.
class SourceLogThrottle {
 public:
  static constexpr std::size_t kMaxSources = 64;

  explicit SourceLogThrottle(LogThrottle::Clock::duration interval)
      : interval_(interval), others_(interval) {}

  LogThrottle::Verdict offer(std::string_view source, LogThrottle::Clock::time_point now) {
    auto found = by_source_.find(source);
    if (found == by_source_.end()) {
      if (by_source_.size() == kMaxSources) return others_.offer(now);
      found = by_source_.emplace(std::string(source), LogThrottle(interval_)).first;
    }
    return found->second.offer(now);
  }

 private:
  LogThrottle::Clock::duration interval_;
  std::map<std::string, LogThrottle, std::less<>> by_source_;
  LogThrottle others_;
};

}  // namespace jackpot
