#pragma once

// What jackpotd's gRPC port accepts, and the authorisation that runs on every call before any
// handler (call_authorization.h).
//
// Mutual TLS: the server presents its certificate and asks every client for one, which must be
// issued by the site's CA and name a principal; a call without one, with another CA's, an expired
// one or one that names no principal is UNAUTHENTICATED, a principal calling what its role may
// not call PERMISSION_DENIED. The TLS handshake itself accepts any client certificate and the
// check is made per call, so that a refused client gets that status and a message instead of a
// broken connection (UNAVAILABLE), and every refusal can be counted.
//
// Plaintext (development only, loopback only): gRPC's local credentials, which accept only
// connections from the same machine; callers name their principal in the `jackpot-principal`
// metadata and the same rules apply to it.

#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "controller/api/access_rules.h"
#include "controller/api/roster.h"
#include "meters/result.h"

namespace grpc {
class ServerCredentials;
class ServerContextBase;
namespace experimental {
class ServerInterceptorFactoryInterface;
}  // namespace experimental
}  // namespace grpc

namespace jackpot {

// The files of mutual TLS, as the daemon was given them.
struct TlsFiles {
  std::string certificate;  // The server's certificate (PEM), with any intermediates after it.
  std::string key;          // Its private key (PEM).
  std::string client_ca;    // The site CA bundle that issues client certificates (PEM).
  std::string revoked;      // The revocation list (revocations.h); empty: none.
};

// The text of a file an operator writes for jackpotd (the roster, the revocation list), at most
// `max_bytes` + 1 bytes of it (the parser refuses more), or why it cannot be used: it cannot be
// read, or its group or everyone may write it (whoever may write it decides who may act).
// `what` names it in the message ("the roster").
struct FileProblem {
  std::string message;
};
Result<std::string, FileProblem> read_owner_written(const std::string& path, std::size_t max_bytes,
                                                    std::string_view what);

// Called for every refused call (from gRPC's threads), with why: the refusal and the message the
// caller got (which names the principal and the method where known).
using RefusalObserver = std::function<void(AccessRefusal, std::string_view detail)>;

class ServerTransport {
 public:
  // Reads and checks the files: an error names the file and what is wrong with it.
  // Callers are checked against `roster` (call_authorization.h); plaintext mode may have none.
  static Result<std::unique_ptr<ServerTransport>, std::string> mutual_tls(const TlsFiles& files,
                                                                          Roster roster,
                                                                          RefusalObserver refused);
  static std::unique_ptr<ServerTransport> plaintext_loopback(std::optional<Roster> roster,
                                                             RefusalObserver refused);
  ~ServerTransport();
  ServerTransport(const ServerTransport&) = delete;
  ServerTransport& operator=(const ServerTransport&) = delete;

  // The credentials to listen with; the transport must outlive the server.
  std::shared_ptr<grpc::ServerCredentials> credentials() const;

  // Reads the files again (SIGHUP): connections made after it get the new certificate and key,
  // every call after it is checked against the new CA bundle and revocation list, and each open
  // stream whose certificate the list now revokes is cancelled. When a file cannot be read or is
  // not valid, nothing changes and the error says why. The answer is how many streams it ended.
  // Not for plaintext mode.
  Result<std::size_t, std::string> reload();

  // What the server installs among its interceptors: it keeps each open stream (a call that is
  // not unary) with its client certificate's fingerprint, for reload() to end the revoked ones.
  std::unique_ptr<grpc::experimental::ServerInterceptorFactoryInterface> stream_tracker();

  bool plaintext() const;

  struct State;

 private:
  explicit ServerTransport(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
  std::shared_ptr<grpc::ServerCredentials> credentials_;
};

// The principal of a call the transport let through, for the handlers: the common name of its
// verified certificate, or in plaintext mode the principal it names. Nothing for a call that has
// none (the transport refuses those before any handler runs).
std::optional<Principal> call_principal(const grpc::ServerContextBase& context);

}  // namespace jackpot
