// The sign feed's rules (sign/): what a sign shows for a meter, when a subscriber is sent
// something, and a publisher that coalesces: a fast sign sees the latest committed state at its
// pace, a stalled one holds no backlog.
#include <gtest/gtest.h>

#include <memory>
#include <vector>

#include "sign/publisher.h"
#include "sign/sign_state.h"

namespace jackpot::sign {
namespace {

Money usd(const char* text) { return *Money::parse(text); }

TEST(SignShownCents, FloorsAndNeverShowsMoreThanCanBePaid) {
  struct Case {
    const char* meter;
    std::optional<const char*> ceiling;
    std::optional<const char*> must_hit_by;
    std::int64_t cents;
  };
  const Case cases[] = {
      {"123.456789", std::nullopt, std::nullopt, 12345},
      {"0.009999", std::nullopt, std::nullopt, 0},
      {"50000.01", "50000.00", std::nullopt, 5000000},
      {"249.999999", std::nullopt, "250.00", 24999},
      {"250.004", std::nullopt, "250.00", 25000},
      {"300.00", "280.005", "250.00", 25000},
      {"300.00", "240.009", "250.00", 24000},
      {"-1.00", std::nullopt, std::nullopt, 0},
  };
  for (const Case& c : cases) {
    const auto optional_usd = [](std::optional<const char*> text) {
      return text ? std::optional<Money>(usd(*text)) : std::nullopt;
    };
    EXPECT_EQ(shown_cents(usd(c.meter), optional_usd(c.ceiling), optional_usd(c.must_hit_by)),
              c.cents)
        << c.meter;
  }
}

TEST(SignPace, SendsTheLatestAtMostAtItsRateAndAHeartbeatWhenQuiet) {
  using Kind = PaceDecision::Kind;
  const PaceLimits limits{250'000, 2'000'000};
  struct Case {
    const char* what;
    std::uint64_t latest, sent;
    std::int64_t last_sent_us, now_us;
    PaceDecision decision;
  };
  const Case cases[] = {
      {"nothing published, nothing sent", 0, 0, 0, 5, {Kind::wait_for_change, 0}},
      {"the first state at once", 3, 0, 0, 5, {Kind::send_state, 0}},
      {"newer, long enough after", 4, 3, 1'000'000, 1'250'000, {Kind::send_state, 0}},
      {"newer, too soon", 4, 3, 1'000'000, 1'100'000, {Kind::wait_until, 1'250'000}},
      {"nothing new", 4, 4, 1'000'000, 1'100'000, {Kind::wait_until, 3'000'000}},
      {"nothing new for 2 s", 4, 4, 1'000'000, 3'000'000, {Kind::send_heartbeat, 0}},
      {"newer after a quiet spell", 9, 4, 1'000'000, 9'000'000, {Kind::send_state, 0}},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(pace(c.latest, c.sent, c.last_sent_us, c.now_us, limits), c.decision) << c.what;
  }
}

SignState showing(std::int64_t cents) {
  SignState state;
  state.links.push_back({"L", LinkShownStatus::open, {{1, "Royal Flush", cents, 0, 0, {}}}});
  return state;
}

TEST(SignPublisher, NumbersOnlyChangesAndWakesEverySubscriber) {
  SignPublisher publisher;
  EXPECT_EQ(publisher.latest()->sequence, 0u);
  int woken_a = 0;
  int woken_b = 0;
  const auto a = publisher.subscribe([&] { ++woken_a; });
  publisher.subscribe([&] { ++woken_b; });
  EXPECT_EQ(publisher.publish(showing(100)), 1u);
  EXPECT_EQ(publisher.publish(showing(100)), 1u);  // The same again: no change, nobody woken.
  EXPECT_EQ(publisher.publish(showing(101)), 2u);
  EXPECT_EQ(woken_a, 2);
  EXPECT_EQ(woken_b, 2);
  publisher.unsubscribe(a);
  EXPECT_EQ(publisher.subscribers(), 1u);
  publisher.publish(showing(102));
  EXPECT_EQ(woken_a, 2);
  EXPECT_EQ(woken_b, 3);
  EXPECT_EQ(publisher.latest()->sequence, 3u);
  EXPECT_EQ(publisher.latest()->links[0].levels[0].amount_cents, 102);
}

// 1,000 commits 10 ms apart. The fast sign, at its pace of 4 a second, is sent the latest state
// each time (sequences only rise, never older than the latest 250 ms before) and ends on the
// last; the stalled sign, woken every time, reads nothing and holds nothing: no state but the
// latest is kept alive.
TEST(SignPublisher, AFastSignSeesTheLatestAtItsPaceAndAStalledOneHoldsNoBacklog) {
  SignPublisher publisher;
  const PaceLimits limits;
  int stalled_wakeups = 0;
  publisher.subscribe([&] { ++stalled_wakeups; });
  std::vector<std::weak_ptr<const SignState>> published;
  std::uint64_t sent = 0;
  std::int64_t last_sent_us = 0;
  std::vector<std::uint64_t> received;
  std::int64_t now_us = 0;
  for (int commit = 1; commit <= 1000; ++commit) {
    now_us = commit * 10'000;
    publisher.publish(showing(commit));
    published.push_back(publisher.latest());
    const auto latest = publisher.latest();
    if (pace(latest->sequence, sent, last_sent_us, now_us, limits).kind ==
        PaceDecision::Kind::send_state) {
      EXPECT_GT(latest->sequence, sent);
      EXPECT_EQ(latest->sequence, static_cast<std::uint64_t>(commit));
      sent = latest->sequence;
      last_sent_us = now_us;
      received.push_back(sent);
    }
  }
  // The last commit, once the pace allows.
  const auto decision = pace(publisher.latest()->sequence, sent, last_sent_us, now_us, limits);
  if (decision.kind == PaceDecision::Kind::wait_until) {
    EXPECT_EQ(
        pace(publisher.latest()->sequence, sent, last_sent_us, decision.until_us, limits).kind,
        PaceDecision::Kind::send_state);
    received.push_back(publisher.latest()->sequence);
  }
  EXPECT_EQ(received.back(), 1000u);
  EXPECT_LE(received.size(), 10u * 4u + 2u);  // 10 s at 4 a second.
  EXPECT_GE(received.size(), 10u * 4u - 1u);
  EXPECT_EQ(stalled_wakeups, 1000);
  std::size_t alive = 0;
  for (const auto& state : published) alive += state.expired() ? 0u : 1u;
  EXPECT_EQ(alive, 1u);
}

}  // namespace
}  // namespace jackpot::sign
