#include "controller/api/client_certificates.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <ctime>
#include <optional>
#include <utility>
#include <vector>

namespace jackpot {

struct ClientCertificates::Store {
  std::unique_ptr<X509_STORE, decltype(&X509_STORE_free)> store{X509_STORE_new(), &X509_STORE_free};
};

namespace {

using Certificate = std::unique_ptr<X509, decltype(&X509_free)>;

// The most PEM text read for a CA bundle or a client's certificates (ops/pki's are under 1 KiB).
constexpr std::size_t kMaxPemBytes = 64 * 1024;

// Leaves OpenSSL's error queue of this thread as it found it (gRPC's TLS code reads it on the
// same threads).
class ErrorQueueMark {
 public:
  ErrorQueueMark() { ERR_set_mark(); }
  ~ErrorQueueMark() { ERR_pop_to_mark(); }
  ErrorQueueMark(const ErrorQueueMark&) = delete;
  ErrorQueueMark& operator=(const ErrorQueueMark&) = delete;
};

// Every certificate in `pem`, in order; nothing when any PEM block in it is not a certificate
// or does not parse, or when it is empty or too long.
std::optional<std::vector<Certificate>> read_certificates(std::string_view pem) {
  if (pem.empty() || pem.size() > kMaxPemBytes) return std::nullopt;
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  if (!bio) return std::nullopt;
  std::vector<Certificate> certificates;
  while (true) {
    Certificate certificate(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), &X509_free);
    if (!certificate) break;
    certificates.push_back(std::move(certificate));
  }
  // The loop ends at the end of the text (no more PEM start line) or at a block that is not a
  // certificate or does not parse.
  const unsigned long error = ERR_peek_last_error();
  const bool at_end =
      ERR_GET_LIB(error) == ERR_LIB_PEM && ERR_GET_REASON(error) == PEM_R_NO_START_LINE;
  if (!at_end || certificates.empty()) return std::nullopt;
  return certificates;
}

// The subject's one common name as UTF-8, or nothing when it has none or several.
std::optional<std::string> common_name(X509* certificate) {
  X509_NAME* subject = X509_get_subject_name(certificate);
  const int index = X509_NAME_get_index_by_NID(subject, NID_commonName, -1);
  if (index < 0 || X509_NAME_get_index_by_NID(subject, NID_commonName, index) >= 0) {
    return std::nullopt;
  }
  unsigned char* utf8 = nullptr;
  const int length =
      ASN1_STRING_to_UTF8(&utf8, X509_NAME_ENTRY_get_data(X509_NAME_get_entry(subject, index)));
  if (length < 0) return std::nullopt;
  std::string text(reinterpret_cast<const char*>(utf8), static_cast<std::size_t>(length));
  OPENSSL_free(utf8);
  return text;
}

// Whether the certificate says it is for client authentication and is no CA: a certificate that
// says nothing of its purpose passes OpenSSL's purpose check, and is not taken here.
bool for_clients_only(X509* certificate) {
  return (X509_get_extension_flags(certificate) & EXFLAG_XKUSAGE) != 0 &&
         (X509_get_extended_key_usage(certificate) & XKU_SSL_CLIENT) != 0 &&
         X509_check_ca(certificate) == 0;
}

// The last second at which every certificate of the verified chain is still valid.
std::optional<std::int64_t> chain_valid_until(X509_STORE_CTX* verified) {
  STACK_OF(X509)* chain = X509_STORE_CTX_get0_chain(verified);
  if (chain == nullptr || sk_X509_num(chain) == 0) return std::nullopt;
  std::optional<std::int64_t> earliest;
  for (int index = 0; index < sk_X509_num(chain); ++index) {
    std::tm end{};
    if (ASN1_TIME_to_tm(X509_get0_notAfter(sk_X509_value(chain, index)), &end) != 1) {
      return std::nullopt;
    }
    const std::int64_t seconds = timegm(&end);
    if (!earliest || seconds < *earliest) earliest = seconds;
  }
  return earliest;
}

}  // namespace

Result<ClientCertificates, std::string> ClientCertificates::from_ca_pem(
    std::string_view ca_bundle_pem) {
  const ErrorQueueMark mark;
  auto store = std::make_shared<Store>();
  if (!store->store) return std::string("out of memory for the CA store");
  auto certificates = read_certificates(ca_bundle_pem);
  if (!certificates) {
    return std::string("the CA bundle is not one or more PEM certificates (at most 64 KiB)");
  }
  int number = 0;
  for (const Certificate& certificate : *certificates) {
    ++number;
    // A root: an intermediate in the bundle would never anchor a chain.
    if (X509_check_ca(certificate.get()) != 1 || X509_self_signed(certificate.get(), 1) != 1) {
      return "certificate " + std::to_string(number) + " of the CA bundle is not a self-signed CA";
    }
    if (X509_STORE_add_cert(store->store.get(), certificate.get()) != 1) {
      return std::string("out of memory for the CA store");
    }
  }
  return ClientCertificates(std::move(store));
}

namespace {

// The SHA-256 of the certificate's public key (its SubjectPublicKeyInfo, DER): what the CA's
// signature covers, so that no re-encoding of the certificate (an ECDSA signature's other valid
// form) changes it; every certificate of one key has it.
std::string key_hash_of(X509* certificate) {
  unsigned char* der = nullptr;
  const int der_length = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(certificate), &der);
  if (der_length <= 0) return {};
  std::unique_ptr<unsigned char, void (*)(unsigned char*)> owned(
      der, [](unsigned char* bytes) { OPENSSL_free(bytes); });
  unsigned char digest[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  if (EVP_Digest(der, static_cast<std::size_t>(der_length), digest, &length, EVP_sha256(),
                 nullptr) != 1) {
    return {};
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += kHex[digest[i] >> 4];
    hex += kHex[digest[i] & 0x0f];
  }
  return hex;
}

}  // namespace

std::optional<std::string> certificate_key_hash(std::string_view certificate_pem) {
  const ErrorQueueMark mark;
  auto certificates = read_certificates(certificate_pem);
  if (!certificates || certificates->size() != 1) return std::nullopt;
  std::string hex = key_hash_of(certificates->front().get());
  if (hex.empty()) return std::nullopt;
  return hex;
}

Result<CertifiedPrincipal, CertificateRefusal> ClientCertificates::principal(
    std::string_view certificate_pem, std::span<const std::string> chain_pems,
    std::int64_t unix_seconds) const {
  const ErrorQueueMark mark;
  if (certificate_pem.empty()) {
    return CertificateRefusal{AccessRefusal::no_certificate, "no client certificate"};
  }
  auto leaf = read_certificates(certificate_pem);
  if (!leaf || leaf->size() != 1) {
    return CertificateRefusal{AccessRefusal::certificate_untrusted,
                              "the client certificate is not one PEM certificate"};
  }
  X509* certificate = leaf->front().get();
  std::unique_ptr<STACK_OF(X509), void (*)(STACK_OF(X509)*)> chain(
      sk_X509_new_null(), [](STACK_OF(X509) * stack) { sk_X509_pop_free(stack, X509_free); });
  if (!chain) {
    return CertificateRefusal{AccessRefusal::certificate_untrusted,
                              "out of memory checking the client certificate"};
  }
  for (const std::string& pem : chain_pems) {
    if (pem.empty()) continue;  // gRPC gives an empty chain for a resumed session.
    auto intermediates = read_certificates(pem);
    if (!intermediates) {
      return CertificateRefusal{AccessRefusal::certificate_untrusted,
                                "the client's chain is not PEM certificates"};
    }
    for (Certificate& intermediate : *intermediates) {
      if (sk_X509_push(chain.get(), intermediate.get()) == 0) {
        return CertificateRefusal{AccessRefusal::certificate_untrusted,
                                  "out of memory checking the client certificate"};
      }
      intermediate.release();  // Owned by the stack now.
    }
  }
  std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> context(X509_STORE_CTX_new(),
                                                                          &X509_STORE_CTX_free);
  if (!context ||
      X509_STORE_CTX_init(context.get(), store_->store.get(), certificate, chain.get()) != 1 ||
      X509_STORE_CTX_set_purpose(context.get(), X509_PURPOSE_SSL_CLIENT) != 1) {
    return CertificateRefusal{AccessRefusal::certificate_untrusted,
                              "out of memory checking the client certificate"};
  }
  X509_STORE_CTX_set_time(context.get(), 0, static_cast<time_t>(unix_seconds));
  // At least 112-bit security: no SHA-1 signatures, no RSA keys under 2048 bits.
  X509_VERIFY_PARAM_set_auth_level(X509_STORE_CTX_get0_param(context.get()), 2);
  if (X509_verify_cert(context.get()) != 1) {
    const int error = X509_STORE_CTX_get_error(context.get());
    return CertificateRefusal{
        AccessRefusal::certificate_untrusted,
        std::string("client certificate refused: ") + X509_verify_cert_error_string(error)};
  }
  if (!for_clients_only(certificate)) {
    return CertificateRefusal{AccessRefusal::certificate_untrusted,
                              "client certificate refused: it does not say it is for client "
                              "authentication only (extendedKeyUsage clientAuth, no CA)"};
  }
  const std::optional<std::string> name = common_name(certificate);
  std::optional<Principal> principal =
      name ? principal_from_common_name(*name) : std::optional<Principal>();
  if (!principal) {
    return CertificateRefusal{AccessRefusal::not_a_principal,
                              "the client certificate's common name names no principal "
                              "(table/<id>, sign/<id>, supervisor/<name> or admin/<name>)"};
  }
  std::optional<std::int64_t> valid_until = chain_valid_until(context.get());
  if (!valid_until) {
    return CertificateRefusal{AccessRefusal::certificate_untrusted,
                              "client certificate refused: its validity cannot be read"};
  }
  std::string key_hash = key_hash_of(certificate);
  if (key_hash.empty()) {
    return CertificateRefusal{AccessRefusal::certificate_untrusted,
                              "client certificate refused: its public key cannot be read"};
  }
  return CertifiedPrincipal{std::move(*principal), *valid_until, std::move(key_hash)};
}

}  // namespace jackpot
