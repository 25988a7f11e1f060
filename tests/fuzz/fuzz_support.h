#pragma once

// Shared by the libFuzzer targets of tests/fuzz: the shipped paytables, a fixed clock and the
// check that a loader's message names where the problem is.

#include <cctype>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "controller/engine/engine.h"
#include "controller/hands/paytable_loader.h"
#include "meters/invariant.h"

namespace jackpot::fuzz {

inline const std::vector<Paytable>& shipped_paytables() {
  static const std::vector<Paytable> paytables = [] {
    auto loaded = load_paytables(embedded_paytables());
    JACKPOT_INVARIANT(loaded.ok(), "the shipped paytables load");
    return std::move(loaded).value();
  }();
  return paytables;
}

// The engine's clock stopped at one moment, so that a run depends on its input only.
class StoppedClock final : public Clock {
 public:
  std::int64_t now_us() override { return 1'800'000'000'000'000; }
};

// Whether `message` starts "origin:line:column: " with a line and a column of digits, as the
// loaders promise for every error.
inline bool names_position(std::string_view message, std::string_view origin) {
  if (message.substr(0, origin.size()) != origin) return false;
  std::size_t at = origin.size();
  for (int number = 0; number < 2; ++number) {
    if (at >= message.size() || message[at] != ':') return false;
    ++at;
    const std::size_t digits = at;
    while (at < message.size() && std::isdigit(static_cast<unsigned char>(message[at]))) ++at;
    if (at == digits) return false;
  }
  return message.substr(at, 2) == ": ";
}

}  // namespace jackpot::fuzz
