#pragma once

// The sign feed's publisher: the latest committed SignState, and who watches it. A subscriber is
// woken on each change and reads the latest state when its pace allows (pace()): a slow or
// stalled sign holds one pointer to the state it last read, never a backlog, and publishing never
// waits for a sign. Thread-safe.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>

#include "sign/sign_state.h"

namespace jackpot::sign {

// What a subscriber does now, from what it last sent and when.
struct PaceDecision {
  enum class Kind : std::uint8_t { wait_for_change, wait_until, send_state, send_heartbeat };
  Kind kind = Kind::wait_for_change;
  std::int64_t until_us = 0;  // For wait_until: when to decide again.
  friend bool operator==(const PaceDecision&, const PaceDecision&) = default;
};

struct PaceLimits {
  std::int64_t min_interval_us = 250'000;  // At most 4 states a second.
  std::int64_t heartbeat_us = 2'000'000;   // Something at least every 2 s.
};

// The rule: a state newer than the one sent goes at once when the last sending was at least
// min_interval ago (the first at once), else at last_sent + min_interval; with nothing new, a
// heartbeat once heartbeat_us passed since the last sending, else wait for a change or the
// heartbeat's time, whichever comes first. sent_sequence 0 means nothing was sent yet.
PaceDecision pace(std::uint64_t latest_sequence, std::uint64_t sent_sequence,
                  std::int64_t last_sent_us, std::int64_t now_us, const PaceLimits& limits);

class SignPublisher {
 public:
  using Wakeup = std::function<void()>;

  SignPublisher();

  // A committed state. It gets the next sequence number when it shows something the latest
  // does not (SignState::shows_same_as), and every subscriber is woken (outside the lock);
  // otherwise nothing changes. Returns the sequence in force.
  std::uint64_t publish(SignState state);

  // The latest state; never null (sequence 0 and nothing shown before the first publish).
  std::shared_ptr<const SignState> latest() const;

  // `wakeup` runs on the publishing thread after each change: it must only note that there is
  // something to read (e.g. start a write), never block. Returns the subscription's id.
  std::uint64_t subscribe(Wakeup wakeup);
  void unsubscribe(std::uint64_t id);
  std::size_t subscribers() const;

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const SignState> latest_;
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, std::shared_ptr<Wakeup>> subscribers_;
};

}  // namespace jackpot::sign
