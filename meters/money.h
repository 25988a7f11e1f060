#pragma once

#include <compare>
#include <cstdint>
#include <iosfwd>
#include <string>
#include <string_view>

#include "meters/result.h"

namespace jackpot {

enum class MoneyError : std::uint8_t {
  overflow,           // The result does not fit in int64 micros.
  malformed,          // Not a decimal amount such as "1234.56", "-0.5" or "0.000001".
  too_many_decimals,  // More than six digits after the point: finer than a micro.
  division_by_zero,
};

std::string_view to_string(MoneyError error);

struct PpmProduct;

// An amount of money as an integer count of micros (10^-6 of the currency unit). Arithmetic is
// checked: an overflow is a MoneyError, never a wrap and never undefined behaviour.
class Money {
 public:
  static constexpr std::int64_t kMicrosPerUnit = 1'000'000;
  static constexpr std::int64_t kMicrosPerCent = 10'000;
  static constexpr std::int64_t kPpmPerWhole = 1'000'000;

  constexpr Money() = default;
  static constexpr Money from_micros(std::int64_t micros) { return Money(micros); }
  static Result<Money, MoneyError> from_cents(std::int64_t cents) {
    std::int64_t micros = 0;
    if (__builtin_mul_overflow(cents, kMicrosPerCent, &micros)) return MoneyError::overflow;
    return Money(micros);
  }
  static Result<Money, MoneyError> from_units(std::int64_t units);

  // Parses an optional '-', one or more digits, and optionally '.' followed by one to six
  // digits. Nothing else: no '+', spaces, separators, exponents or currency signs.
  static Result<Money, MoneyError> parse(std::string_view text);

  constexpr std::int64_t micros() const { return micros_; }

  // Rounded down (toward negative infinity) to a whole number of cents.
  std::int64_t cents_floor() const;
  Money floor_to_cent() const { return Money(cents_floor() * kMicrosPerCent); }
  bool is_whole_cents() const { return micros_ % kMicrosPerCent == 0; }

  // "1234.56", "0.000001", "-5.00": at least two decimals, more only when the micros need them.
  std::string to_string() const;

  // Checked, and inline: the round path adds and scales amounts for every seat.
  Result<Money, MoneyError> plus(Money other) const {
    std::int64_t sum = 0;
    if (__builtin_add_overflow(micros_, other.micros_, &sum)) return MoneyError::overflow;
    return Money(sum);
  }
  Result<Money, MoneyError> minus(Money other) const {
    std::int64_t difference = 0;
    if (__builtin_sub_overflow(micros_, other.micros_, &difference)) return MoneyError::overflow;
    return Money(difference);
  }
  Result<Money, MoneyError> times(std::int64_t factor) const {
    std::int64_t product = 0;
    if (__builtin_mul_overflow(micros_, factor, &product)) return MoneyError::overflow;
    return Money(product);
  }

  // This amount times rate_ppm / 1,000,000 with the sub-micro remainder made explicit.
  Result<PpmProduct, MoneyError> times_ppm(std::int64_t rate_ppm) const;

  // floor(this × numerator / denominator), exact (128-bit intermediate).
  Result<Money, MoneyError> times_fraction_floor(std::int64_t numerator,
                                                 std::int64_t denominator) const;

  friend constexpr auto operator<=>(Money, Money) = default;
  friend std::ostream& operator<<(std::ostream& stream, Money amount);

 private:
  constexpr explicit Money(std::int64_t micros) : micros_(micros) {}
  std::int64_t micros_ = 0;
};

// The exact product of an amount and a rate in parts per million:
// amount × rate / 1,000,000 = quotient + remainder / 1,000,000 micros, 0 <= remainder < 10^6.
struct PpmProduct {
  Money quotient;
  std::int64_t remainder = 0;  // In 10^-6 micros; 0 <= remainder < 1,000,000.
};

}  // namespace jackpot
