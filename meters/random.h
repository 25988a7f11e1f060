#pragma once

#include <cstdint>
#include <span>

namespace jackpot {

// Where randomness comes from. meters/ has no random source of its own: the daemon injects one
// backed by the OS CSPRNG, tests inject a seeded deterministic one.
class RandomSource {
 public:
  virtual ~RandomSource() = default;
  virtual std::uint64_t next_u64() = 0;
};

// A uniform integer in [0, bound), bound > 0, without modulo bias: draws that fall in the
// incomplete last block of 2^64 are rejected and drawn again.
std::uint64_t uniform_below(RandomSource& source, std::uint64_t bound);

// Fills `bytes` from the source.
void fill_random(RandomSource& source, std::span<std::uint8_t> bytes);

// SplitMix64: a small, fast, well-mixed deterministic generator for tests, simulations and
// benchmarks. Not for production draws.
class SplitMix64 final : public RandomSource {
 public:
  explicit SplitMix64(std::uint64_t seed) : state_(seed) {}
  std::uint64_t next_u64() override;

 private:
  std::uint64_t state_;
};

}  // namespace jackpot
