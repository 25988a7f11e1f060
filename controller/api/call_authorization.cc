#include "controller/api/call_authorization.h"

#include <utility>

#include "controller/limits/request_limits.h"
#include "meters/digest.h"

namespace jackpot {
namespace {

std::size_t count_certificates(std::string_view pem) {
  std::size_t count = 0;
  for (std::size_t at = pem.find("-----BEGIN"); at != std::string_view::npos;
       at = pem.find("-----BEGIN", at + 1)) {
    ++count;
  }
  return count;
}

CertificateRefusal with_name(CertificateRefusal refusal) {
  refusal.detail = std::string(to_string(refusal.reason)) + ": " + refusal.detail;
  return refusal;
}

}  // namespace

CallAuthorization::CallAuthorization(std::optional<ClientCertificates> site_ca,
                                     std::optional<Roster> roster)
    : plaintext_(!site_ca.has_value()),
      roster_(std::move(roster)),
      site_ca_(site_ca ? std::make_shared<const ClientCertificates>(std::move(*site_ca))
                       : nullptr) {}

void CallAuthorization::replace_site_ca(ClientCertificates site_ca) {
  auto replacement = std::make_shared<const ClientCertificates>(std::move(site_ca));
  const std::lock_guard lock(mutex_);
  site_ca_ = std::move(replacement);
  ++generation_;
  verdicts_.clear();
}

void CallAuthorization::replace_revocations(Revocations revoked) {
  auto replacement = std::make_shared<const Revocations>(std::move(revoked));
  const std::lock_guard lock(mutex_);
  revoked_ = std::move(replacement);
}

Result<CertifiedPrincipal, CertificateRefusal> CallAuthorization::certified(
    const CallFacts& call, std::int64_t unix_seconds) {
  if (call.certificate_pem.empty()) {
    return with_name({AccessRefusal::no_certificate,
                      "no client certificate: jackpotd serves callers with a certificate of the "
                      "site's CA only"});
  }
  std::size_t bytes = call.certificate_pem.size();
  std::size_t certificates = count_certificates(call.certificate_pem);
  for (const std::string& pem : call.chain_pems) {
    bytes += pem.size();
    certificates += count_certificates(pem);
  }
  if (bytes > kMaxCertificateBytes || certificates > kMaxChainCertificates + 1) {
    return with_name({AccessRefusal::certificate_untrusted,
                      "the client certificate and its chain are larger than jackpotd reads (" +
                          std::to_string(kMaxCertificateBytes) + " bytes of PEM, " +
                          std::to_string(kMaxChainCertificates) + " intermediates)"});
  }
  std::string sent(call.certificate_pem);
  for (const std::string& pem : call.chain_pems) sent.append("\n").append(pem);
  const Sha256Digest digest = sha256(sent);
  std::string key(digest.begin(), digest.end());

  std::shared_ptr<const ClientCertificates> site_ca;
  std::uint64_t generation = 0;
  {
    const std::lock_guard lock(mutex_);
    if (const auto kept = verdicts_.find(key); kept != verdicts_.end() &&
                                               kept->second.from_unix_seconds <= unix_seconds &&
                                               unix_seconds < kept->second.until_unix_seconds) {
      if (kept->second.certified) return *kept->second.certified;
      return kept->second.refusal;
    }
    site_ca = site_ca_;
    generation = generation_;
  }
  // The signature check, outside the lock: other calls go on meanwhile.
  auto checked = site_ca->principal(call.certificate_pem, call.chain_pems, unix_seconds);
  Verdict verdict;
  verdict.from_unix_seconds = unix_seconds;
  if (checked.ok()) {
    verdict.certified = *checked;
    verdict.until_unix_seconds = checked->valid_until_unix_seconds;
  } else {
    verdict.refusal = with_name(checked.error());
    verdict.until_unix_seconds = unix_seconds + kRefusalKeptSeconds;
  }
  const std::lock_guard lock(mutex_);
  if (generation == generation_) {  // Not for a CA replaced meanwhile.
    if (verdicts_.size() >= kMaxKeptVerdicts) verdicts_.clear();
    verdicts_.insert_or_assign(std::move(key), verdict);
  }
  if (verdict.certified) return *verdict.certified;
  return verdict.refusal;
}

Result<Principal, CallRefusal> CallAuthorization::decide(const CallFacts& call,
                                                         std::int64_t unix_seconds) {
  Principal caller;
  if (plaintext_mode()) {
    std::optional<Principal> named =
        call.named_principal ? principal_from_common_name(*call.named_principal) : std::nullopt;
    if (!named) {
      return CallRefusal{AccessRefusal::not_a_principal,
                         "not_a_principal: plaintext development mode: name the caller in the " +
                             std::string(kPrincipalMetadata) +
                             " metadata (table/<id>, sign/<id>, supervisor/<name> or "
                             "admin/<name>)"};
    }
    caller = std::move(*named);
  } else {
    auto verdict = certified(call, unix_seconds);
    if (!verdict.ok()) return CallRefusal{verdict.error().reason, verdict.error().detail};
    std::shared_ptr<const Revocations> revoked;
    {
      const std::lock_guard lock(mutex_);
      revoked = revoked_;
    }
    if (revoked && revoked->revoked(verdict->key_hash_hex)) {
      return CallRefusal{AccessRefusal::certificate_revoked,
                         "certificate_revoked: this certificate of " +
                             quote_prefix(to_string(verdict->principal)) +
                             " was revoked by the site (key-sha256:" + verdict->key_hash_hex + ")"};
    }
    caller = std::move(verdict->principal);
  }
  if (roster_ && !roster_->admits(caller)) {
    return CallRefusal{AccessRefusal::not_on_roster,
                       "not_on_roster: " + quote_prefix(to_string(caller)) +
                           " is not on the site's roster of supervisors and admins (--roster)"};
  }
  if (const auto refusal = method_refusal(caller, call.method)) {
    // A method of the access table is named in full; any other is the caller's text.
    if (*refusal == AccessRefusal::unknown_method) {
      return CallRefusal{*refusal,
                         "unknown_method: no principal may call " + quote_prefix(call.method)};
    }
    return CallRefusal{*refusal, "role_not_allowed: " + quote_prefix(to_string(caller)) +
                                     " may not call '" + std::string(call.method) + "'"};
  }
  return caller;
}

}  // namespace jackpot
