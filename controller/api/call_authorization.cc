#include "controller/api/call_authorization.h"

#include <utility>

#include "controller/limits/request_limits.h"

namespace jackpot {

CallAuthorization::CallAuthorization(std::optional<ClientCertificates> site_ca)
    : site_ca_(std::move(site_ca)) {}

void CallAuthorization::replace_site_ca(ClientCertificates site_ca) {
  const std::lock_guard lock(mutex_);
  site_ca_ = std::move(site_ca);
  verdicts_.clear();
}

Result<CertifiedPrincipal, CertificateRefusal> CallAuthorization::certified(
    const CallFacts& call, std::int64_t unix_seconds) {
  if (call.certificate_pem.empty()) {
    return CertificateRefusal{AccessRefusal::no_certificate,
                              "no client certificate: jackpotd serves callers with a certificate "
                              "of the site's CA only"};
  }
  std::string key(call.certificate_pem);
  for (const std::string& pem : call.chain_pems) key.append("\n").append(pem);
  const std::lock_guard lock(mutex_);
  if (const auto kept = verdicts_.find(key);
      kept != verdicts_.end() && unix_seconds <= kept->second.valid_until_unix_seconds) {
    return kept->second;
  }
  auto verdict = site_ca_->principal(call.certificate_pem, call.chain_pems, unix_seconds);
  if (!verdict.ok()) {
    verdicts_.erase(key);  // Expired since it was kept.
    return verdict;
  }
  if (verdicts_.size() >= kMaxKeptVerdicts) verdicts_.clear();
  verdicts_.insert_or_assign(std::move(key), *verdict);
  return verdict;
}

Result<Principal, CallRefusal> CallAuthorization::decide(const CallFacts& call,
                                                         std::int64_t unix_seconds) {
  Principal caller;
  if (plaintext_mode()) {
    std::optional<Principal> named =
        call.named_principal ? principal_from_common_name(*call.named_principal) : std::nullopt;
    if (!named) {
      return CallRefusal{AccessRefusal::not_a_principal,
                         "plaintext development mode: name the caller in the " +
                             std::string(kPrincipalMetadata) +
                             " metadata (table/<id>, sign/<id>, supervisor/<name> or "
                             "admin/<name>)"};
    }
    caller = std::move(*named);
  } else {
    auto verdict = certified(call, unix_seconds);
    if (!verdict.ok()) return CallRefusal{verdict.error().reason, verdict.error().detail};
    caller = std::move(verdict->principal);
  }
  if (const auto refusal = method_refusal(caller, call.method)) {
    // A method of the access table is named in full; any other is the caller's text.
    if (*refusal == AccessRefusal::unknown_method) {
      return CallRefusal{*refusal, "no principal may call " + quote_prefix(call.method)};
    }
    return CallRefusal{*refusal,
                       to_string(caller) + " may not call '" + std::string(call.method) + "'"};
  }
  return caller;
}

}  // namespace jackpot
