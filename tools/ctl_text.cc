#include "tools/ctl_text.h"

#include <cctype>
#include <cstdio>
#include <ctime>

#include "meters/hidden_trigger.h"

namespace jackpot::tools {
namespace {

std::optional<std::int64_t> digits(std::string_view text) {
  if (text.empty() || text.size() > 18) return std::nullopt;
  std::int64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    value = value * 10 + (c - '0');
  }
  return value;
}

bool leap(std::int64_t year) { return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0; }

std::int64_t days_in_month(std::int64_t year, std::int64_t month) {
  static constexpr int kDays[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  return month == 2 && leap(year) ? 29 : kDays[month - 1];
}

}  // namespace

std::optional<std::uint64_t> parse_decimal(std::string_view text, std::uint64_t max) {
  if (text.empty() || text.size() > 20) return std::nullopt;
  std::uint64_t value = 0;
  for (const char c : text) {
    if (c < '0' || c > '9') return std::nullopt;
    const auto digit = static_cast<std::uint64_t>(c - '0');
    if (digit > max || value > (max - digit) / 10) return std::nullopt;
    value = value * 10 + digit;
  }
  return value;
}

std::string money_text(std::int64_t micros) {
  const bool negative = micros < 0;
  const std::uint64_t magnitude =
      negative ? 0 - static_cast<std::uint64_t>(micros) : static_cast<std::uint64_t>(micros);
  char text[48];
  std::snprintf(text, sizeof text, "%s%llu.%06llu", negative ? "-" : "",
                static_cast<unsigned long long>(magnitude / 1'000'000),
                static_cast<unsigned long long>(magnitude % 1'000'000));
  return text;
}

std::optional<std::int64_t> parse_time(std::string_view text) {
  if (text.find('-') == std::string_view::npos) {
    const auto seconds = digits(text);
    if (!seconds || *seconds > 253'402'300'799) return std::nullopt;  // 9999-12-31T23:59:59Z.
    return seconds;
  }
  // YYYY-MM-DD, then optionally THH:MM[:SS]Z.
  if (text.size() < 10 || text[4] != '-' || text[7] != '-') return std::nullopt;
  const auto year = digits(text.substr(0, 4));
  const auto month = digits(text.substr(5, 2));
  const auto day = digits(text.substr(8, 2));
  if (!year || !month || !day || *year < 1970 || *month < 1 || *month > 12 || *day < 1 ||
      *day > days_in_month(*year, *month)) {
    return std::nullopt;
  }
  std::int64_t hour = 0, minute = 0, second = 0;
  std::string_view rest = text.substr(10);
  if (!rest.empty()) {
    if ((rest.size() != 7 && rest.size() != 10) || rest[0] != 'T' || rest[3] != ':' ||
        rest.back() != 'Z' || (rest.size() == 10 && rest[6] != ':')) {
      return std::nullopt;
    }
    const auto h = digits(rest.substr(1, 2));
    const auto m = digits(rest.substr(4, 2));
    const auto s = rest.size() == 10 ? digits(rest.substr(7, 2)) : std::optional<std::int64_t>(0);
    if (!h || !m || !s || *h > 23 || *m > 59 || *s > 59) return std::nullopt;
    hour = *h;
    minute = *m;
    second = *s;
  }
  // The date is checked above; the C library's UTC calendar counts the seconds.
  std::tm utc{};
  utc.tm_year = static_cast<int>(*year - 1900);
  utc.tm_mon = static_cast<int>(*month - 1);
  utc.tm_mday = static_cast<int>(*day);
  utc.tm_hour = static_cast<int>(hour);
  utc.tm_min = static_cast<int>(minute);
  utc.tm_sec = static_cast<int>(second);
  return static_cast<std::int64_t>(timegm(&utc));
}

std::string time_text(std::int64_t unix_us) {
  std::int64_t seconds = unix_us / 1'000'000;
  std::int64_t micros = unix_us % 1'000'000;
  if (micros < 0) {
    micros += 1'000'000;
    --seconds;
  }
  const auto time = static_cast<std::time_t>(seconds);
  std::tm utc{};
  gmtime_r(&time, &utc);
  char text[64];
  std::snprintf(text, sizeof text, "%04d-%02d-%02dT%02d:%02d:%02d.%06lldZ", utc.tm_year + 1900,
                utc.tm_mon + 1, utc.tm_mday, utc.tm_hour, utc.tm_min, utc.tm_sec,
                static_cast<long long>(micros));
  return text;
}

std::optional<std::vector<std::uint8_t>> parse_hex(std::string_view text, std::size_t size) {
  if (text.size() != 2 * size) return std::nullopt;
  const auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  };
  std::vector<std::uint8_t> bytes;
  for (std::size_t i = 0; i < size; ++i) {
    const int high = nibble(text[2 * i]);
    const int low = nibble(text[2 * i + 1]);
    if (high < 0 || low < 0) return std::nullopt;
    bytes.push_back(static_cast<std::uint8_t>(high * 16 + low));
  }
  return bytes;
}

std::optional<std::string> trigger_mismatch(std::int64_t point_micros,
                                            const std::vector<std::uint8_t>& salt,
                                            const std::vector<std::uint8_t>& commitment) {
  TriggerSalt salt_bytes{};
  Sha256Digest committed{};
  if (salt.size() != salt_bytes.size()) return "the salt is not 32 bytes";
  if (commitment.size() != committed.size()) return "the commitment is not 32 bytes";
  std::copy(salt.begin(), salt.end(), salt_bytes.begin());
  std::copy(commitment.begin(), commitment.end(), committed.begin());
  const Sha256Digest opened = trigger_commitment(Money::from_micros(point_micros), salt_bytes);
  if (opened == committed) return std::nullopt;
  return "SHA-256 of the point and salt is " + to_hex(opened) + ", not the commitment " +
         to_hex(committed);
}

std::optional<AuditChainPosition> parse_anchor(std::string_view text) {
  const auto colon = text.find(':');
  if (colon == std::string_view::npos) return std::nullopt;
  const auto seq = digits(text.substr(0, colon));
  const auto hash = parse_hex(text.substr(colon + 1), 32);
  if (!seq || *seq < 1 || !hash) return std::nullopt;
  AuditChainPosition anchor;
  anchor.seq = *seq;
  std::copy(hash->begin(), hash->end(), anchor.hash.begin());
  return anchor;
}

std::vector<AuditChainPosition> anchors_in_log(std::string_view log) {
  // The line's end, from `at`, must be "N" + between + 64 hex digits + closing, exactly.
  const auto anchor_at = [](std::string_view rest, std::string_view between,
                            std::string_view closing) -> std::optional<AuditChainPosition> {
    const std::size_t digits_end = rest.find_first_not_of("0123456789");
    if (digits_end == 0 || digits_end == std::string_view::npos) return std::nullopt;
    const std::string_view tail = rest.substr(digits_end);
    if (tail.size() != between.size() + 64 + closing.size() ||
        tail.substr(0, between.size()) != between || !tail.ends_with(closing)) {
      return std::nullopt;
    }
    return parse_anchor(std::string(rest.substr(0, digits_end)) + ":" +
                        std::string(tail.substr(between.size(), 64)));
  };
  static constexpr std::string_view kText = "jackpotd: audit chain head (seq=";
  static constexpr std::string_view kJson = "\"message\":\"audit chain head\",\"seq\":";
  std::vector<AuditChainPosition> anchors;
  std::size_t start = 0;
  while (start < log.size()) {
    std::size_t end = log.find('\n', start);
    if (end == std::string_view::npos) end = log.size();
    std::string_view line = log.substr(start, end - start);
    start = end + 1;
    if (line.ends_with('\r')) line.remove_suffix(1);
    std::optional<AuditChainPosition> found;
    // The line's own "jackpotd: ", its first: what follows a message's or a field's text is
    // later in the line.
    if (const auto at = line.find("jackpotd: ");
        at != std::string_view::npos && line.substr(at).starts_with(kText)) {
      found = anchor_at(line.substr(at + kText.size()), ", hash=", ")");
    } else if (const auto json = line.find(kJson);
               json != std::string_view::npos && line.starts_with('{')) {
      found = anchor_at(line.substr(json + kJson.size()), ",\"hash\":\"", "\"}");
    }
    if (found) anchors.push_back(*found);
  }
  return anchors;
}

void AuditWalk::start_at(const AuditChainPosition& anchor) {
  anchor_ = anchor;
  at_ = {anchor.seq - 1, {}};
}

bool AuditWalk::feed(const AuditEvent& event) {
  if (anchor_) {
    // The anchor's event: the chain before it is not walked, so its prev_hash is taken as given.
    const AuditChainPosition anchor = *anchor_;
    anchor_.reset();
    if (event.seq != anchor.seq || event.hash != anchor.hash) {
      broken_ = "the walk starts at event " + std::to_string(event.seq) + " with hash " +
                to_hex(event.hash) + ", not at the anchor, event " + std::to_string(anchor.seq) +
                " with hash " + to_hex(anchor.hash);
      return false;
    }
    at_.hash = event.prev_hash;
  }
  if (auto broken = audit_chain_break(at_, event)) {
    broken_ = std::move(*broken);
    return false;
  }
  at_ = {event.seq, event.hash};
  return true;
}

bool AuditWalk::finish(const AuditChainPosition& head) {
  if (anchor_) {
    broken_ = "the chain ends at event " + std::to_string(head.seq) +
              ", before the anchor's event " + std::to_string(anchor_->seq);
    return false;
  }
  if (auto broken = audit_head_break(at_, head)) {
    broken_ = std::move(*broken);
    return false;
  }
  return true;
}

}  // namespace jackpot::tools
