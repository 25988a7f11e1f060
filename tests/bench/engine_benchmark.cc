// Round engine commands per second in process, one core: a table's whole round (open, lock,
// settle) and a lock + settle pair, with real cards evaluated against a real paytable.
#include <benchmark/benchmark.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <new>
#include <random>

#include "controller/engine/engine.h"
#include "controller/hands/paytable_loader.h"
#include "tests/support/fixed_clock.h"

// Every allocation in the process, counted, so that the benchmarks can report allocations per
// command: the engine's cost is mostly what it allocates and copies.
namespace {
std::atomic<std::uint64_t> allocations{0};
}  // namespace

void* operator new(std::size_t size) {
  allocations.fetch_add(1, std::memory_order_relaxed);
  for (;;) {
    if (void* block = std::malloc(size == 0 ? 1 : size)) return block;
    const std::new_handler handler = std::get_new_handler();
    if (handler == nullptr) throw std::bad_alloc();
    handler();
  }
}
// The replaced operator new takes its blocks from malloc, so free() is the matching release.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmismatched-new-delete"
void operator delete(void* block) noexcept { std::free(block); }
void operator delete(void* block, std::size_t) noexcept { std::free(block); }
#pragma GCC diagnostic pop

namespace jackpot {
namespace {

using testing::FixedClock;

EngineConfig bench_floor(std::uint32_t tables) {
  EngineConfig config;
  LinkSettings link;
  link.meters.id = LinkId("bench-link");
  LevelConfig royal;
  royal.level = 1;
  royal.name = "Royal Flush";
  royal.seed = *Money::parse("1000.00");
  royal.meter_rate_ppm = 150'000;
  royal.reserve_rate_ppm = 25'000;
  link.meters.levels = {royal};
  link.approval_threshold = *Money::parse("1000.00");
  config.links.push_back(link);
  for (std::uint32_t t = 0; t < tables; ++t) {
    TableSettings table;
    table.id = TableId("T" + std::to_string(t));
    table.game = GameRule::heads_up_holdem;
    table.seats = 6;
    table.links.push_back({LinkId("bench-link"), "PT-BJS-HUH-5CP-01", CommunitySource::board});
    config.tables.push_back(table);
  }
  return config;
}

// Pre-dealt settle requests so that the loop measures the engine, not the dealer.
std::vector<SettleRoundRequest> deals(std::size_t count) {
  std::mt19937_64 shuffle(1);
  std::vector<std::string> deck;
  for (const char rank : std::string("23456789TJQKA")) {
    for (const char suit : std::string("shdc")) deck.push_back({rank, suit});
  }
  std::vector<SettleRoundRequest> all(count);
  for (auto& request : all) {
    std::shuffle(deck.begin(), deck.end(), shuffle);
    for (std::uint32_t seat = 1; seat <= 6; ++seat) {
      request.seats.push_back({seat, {deck[2 * seat], deck[2 * seat + 1]}, std::nullopt});
    }
    request.board.assign(deck.begin() + 20, deck.begin() + 25);
  }
  return all;
}

struct Bench {
  FixedClock clock;
  SplitMix64 random{3};
  Records records;
  std::unique_ptr<Engine> engine;
  std::vector<SettleRoundRequest> settles = deals(1024);
  LockWagersRequest lock;
  std::uint64_t round = 0;

  Bench() {
    auto paytables = std::move(load_paytables(embedded_paytables())).value();
    engine = std::move(Engine::create(bench_floor(1), std::move(paytables), clock, random, records))
                 .value();
    lock.table = TableId("T0");
    for (std::uint32_t seat = 1; seat <= 6; ++seat) {
      lock.wagers.push_back({seat, LinkId("bench-link"), 500});
    }
  }

  void open() {
    records.clear();
    const auto opened = engine->open_round({TableId("T0"), RoundId(++round)}, records);
    if (!opened) std::abort();
  }
  void lock_and_settle() {
    records.clear();
    lock.round = RoundId(round);
    if (!engine->lock_wagers(lock, records)) std::abort();
    SettleRoundRequest& settle = settles[round % settles.size()];
    settle.table = TableId("T0");
    settle.round = RoundId(round);
    records.clear();
    if (!engine->settle_round(settle, records)) std::abort();
  }
};

// Timed by hand around the pair: PauseTiming/ResumeTiming cost more than a pair does.
void BM_LockAndSettle(benchmark::State& state) {
  Bench bench;
  std::uint64_t counted = 0;
  for (auto _ : state) {
    bench.open();
    const auto started = std::chrono::steady_clock::now();
    const std::uint64_t before = allocations.load(std::memory_order_relaxed);
    bench.lock_and_settle();
    counted += allocations.load(std::memory_order_relaxed) - before;
    state.SetIterationTime(
        std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["allocs"] =
      benchmark::Counter(static_cast<double>(counted), benchmark::Counter::kAvgIterations);
}

void BM_WholeRound(benchmark::State& state) {
  Bench bench;
  const std::uint64_t before = allocations.load(std::memory_order_relaxed);
  for (auto _ : state) {
    bench.open();
    bench.lock_and_settle();
  }
  state.SetItemsProcessed(state.iterations());
  state.counters["allocs"] =
      benchmark::Counter(static_cast<double>(allocations.load(std::memory_order_relaxed) - before),
                         benchmark::Counter::kAvgIterations);
  if (bench.engine->check_invariants()) state.SkipWithError("invariants broken");
}

BENCHMARK(BM_LockAndSettle)->UseManualTime();
BENCHMARK(BM_WholeRound);

}  // namespace
}  // namespace jackpot

BENCHMARK_MAIN();
