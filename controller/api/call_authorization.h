#pragma once

// The one decision every call passes before any handler runs: who is calling, and whether that
// principal may call the method (access_rules.h). No gRPC here: the transport
// (transport_security.h) hands over the facts of each call and turns a refusal into its status.
//
// Who is calling comes from the client's certificate, checked against the site's CA
// (client_certificates.h). In plaintext development mode there is no certificate and nothing is
// proven: the caller names its principal in the `jackpot-principal` metadata, and the same rules
// apply to the principal it names.
//
// The TLS handshake accepts any client certificate (so that a refused caller hears why), so what
// anyone on the network may send is bounded here: a certificate with its chain is at most
// kMaxCertificateBytes of PEM in at most kMaxChainCertificates certificates, and every verdict,
// good or bad, is kept (by the SHA-256 of what was sent), so that calls on a connection cost one
// check, not one each. The check runs outside the lock that guards the kept verdicts.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>

#include "controller/api/access_rules.h"
#include "controller/api/client_certificates.h"
#include "controller/api/revocations.h"
#include "controller/api/roster.h"
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
  std::string detail;  // For the caller and the log; starts with the refusal's name.
};

class CallAuthorization {
 public:
  // Mutual TLS with the site's CA: callers are who the certificates it issued say they are.
  // Without one, plaintext development mode: callers are who they say they are. With a roster,
  // a supervisor or admin it does not name is refused (not_on_roster) before the method is
  // looked at; without one (plaintext mode only: the daemon needs one to serve mutual TLS),
  // every principal may act as its role allows.
  CallAuthorization(std::optional<ClientCertificates> site_ca, std::optional<Roster> roster);

  // The principal making the call, or why the call is refused; `unix_seconds` is now.
  Result<Principal, CallRefusal> decide(const CallFacts& call, std::int64_t unix_seconds);

  // Checks every call from now on against another CA (a rotation): verdicts kept for the old one
  // are dropped. Not for plaintext mode.
  void replace_site_ca(ClientCertificates site_ca);

  // Refuses every call from now on that presents a certificate `revoked` lists (UNAUTHENTICATED
  // certificate_revoked, checked on every call, kept verdicts or not). None at first.
  void replace_revocations(Revocations revoked);

  bool plaintext_mode() const { return plaintext_; }

  // The most PEM a client's certificate and chain may hold together, and the most certificates.
  static constexpr std::size_t kMaxCertificateBytes = 16 * 1024;
  static constexpr std::size_t kMaxChainCertificates = 4;
  // Verdicts kept at most: when full, all are dropped and checked again.
  static constexpr std::size_t kMaxKeptVerdicts = 4096;
  // How long a refusal of a certificate is kept before it is checked again.
  static constexpr std::int64_t kRefusalKeptSeconds = 60;

 private:
  struct Verdict {
    std::optional<CertifiedPrincipal> certified;  // Empty: refused.
    CertificateRefusal refusal;
    // Kept for calls from the time it was checked until before this (a clock set back checks
    // again).
    std::int64_t from_unix_seconds = 0;
    std::int64_t until_unix_seconds = 0;
  };
  Result<CertifiedPrincipal, CertificateRefusal> certified(const CallFacts& call,
                                                           std::int64_t unix_seconds);

  const bool plaintext_;
  const std::optional<Roster> roster_;
  std::mutex mutex_;  // Guards the three below; never held during a certificate check.
  std::shared_ptr<const ClientCertificates> site_ca_;
  std::shared_ptr<const Revocations> revoked_;
  std::uint64_t generation_ = 0;                       // Counts CA replacements.
  std::unordered_map<std::string, Verdict> verdicts_;  // By SHA-256 of certificate and chain.
};

}  // namespace jackpot
