#include "meters/money.h"

#include <limits>
#include <ostream>

#include "meters/int128.h"

namespace jackpot {
namespace {

constexpr Int128 kMaxMicros = std::numeric_limits<std::int64_t>::max();
constexpr Int128 kMinMicros = std::numeric_limits<std::int64_t>::min();

Result<Money, MoneyError> from_wide(Int128 micros) {
  if (micros > kMaxMicros || micros < kMinMicros) return MoneyError::overflow;
  return Money::from_micros(static_cast<std::int64_t>(micros));
}

// Floor division for a positive divisor.
Int128 floor_div(Int128 value, Int128 divisor) {
  Int128 quotient = value / divisor;
  if (value % divisor != 0 && value < 0) --quotient;
  return quotient;
}

}  // namespace

std::string_view to_string(MoneyError error) {
  switch (error) {
    case MoneyError::overflow:
      return "amount overflows";
    case MoneyError::malformed:
      return "not a decimal amount";
    case MoneyError::too_many_decimals:
      return "more than six decimal places";
    case MoneyError::division_by_zero:
      return "division by zero";
  }
  return "unknown money error";
}

Result<Money, MoneyError> Money::from_units(std::int64_t units) {
  return from_wide(Int128{units} * kMicrosPerUnit);
}

Result<Money, MoneyError> Money::parse(std::string_view text) {
  bool negative = false;
  if (!text.empty() && text.front() == '-') {
    negative = true;
    text.remove_prefix(1);
  }
  const auto point = text.find('.');
  const std::string_view whole = text.substr(0, point);
  const std::string_view fraction =
      point == std::string_view::npos ? std::string_view() : text.substr(point + 1);
  if (whole.empty() || (point != std::string_view::npos && fraction.empty())) {
    return MoneyError::malformed;
  }
  Int128 micros = 0;
  for (const char c : whole) {
    if (c < '0' || c > '9') return MoneyError::malformed;
    micros = micros * 10 + (c - '0');
    if (micros > kMaxMicros + 1) return MoneyError::overflow;  // Keep the number bounded.
  }
  micros *= kMicrosPerUnit;
  Int128 scale = kMicrosPerUnit;
  for (const char c : fraction) {
    if (c < '0' || c > '9') return MoneyError::malformed;
    if (scale == 1) return MoneyError::too_many_decimals;
    scale /= 10;
    micros += (c - '0') * scale;
  }
  return from_wide(negative ? -micros : micros);
}

std::int64_t Money::cents_floor() const {
  return static_cast<std::int64_t>(floor_div(micros_, kMicrosPerCent));
}

std::string Money::to_string() const {
  // The magnitude as unsigned, so that INT64_MIN formats without overflow.
  const bool negative = micros_ < 0;
  const std::uint64_t magnitude =
      negative ? 0 - static_cast<std::uint64_t>(micros_) : static_cast<std::uint64_t>(micros_);
  std::string fraction = std::to_string(magnitude % kMicrosPerUnit);
  fraction.insert(0, 6 - fraction.size(), '0');
  while (fraction.size() > 2 && fraction.back() == '0') fraction.pop_back();
  return (negative ? "-" : "") + std::to_string(magnitude / kMicrosPerUnit) + "." + fraction;
}

std::ostream& operator<<(std::ostream& stream, Money amount) {
  return stream << amount.to_string();
}

Result<PpmProduct, MoneyError> Money::times_ppm(std::int64_t rate_ppm) const {
  const Int128 exact = Int128{micros_} * rate_ppm;
  const Int128 quotient = floor_div(exact, kPpmPerWhole);
  auto money = from_wide(quotient);
  if (!money) return money.error();
  return PpmProduct{*money, static_cast<std::int64_t>(exact - quotient * kPpmPerWhole)};
}

Result<Money, MoneyError> Money::times_fraction_floor(std::int64_t numerator,
                                                      std::int64_t denominator) const {
  if (denominator == 0) return MoneyError::division_by_zero;
  Int128 exact = Int128{micros_} * numerator;
  Int128 divisor = denominator;
  if (divisor < 0) {
    exact = -exact;
    divisor = -divisor;
  }
  return from_wide(floor_div(exact, divisor));
}

}  // namespace jackpot
