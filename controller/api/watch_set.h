#pragma once

// The open streams of one kind and how a change reaches them, without a thread per stream and
// without gRPC: a stream type here only needs hold(), release() and pump() (grpc_services.cc's
// WriteStream). Unit-tested with streams of its own (tests/unit/watch_set_test.cc).

#include <pthread.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <thread>
#include <vector>

#include "controller/api/stream_limits.h"

namespace jackpot {

// The open streams of one kind: the bounds on how many (per server and per peer host), and the
// fan-out of a change to every one of them, without a thread per stream. Thread-safe.
template <typename Stream>
class WatchSet {
 public:
  explicit WatchSet(StreamLimits limits) : slots_(limits) {}

  // Counts and keeps `stream`, and runs `first(stream)` under the set's lock (what the stream must
  // hold before any change reaches it); the refusal's message when a bound is reached.
  template <typename First>
  std::optional<std::string> add(Stream* stream, const std::string& peer, First first) {
    std::lock_guard lock(mutex_);
    if (auto refused = slots_.take(peer)) return refused;
    first(stream);
    streams_.insert(stream);
    return std::nullopt;
  }
  std::optional<std::string> add(Stream* stream, const std::string& peer) {
    return add(stream, peer, [](Stream*) {});
  }
  void remove(Stream* stream, const std::string& peer) {
    std::lock_guard lock(mutex_);
    if (streams_.erase(stream) > 0) slots_.give_back(peer);
  }
  // Runs `tell(stream)` for every stream under the set's lock and holds each (hold()): the
  // caller pumps them outside every lock (pump_and_release).
  template <typename Tell>
  std::vector<Stream*> hold_all(Tell tell) {
    std::lock_guard lock(mutex_);
    std::vector<Stream*> held(streams_.begin(), streams_.end());
    for (Stream* stream : held) {
      tell(stream);
      stream->hold();
    }
    return held;
  }
  static void pump_and_release(std::span<Stream* const> held) {
    for (Stream* stream : held) {
      stream->pump();
      stream->release();
    }
  }
  // Something may have changed (or the daemon is stopping): every stream looks, kept alive while
  // it does. Called without the host's lock.
  void pump_all() {
    pump_and_release(hold_all([](Stream*) {}));
  }
  // Runs `visit(stream)` for every stream under the set's lock only (no stream's lock).
  template <typename Visit>
  void for_each(Visit visit) {
    std::lock_guard lock(mutex_);
    for (Stream* stream : streams_) visit(stream);
  }

 private:
  std::mutex mutex_;
  StreamSlots slots_;
  std::set<Stream*> streams_;
};

// How many streams one slice of a fan-out pass pumps: at least kFanOutMinSlice, and few enough
// that a pass has at most kFanOutMaxSlices slices.
inline constexpr std::size_t kFanOutMinSlice = 64;
inline constexpr std::size_t kFanOutMaxSlices = 32;
constexpr std::size_t fan_out_slice(std::size_t streams) {
  return std::max(kFanOutMinSlice, (streams + kFanOutMaxSlices - 1) / kFanOutMaxSlices);
}

// Pumps every stream of a WatchSet when woken, on a thread of its own, in slices (fan_out_slice)
// with a pause between them: a thousand signs' writes then take turns with the tables' requests
// on gRPC's threads instead of all queuing ahead of them at each publication (ops/bench: the
// tables' lock latency under 1,000 signs). Each pass starts one slice further on, so that the
// same streams are not always the last. A wake during a pass asks for one more pass after it; a
// pass is never cut short, so every stream it holds is released; the destructor runs a pass still
// owed, then joins. Thread-safe.
template <typename Stream>
class SlicedFanOut {
 public:
  // `streams` is kept alive while the fan-out lives (an aliasing pointer into its owner).
  SlicedFanOut(std::shared_ptr<WatchSet<Stream>> streams, const char* name,
               std::chrono::microseconds pause = std::chrono::milliseconds(1))
      : streams_(std::move(streams)), pause_(pause) {
    thread_ = std::thread([this, name] {
      pthread_setname_np(pthread_self(), name);
      run();
    });
  }
  ~SlicedFanOut() {
    {
      const std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    woken_up_.notify_one();
    thread_.join();
  }
  SlicedFanOut(const SlicedFanOut&) = delete;
  SlicedFanOut& operator=(const SlicedFanOut&) = delete;

  // Something changed: a pass soon. Never blocks beyond the fan-out's own lock.
  void wake() {
    {
      const std::lock_guard lock(mutex_);
      woken_ = true;
    }
    woken_up_.notify_one();
  }

 private:
  void run() {
    std::unique_lock lock(mutex_);
    while (true) {
      woken_up_.wait(lock, [&] { return stopping_ || woken_; });
      if (!woken_) return;  // Stopping, with nothing asked for.
      woken_ = false;
      lock.unlock();
      std::vector<Stream*> held = streams_->hold_all([](Stream*) {});
      const std::size_t slice = fan_out_slice(held.size());
      if (!held.empty()) {
        const std::size_t start = (passes_ * slice) % held.size();
        std::rotate(held.begin(), held.begin() + static_cast<std::ptrdiff_t>(start), held.end());
      }
      ++passes_;
      for (std::size_t first = 0; first < held.size(); first += slice) {
        if (first > 0) std::this_thread::sleep_for(pause_);
        WatchSet<Stream>::pump_and_release(
            std::span(held).subspan(first, std::min(slice, held.size() - first)));
      }
      lock.lock();
    }
  }

  const std::shared_ptr<WatchSet<Stream>> streams_;
  const std::chrono::microseconds pause_;
  std::mutex mutex_;
  std::condition_variable woken_up_;
  bool woken_ = false;
  bool stopping_ = false;
  std::size_t passes_ = 0;  // The fan-out thread's only.
  std::thread thread_;
};

}  // namespace jackpot
