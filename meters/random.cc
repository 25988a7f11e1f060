#include "meters/random.h"

#include "meters/invariant.h"

namespace jackpot {

std::uint64_t uniform_below(RandomSource& source, std::uint64_t bound) {
  JACKPOT_INVARIANT(bound > 0, "uniform_below needs a positive bound");
  // 2^64 mod bound: the values below it would make the low residues more likely.
  const std::uint64_t rejected_below = (0 - bound) % bound;
  for (;;) {
    const std::uint64_t value = source.next_u64();
    if (value >= rejected_below) return value % bound;
  }
}

void fill_random(RandomSource& source, std::span<std::uint8_t> bytes) {
  std::uint64_t word = 0;
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    if (i % 8 == 0) word = source.next_u64();
    bytes[i] = static_cast<std::uint8_t>(word >> (8 * (i % 8)));
  }
}

std::uint64_t SplitMix64::next_u64() {
  std::uint64_t z = (state_ += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

}  // namespace jackpot
