#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include "controller/engine.h"

namespace jackpot {

// Owns the engine and runs one command at a time on it (the sequencer of docs/architecture.md
// §7), so that gRPC threads never touch engine state concurrently. Watchers of link status
// wait on a version number that every status change bumps.
class EngineHost {
 public:
  explicit EngineHost(std::unique_ptr<Engine> engine) : engine_(std::move(engine)) {}

  // Runs `command(engine, records)` alone; returns what it returns.
  template <typename Command>
  auto run(Command&& command) {
    std::lock_guard lock(mutex_);
    records_.clear();
    return command(*engine_, records_);
  }

  // Runs a command that changes a link's status and wakes the watchers.
  template <typename Command>
  auto change_status(Command&& command) {
    auto result = run(std::forward<Command>(command));
    {
      std::lock_guard lock(status_mutex_);
      ++status_version_;
    }
    status_changed_.notify_all();
    return result;
  }

  // Waits until the status version differs from `seen`, the timeout passes or the host stops;
  // returns the version now.
  std::uint64_t wait_for_status_change(std::uint64_t seen, std::chrono::milliseconds timeout) {
    std::unique_lock lock(status_mutex_);
    status_changed_.wait_for(lock, timeout, [&] { return status_version_ != seen || stopping_; });
    return status_version_;
  }
  std::uint64_t status_version() {
    std::lock_guard lock(status_mutex_);
    return status_version_;
  }

  // Ends every watch; called before the server shuts down.
  void stop() {
    {
      std::lock_guard lock(status_mutex_);
      stopping_ = true;
    }
    status_changed_.notify_all();
  }
  bool stopping() {
    std::lock_guard lock(status_mutex_);
    return stopping_;
  }

 private:
  std::mutex mutex_;
  std::unique_ptr<Engine> engine_;
  Records records_;  // Made durable by the storage layer in a later step; dropped for now.

  std::mutex status_mutex_;
  std::condition_variable status_changed_;
  std::uint64_t status_version_ = 0;
  bool stopping_ = false;
};

}  // namespace jackpot
