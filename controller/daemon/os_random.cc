#include "controller/daemon/os_random.h"

#include <sys/random.h>

#include <cerrno>
#include <chrono>

#include "meters/invariant.h"

namespace jackpot {

std::uint64_t OsRandom::next_u64() {
  if (used_ == std::size(buffer_)) {
    auto* bytes = reinterpret_cast<unsigned char*>(buffer_);
    std::size_t filled = 0;
    while (filled < sizeof buffer_) {
      const ssize_t got = getrandom(bytes + filled, sizeof buffer_ - filled, 0);
      if (got < 0 && errno == EINTR) continue;
      JACKPOT_INVARIANT(got > 0, "the OS random source failed");
      filled += static_cast<std::size_t>(got);
    }
    used_ = 0;
  }
  return buffer_[used_++];
}

std::int64_t SystemClock::now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace jackpot
