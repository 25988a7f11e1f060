#pragma once

// Which principal a client's certificate names, checked against the site's CA with OpenSSL: the
// certificate chains to a self-signed CA of the bundle, is valid at the time given, signed and
// keyed at OpenSSL's security level 2 (no SHA-1, RSA from 2048 bits), says it is for client
// authentication (extendedKeyUsage clientAuth) and is no CA, and its subject has exactly one
// common name that names a principal (access_rules.h).
//
// Revocation is the caller's (revocations.h, call_authorization.h): a certificate that passes here
// is named by the hash of its public key.

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "controller/api/access_rules.h"
#include "meters/result.h"

namespace jackpot {

// Why a certificate names no principal: `reason` is no_certificate, certificate_untrusted or
// not_a_principal; `detail` says what, for the caller and the log ("certificate has expired").
struct CertificateRefusal {
  AccessRefusal reason = AccessRefusal::certificate_untrusted;
  std::string detail;
};

// A certificate that passed: the principal it names and the last second at which it (and every
// certificate of its chain) is still valid, so that a verdict kept for later calls ends with it.
struct CertifiedPrincipal {
  Principal principal;
  std::int64_t valid_until_unix_seconds = 0;
  std::string key_hash_hex;  // SHA-256 of its public key (SubjectPublicKeyInfo DER), lower hex.
};

// The SHA-256 of one PEM certificate's public key (its SubjectPublicKeyInfo, DER; lower-case hex),
// as a revocation list names it; nothing when the text is not one PEM certificate.
std::optional<std::string> certificate_key_hash(std::string_view certificate_pem);

class ClientCertificates {
 public:
  // The site's CA bundle (PEM: one or more self-signed CA certificates, at most 64 KiB); an error
  // names what is wrong.
  static Result<ClientCertificates, std::string> from_ca_pem(std::string_view ca_bundle_pem);

  // The principal `certificate_pem` (one PEM certificate) names, checked at `unix_seconds`;
  // `chain_pems` hold the intermediate certificates the client sent, any number of PEM
  // certificates in each (none with ops/pki's). An empty `certificate_pem` is no_certificate.
  Result<CertifiedPrincipal, CertificateRefusal> principal(std::string_view certificate_pem,
                                                           std::span<const std::string> chain_pems,
                                                           std::int64_t unix_seconds) const;

 private:
  struct Store;
  explicit ClientCertificates(std::shared_ptr<const Store> store) : store_(std::move(store)) {}
  std::shared_ptr<const Store> store_;
};

}  // namespace jackpot
