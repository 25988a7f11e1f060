// ClientCertificates against certificates that ops/pki makes with the openssl command line: the
// site CA's table, supervisor, sign and admin certificates name their principals; an expired
// one, another CA's, the server's own (not for clients) and one without a principal are refused.
#include "controller/api/client_certificates.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace jackpot {
namespace {

namespace fs = std::filesystem;

std::string read(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::int64_t now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Two sites' certificates, made once for the suite.
class ClientCertificatesTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    dir_ = new fs::path(fs::temp_directory_path() /
                        ("jackpotd-pki-test-" + std::to_string(::getpid())));
    const std::string pki = std::string(JACKPOTD_SOURCE_DIR) + "/ops/pki ";
    const std::string site = dir_->string() + "/site ";
    const std::string other = dir_->string() + "/other ";
    for (const std::string& command :
         {pki + "ca " + site, pki + "server " + site, pki + "client " + site + "table HUH-1",
          pki + "client " + site + "supervisor alice", pki + "client " + site + "sign lobby",
          pki + "client " + site + "admin ops", pki + "client " + site + "table OLD --expired",
          pki + "ca " + other, pki + "client " + other + "table HUH-1"}) {
      ASSERT_EQ(std::system((command + " >/dev/null").c_str()), 0) << command;
    }
    // A client certificate of the site whose common name names no principal (ops/pki makes
    // none such).
    const std::string d = dir_->string() + "/site/";
    const std::string nameless =
        "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out " + d +
        "x.key && "
        "openssl req -new -key " +
        d + "x.key -subj /CN=HUH-1 -out " + d +
        "x.csr && "
        "printf 'extendedKeyUsage=clientAuth\\n' > " +
        d +
        "x.ext && "
        "openssl x509 -req -in " +
        d + "x.csr -CA " + d + "ca.pem -CAkey " + d +
        "ca.key "
        "-CAcreateserial -days 30 -extfile " +
        d + "x.ext -out " + d + "nameless.pem";
    ASSERT_EQ(std::system(("(" + nameless + ") >/dev/null 2>&1").c_str()), 0) << nameless;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string pem(const std::string& name) { return read(*dir_ / name); }
  static ClientCertificates site() {
    auto certificates = ClientCertificates::from_ca_pem(pem("site/ca.pem"));
    EXPECT_TRUE(certificates.ok()) << (certificates.ok() ? "" : certificates.error());
    return std::move(certificates).value();
  }

  static fs::path* dir_;
};
fs::path* ClientCertificatesTest::dir_ = nullptr;

TEST_F(ClientCertificatesTest, TheSiteCasCertificatesNameTheirPrincipals) {
  const ClientCertificates certificates = site();
  const std::vector<std::pair<std::string, Principal>> cases = {
      {"site/table-HUH-1.pem", {Role::table, "HUH-1"}},
      {"site/supervisor-alice.pem", {Role::supervisor, "alice"}},
      {"site/sign-lobby.pem", {Role::sign, "lobby"}},
      {"site/admin-ops.pem", {Role::admin, "ops"}},
  };
  for (const auto& [file, expected] : cases) {
    const auto principal = certificates.principal(pem(file), {}, now());
    ASSERT_TRUE(principal.ok()) << file << ": " << principal.error().detail;
    EXPECT_EQ(*principal, expected) << file;
  }
}

TEST_F(ClientCertificatesTest, RefusesWhatTheSiteCaDidNotIssueForAClient) {
  const ClientCertificates certificates = site();
  struct Case {
    std::string what;
    std::string pem;
    std::int64_t at;
    AccessRefusal reason;
    std::string detail;  // A part of the message.
  };
  const std::int64_t year = 365 * 24 * 3600;
  const std::vector<Case> cases = {
      {"none", "", now(), AccessRefusal::no_certificate, "no client certificate"},
      {"not PEM", "hello", now(), AccessRefusal::certificate_untrusted, "not a PEM"},
      {"expired", pem("site/table-OLD.pem"), now(), AccessRefusal::certificate_untrusted,
       "expired"},
      {"checked after it expires", pem("site/table-HUH-1.pem"), now() + 10 * year,
       AccessRefusal::certificate_untrusted, "expired"},
      {"checked before it was made", pem("site/table-HUH-1.pem"), now() - year,
       AccessRefusal::certificate_untrusted, "not yet valid"},
      {"another CA's", pem("other/table-HUH-1.pem"), now(), AccessRefusal::certificate_untrusted,
       "issuer"},
      {"the server's (not for clients)", pem("site/server.pem"), now(),
       AccessRefusal::certificate_untrusted, "purpose"},
      {"the CA's own (not for clients)", pem("site/ca.pem"), now(),
       AccessRefusal::certificate_untrusted, "purpose"},
      {"a common name that is no principal", pem("site/nameless.pem"), now(),
       AccessRefusal::not_a_principal, "names no principal"},
  };
  for (const Case& c : cases) {
    const auto principal = certificates.principal(c.pem, {}, c.at);
    ASSERT_FALSE(principal.ok()) << c.what;
    EXPECT_EQ(principal.error().reason, c.reason) << c.what << ": " << principal.error().detail;
    EXPECT_NE(principal.error().detail.find(c.detail), std::string::npos)
        << c.what << ": " << principal.error().detail;
  }
  // Another site's CA trusts none of this site's certificates.
  const auto other = ClientCertificates::from_ca_pem(pem("other/ca.pem"));
  ASSERT_TRUE(other.ok());
  EXPECT_FALSE(other->principal(pem("site/table-HUH-1.pem"), {}, now()).ok());
  EXPECT_TRUE(other->principal(pem("other/table-HUH-1.pem"), {}, now()).ok());
  // A chain the client adds that is not PEM is refused.
  EXPECT_EQ(
      certificates.principal(pem("site/table-HUH-1.pem"), std::vector<std::string>{"x"}, now())
          .error()
          .reason,
      AccessRefusal::certificate_untrusted);
}

TEST_F(ClientCertificatesTest, ACaBundleHoldsOnlyCaCertificates) {
  EXPECT_EQ(ClientCertificates::from_ca_pem("").error(), "the CA bundle holds no PEM certificate");
  EXPECT_EQ(ClientCertificates::from_ca_pem("not pem").error(),
            "the CA bundle holds no PEM certificate");
  EXPECT_EQ(ClientCertificates::from_ca_pem(pem("site/table-HUH-1.pem")).error(),
            "certificate 1 of the CA bundle is not a CA");
  const auto both = ClientCertificates::from_ca_pem(pem("site/ca.pem") + pem("other/ca.pem"));
  ASSERT_TRUE(both.ok());
  EXPECT_TRUE(both->principal(pem("site/table-HUH-1.pem"), {}, now()).ok());
  EXPECT_TRUE(both->principal(pem("other/table-HUH-1.pem"), {}, now()).ok());
}

}  // namespace
}  // namespace jackpot
