// Contributions per second into a link, in process, one core. The transfer buffer is reused
// across iterations, as the sequencer reuses its batch buffer.
#include <benchmark/benchmark.h>

#include "meters/link.h"

namespace jackpot {
namespace {

Money dollars(const char* text) { return *Money::parse(text); }

LinkConfig three_level_link(bool with_must_hit_by) {
  LinkConfig config;
  config.id = LinkId("bench");
  LevelConfig royal{1,  "Royal Flush",         dollars("10000.00"), 100'000, 20'000, {}, 0,
                    {}, TriggerMode::at_amount};
  LevelConfig straight_flush{
      2,  "Straight Flush",      dollars("1000.00"), 40'000, 5'000, dollars("5000.00"), 0,
      {}, TriggerMode::at_amount};
  LevelConfig third{3,  "Four of a Kind",      dollars("100.00"), 20'000, 5'000, {}, 0,
                    {}, TriggerMode::at_amount};
  if (with_must_hit_by) {
    third.name = "Must-Hit-By $250";
    third.seed = dollars("50.00");
    third.must_hit_by = dollars("250.00");
    third.trigger = TriggerMode::hidden_uniform;
  }
  config.levels = {royal, straight_flush, third};
  return config;
}

void contribute(benchmark::State& state, bool with_must_hit_by) {
  SplitMix64 random(1);
  std::vector<Transfer> out;
  out.reserve(64);
  auto link = std::move(Link::open(three_level_link(with_must_hit_by), random, out)).value();
  std::uint64_t round = 0;
  std::int64_t hits = 0;
  for (auto _ : state) {
    out.clear();
    auto result = link.contribute(1, Origin{++round, 0}, out);
    benchmark::DoNotOptimize(result);
    if (!result.value().hits.empty()) ++hits;
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["mhb_hits"] = static_cast<double>(hits);
  if (link.check_invariants()) state.SkipWithError("ledger invariants broken");
}

void BM_Contribute3Levels(benchmark::State& state) { contribute(state, false); }
void BM_Contribute3LevelsWithHiddenMustHitBy(benchmark::State& state) { contribute(state, true); }

BENCHMARK(BM_Contribute3Levels);
BENCHMARK(BM_Contribute3LevelsWithHiddenMustHitBy);

}  // namespace
}  // namespace jackpot

BENCHMARK_MAIN();
