#pragma once

// The latest encoding of a state per watch, shared by the streams that watch the same links and
// tables, so that a thousand signs watching the lobby's links cost one encoding per state. Keeps at
// most `max` watches; past that, encodings of older states go (each stream sends only the latest)
// and a new watch's encoding is made for each stream rather than kept. A state older than the
// newest kept is encoded and not kept. Thread-safe.

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace jackpot::sign {

template <typename Encoded>
class LatestEncodings {
 public:
  explicit LatestEncodings(std::size_t max = 256) : max_(max) {}

  // The encoding of state `sequence` for the watch `key`: kept, or `encode()` (which returns
  // std::optional<Encoded>; nothing is kept when it fails).
  template <typename Encode>
  auto get(const std::string& key, std::uint64_t sequence, Encode encode) -> decltype(encode()) {
    {
      const std::lock_guard lock(mutex_);
      const auto found = kept_.find(key);
      if (found != kept_.end() && found->second.first == sequence) return found->second.second;
    }
    auto encoded = encode();  // Outside the lock: other watches go on meanwhile.
    if (!encoded) return encoded;
    const std::lock_guard lock(mutex_);
    if (sequence < newest_) return encoded;  // A stream behind the latest: kept by nobody.
    newest_ = sequence;
    if (kept_.size() >= max_ && kept_.count(key) == 0) {
      std::erase_if(kept_, [&](const auto& entry) { return entry.second.first != sequence; });
    }
    if (kept_.size() < max_ || kept_.count(key) > 0) kept_[key] = {sequence, *encoded};
    return encoded;
  }

 private:
  const std::size_t max_;
  std::mutex mutex_;
  std::map<std::string, std::pair<std::uint64_t, Encoded>> kept_;
  std::uint64_t newest_ = 0;  // The newest state kept; an older one evicts nothing.
};

}  // namespace jackpot::sign
