#pragma once

#include <chrono>
#include <cstdint>

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

}  // namespace jackpot
