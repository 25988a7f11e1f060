// Seven-card evaluations per second on random hands (one core), and the full census.
#include <benchmark/benchmark.h>

#include <thread>
#include <vector>

#include "controller/hands/hand_eval.h"
#include "controller/hands/paytable.h"
#include "meters/random.h"
#include "tests/support/hand_census.h"

namespace jackpot {
namespace {

// Random seven-card hands, drawn once so that the loop measures evaluation, not dealing.
const std::vector<CardMask>& random_hands() {
  static const std::vector<CardMask> hands = [] {
    SplitMix64 random(2026);
    std::vector<CardMask> all(1 << 20);
    for (CardMask& mask : all) {
      unsigned dealt = 0;
      while (dealt < 7) {
        const auto card = static_cast<unsigned>(uniform_below(random, 52));
        const CardMask bit = card_bit(
            Card{static_cast<std::uint8_t>(card % 13), static_cast<std::uint8_t>(card / 13)});
        if (mask & bit) continue;
        mask |= bit;
        ++dealt;
      }
    }
    return all;
  }();
  return hands;
}

void BM_SevenCardCategory(benchmark::State& state) {
  const auto& hands = random_hands();
  std::size_t next = 0;
  unsigned checksum = 0;
  for (auto _ : state) {
    checksum += static_cast<unsigned>(best_category(hands[next]));
    next = (next + 1) & (hands.size() - 1);
  }
  benchmark::DoNotOptimize(checksum);
  state.SetItemsProcessed(state.iterations());
}

// Everything a Heads Up Hold'em seat's row needs: best five, royals, flopped and board hands,
// runs and suit counts.
void BM_HoldemSeatFacts(benchmark::State& state) {
  std::vector<std::array<Card, 7>> seats(4096);
  SplitMix64 random(7);
  for (auto& seat : seats) {
    CardMask used = 0;
    for (Card& card : seat) {
      do {
        const auto index = static_cast<unsigned>(uniform_below(random, 52));
        card = Card{static_cast<std::uint8_t>(index % 13), static_cast<std::uint8_t>(index / 13)};
      } while (used & card_bit(card));
      used |= card_bit(card);
    }
  }
  std::size_t next = 0;
  unsigned checksum = 0;
  for (auto _ : state) {
    const auto& seat = seats[next];
    const HandFacts facts =
        evaluate(GameRule::heads_up_holdem, {std::span(seat).first(2), std::span(seat).subspan(2)});
    checksum += facts.categories + facts.longest_run;
    next = (next + 1) & (seats.size() - 1);
  }
  benchmark::DoNotOptimize(checksum);
  state.SetItemsProcessed(state.iterations());
}

void BM_SevenCardCensus(benchmark::State& state) {
  const auto threads = static_cast<unsigned>(state.range(0));
  for (auto _ : state) benchmark::DoNotOptimize(testing::seven_card_census(threads));
  state.SetItemsProcessed(state.iterations() * 133'784'560);
}

BENCHMARK(BM_SevenCardCategory);
BENCHMARK(BM_HoldemSeatFacts);
BENCHMARK(BM_SevenCardCensus)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
}  // namespace jackpot

BENCHMARK_MAIN();
