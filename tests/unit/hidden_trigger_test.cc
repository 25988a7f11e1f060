#include "meters/hidden_trigger.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace jackpot {
namespace {

std::string hex_of_sha256(const std::string& text) {
  const auto* bytes = reinterpret_cast<const std::uint8_t*>(text.data());
  return to_hex(sha256({bytes, text.size()}));
}

TEST(Sha256, MatchesFips180TestVectors) {
  EXPECT_EQ(hex_of_sha256(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(hex_of_sha256("abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  EXPECT_EQ(hex_of_sha256("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq"),
            "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1");
  EXPECT_EQ(hex_of_sha256(std::string(1'000'000, 'a')),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0");
  // 55 and 56 bytes straddle the padding boundary.
  EXPECT_EQ(hex_of_sha256(std::string(55, 'x')).size(), 64u);
  EXPECT_NE(hex_of_sha256(std::string(55, 'x')), hex_of_sha256(std::string(56, 'x')));
}

TEST(UniformBelow, RejectsTheBiasedTail) {
  // A source that first returns values in the rejected zone: with bound 3, 2^64 mod 3 = 1, so
  // 0 is rejected and the next value is used.
  class Scripted final : public RandomSource {
   public:
    std::uint64_t next_u64() override { return values_[next_++]; }

   private:
    std::vector<std::uint64_t> values_{0, 0, 7};
    std::size_t next_ = 0;
  } scripted;
  EXPECT_EQ(uniform_below(scripted, 3), 7u % 3u);
}

TEST(HiddenTrigger, CommitmentVerifiesAndDetectsTampering) {
  SplitMix64 random(42);
  const Money reset = *Money::parse("1000.004");
  const Money amount = *Money::parse("1250.00");
  const HiddenTrigger trigger = draw_hidden_trigger(random, reset, amount);
  EXPECT_GT(trigger.point, reset);
  EXPECT_LE(trigger.point, amount);
  EXPECT_TRUE(trigger.point.is_whole_cents());
  EXPECT_TRUE(verify_trigger(trigger.point, trigger.salt, trigger.commitment));

  const Money other_point = Money::from_micros(trigger.point.micros() + 10'000);
  EXPECT_FALSE(verify_trigger(other_point, trigger.salt, trigger.commitment));
  TriggerSalt other_salt = trigger.salt;
  other_salt[31] ^= 1;
  EXPECT_FALSE(verify_trigger(trigger.point, other_salt, trigger.commitment));
  Sha256Digest other_commitment = trigger.commitment;
  other_commitment[0] ^= 0x80;
  EXPECT_FALSE(verify_trigger(trigger.point, trigger.salt, other_commitment));
}

// hidden_reset_limit: the midpoint of (seed, amount], floored to the cent.
struct ResetLimitCase {
  const char* seed;
  const char* must_hit_by;
  const char* limit;
};
class HiddenResetLimit : public ::testing::TestWithParam<ResetLimitCase> {};
TEST_P(HiddenResetLimit, IsTheMidpointOfTheFloorsRange) {
  const ResetLimitCase& c = GetParam();
  EXPECT_EQ(hidden_reset_limit(*Money::parse(c.seed), *Money::parse(c.must_hit_by)),
            *Money::parse(c.limit));
}
INSTANTIATE_TEST_SUITE_P(
    Cases, HiddenResetLimit,
    ::testing::Values(ResetLimitCase{"50.00", "250.00", "150.00"},    // The demo's level.
                      ResetLimitCase{"50.00", "250.01", "150.00"},    // Half a cent floored.
                      ResetLimitCase{"50.00", "50.01", "50.00"},      // One cent: no reserve.
                      ResetLimitCase{"50.00", "50.02", "50.01"},      // Two cents: one possible.
                      ResetLimitCase{"250.00", "1250.00", "750.00"},  // $5 base: all scaled.
                      ResetLimitCase{"0.00", "100.00", "50.00"},      // A zero seed.
                      ResetLimitCase{"1000.005", "1100.00", "1049.995"}));  // A sub-cent seed.

// hidden_return_limit: the committed range's lower end, or the meter where contributions have
// already carried it past that.
struct ReturnLimitCase {
  const char* range_above;
  const char* meter_before;
  const char* limit;
};
class HiddenReturnLimit : public ::testing::TestWithParam<ReturnLimitCase> {};
TEST_P(HiddenReturnLimit, IsWhatTheRangeAndTheMeterAlreadySay) {
  const ReturnLimitCase& c = GetParam();
  HiddenTrigger trigger;
  trigger.range_above = *Money::parse(c.range_above);
  trigger.range_up_to = *Money::parse("250.00");
  trigger.point = *Money::parse("87.90");  // Never part of the answer.
  EXPECT_EQ(hidden_return_limit(trigger, *Money::parse(c.meter_before)), *Money::parse(c.limit));
  trigger.point = *Money::parse("249.99");
  EXPECT_EQ(hidden_return_limit(trigger, *Money::parse(c.meter_before)), *Money::parse(c.limit));
}
INSTANTIATE_TEST_SUITE_P(
    Cases, HiddenReturnLimit,
    ::testing::Values(ReturnLimitCase{"50.00", "50.00", "50.00"},  // Right after a reset.
                      ReturnLimitCase{"50.00", "12.00", "50.00"},  // A void lowered it.
                      ReturnLimitCase{"50.00", "87.89", "87.89"},  // Contributions carried it.
                      ReturnLimitCase{"50.004", "50.00", "50.004"}));

TEST(HiddenTrigger, AnEmptyRangeFallsBackToTheAmount) {
  SplitMix64 random(1);
  const Money amount = *Money::parse("250.00");
  EXPECT_EQ(draw_hidden_trigger(random, amount, amount).point, amount);
  // The only whole cent above 249.995 and at most 250.00 is 250.00.
  EXPECT_EQ(draw_hidden_trigger(random, *Money::parse("249.995"), amount).point, amount);
}

// The point is uniform over the whole cents of (reset, amount]. Chi-square over 100 equal bins
// of 100 cents each (reset $1000.00, amount $1100.00: 10,000 possible points), 200,000 draws from
// a fixed seed. The 0.1% critical value for 99 degrees of freedom is 148.23.
TEST(HiddenTrigger, PointIsUniformChiSquare) {
  SplitMix64 random(20261129);
  const Money reset = *Money::parse("1000.00");
  const Money amount = *Money::parse("1100.00");
  constexpr int kBins = 100;
  constexpr int kDraws = 200'000;
  std::vector<int> counts(kBins, 0);
  for (int i = 0; i < kDraws; ++i) {
    const HiddenTrigger trigger = draw_hidden_trigger(random, reset, amount);
    ASSERT_GT(trigger.point, reset);
    ASSERT_LE(trigger.point, amount);
    const std::int64_t cent_offset = trigger.point.cents_floor() - reset.cents_floor() - 1;
    ++counts[static_cast<std::size_t>(cent_offset / 100)];
  }
  const double expected = static_cast<double>(kDraws) / kBins;
  double chi_square = 0;
  for (const int count : counts) {
    chi_square += (count - expected) * (count - expected) / expected;
  }
  EXPECT_LT(chi_square, 148.23);
  // The extremes are reachable: both the first cent above the reset and the amount itself.
  EXPECT_GT(counts.front(), 0);
  EXPECT_GT(counts.back(), 0);
}

}  // namespace
}  // namespace jackpot
