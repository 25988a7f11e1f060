// CallAuthorization against certificates ops/pki makes: who a call is from, what it may call,
// verdicts kept until the certificate expires or the CA changes, refusals kept too, what a
// client may send bounded, and plaintext mode naming its principal.
#include "controller/api/call_authorization.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>

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

// When the certificate becomes valid (its notBefore), in Unix seconds.
std::int64_t not_before(const std::string& certificate_pem) {
  std::unique_ptr<BIO, decltype(&BIO_free)> bio(
      BIO_new_mem_buf(certificate_pem.data(), static_cast<int>(certificate_pem.size())), &BIO_free);
  std::unique_ptr<X509, decltype(&X509_free)> certificate(
      PEM_read_bio_X509(bio.get(), nullptr, nullptr, nullptr), &X509_free);
  std::tm start{};
  EXPECT_EQ(ASN1_TIME_to_tm(X509_get0_notBefore(certificate.get()), &start), 1);
  return timegm(&start);
}

constexpr std::string_view kOpenRound = "/jackpot.v1.TableService/OpenRound";
constexpr std::string_view kListMeters = "/jackpot.v1.AdminService/ListMeters";

class CallAuthorizationTest : public testing::Test {
 protected:
  static void SetUpTestSuite() {
    std::string pattern = (fs::temp_directory_path() / "jackpotd-authz-test-XXXXXX").string();
    ASSERT_NE(::mkdtemp(pattern.data()), nullptr);
    dir_ = new fs::path(pattern);
    const std::string pki = std::string(JACKPOTD_SOURCE_DIR) + "/ops/pki ";
    const std::string site = dir_->string() + "/site ";
    const std::string other = dir_->string() + "/other ";
    for (const std::string& command : {pki + "ca " + site, pki + "client " + site + "table T1",
                                       pki + "client " + site + "admin ops", pki + "ca " + other,
                                       pki + "client " + other + "table T1"}) {
      ASSERT_EQ(std::system((command + " >/dev/null").c_str()), 0) << command;
    }
  }
  static void TearDownTestSuite() {
    fs::remove_all(*dir_);
    delete dir_;
  }
  static std::string pem(const std::string& name) { return read(*dir_ / name); }
  static ClientCertificates ca(const std::string& site) {
    auto certificates = ClientCertificates::from_ca_pem(pem(site + "/ca.pem"));
    EXPECT_TRUE(certificates.ok());
    return *certificates;
  }
  static CallFacts call(std::string_view method, const std::string& certificate) {
    return CallFacts{method, certificate, {}, std::nullopt};
  }

  static fs::path* dir_;
};
fs::path* CallAuthorizationTest::dir_ = nullptr;

TEST_F(CallAuthorizationTest, TheCertificateNamesTheCallerAndTheTableDecides) {
  CallAuthorization authorization(ca("site"), std::nullopt);
  EXPECT_FALSE(authorization.plaintext_mode());
  const std::string table = pem("site/table-T1.pem");
  const std::string admin = pem("site/admin-ops.pem");
  const std::string stranger = pem("other/table-T1.pem");
  struct Case {
    std::string what;
    CallFacts call;
    std::optional<Principal> principal;  // Empty: refused.
    AccessRefusal reason = AccessRefusal::no_certificate;
    std::string detail;
  };
  const std::vector<Case> cases = {
      {"a table opens a round", call(kOpenRound, table), Principal{Role::table, "T1"},
       AccessRefusal::no_certificate, ""},
      {"an admin lists meters", call(kListMeters, admin), Principal{Role::admin, "ops"},
       AccessRefusal::no_certificate, ""},
      {"a table lists meters", call(kListMeters, table), std::nullopt,
       AccessRefusal::role_not_allowed,
       "role_not_allowed: 'table/T1' may not call '/jackpot.v1.AdminService/ListMeters'"},
      {"an admin opens a round", call(kOpenRound, admin), std::nullopt,
       AccessRefusal::role_not_allowed,
       "role_not_allowed: 'admin/ops' may not call '/jackpot.v1.TableService/OpenRound'"},
      {"a method nobody may call", call("/jackpot.v1.AdminService/Drop", admin), std::nullopt,
       AccessRefusal::unknown_method,
       "unknown_method: no principal may call '/jackpot.v1.AdminService/Drop'"},
      {"no certificate", call(kOpenRound, ""), std::nullopt, AccessRefusal::no_certificate,
       "no_certificate: no client certificate"},
      {"another CA's", call(kOpenRound, stranger), std::nullopt,
       AccessRefusal::certificate_untrusted, "certificate_untrusted: client certificate refused"},
      {"a naming metadata is no certificate",
       CallFacts{kOpenRound, "", {}, std::string_view("table/T1")}, std::nullopt,
       AccessRefusal::no_certificate, "no_certificate"},
  };
  for (const Case& c : cases) {
    const auto decided = authorization.decide(c.call, now());
    if (c.principal) {
      ASSERT_TRUE(decided.ok()) << c.what << ": " << decided.error().detail;
      EXPECT_EQ(*decided, *c.principal) << c.what;
      continue;
    }
    ASSERT_FALSE(decided.ok()) << c.what;
    EXPECT_EQ(decided.error().reason, c.reason) << c.what;
    EXPECT_EQ(decided.error().detail.rfind(c.detail, 0), 0U)
        << c.what << ": " << decided.error().detail;
  }
}

// A certificate the site CA issued for an admin the roster does not name is refused before its
// method is looked at; one it names (case-folded) is served; tables are not on the roster.
TEST_F(CallAuthorizationTest, AnAdminNotOnTheRosterIsRefused) {
  const auto with = [&](const char* text) {
    auto roster = Roster::parse(text);
    EXPECT_TRUE(roster.ok()) << text;
    return CallAuthorization(ca("site"), *roster);
  };
  CallAuthorization named = with("admin/OPS\n");
  EXPECT_TRUE(named.decide(call(kListMeters, pem("site/admin-ops.pem")), now()).ok());
  EXPECT_TRUE(named.decide(call(kOpenRound, pem("site/table-T1.pem")), now()).ok());
  CallAuthorization unnamed = with("admin/ops-2\nsupervisor/ops\n");
  for (const std::string_view method : {kListMeters, kOpenRound}) {
    const auto refused = unnamed.decide(call(method, pem("site/admin-ops.pem")), now());
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().reason, AccessRefusal::not_on_roster);
    EXPECT_EQ(refused.error().detail.rfind("not_on_roster: 'admin/ops'", 0), 0U)
        << refused.error().detail;
  }
  EXPECT_FALSE(unauthenticated(AccessRefusal::not_on_roster));
}

// A revoked certificate is refused from the next call on, its verdict kept or not; the list in
// force is replaced whole.
TEST_F(CallAuthorizationTest, ARevokedCertificateIsRefusedAtTheNextCall) {
  CallAuthorization authorization(ca("site"), std::nullopt);
  const std::string admin = pem("site/admin-ops.pem");
  ASSERT_TRUE(authorization.decide(call(kListMeters, admin), now()).ok());  // Now kept.
  const std::optional<std::string> key = certificate_key_hash(admin);
  ASSERT_TRUE(key.has_value());
  EXPECT_EQ(key->size(), 64U);
  auto list = Revocations::parse("key-sha256:" + *key + "  # admin/ops\n");
  ASSERT_TRUE(list.ok()) << list.error();
  authorization.replace_revocations(*list);
  const auto refused = authorization.decide(call(kListMeters, admin), now());
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.error().reason, AccessRefusal::certificate_revoked);
  EXPECT_EQ(refused.error().detail.rfind("certificate_revoked: this certificate of 'admin/ops'", 0),
            0U)
      << refused.error().detail;
  EXPECT_TRUE(unauthenticated(AccessRefusal::certificate_revoked));
  EXPECT_TRUE(authorization.decide(call(kOpenRound, pem("site/table-T1.pem")), now()).ok());
  authorization.replace_revocations(Revocations());
  EXPECT_TRUE(authorization.decide(call(kListMeters, admin), now()).ok());
}

// A verdict kept for a connection's calls ends with the certificate and with the CA.
TEST_F(CallAuthorizationTest, AKeptVerdictEndsWhenTheCertificateExpiresOrTheCaChanges) {
  CallAuthorization authorization(ca("site"), std::nullopt);
  const std::string table = pem("site/table-T1.pem");
  ASSERT_TRUE(authorization.decide(call(kOpenRound, table), now()).ok());
  // ops/pki's client certificates last 825 days: a day after, the kept verdict does not serve.
  const auto late = authorization.decide(call(kOpenRound, table), now() + 826 * 24 * 3600);
  ASSERT_FALSE(late.ok());
  EXPECT_NE(late.error().detail.find("expired"), std::string::npos) << late.error().detail;
  ASSERT_TRUE(authorization.decide(call(kOpenRound, table), now()).ok());

  authorization.replace_site_ca(ca("other"));
  const auto replaced = authorization.decide(call(kOpenRound, table), now());
  ASSERT_FALSE(replaced.ok());
  EXPECT_EQ(replaced.error().reason, AccessRefusal::certificate_untrusted);
  EXPECT_TRUE(authorization.decide(call(kOpenRound, pem("other/table-T1.pem")), now()).ok());
}

// A refusal is kept too (a client repeating a bad certificate costs one check a minute), and
// what a client sends is bounded before any check.
TEST_F(CallAuthorizationTest, RefusalsAreKeptAndWhatAClientSendsIsBounded) {
  CallAuthorization authorization(ca("site"), std::nullopt);
  // Checked 30 s before it becomes valid: refused ("not yet valid"), and the refusal is kept for
  // a minute, past the moment a fresh check would pass.
  const std::string table = pem("site/table-T1.pem");
  const std::int64_t valid_from = not_before(table);
  const auto early = authorization.decide(call(kOpenRound, table), valid_from - 30);
  ASSERT_FALSE(early.ok());
  EXPECT_NE(early.error().detail.find("not yet valid"), std::string::npos) << early.error().detail;
  EXPECT_FALSE(authorization.decide(call(kOpenRound, table), valid_from + 20).ok());
  EXPECT_TRUE(authorization.decide(call(kOpenRound, table), valid_from + 31).ok());
  const std::int64_t t = now();

  const std::vector<std::string> long_chain(CallAuthorization::kMaxChainCertificates + 1, table);
  const auto too_many = authorization.decide(CallFacts{kOpenRound, table, long_chain, {}}, t);
  ASSERT_FALSE(too_many.ok());
  EXPECT_EQ(too_many.error().reason, AccessRefusal::certificate_untrusted);
  EXPECT_NE(too_many.error().detail.find("larger than jackpotd reads"), std::string::npos);
  const std::vector<std::string> large = {
      std::string(CallAuthorization::kMaxCertificateBytes, 'x')};
  EXPECT_FALSE(authorization.decide(CallFacts{kOpenRound, table, large, {}}, t).ok());
}

TEST_F(CallAuthorizationTest, PlaintextModeTakesThePrincipalTheCallNames) {
  CallAuthorization authorization(std::nullopt, std::nullopt);
  EXPECT_TRUE(authorization.plaintext_mode());
  const auto named = [&](std::string_view method, std::optional<std::string_view> principal) {
    return authorization.decide(CallFacts{method, "", {}, principal}, now());
  };
  ASSERT_TRUE(named(kOpenRound, "table/T1").ok());
  EXPECT_EQ(*named(kOpenRound, "table/T1"), (Principal{Role::table, "T1"}));
  EXPECT_EQ(named(kListMeters, "table/T1").error().reason, AccessRefusal::role_not_allowed);
  for (const std::optional<std::string_view> bad :
       {std::optional<std::string_view>(), std::optional<std::string_view>("T1"),
        std::optional<std::string_view>("boss/T1"), std::optional<std::string_view>("table/T 1"),
        std::optional<std::string_view>("")}) {
    const auto refused = named(kOpenRound, bad);
    ASSERT_FALSE(refused.ok());
    EXPECT_EQ(refused.error().reason, AccessRefusal::not_a_principal);
    EXPECT_NE(refused.error().detail.find("jackpot-principal"), std::string::npos);
  }
  // A certificate in plaintext mode (there is none) changes nothing: the name decides.
  EXPECT_EQ(
      authorization.decide(CallFacts{kOpenRound, pem("site/admin-ops.pem"), {}, "table/T1"}, now())
          ->role,
      Role::table);
}

}  // namespace
}  // namespace jackpot
