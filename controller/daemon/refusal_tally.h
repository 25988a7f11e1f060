#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace jackpot {

// Refused calls gathered for the audit trail. An event per refusal would let anyone who reaches
// the port write the chain as fast as they can call, so refusals are counted by kind (the
// refusal's name and its detail, which names the caller) and written as one event per kind per
// interval (the daemon drains the tally once a minute and at its stop). At most kMaxKinds kinds
// are kept apart in an interval; further kinds are counted together as "other". Thread-safe.
class RefusalTally {
 public:
  static constexpr std::size_t kMaxKinds = 32;
  // A detail is kept to this many bytes, printable ASCII only (anything else as '?'): a
  // certificate's name or a plaintext caller's metadata is the caller's to choose.
  static constexpr std::size_t kMaxDetailBytes = 200;

  struct Kind {
    std::string reason;  // The refusal's name, e.g. "role_not_allowed"; "other" past kMaxKinds.
    std::string detail;  // Empty for "other".
    std::uint64_t count = 0;
    std::int64_t first_us = 0;  // Unix microseconds of the first and the last refusal.
    std::int64_t last_us = 0;
    friend bool operator==(const Kind&, const Kind&) = default;
  };

  void add(std::string_view reason, std::string_view detail, std::int64_t now_us);
  // Every kind counted since the last drain, in order of reason and detail ("other" last), and
  // an empty tally.
  std::vector<Kind> drain();
  // Puts back what a drain took and could not record, merged with what came since (counts
  // added, the earliest first and the latest last time kept), within the same bound on kinds.
  void restore(const std::vector<Kind>& kinds);

  // The text kept of a caller's detail (kMaxDetailBytes, printable ASCII).
  static std::string kept_detail(std::string_view detail);

 private:
  std::mutex mutex_;
  std::map<std::pair<std::string, std::string>, Kind> kinds_;
  Kind other_;
};

}  // namespace jackpot
