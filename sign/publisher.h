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

// What a subscriber does when woken, from what it last sent and when.
struct PaceDecision {
  enum class Kind : std::uint8_t { wait, send_state, send_heartbeat };
  Kind kind = Kind::wait;
  friend bool operator==(const PaceDecision&, const PaceDecision&) = default;
};

// The feed's pace: it publishes at most one state per min_interval (4 a second by default), so
// a subscriber that sends every newer state it is woken for sends at most that often; one that
// has sent nothing for heartbeat_us sends a heartbeat, which a sign takes as "the controller
// answers".
struct PaceLimits {
  std::int64_t min_interval_us = 250'000;
  std::int64_t heartbeat_us = 2'000'000;
};

// The rule, when woken: a state newer than the one sent goes at once (the feed paced it); with
// nothing new, a heartbeat once heartbeat_us passed since the last sending; else wait.
// sent_sequence 0 means nothing was sent yet (a stream sends its snapshot first).
PaceDecision pace(std::uint64_t latest_sequence, std::uint64_t sent_sequence,
                  std::int64_t last_sent_us, std::int64_t now_us, const PaceLimits& limits);

class SignPublisher {
 public:
  using Wakeup = std::function<void()>;

  // The first state published is numbered first_sequence + 1 (the daemon starts from its start
  // time in microseconds, so that a sign sees the numbers rise across a restart too).
  explicit SignPublisher(std::uint64_t first_sequence = 0);

  // A committed state. It gets the next sequence number when it shows something the latest
  // does not (SignState::shows_same_as), and every subscriber is woken (outside the lock);
  // otherwise nothing changes. Returns the sequence in force.
  std::uint64_t publish(SignState state);
  // Wakes every subscriber without a change: the feed's tick, for heartbeats.
  void wake_all();

  // The latest state; never null (first_sequence and nothing shown before the first publish).
  std::shared_ptr<const SignState> latest() const;

  // `wakeup` runs on the publishing thread after each change: it must only note that there is
  // something to read (e.g. start a write), never block. Returns the subscription's id.
  std::uint64_t subscribe(Wakeup wakeup);
  void unsubscribe(std::uint64_t id);
  std::size_t subscribers() const;

 private:
  mutable std::mutex mutex_;
  std::shared_ptr<const SignState> latest_;
  std::uint64_t first_sequence_ = 0;
  std::uint64_t next_id_ = 1;
  std::map<std::uint64_t, std::shared_ptr<Wakeup>> subscribers_;
};

}  // namespace jackpot::sign
