#include "controller/api/revocations.h"

#include <algorithm>
#include <cctype>

namespace jackpot {
namespace {

std::string lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trimmed(std::string_view line) {
  const auto first = line.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = line.find_last_not_of(" \t\r");
  return line.substr(first, last - first + 1);
}

}  // namespace

Result<Revocations, std::string> Revocations::parse(std::string_view text) {
  if (text.size() > kMaxRevokedBytes) {
    return "the revocation list is " + std::to_string(text.size()) + " bytes, more than the " +
           std::to_string(kMaxRevokedBytes) + " allowed";
  }
  Revocations list;
  std::size_t number = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    std::string_view line = text.substr(start, end - start);
    start = end + 1;
    ++number;
    if (const auto comment = line.find('#'); comment != std::string_view::npos) {
      line = line.substr(0, comment);
    }
    line = trimmed(line);
    if (line.empty()) continue;
    constexpr std::string_view kPrefix = "key-sha256:";
    const std::string_view digits =
        line.substr(0, kPrefix.size()) == kPrefix ? line.substr(kPrefix.size()) : "";
    const bool hex = digits.size() == 64 && std::all_of(digits.begin(), digits.end(), [](char c) {
                       return std::isxdigit(static_cast<unsigned char>(c)) != 0;
                     });
    if (!hex) {
      return "revocation list line " + std::to_string(number) + ": '" +
             std::string(line.substr(0, 80)) +
             "' is not key-sha256:<64 hex digits> (the SHA-256 of a certificate's public key, as "
             "ops/pki revoke writes it)";
    }
    if (list.fingerprints_.size() == kMaxRevoked) {
      return "revocation list line " + std::to_string(number) + ": more than " +
             std::to_string(kMaxRevoked) + " certificates";
    }
    list.fingerprints_.insert(lower(digits));
  }
  return list;
}

bool Revocations::revoked(std::string_view key_hash_hex) const {
  return fingerprints_.count(lower(key_hash_hex)) != 0;
}

}  // namespace jackpot
