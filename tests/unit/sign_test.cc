// The sign feed's rules (sign/): what a sign shows for a meter, when a subscriber is sent
// something, and a publisher that coalesces: a fast sign sees the latest committed state at its
// pace, a stalled one holds no backlog.
#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "sign/encodings.h"
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

TEST(SignPace, SendsEveryNewerStateAndAHeartbeatWhenQuiet) {
  using Kind = PaceDecision::Kind;
  const PaceLimits limits{250'000, 2'000'000};
  struct Case {
    const char* what;
    std::uint64_t latest, sent;
    std::int64_t last_sent_us, now_us;
    Kind decision;
  };
  const Case cases[] = {
      {"nothing published, nothing sent", 0, 0, 0, 5, Kind::wait},
      {"the first state at once", 3, 0, 0, 5, Kind::send_state},
      {"newer", 4, 3, 1'000'000, 1'250'000, Kind::send_state},
      {"newer, soon after the last (the feed paced it)", 4, 3, 1'000'000, 1'010'000,
       Kind::send_state},
      {"nothing new", 4, 4, 1'000'000, 1'100'000, Kind::wait},
      {"nothing new for just under 2 s", 4, 4, 1'000'000, 2'999'999, Kind::wait},
      {"nothing new for 2 s", 4, 4, 1'000'000, 3'000'000, Kind::send_heartbeat},
      {"newer after a quiet spell", 9, 4, 1'000'000, 9'000'000, Kind::send_state},
      {"a daemon that starts numbering high", 1'700'000'000'000'001, 0, 0, 5, Kind::send_state},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(pace(c.latest, c.sent, c.last_sent_us, c.now_us, limits).kind, c.decision) << c.what;
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

TEST(SignPublisher, NumbersFromTheFirstSequenceAndWakesAllOnATick) {
  SignPublisher publisher(1'700'000'000'000'000);
  EXPECT_EQ(publisher.latest()->sequence, 1'700'000'000'000'000u);
  int woken = 0;
  publisher.subscribe([&] { ++woken; });
  // The first state is published even when it shows nothing (a floor without links).
  EXPECT_EQ(publisher.publish(SignState{}), 1'700'000'000'000'001u);
  // A state built later but showing the same is no change: its time is not what it shows.
  SignState later;
  later.built_us = 1'800'000'000'000'000;
  EXPECT_EQ(publisher.publish(later), 1'700'000'000'000'001u);
  EXPECT_EQ(publisher.latest()->built_us, 0);
  EXPECT_EQ(woken, 1);
  publisher.wake_all();
  EXPECT_EQ(woken, 2);
}

// 1,000 commits 10 ms apart; the feed publishes the latest at most every 250 ms. The fast sign,
// woken at each publication, is sent each one (sequences only rise, every committed value within
// 250 ms, the last one included); the stalled sign, woken every time, reads nothing and holds
// nothing: no state but the latest is kept alive.
TEST(SignPublisher, AFastSignSeesTheLatestAtThePaceAndAStalledOneHoldsNoBacklog) {
  SignPublisher publisher;
  const PaceLimits limits;
  int stalled_wakeups = 0;
  publisher.subscribe([&] { ++stalled_wakeups; });
  std::uint64_t sent = 0;
  std::int64_t last_sent_us = 0;
  std::vector<std::int64_t> received;  // The committed value of each state sent.
  publisher.subscribe([&] {
    const auto latest = publisher.latest();
    if (pace(latest->sequence, sent, last_sent_us, 0, limits).kind ==
        PaceDecision::Kind::send_state) {
      EXPECT_GT(latest->sequence, sent);
      sent = latest->sequence;
      received.push_back(latest->links[0].levels[0].amount_cents);
    }
  });
  std::vector<std::weak_ptr<const SignState>> published;
  std::int64_t last_published_us = -limits.min_interval_us;
  std::int64_t committed = 0;
  bool unpublished = false;
  const auto publish = [&](std::int64_t now_us) {
    publisher.publish(showing(committed));
    published.push_back(publisher.latest());
    last_published_us = now_us;
    unpublished = false;
  };
  for (int commit = 1; commit <= 1000; ++commit) {
    const std::int64_t now_us = commit * 10'000;
    committed = commit;
    unpublished = true;
    if (now_us - last_published_us >= limits.min_interval_us) publish(now_us);
  }
  publish(1000 * 10'000 + limits.min_interval_us);  // The feed's next tick.
  ASSERT_FALSE(unpublished);
  EXPECT_EQ(received.back(), 1000);
  EXPECT_LE(received.size(), 10u * 4u + 2u);  // 10 s at 4 a second.
  EXPECT_GE(received.size(), 10u * 4u - 1u);
  for (std::size_t i = 1; i < received.size(); ++i) {
    EXPECT_GT(received[i], received[i - 1]);
    EXPECT_LE(received[i] - received[i - 1], 25);  // 25 commits: 250 ms.
  }
  EXPECT_EQ(stalled_wakeups, static_cast<int>(received.size()));
  std::size_t alive = 0;
  for (const auto& state : published) alive += state.expired() ? 0u : 1u;
  EXPECT_EQ(alive, 1u);
}

TEST(SignEncodings, EncodeOncePerStateAndWatchAndKeepBoundedWatches) {
  LatestEncodings<std::string> encodings(2);
  int encoded = 0;
  const auto get = [&](const std::string& key, std::uint64_t sequence) {
    return *encodings.get(key, sequence, [&] {
      ++encoded;
      return std::optional<std::string>(key + "@" + std::to_string(sequence));
    });
  };
  EXPECT_EQ(get("lobby", 1), "lobby@1");
  EXPECT_EQ(get("lobby", 1), "lobby@1");
  EXPECT_EQ(encoded, 1);
  EXPECT_EQ(get("lobby", 2), "lobby@2");  // A newer state: encoded again.
  EXPECT_EQ(get("bar", 2), "bar@2");
  EXPECT_EQ(encoded, 3);
  EXPECT_EQ(get("T1", 2), "T1@2");  // Full with the latest state's: made, not kept.
  EXPECT_EQ(get("T1", 2), "T1@2");
  EXPECT_EQ(encoded, 5);
  EXPECT_EQ(get("T1", 3), "T1@3");  // The older state's encodings make room.
  EXPECT_EQ(get("T1", 3), "T1@3");
  EXPECT_EQ(encoded, 6);
  // A failed encoding is not kept.
  EXPECT_FALSE(encodings.get("x", 3, [] { return std::optional<std::string>(); }));
}

}  // namespace
}  // namespace jackpot::sign
