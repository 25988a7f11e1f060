#include "controller/api/revocations.h"

#include <algorithm>
#include <cctype>

#include "controller/api/text_lines.h"

namespace jackpot {

Result<Revocations, std::string> Revocations::parse(std::string_view text) {
  if (text.size() > kMaxRevokedBytes) {
    return "the revocation list is " + std::to_string(text.size()) + " bytes, more than the " +
           std::to_string(kMaxRevokedBytes) + " allowed";
  }
  Revocations list;
  for (auto [number, line] : nonblank_lines(text)) {
    line = trimmed(line.substr(0, line.find('#')));
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
    list.fingerprints_.insert(ascii_lower(digits));
  }
  return list;
}

bool Revocations::revoked(std::string_view key_hash_hex) const {
  return fingerprints_.count(ascii_lower(key_hash_hex)) != 0;
}

}  // namespace jackpot
