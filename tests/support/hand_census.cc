#include "tests/support/hand_census.h"

#include <thread>
#include <vector>

#include "controller/hands/hand_eval.h"

namespace jackpot::testing {
namespace {

using Counts = std::array<std::uint64_t, 10>;

CardMask bit(unsigned card) {
  return card_bit(Card{static_cast<std::uint8_t>(card % 13), static_cast<std::uint8_t>(card / 13)});
}

// All hands whose lowest card is `first`, built up one card at a time.
void count_from(unsigned first, Counts& counts) {
  const CardMask m1 = bit(first);
  for (unsigned b = first + 1; b < 52; ++b) {
    const CardMask m2 = m1 | bit(b);
    for (unsigned c = b + 1; c < 52; ++c) {
      const CardMask m3 = m2 | bit(c);
      for (unsigned d = c + 1; d < 52; ++d) {
        const CardMask m4 = m3 | bit(d);
        for (unsigned e = d + 1; e < 52; ++e) {
          const CardMask m5 = m4 | bit(e);
          for (unsigned f = e + 1; f < 52; ++f) {
            const CardMask m6 = m5 | bit(f);
            for (unsigned g = f + 1; g < 52; ++g) {
              ++counts[static_cast<std::size_t>(best_category(m6 | bit(g)))];
            }
          }
        }
      }
    }
  }
}

}  // namespace

Counts seven_card_census(unsigned threads) {
  std::vector<Counts> partial(threads);
  std::vector<std::thread> workers;
  for (unsigned t = 0; t < threads; ++t) {
    workers.emplace_back([&partial, t, threads] {
      // Interleaved first cards: the low ones carry most of the work.
      for (unsigned first = t; first < 46; first += threads) count_from(first, partial[t]);
    });
  }
  for (auto& worker : workers) worker.join();
  Counts total{};
  for (const Counts& counts : partial) {
    for (std::size_t i = 0; i < counts.size(); ++i) total[i] += counts[i];
  }
  return total;
}

}  // namespace jackpot::testing
