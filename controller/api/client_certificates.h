#pragma once

// Which principal a client's certificate names, checked against the site's CA with OpenSSL: the
// certificate chains to the CA, is valid at the time given, may be used for client
// authentication (if it says what it is for), and its subject has exactly one common name that
// names a principal (access_rules.h).
//
// Not applied yet: the server does not speak TLS yet (issue #16).

#include <cstdint>
#include <memory>
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

class ClientCertificates {
 public:
  // The site's CA bundle (PEM, one or more CA certificates); an error names what is wrong.
  static Result<ClientCertificates, std::string> from_ca_pem(std::string_view ca_bundle_pem);

  // The principal `certificate_pem` names, checked at `unix_seconds`; `chain_pems` are the
  // intermediate certificates the client sent (none with ops/pki's certificates). An empty
  // `certificate_pem` is no_certificate.
  Result<Principal, CertificateRefusal> principal(std::string_view certificate_pem,
                                                  std::span<const std::string> chain_pems,
                                                  std::int64_t unix_seconds) const;

 private:
  struct Store;
  explicit ClientCertificates(std::shared_ptr<const Store> store) : store_(std::move(store)) {}
  std::shared_ptr<const Store> store_;
};

}  // namespace jackpot
