#include "controller/api/transport_security.h"

#include <grpc/grpc.h>
#include <grpc/grpc_security.h>
#include <grpc/slice.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_context.h>
#include <grpcpp/support/server_interceptor.h>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <sys/stat.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <utility>
#include <vector>

#include "controller/api/call_authorization.h"

namespace jackpot {

// What the credentials' callbacks share with the transport: the files, the TLS configuration the
// next handshake should take up, and the authorisation of calls.
struct ServerTransport::State {
  State(std::optional<TlsFiles> tls_files, std::optional<ClientCertificates> site_ca,
        std::optional<Roster> roster, RefusalObserver observer)
      : files(std::move(tls_files)),
        authorization(std::move(site_ca), std::move(roster)),
        refused(std::move(observer)) {}

  const std::optional<TlsFiles> files;  // Empty in plaintext mode.
  CallAuthorization authorization;
  const RefusalObserver refused;

  // The open streams of certified callers, each with a reference on its call (so that a reload
  // may cancel it whatever the C++ side is doing) and its certificate's public key, and the
  // revocation list in force for them. A stream checks the list as it registers, a reload swaps
  // it and then scans: one authorized against the old list is caught either way.
  std::mutex streams_mutex;
  std::map<grpc_call*, std::string> streams;
  std::shared_ptr<const Revocations> revoked = std::make_shared<const Revocations>();

  std::mutex mutex;
  // The PEM texts in force, and whether a handshake has yet to take them up.
  std::string certificate_pem;
  std::string key_pem;
  std::string client_ca_pem;
  bool taken_up = false;
};

namespace {

// The most read of any one of the files (ops/pki's are under 1 KiB).
constexpr std::streamsize kMaxFileBytes = 64 * 1024;

Result<std::string, FileProblem> read_file(const std::string& path, const char* what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return FileProblem{std::string(what) + " " + path + " cannot be read"};
  std::string text(static_cast<std::size_t>(kMaxFileBytes) + 1, '\0');
  in.read(text.data(), kMaxFileBytes + 1);
  if (in.bad()) return FileProblem{std::string(what) + " " + path + " cannot be read"};
  text.resize(static_cast<std::size_t>(in.gcount()));
  if (text.size() > static_cast<std::size_t>(kMaxFileBytes)) {
    return FileProblem{std::string(what) + " " + path + " is larger than 64 KiB"};
  }
  return text;
}

struct PemTexts {
  std::string certificate;
  std::string key;
  std::string client_ca;
};

// Reads the three files and checks that the certificate and key parse and belong together, so
// that a bad file is an error at start or on SIGHUP rather than at a client's handshake.
// The revocation list of `path` (none when empty), or why it cannot be used. Whoever may write
// the list may revoke anyone, or restore a stolen certificate.
Result<Revocations, std::string> read_revocations(const std::string& path) {
  if (path.empty()) return Revocations();
  auto text = read_owner_written(path, kMaxRevokedBytes, "the revocation list");
  if (!text.ok()) return text.error().message;
  auto list = Revocations::parse(*text);
  if (!list.ok()) return "the revocation list " + path + ": " + list.error();
  return std::move(list).value();
}

Result<PemTexts, std::string> read_tls_files(const TlsFiles& files) {
  auto certificate = read_file(files.certificate, "the TLS certificate");
  if (!certificate.ok()) return certificate.error().message;
  auto key = read_file(files.key, "the TLS key");
  if (!key.ok()) return key.error().message;
  auto client_ca = read_file(files.client_ca, "the client CA bundle");
  if (!client_ca.ok()) return client_ca.error().message;

  ERR_set_mark();
  std::unique_ptr<BIO, decltype(&BIO_free)> certificate_bio(
      BIO_new_mem_buf(certificate->data(), static_cast<int>(certificate->size())), &BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> x509(
      certificate_bio ? PEM_read_bio_X509(certificate_bio.get(), nullptr, nullptr, nullptr)
                      : nullptr,
      &X509_free);
  // The intermediates after it must parse too: gRPC reads the whole chain, and keeps the old one
  // (or fails the port) when it cannot.
  bool chain_parses = x509 != nullptr;
  while (chain_parses) {
    std::unique_ptr<X509, decltype(&X509_free)> next(
        PEM_read_bio_X509(certificate_bio.get(), nullptr, nullptr, nullptr), &X509_free);
    if (next) continue;
    const unsigned long error = ERR_peek_last_error();
    chain_parses =
        ERR_GET_LIB(error) == ERR_LIB_PEM && ERR_GET_REASON(error) == PEM_R_NO_START_LINE;
    break;
  }
  std::unique_ptr<BIO, decltype(&BIO_free)> key_bio(
      BIO_new_mem_buf(key->data(), static_cast<int>(key->size())), &BIO_free);
  std::unique_ptr<EVP_PKEY, decltype(&EVP_PKEY_free)> private_key(
      key_bio ? PEM_read_bio_PrivateKey(key_bio.get(), nullptr, nullptr, nullptr) : nullptr,
      &EVP_PKEY_free);
  const bool pair = x509 && private_key && X509_check_private_key(x509.get(), private_key.get());
  ERR_pop_to_mark();
  if (!x509) return "the TLS certificate " + files.certificate + " is not a PEM certificate";
  if (!chain_parses) {
    return "the TLS certificate " + files.certificate +
           " holds a PEM block after the first certificate that is not a certificate";
  }
  if (!private_key) {
    return "the TLS key " + files.key + " is not a PEM private key (without a passphrase)";
  }
  if (!pair) return "the TLS key " + files.key + " is not the key of " + files.certificate;
  auto site_ca = ClientCertificates::from_ca_pem(*client_ca);
  if (!site_ca.ok()) return "the client CA bundle " + files.client_ca + ": " + site_ca.error();
  return PemTexts{std::move(*certificate), std::move(*key), std::move(*client_ca)};
}

std::string_view text(const grpc_slice& slice) {
  return {reinterpret_cast<const char*>(GRPC_SLICE_START_PTR(slice)), GRPC_SLICE_LENGTH(slice)};
}

std::int64_t now_unix_seconds() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// gRPC's auth metadata processor, called on every call before it is routed to a handler: it
// decides synchronously (certificate checks are kept, see CallAuthorization) and never blocks.
void authorize_call(void* state, grpc_auth_context* context, const grpc_metadata* metadata,
                    std::size_t metadata_count, grpc_process_auth_metadata_done_cb done,
                    void* user_data) {
  ServerTransport::State& transport =
      **static_cast<std::shared_ptr<ServerTransport::State>*>(state);
  CallFacts call;
  int named = 0;
  for (std::size_t index = 0; index < metadata_count; ++index) {
    const std::string_view key = text(metadata[index].key);
    if (key == ":path") call.method = text(metadata[index].value);
    if (key == kPrincipalMetadata) {
      ++named;
      call.named_principal = text(metadata[index].value);
    }
  }
  if (named > 1) call.named_principal.reset();  // Naming two principals names none.
  std::vector<std::string> chain;
  grpc_auth_property_iterator found =
      grpc_auth_context_find_properties_by_name(context, GRPC_X509_PEM_CERT_PROPERTY_NAME);
  if (const grpc_auth_property* property = grpc_auth_property_iterator_next(&found)) {
    call.certificate_pem = std::string_view(property->value, property->value_length);
  }
  found =
      grpc_auth_context_find_properties_by_name(context, GRPC_X509_PEM_CERT_CHAIN_PROPERTY_NAME);
  while (const grpc_auth_property* property = grpc_auth_property_iterator_next(&found)) {
    chain.emplace_back(property->value, property->value_length);
  }
  call.chain_pems = chain;
  const auto decision = transport.authorization.decide(call, now_unix_seconds());
  if (decision.ok()) {
    done(user_data, nullptr, 0, nullptr, 0, GRPC_STATUS_OK, nullptr);
    return;
  }
  if (transport.refused) transport.refused(decision.error().reason, decision.error().detail);
  done(user_data, nullptr, 0, nullptr, 0,
       unauthenticated(decision.error().reason) ? GRPC_STATUS_UNAUTHENTICATED
                                                : GRPC_STATUS_PERMISSION_DENIED,
       decision.error().detail.c_str());
}

void release_state(void* state) {
  delete static_cast<std::shared_ptr<ServerTransport::State>*>(state);
}

// gRPC asks before each handshake whether the certificate and key changed (a SIGHUP).
grpc_ssl_certificate_config_reload_status fetch_tls_config(
    void* user_data, grpc_ssl_server_certificate_config** config) {
  auto& state = *static_cast<ServerTransport::State*>(user_data);
  const std::lock_guard lock(state.mutex);
  if (state.taken_up) return GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_UNCHANGED;
  const grpc_ssl_pem_key_cert_pair pair{state.key_pem.c_str(), state.certificate_pem.c_str()};
  *config = grpc_ssl_server_certificate_config_create(state.client_ca_pem.c_str(), &pair, 1);
  if (*config == nullptr) return GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_FAIL;
  state.taken_up = true;
  return GRPC_SSL_CERTIFICATE_CONFIG_RELOAD_NEW;
}

// gRPC's C++ API has no credentials with a configuration that changes, nor an auth metadata
// processor that is called inline: these credentials are gRPC core's, put on the server's port
// directly.
class CoreServerCredentials final : public grpc::ServerCredentials {
 public:
  explicit CoreServerCredentials(grpc_server_credentials* credentials)
      : credentials_(credentials) {}
  ~CoreServerCredentials() override { grpc_server_credentials_release(credentials_); }
  CoreServerCredentials(const CoreServerCredentials&) = delete;
  CoreServerCredentials& operator=(const CoreServerCredentials&) = delete;

  // The processor is set when the credentials are made (ServerTransport).
  void SetAuthMetadataProcessor(const std::shared_ptr<grpc::AuthMetadataProcessor>&) override {}

 private:
  int AddPortToServer(const std::string& address, grpc_server* server) override {
    return grpc_server_add_http2_port(server, address.c_str(), credentials_);
  }

  grpc_server_credentials* credentials_;
};

std::shared_ptr<grpc::ServerCredentials> with_authorization(
    grpc_server_credentials* credentials, std::shared_ptr<ServerTransport::State> state) {
  grpc_auth_metadata_processor processor{};
  processor.process = &authorize_call;
  processor.destroy = &release_state;
  processor.state = new std::shared_ptr<ServerTransport::State>(std::move(state));
  grpc_server_credentials_set_auth_metadata_processor(credentials, processor);
  return std::make_shared<CoreServerCredentials>(credentials);
}

}  // namespace

ServerTransport::ServerTransport(std::shared_ptr<State> state) : state_(std::move(state)) {}

ServerTransport::~ServerTransport() = default;

Result<std::unique_ptr<ServerTransport>, std::string> ServerTransport::mutual_tls(
    const TlsFiles& files, Roster roster, RefusalObserver refused) {
  auto texts = read_tls_files(files);
  if (!texts.ok()) return texts.error();
  auto site_ca = ClientCertificates::from_ca_pem(texts->client_ca);
  if (!site_ca.ok()) return site_ca.error();  // Checked by read_tls_files.
  auto revoked = read_revocations(files.revoked);
  if (!revoked.ok()) return revoked.error();
  auto state =
      std::make_shared<State>(files, std::move(*site_ca), std::move(roster), std::move(refused));
  state->certificate_pem = std::move(texts->certificate);
  state->key_pem = std::move(texts->key);
  state->client_ca_pem = std::move(texts->client_ca);
  state->revoked = std::make_shared<const Revocations>(*revoked);
  state->authorization.replace_revocations(std::move(*revoked));
  // Asks for a client certificate without judging it in the handshake: the processor does, so
  // that a refused caller hears why (call_authorization.h).
  grpc_ssl_server_credentials_options* options =
      grpc_ssl_server_credentials_create_options_using_config_fetcher(
          GRPC_SSL_REQUEST_CLIENT_CERTIFICATE_BUT_DONT_VERIFY, &fetch_tls_config, state.get());
  grpc_server_credentials* credentials =
      options == nullptr ? nullptr : grpc_ssl_server_credentials_create_with_options(options);
  if (credentials == nullptr) {
    return "gRPC did not take the TLS certificate " + files.certificate + " and key " + files.key;
  }
  std::unique_ptr<ServerTransport> transport(new ServerTransport(state));
  transport->credentials_ = with_authorization(credentials, std::move(state));
  return transport;
}

std::unique_ptr<ServerTransport> ServerTransport::plaintext_loopback(std::optional<Roster> roster,
                                                                     RefusalObserver refused) {
  auto state =
      std::make_shared<State>(std::nullopt, std::nullopt, std::move(roster), std::move(refused));
  std::unique_ptr<ServerTransport> transport(new ServerTransport(state));
  transport->credentials_ =
      with_authorization(grpc_local_server_credentials_create(LOCAL_TCP), std::move(state));
  return transport;
}

std::shared_ptr<grpc::ServerCredentials> ServerTransport::credentials() const {
  return credentials_;
}

bool ServerTransport::plaintext() const { return !state_->files.has_value(); }

Result<std::size_t, std::string> ServerTransport::reload() {
  if (!state_->files) return std::string("plaintext mode has no TLS files to read");
  auto texts = read_tls_files(*state_->files);
  if (!texts.ok()) return texts.error();
  auto site_ca = ClientCertificates::from_ca_pem(texts->client_ca);
  if (!site_ca.ok()) return site_ca.error();
  auto revoked = read_revocations(state_->files->revoked);
  if (!revoked.ok()) return revoked.error();
  {
    const std::lock_guard lock(state_->mutex);
    state_->certificate_pem = std::move(texts->certificate);
    state_->key_pem = std::move(texts->key);
    state_->client_ca_pem = std::move(texts->client_ca);
    state_->taken_up = false;
  }
  state_->authorization.replace_site_ca(std::move(*site_ca));
  // The open streams of a certificate revoked now end: their calls after it are refused anyway.
  // Cancelled outside the lock, each through a reference of its own (gRPC may run the stream's
  // end on this thread, and the stream's own end takes the lock).
  state_->authorization.replace_revocations(*revoked);
  std::vector<grpc_call*> ending;
  {
    const std::lock_guard lock(state_->streams_mutex);
    state_->revoked = std::make_shared<const Revocations>(std::move(*revoked));
    for (const auto& [call, key] : state_->streams) {
      if (!state_->revoked->revoked(key)) continue;
      grpc_call_ref(call);
      ending.push_back(call);
    }
  }
  for (grpc_call* call : ending) {
    grpc_call_cancel(call, nullptr);
    grpc_call_unref(call);
  }
  return ending.size();
}

namespace {

// Keeps a stream, from its start to its end, with its client certificate's fingerprint.
class StreamTracker final : public grpc::experimental::ServerInterceptorFactoryInterface {
 public:
  explicit StreamTracker(std::shared_ptr<ServerTransport::State> state)
      : state_(std::move(state)) {}
  grpc::experimental::Interceptor* CreateServerInterceptor(
      grpc::experimental::ServerRpcInfo* info) override {
    if (info->type() == grpc::experimental::ServerRpcInfo::Type::UNARY) return nullptr;
    return new Tracked(state_, info->server_context());
  }

 private:
  class Tracked final : public grpc::experimental::Interceptor {
   public:
    Tracked(std::shared_ptr<ServerTransport::State> state, grpc::ServerContextBase* context)
        : state_(std::move(state)) {
      // The callback API's streams (link status, pending payouts, meters, health watches) have
      // their call and its peer here; a synchronous stream (reflection) has neither yet and is
      // not kept.
      if (context == nullptr || context->c_call() == nullptr) return;
      const auto auth = context->auth_context();
      if (auth == nullptr) return;
      const auto pems = auth->FindPropertyValues(GRPC_X509_PEM_CERT_PROPERTY_NAME);
      if (pems.size() != 1) return;
      auto key = certificate_key_hash(std::string_view(pems[0].data(), pems[0].size()));
      if (!key) return;
      call_ = context->c_call();
      bool revoked = false;
      {
        const std::lock_guard lock(state_->streams_mutex);
        grpc_call_ref(call_);
        state_->streams.emplace(call_, *key);
        revoked = state_->revoked->revoked(*key);
      }
      // Authorized against a list a reload replaced since: it ends now.
      if (revoked) grpc_call_cancel(call_, nullptr);
    }
    ~Tracked() override {
      if (call_ == nullptr) return;
      {
        const std::lock_guard lock(state_->streams_mutex);
        state_->streams.erase(call_);
      }
      grpc_call_unref(call_);
    }
    Tracked(const Tracked&) = delete;
    Tracked& operator=(const Tracked&) = delete;
    void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
      methods->Proceed();
    }

   private:
    std::shared_ptr<ServerTransport::State> state_;
    grpc_call* call_ = nullptr;  // Referenced while kept.
  };
  std::shared_ptr<ServerTransport::State> state_;
};

}  // namespace

std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface>
ServerTransport::stream_tracker() {
  return std::make_unique<StreamTracker>(state_);
}

Result<std::string, FileProblem> read_owner_written(const std::string& path, std::size_t max_bytes,
                                                    std::string_view what) {
  const std::string named = std::string(what) + " " + path;
  struct stat status {};
  if (::stat(path.c_str(), &status) == 0 && (status.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    char mode[8];
    std::snprintf(mode, sizeof mode, "%03o", static_cast<unsigned>(status.st_mode & 0777));
    return FileProblem{named + " may be written by its group or by everyone (mode " + mode +
                       "): make it writable by its owner only"};
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return FileProblem{named + " cannot be read"};
  std::string text(max_bytes + 1, '\0');
  in.read(text.data(), static_cast<std::streamsize>(text.size()));
  if (in.bad()) return FileProblem{named + " cannot be read"};
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

std::optional<Principal> call_principal(const grpc::ServerContextBase& context) {
  const auto auth = context.auth_context();
  if (auth == nullptr) return std::nullopt;
  const auto transport = auth->FindPropertyValues(GRPC_TRANSPORT_SECURITY_TYPE_PROPERTY_NAME);
  if (transport.size() != 1) return std::nullopt;
  const std::string_view type(transport[0].data(), transport[0].size());
  if (type == GRPC_SSL_TRANSPORT_SECURITY_TYPE) {
    const auto names = auth->FindPropertyValues(GRPC_X509_CN_PROPERTY_NAME);
    if (names.size() != 1) return std::nullopt;
    return principal_from_common_name(std::string_view(names[0].data(), names[0].size()));
  }
  if (type == "local") {  // gRPC's local credentials (no public constant names the type).
    const auto& metadata = context.client_metadata();
    if (metadata.count(grpc::string_ref(kPrincipalMetadata.data(), kPrincipalMetadata.size())) !=
        1) {
      return std::nullopt;
    }
    const auto named =
        metadata.find(grpc::string_ref(kPrincipalMetadata.data(), kPrincipalMetadata.size()));
    return principal_from_common_name(std::string_view(named->second.data(), named->second.size()));
  }
  return std::nullopt;
}

}  // namespace jackpot
