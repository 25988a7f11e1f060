#pragma once

// Certificates a site withdrew before they expire (issue #33): a stolen table, sign, supervisor
// or admin key. The file (--revoked; `ops/pki revoke` writes it) lists each certificate by the
// SHA-256 of its public key (its SubjectPublicKeyInfo, DER: what the CA signed, so no re-encoding
// of the certificate escapes it, and every certificate of a stolen key is revoked with it), one a
// line, "key-sha256:<64 hex digits>", optionally followed by a
// '#' comment (ops/pki names the principal and the date); blank lines and lines starting with '#'
// are ignored. A call presenting a revoked certificate is refused UNAUTHENTICATED
// certificate_revoked (call_authorization.h), and the daemon ends the open streams of one when it
// reads the file again (SIGHUP). At most kMaxRevokedBytes and kMaxRevoked certificates.

#include <cstddef>
#include <set>
#include <string>
#include <string_view>

#include "meters/result.h"

namespace jackpot {

inline constexpr std::size_t kMaxRevokedBytes = 4 * 1024 * 1024;
inline constexpr std::size_t kMaxRevoked = 50'000;

class Revocations {
 public:
  // The list a file's text describes, or why it is refused (naming the line).
  static Result<Revocations, std::string> parse(std::string_view text);

  // Whether the certificate whose public key hashes to `key_hash_hex` (64 hex digits, any case) is
  // revoked.
  bool revoked(std::string_view key_hash_hex) const;
  std::size_t size() const { return fingerprints_.size(); }

 private:
  std::set<std::string, std::less<>> fingerprints_;  // Lower-case hex.
};

}  // namespace jackpot
