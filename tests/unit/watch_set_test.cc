#include "controller/api/watch_set.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <thread>
#include <vector>

namespace jackpot {
namespace {

using std::chrono::milliseconds;

// A stream that counts what the set does to it: no gRPC.
struct CountingStream {
  std::atomic<int> pumps{0};
  std::atomic<int> holds{0};
  std::function<void()> on_pump;  // Runs inside pump(), on the fan-out's thread.
  void hold() { holds.fetch_add(1); }
  void release() { holds.fetch_sub(1); }
  void pump() {
    pumps.fetch_add(1);
    if (on_pump) on_pump();
  }
};

// Waits (at most 10 s) until `done()`; whether it came.
bool eventually(const std::function<bool()>& done) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!done()) {
    if (std::chrono::steady_clock::now() > until) return false;
    std::this_thread::sleep_for(milliseconds(1));
  }
  return true;
}

struct Floor {
  explicit Floor(std::size_t count) : streams(count) {
    for (CountingStream& stream : streams) EXPECT_EQ(set->add(&stream, "peer"), std::nullopt);
  }
  int pumps() const {
    int total = 0;
    for (const CountingStream& stream : streams) total += stream.pumps.load();
    return total;
  }
  int held() const {
    int total = 0;
    for (const CountingStream& stream : streams) total += stream.holds.load();
    return total;
  }
  std::shared_ptr<WatchSet<CountingStream>> set =
      std::make_shared<WatchSet<CountingStream>>(StreamLimits{100000, 100000});
  std::vector<CountingStream> streams;
};

TEST(SlicedFanOut, ASliceIsAtLeastTheMinimumAndAPassAtMostTheSlicesAllowed) {
  const struct {
    std::size_t streams;
    std::size_t slice;
  } cases[] = {
      {0, 64}, {1, 64}, {64, 64}, {1000, 64}, {2048, 64}, {2049, 65}, {10000, 313}, {20000, 625},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(fan_out_slice(c.streams), c.slice) << c.streams;
    const std::size_t slices = (c.streams + c.slice - 1) / c.slice;
    EXPECT_LE(slices, kFanOutMaxSlices) << c.streams;
  }
}

TEST(SlicedFanOut, AWakePumpsEveryStreamOnceAndReleasesWhatItHeld) {
  Floor floor(1000);  // 16 slices.
  SlicedFanOut<CountingStream> fan_out(floor.set, "test-fan-out", milliseconds(1));
  fan_out.wake();
  ASSERT_TRUE(eventually([&] { return floor.pumps() == 1000; })) << floor.pumps();
  ASSERT_TRUE(eventually([&] { return floor.held() == 0; })) << floor.held();
  for (const CountingStream& stream : floor.streams) EXPECT_EQ(stream.pumps.load(), 1);
}

TEST(SlicedFanOut, AWakeDuringAPassGivesOneMorePass) {
  Floor floor(300);
  std::atomic<bool> woke_again{false};
  // Declared after what its streams' callbacks use: it goes (joins) first.
  std::shared_ptr<SlicedFanOut<CountingStream>> fan_out;
  // The first stream pumped wakes the fan-out again, in the middle of its first pass.
  for (CountingStream& stream : floor.streams) {
    stream.on_pump = [&] {
      if (!woke_again.exchange(true)) fan_out->wake();
    };
  }
  fan_out = std::make_shared<SlicedFanOut<CountingStream>>(floor.set, "test-fan-out");
  fan_out->wake();
  ASSERT_TRUE(eventually([&] { return floor.pumps() == 600; })) << floor.pumps();
  for (const CountingStream& stream : floor.streams) EXPECT_EQ(stream.pumps.load(), 2);
  ASSERT_TRUE(eventually([&] { return floor.held() == 0; }));
}

TEST(SlicedFanOut, ThePassOwedAtTheEndRunsBeforeTheFanOutIsGone) {
  Floor floor(500);
  {
    SlicedFanOut<CountingStream> fan_out(floor.set, "test-fan-out", milliseconds(5));
    fan_out.wake();
  }  // Destroyed at once: the pass it owed has run, and released every stream.
  EXPECT_EQ(floor.pumps(), 500);
  EXPECT_EQ(floor.held(), 0);
}

TEST(SlicedFanOut, EachPassStartsOneSliceFurtherOn) {
  Floor floor(200);  // Slices of 64.
  std::vector<const CountingStream*> first_of_pass;
  std::atomic<int> pumped{0};
  for (CountingStream& stream : floor.streams) {
    stream.on_pump = [&, at = &stream] {
      if (pumped.fetch_add(1) % 200 == 0) first_of_pass.push_back(at);
    };
  }
  SlicedFanOut<CountingStream> fan_out(floor.set, "test-fan-out", milliseconds(0));
  for (int pass = 0; pass < 3; ++pass) {
    fan_out.wake();
    ASSERT_TRUE(eventually([&] { return pumped.load() == 200 * (pass + 1); }));
  }
  ASSERT_EQ(first_of_pass.size(), 3u);
  for (const CountingStream& stream : floor.streams) EXPECT_EQ(stream.pumps.load(), 3);
  // The set keeps its streams in pointer order, here the vector's order.
  std::vector<const CountingStream*> in_order;
  for (const CountingStream& stream : floor.streams) in_order.push_back(&stream);
  std::sort(in_order.begin(), in_order.end());
  EXPECT_EQ(first_of_pass[0], in_order[0]);
  EXPECT_EQ(first_of_pass[1], in_order[64]);
  EXPECT_EQ(first_of_pass[2], in_order[128]);
}

TEST(SlicedFanOut, AStreamRemovedDuringAPassIsStillReleasedByIt) {
  Floor floor(200);
  std::atomic<bool> removed{false};
  floor.streams[0].on_pump = [&] {
    // A stream that ends while the pass holds the others: they stay held until pumped.
    for (std::size_t i = 100; i < 200; ++i) floor.set->remove(&floor.streams[i], "peer");
    removed.store(true);
  };
  SlicedFanOut<CountingStream> fan_out(floor.set, "test-fan-out", milliseconds(2));
  fan_out.wake();
  ASSERT_TRUE(eventually([&] { return removed.load() && floor.held() == 0; }));
  // Held before the removal, so pumped by this pass.
  EXPECT_EQ(floor.pumps(), 200);
  fan_out.wake();
  ASSERT_TRUE(eventually([&] { return floor.pumps() == 300; })) << floor.pumps();
}

}  // namespace
}  // namespace jackpot
