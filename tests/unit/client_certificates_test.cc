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
    std::string pattern = (fs::temp_directory_path() / "jackpotd-pki-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = new fs::path(pattern);
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
    // One that says nothing of its purpose, and one issued by a table's certificate as if it
    // were a CA.
    const std::string no_purpose = "openssl x509 -req -in " + d + "x.csr -CA " + d +
                                   "ca.pem -CAkey " + d +
                                   "ca.key "
                                   "-CAcreateserial -days 30 -out " +
                                   d + "no-purpose.pem";
    ASSERT_EQ(std::system(("(" + no_purpose + ") >/dev/null 2>&1").c_str()), 0) << no_purpose;
    const std::string by_table =
        "openssl req -new -key " + d + "x.key -subj /CN=admin\\\\/evil -out " + d +
        "evil.csr && "
        "openssl x509 -req -in " +
        d + "evil.csr -CA " + d + "table-HUH-1.pem -CAkey " + d +
        "table-HUH-1.key -CAcreateserial -days 30 -extfile " + d + "x.ext -out " + d + "evil.pem";
    ASSERT_EQ(std::system(("(" + by_table + ") >/dev/null 2>&1").c_str()), 0) << by_table;
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string pem(const std::string& name) { return read(*dir_ / name); }
  static Result<ClientCertificates, std::string> site() {
    return ClientCertificates::from_ca_pem(pem("site/ca.pem"));
  }

  static fs::path* dir_;
};
fs::path* ClientCertificatesTest::dir_ = nullptr;

TEST_F(ClientCertificatesTest, TheSiteCasCertificatesNameTheirPrincipals) {
  const auto site_ca = site();
  ASSERT_TRUE(site_ca.ok()) << site_ca.error();
  const ClientCertificates& certificates = *site_ca;
  const std::vector<std::pair<std::string, Principal>> cases = {
      {"site/table-HUH-1.pem", {Role::table, "HUH-1"}},
      {"site/supervisor-alice.pem", {Role::supervisor, "alice"}},
      {"site/sign-lobby.pem", {Role::sign, "lobby"}},
      {"site/admin-ops.pem", {Role::admin, "ops"}},
  };
  for (const auto& [file, expected] : cases) {
    const auto principal = certificates.principal(pem(file), {}, now());
    ASSERT_TRUE(principal.ok()) << file << ": " << principal.error().detail;
    EXPECT_EQ(principal->principal, expected) << file;
    // ops/pki's client certificates last 825 days from now; the CA 10 years.
    EXPECT_NEAR(static_cast<double>(principal->valid_until_unix_seconds),
                static_cast<double>(now() + 825 * 24 * 3600), 120.0)
        << file;
  }
}

TEST_F(ClientCertificatesTest, RefusesWhatTheSiteCaDidNotIssueForAClient) {
  const auto site_ca = site();
  ASSERT_TRUE(site_ca.ok()) << site_ca.error();
  const ClientCertificates& certificates = *site_ca;
  struct Case {
    std::string what;
    std::string pem;
    std::int64_t at;
    AccessRefusal reason;
    std::string detail;  // A part of the message.
  };
  const std::int64_t day = 24 * 3600;
  const std::vector<Case> cases = {
      {"none", "", now(), AccessRefusal::no_certificate, "no client certificate"},
      {"not PEM", "hello", now(), AccessRefusal::certificate_untrusted, "not one PEM"},
      {"two certificates", pem("site/table-HUH-1.pem") + pem("site/admin-ops.pem"), now(),
       AccessRefusal::certificate_untrusted, "not one PEM"},
      {"expired", pem("site/table-OLD.pem"), now(), AccessRefusal::certificate_untrusted,
       "expired"},
      {"checked a day after it expires (the CA still good)", pem("site/table-HUH-1.pem"),
       now() + 826 * day, AccessRefusal::certificate_untrusted, "expired"},
      {"checked before it was made", pem("site/table-HUH-1.pem"), now() - 2 * day,
       AccessRefusal::certificate_untrusted, "not yet valid"},
      {"saying nothing of its purpose", pem("site/no-purpose.pem"), now(),
       AccessRefusal::certificate_untrusted, "client authentication only"},
      {"issued by a table's certificate", pem("site/evil.pem"), now(),
       AccessRefusal::certificate_untrusted, "refused"},
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
  // Intermediates may come several to a string (gRPC's chain property); this site has none, so
  // extra certificates change nothing.
  const std::vector<std::string> chain = {pem("site/admin-ops.pem") + pem("site/sign-lobby.pem"),
                                          ""};
  EXPECT_TRUE(certificates.principal(pem("site/table-HUH-1.pem"), chain, now()).ok());
  // A chain the client adds that is not PEM is refused.
  EXPECT_EQ(
      certificates.principal(pem("site/table-HUH-1.pem"), std::vector<std::string>{"x"}, now())
          .error()
          .reason,
      AccessRefusal::certificate_untrusted);
}

TEST_F(ClientCertificatesTest, ACaBundleHoldsOnlyCaCertificates) {
  const std::string not_pem = "the CA bundle is not one or more PEM certificates (at most 64 KiB)";
  EXPECT_EQ(ClientCertificates::from_ca_pem("").error(), not_pem);
  EXPECT_EQ(ClientCertificates::from_ca_pem("not pem").error(), not_pem);
  EXPECT_EQ(ClientCertificates::from_ca_pem(pem("site/ca.pem") + "-----BEGIN CERTIFICATE-----\nx")
                .error(),
            not_pem);
  EXPECT_EQ(ClientCertificates::from_ca_pem(pem("site/table-HUH-1.pem")).error(),
            "certificate 1 of the CA bundle is not a self-signed CA");
  const auto both = ClientCertificates::from_ca_pem(pem("site/ca.pem") + pem("other/ca.pem"));
  ASSERT_TRUE(both.ok());
  EXPECT_TRUE(both->principal(pem("site/table-HUH-1.pem"), {}, now()).ok());
  EXPECT_TRUE(both->principal(pem("other/table-HUH-1.pem"), {}, now()).ok());
}

}  // namespace
}  // namespace jackpot
