#include "meters/money.h"

#include <gtest/gtest.h>

#include <limits>

#include "meters/int128.h"

namespace jackpot {
namespace {

constexpr std::int64_t kMax = std::numeric_limits<std::int64_t>::max();
constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min();

Money micros(std::int64_t value) { return Money::from_micros(value); }

TEST(Money, ParsesDecimalAmounts) {
  const struct {
    const char* text;
    std::int64_t micros;
  } cases[] = {
      {"0", 0},
      {"1234.56", 1'234'560'000},
      {"0.000001", 1},
      {"12345.678901", 12'345'678'901},
      {"-5", -5'000'000},
      {"-0.5", -500'000},
      {"007.10", 7'100'000},
      {"9223372036854.775807", kMax},
      {"-9223372036854.775808", kMin},
  };
  for (const auto& c : cases) {
    const auto parsed = Money::parse(c.text);
    ASSERT_TRUE(parsed.ok()) << c.text << ": " << to_string(parsed.error());
    EXPECT_EQ(parsed->micros(), c.micros) << c.text;
  }
}

TEST(Money, RefusesMalformedAndOutOfRangeText) {
  const struct {
    const char* text;
    MoneyError error;
  } cases[] = {
      {"", MoneyError::malformed},
      {"-", MoneyError::malformed},
      {"+5", MoneyError::malformed},
      {" 5", MoneyError::malformed},
      {"5 ", MoneyError::malformed},
      {"1,000.00", MoneyError::malformed},
      {"$5", MoneyError::malformed},
      {"1e6", MoneyError::malformed},
      {"5.", MoneyError::malformed},
      {".5", MoneyError::malformed},
      {"1.2.3", MoneyError::malformed},
      {"--1", MoneyError::malformed},
      {"0.0000001", MoneyError::too_many_decimals},
      {"1.1234567", MoneyError::too_many_decimals},
      {"9223372036854.775808", MoneyError::overflow},
      {"-9223372036854.775809", MoneyError::overflow},
      {"99999999999999999999999999999999999999", MoneyError::overflow},
  };
  for (const auto& c : cases) {
    const auto parsed = Money::parse(c.text);
    ASSERT_FALSE(parsed.ok()) << c.text << " parsed as " << parsed->micros();
    EXPECT_EQ(parsed.error(), c.error) << c.text;
  }
}

TEST(Money, FormatsWithAtLeastTwoDecimalsAndRoundTrips) {
  const struct {
    std::int64_t micros;
    const char* text;
  } cases[] = {
      {0, "0.00"},
      {1, "0.000001"},
      {1'234'560'000, "1234.56"},
      {5'000'000, "5.00"},
      {12'345'678'901, "12345.678901"},
      {-500'000, "-0.50"},
      {-1, "-0.000001"},
      {kMax, "9223372036854.775807"},
      {kMin, "-9223372036854.775808"},
  };
  for (const auto& c : cases) {
    EXPECT_EQ(micros(c.micros).to_string(), c.text);
    EXPECT_EQ(Money::parse(c.text)->micros(), c.micros) << c.text;
  }
}

TEST(Money, CheckedArithmeticReportsOverflow) {
  EXPECT_EQ(micros(kMax).plus(micros(1)).error(), MoneyError::overflow);
  EXPECT_EQ(micros(kMin).minus(micros(1)).error(), MoneyError::overflow);
  EXPECT_EQ(micros(kMax / 2 + 1).times(2).error(), MoneyError::overflow);
  EXPECT_EQ(micros(kMin).times(-1).error(), MoneyError::overflow);
  EXPECT_EQ(Money::from_cents(kMax).error(), MoneyError::overflow);
  EXPECT_EQ(Money::from_units(kMax / 1'000'000 + 1).error(), MoneyError::overflow);
  EXPECT_EQ(micros(kMax).plus(micros(-1))->micros(), kMax - 1);
  EXPECT_EQ(micros(3).times(-4)->micros(), -12);
  EXPECT_EQ(Money::from_cents(-250)->micros(), -2'500'000);
}

// Cents become micros exactly, and overflow exactly where the product leaves int64.
TEST(Money, FromCentsOverflowsExactlyAtTheInt64Boundary) {
  constexpr std::int64_t kLimit = kMax / Money::kMicrosPerCent;
  for (const std::int64_t cents : {std::int64_t{0}, std::int64_t{1}, std::int64_t{-1}, kLimit,
                                   kLimit + 1, -kLimit, -kLimit - 1, kMax, kMin}) {
    const Int128 exact = Int128{cents} * Money::kMicrosPerCent;
    const auto money = Money::from_cents(cents);
    if (exact >= kMin && exact <= kMax) {
      ASSERT_TRUE(money.ok()) << cents;
      EXPECT_EQ(money->micros(), static_cast<std::int64_t>(exact)) << cents;
    } else {
      ASSERT_FALSE(money.ok()) << cents;
      EXPECT_EQ(money.error(), MoneyError::overflow) << cents;
    }
  }
}

TEST(Money, MultipliesByPpmWithAnExplicitRemainder) {
  // $1 at 15% is exactly $0.15.
  auto product = micros(1'000'000).times_ppm(150'000);
  EXPECT_EQ(product->quotient.micros(), 150'000);
  EXPECT_EQ(product->remainder, 0);
  // 7 micros at 333,333 ppm = 2.333331 micros.
  product = micros(7).times_ppm(333'333);
  EXPECT_EQ(product->quotient.micros(), 2);
  EXPECT_EQ(product->remainder, 333'331);
  // Floors toward negative infinity; the remainder stays non-negative.
  product = micros(-7).times_ppm(333'333);
  EXPECT_EQ(product->quotient.micros(), -3);
  EXPECT_EQ(product->remainder, 666'669);
  // The 128-bit intermediate does not overflow; the quotient may.
  EXPECT_EQ(micros(kMax).times_ppm(1'000'000)->quotient.micros(), kMax);
  EXPECT_EQ(micros(kMax).times_ppm(1'000'001).error(), MoneyError::overflow);
}

TEST(Money, FloorsToTheCent) {
  EXPECT_EQ(micros(1'234'567'890).floor_to_cent().micros(), 1'234'560'000);
  EXPECT_EQ(micros(9'999).floor_to_cent().micros(), 0);
  EXPECT_EQ(micros(-1).floor_to_cent().micros(), -10'000);
  EXPECT_EQ(micros(-1).cents_floor(), -1);
  EXPECT_TRUE(micros(50'000).is_whole_cents());
  EXPECT_FALSE(micros(50'001).is_whole_cents());
  // 10% of $12,345.678901 is $1,234.5678901: $1,234.56 is paid.
  const Money meter = *Money::parse("12345.678901");
  EXPECT_EQ(meter.times_fraction_floor(10, 100)->floor_to_cent().to_string(), "1234.56");
}

TEST(Money, FractionsAreExactAndChecked) {
  EXPECT_EQ(micros(10).times_fraction_floor(1, 3)->micros(), 3);
  EXPECT_EQ(micros(-10).times_fraction_floor(1, 3)->micros(), -4);
  EXPECT_EQ(micros(10).times_fraction_floor(1, -3)->micros(), -4);
  EXPECT_EQ(micros(kMax).times_fraction_floor(100, 100)->micros(), kMax);
  EXPECT_EQ(micros(kMax).times_fraction_floor(3, 2).error(), MoneyError::overflow);
  EXPECT_EQ(micros(1).times_fraction_floor(1, 0).error(), MoneyError::division_by_zero);
}

}  // namespace
}  // namespace jackpot
