#include "controller/api/client_certificates.h"

#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <openssl/x509v3.h>

#include <optional>
#include <utility>

namespace jackpot {

struct ClientCertificates::Store {
  std::unique_ptr<X509_STORE, decltype(&X509_STORE_free)> store{X509_STORE_new(), &X509_STORE_free};
};

namespace {

using Certificate = std::unique_ptr<X509, decltype(&X509_free)>;

// The first certificate in `pem`, or null.
Certificate read_certificate(std::string_view pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size())), &BIO_free);
  Certificate certificate(bio ? PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr) : nullptr,
                          &X509_free);
  ERR_clear_error();
  return certificate;
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

}  // namespace

Result<ClientCertificates, std::string> ClientCertificates::from_ca_pem(
    std::string_view ca_bundle_pem) {
  auto store = std::make_shared<Store>();
  if (!store->store) return std::string("out of memory for the CA store");
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(ca_bundle_pem.data(), static_cast<int>(ca_bundle_pem.size())), &BIO_free);
  int count = 0;
  while (bio) {
    Certificate certificate(PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), &X509_free);
    if (!certificate) break;
    if (X509_check_ca(certificate.get()) == 0) {
      return "certificate " + std::to_string(count + 1) + " of the CA bundle is not a CA";
    }
    if (X509_STORE_add_cert(store->store.get(), certificate.get()) != 1) {
      ERR_clear_error();
      return "certificate " + std::to_string(count + 1) + " of the CA bundle is repeated";
    }
    ++count;
  }
  ERR_clear_error();
  if (count == 0) return std::string("the CA bundle holds no PEM certificate");
  return ClientCertificates(std::move(store));
}

Result<Principal, CertificateRefusal> ClientCertificates::principal(
    std::string_view certificate_pem, std::span<const std::string> chain_pems,
    std::int64_t unix_seconds) const {
  if (certificate_pem.empty()) {
    return CertificateRefusal{AccessRefusal::no_certificate, "no client certificate"};
  }
  Certificate certificate = read_certificate(certificate_pem);
  if (!certificate) {
    return CertificateRefusal{AccessRefusal::certificate_untrusted,
                              "the client certificate is not a PEM certificate"};
  }
  std::unique_ptr<STACK_OF(X509), void (*)(STACK_OF(X509)*)> chain(
      sk_X509_new_null(), [](STACK_OF(X509) * stack) { sk_X509_pop_free(stack, X509_free); });
  for (const std::string& pem : chain_pems) {
    Certificate intermediate = read_certificate(pem);
    if (!intermediate || !chain || sk_X509_push(chain.get(), intermediate.get()) == 0) {
      return CertificateRefusal{AccessRefusal::certificate_untrusted,
                                "a certificate of the client's chain is not a PEM certificate"};
    }
    intermediate.release();  // Owned by the stack now.
  }
  std::unique_ptr<X509_STORE_CTX, decltype(&X509_STORE_CTX_free)> context(X509_STORE_CTX_new(),
                                                                          &X509_STORE_CTX_free);
  if (!context || X509_STORE_CTX_init(context.get(), store_->store.get(), certificate.get(),
                                      chain.get()) != 1) {
    ERR_clear_error();
    return CertificateRefusal{AccessRefusal::certificate_untrusted,
                              "out of memory checking the client certificate"};
  }
  X509_STORE_CTX_set_time(context.get(), 0, static_cast<time_t>(unix_seconds));
  X509_STORE_CTX_set_purpose(context.get(), X509_PURPOSE_SSL_CLIENT);
  if (X509_verify_cert(context.get()) != 1) {
    const int error = X509_STORE_CTX_get_error(context.get());
    ERR_clear_error();
    return CertificateRefusal{
        AccessRefusal::certificate_untrusted,
        std::string("client certificate refused: ") + X509_verify_cert_error_string(error)};
  }
  const std::optional<std::string> name = common_name(certificate.get());
  std::optional<Principal> principal =
      name ? principal_from_common_name(*name) : std::optional<Principal>();
  if (!principal) {
    return CertificateRefusal{AccessRefusal::not_a_principal,
                              "the client certificate's common name names no principal "
                              "(table/<id>, sign/<id>, supervisor/<name> or admin/<name>)"};
  }
  return std::move(*principal);
}

}  // namespace jackpot
