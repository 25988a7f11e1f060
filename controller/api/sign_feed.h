#pragma once

// The sign feed in the daemon: a SignBoard (sign/sign_board.h) kept from the host's committed
// batches, published at the signs' pace. Committed values only: the board is fed by the host's
// commit observer with batches that committed, and starts again from the engine as the database
// holds it after a recovery; while the host cannot record changes every link shows UNAVAILABLE.
// The signs' streams (SignService, the web sign) subscribe to publisher().

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "controller/engine/engine.h"
#include "controller/hands/paytable.h"
#include "controller/host/engine_host.h"
#include "sign/publisher.h"
#include "sign/sign_board.h"

namespace jackpot {

struct SignFeedOptions {
  sign::PaceLimits pace;                   // At most 4 states a second; a heartbeat after 2 s.
  std::int64_t hit_shown_us = 60'000'000;  // How long a hit stays on the signs.
  // The sequence before the first state: the daemon passes its start time in microseconds, so
  // that the numbers a sign sees rise across a restart (with a clock that does not go back).
  std::uint64_t first_sequence = 0;
};

// What does not change while the daemon runs (the links' levels, the tables' paytables as
// placards print them, scaled by each link's base wager), and the committed state to start from.
// `paytables` must hold every paytable the engine's tables play.
sign::SignFloor sign_floor(const Engine& engine, const std::vector<Paytable>& paytables);
sign::BoardStart board_start(const Engine& engine);

// The board as the host's commits keep it, shared with the host's observers (which hold it
// weakly): every committed batch applied in commit order, a batch reported failed kept aside, the
// rebuilt engine's state at the failure's place in the commit order after a recovery. Each change
// sets `dirty` and `notified` and notifies `changed`. The sign feed publishes it; the seeded
// simulation (tests/sim) checks it against the engine after every step.
struct FollowedBoard {
  explicit FollowedBoard(sign::SignBoard made) : board(std::move(made)) {}
  std::mutex mutex;
  std::condition_variable changed;
  sign::SignBoard board;  // Guarded by mutex, as the flags are.
  bool dirty = true;      // Something may show differently than what was last read.
  bool notified = false;  // For a waiter on `changed`.
};

// Reads the engine through `host` (nothing may be uncommitted: at the start) and follows its
// commits, ordered recoveries and status changes from now on.
std::shared_ptr<FollowedBoard> follow_commits(EngineHost& host,
                                              const std::vector<Paytable>& paytables,
                                              std::int64_t hit_shown_us);

// What the metrics say of the signs, kept by the streams themselves (any thread).
struct SignFeedCounts {
  std::atomic<std::int64_t> grpc_streams{0};  // SignService.WatchMeters streams open now.
  // States a sign never got because a newer one superseded them before it was sent: the pace
  // (a few states a second at most) and signs slower than the feed, by transport.
  std::atomic<std::uint64_t> grpc_skipped{0};
  std::atomic<std::uint64_t> web_skipped{0};
};

class SignFeed {
 public:
  // Reads the engine through `host` (at the start nothing is uncommitted) and observes its
  // commits, recoveries and status changes from now on. Publishes a first state at once.
  SignFeed(EngineHost& host, const std::vector<Paytable>& paytables, SignFeedOptions options);
  ~SignFeed();
  SignFeed(const SignFeed&) = delete;
  SignFeed& operator=(const SignFeed&) = delete;

  sign::SignPublisher& publisher() { return publisher_; }
  const sign::SignFloor& floor() const { return floor_; }
  const sign::PaceLimits& pace() const { return options_.pace; }
  // Stops publishing and wakes every subscriber once more (stopping() is then true): the first
  // step of a shutdown, so that the signs' streams finish.
  void stop();
  bool stopping() const;
  SignFeedCounts& counts() { return counts_; }

 private:
  void run();

  EngineHost& host_;
  const SignFeedOptions options_;
  // What the host's observers and the feed's thread share; the observers hold it weakly, so the
  // feed may go before the host.
  const std::shared_ptr<FollowedBoard> shared_;
  const sign::SignFloor floor_;
  sign::SignPublisher publisher_;
  bool stopping_ = false;             // Guarded by shared_->mutex, for the thread's wait;
  std::atomic<bool> stopped_{false};  // the same, for the streams, without the lock.
  SignFeedCounts counts_;
  std::thread thread_;
};

}  // namespace jackpot
