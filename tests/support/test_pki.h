#pragma once

#include <grpcpp/grpcpp.h>

#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace jackpot::testing {

// Certificates for the tests' mutual TLS, made with ops/pki (the script operators use) in a
// temporary directory the first time a test asks for them, removed when the test process ends:
// a site CA, jackpotd's certificate (for localhost and 127.0.0.1) and a client certificate for
// each principal a test names, made on first use.
class TestPki {
 public:
  // The site's: jackpotd trusts its CA.
  static TestPki& site();
  // Another site's: jackpotd must refuse its certificates.
  static TestPki& other();

  const std::string& dir() const { return dir_; }

  // --tls-cert, --tls-key and --tls-client-ca for jackpotd, and --roster naming the supervisors
  // and admins the tests act as (test_pki.cc lists them; supervisor/mallory is not on it).
  std::vector<std::string> daemon_args();
  // The roster file of daemon_args().
  std::string roster_file() const { return dir_ + "/roster"; }

  // The credentials of `principal` ("table/T1"), its certificate made on first use; an expired
  // certificate when `expired` (another file, so both can exist). "" presents no certificate.
  std::shared_ptr<grpc::ChannelCredentials> credentials(const std::string& principal,
                                                        bool expired = false);

  // Where the certificate and key of `principal` are (made on first use).
  std::string certificate_file(const std::string& principal, bool expired = false);
  std::string key_file(const std::string& principal, bool expired = false);

  // Runs ops/pki with `args` in this PKI's directory; fails the test when it fails.
  void run_pki(const std::string& args);

  ~TestPki();

 private:
  explicit TestPki(const std::string& name);
  void make_client(const std::string& principal, bool expired);

  std::mutex mutex_;
  std::string dir_;
  std::map<std::string, bool> made_;  // Principal (with ":expired") -> made.
};

// A channel to jackpotd at `address` (host:port) as `principal` over mutual TLS, trusting the
// site's CA for the server's certificate.
std::shared_ptr<grpc::Channel> channel_as(const std::string& address, const std::string& principal,
                                          const grpc::ChannelArguments& arguments = {});

// Stubs of one service at one address, one per principal, each on its own channel with that
// principal's certificate: a table acts only for itself, so a test that plays several tables
// calls each with its own.
template <typename Service>
class StubsByPrincipal {
 public:
  explicit StubsByPrincipal(std::string address) : address_(std::move(address)) {}

  typename Service::Stub& as(const std::string& principal) {
    auto& stub = stubs_[principal];
    if (!stub) stub = Service::NewStub(channel_as(address_, principal));
    return *stub;
  }

  // The stub of table `table_id`; a table id no certificate can name (the request is refused
  // for its id before whose it is matters) gets table T1's.
  typename Service::Stub& for_table(const std::string& table_id) {
    return as("table/" + (nameable(table_id) ? table_id : std::string("T1")));
  }

 private:
  static bool nameable(const std::string& id) {
    if (id.empty() || id.size() > 58) return false;
    for (const char c : id) {
      const bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
                         (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
      if (!plain) return false;
    }
    return true;
  }

  std::string address_;
  std::map<std::string, std::unique_ptr<typename Service::Stub>> stubs_;
};

// jackpotctl's connection flags to reach `address` as `principal` with the site's
// certificates ("--target ADDR --pki DIR --as PRINCIPAL"), the certificate made first.
std::string admin_tool_flags(const std::string& address, const std::string& principal);

// Runs a client tool (jackpotctl, jackpot-sign) at `address` as `principal` with `arguments`:
// its exit code (-1 when it did not exit) and everything it printed, stdout and stderr.
std::pair<int, std::string> run_tool(const std::string& binary, const std::string& address,
                                     const std::string& principal, const std::string& arguments);

// Runs a shell command line: its exit code (-1 when it did not exit) and everything it printed,
// stdout and stderr.
std::pair<int, std::string> run_command(const std::string& command);

// The address jackpotd printed on its first stdout line ("serving gRPC on ADDR, ..."), or "".
std::string serving_address(const std::string& first_line);

}  // namespace jackpot::testing
