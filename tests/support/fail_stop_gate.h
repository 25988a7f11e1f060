#pragma once

#include <chrono>
#include <condition_variable>
#include <memory>
#include <mutex>

#include "controller/host/engine_host.h"

namespace jackpot::testing {

// Holds an EngineHost in its next fail-stop until released, so that a test can look at the
// failed host for as long as it needs. Recovery only reads, and may rebuild the engine
// milliseconds after the failure: a test that polls host.failed() can fall between the two and
// miss the failure, and one that checks "refused while failed" can find the host serving again.
//
// It is a status listener: the host calls its listeners on the committer's thread as it fails,
// before it starts to recover, so holding that call holds the recovery. Every listener call that
// finds the host failed waits until release() (or the destructor); the gate holds once.
class FailStopGate {
 public:
  explicit FailStopGate(EngineHost& host) : state_(std::make_shared<State>()) {
    host.on_status_change([state = state_, &host] {
      if (!host.failed()) return;
      std::unique_lock lock(state->mutex);
      if (state->released) return;
      state->failed = true;
      state->changed.notify_all();
      state->changed.wait(lock, [&] { return state->released; });
    });
  }
  ~FailStopGate() { release(); }
  FailStopGate(const FailStopGate&) = delete;
  FailStopGate& operator=(const FailStopGate&) = delete;

  // True once the host failed (and is held there) within `timeout`.
  bool wait_failed(std::chrono::milliseconds timeout) {
    std::unique_lock lock(state_->mutex);
    return state_->changed.wait_for(lock, timeout, [&] { return state_->failed; });
  }

  // Lets the host recover; later failures are not held.
  void release() {
    std::lock_guard lock(state_->mutex);
    state_->released = true;
    state_->changed.notify_all();
  }

 private:
  struct State {
    std::mutex mutex;
    std::condition_variable changed;
    bool failed = false;
    bool released = false;
  };
  std::shared_ptr<State> state_;
};

}  // namespace jackpot::testing
