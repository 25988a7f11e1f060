#pragma once

// The one decision every call passes before any handler runs: who is calling, and whether that
// principal may call the method (access_rules.h). No gRPC here: the transport
// (transport_security.h) hands over the facts of each call and turns a refusal into its status.
//
// Who is calling comes from the client's certificate, checked against the site's CA
// (client_certificates.h). In plaintext development mode there is no certificate and nothing is
// proven: the caller names its principal in the `jackpot-principal` metadata, and the same rules
// apply to the principal it names.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "controller/api/access_rules.h"
#include "controller/api/client_certificates.h"
#include "meters/result.h"

namespace jackpot {

// The metadata that names the caller in plaintext development mode.
inline constexpr std::string_view kPrincipalMetadata = "jackpot-principal";

// What the transport knows of a call before any handler runs.
struct CallFacts {
  std::string_view method;                  // ":path", e.g. "/jackpot.v1.TableService/OpenRound".
  std::string_view certificate_pem;         // The client's certificate; empty when none.
  std::span<const std::string> chain_pems;  // Intermediates the client sent.
  std::optional<std::string_view> named_principal;  // jackpot-principal, when the call has one.
};

struct CallRefusal {
  AccessRefusal reason = AccessRefusal::no_certificate;
  std::string detail;  // For the caller and the log.
};

class CallAuthorization {
 public:
  // Mutual TLS with the site's CA: callers are who the certificates it issued say they are.
  // Without one, plaintext development mode: callers are who they say they are.
  explicit CallAuthorization(std::optional<ClientCertificates> site_ca);

  // The principal making the call, or why the call is refused; `unix_seconds` is now.
  Result<Principal, CallRefusal> decide(const CallFacts& call, std::int64_t unix_seconds);

  // Checks every call from now on against another CA (a rotation): verdicts kept for the old one
  // are dropped. Not for plaintext mode.
  void replace_site_ca(ClientCertificates site_ca);

  bool plaintext_mode() const { return !site_ca_.has_value(); }

  // Verdicts kept at most: when full, all are dropped and checked again.
  static constexpr std::size_t kMaxKeptVerdicts = 4096;

 private:
  Result<CertifiedPrincipal, CertificateRefusal> certified(const CallFacts& call,
                                                           std::int64_t unix_seconds);

  // A certificate chain passes or fails the same way until the CA changes or it expires: each
  // call of a connection would otherwise pay for a signature check. Keyed by the certificate
  // and chain as sent.
  std::mutex mutex_;
  std::optional<ClientCertificates> site_ca_;  // Empty in plaintext mode.
  std::unordered_map<std::string, CertifiedPrincipal> verdicts_;
};

}  // namespace jackpot
