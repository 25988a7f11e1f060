// The revocation list (controller/api/revocations.h): what the file may say.
#include "controller/api/revocations.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace jackpot {
namespace {

const std::string kA(64, 'a');
const std::string kB = "0123456789ABCDEF0123456789abcdef0123456789abcdef0123456789ABCDEF";

TEST(Revocations, ListsCertificatesByTheirKeysHashWithCommentsAndBlanks) {
  const auto list = Revocations::parse(
      "# revoked at the site\n"
      "key-sha256:" +
      kA +
      "  # table/T1 revoked 2026-12-07\n"
      "\n"
      "  key-sha256:" +
      kB + "\r\n");
  ASSERT_TRUE(list.ok()) << list.error();
  EXPECT_EQ(list->size(), 2U);
  EXPECT_TRUE(list->revoked(kA));
  EXPECT_TRUE(list->revoked(kB));  // Any case.
  EXPECT_TRUE(list->revoked("0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"));
  EXPECT_FALSE(list->revoked(std::string(64, 'b')));
  EXPECT_FALSE(list->revoked(""));
  EXPECT_TRUE(Revocations::parse("")->size() == 0U);
}

TEST(Revocations, RefusesWhatIsNotAFingerprint) {
  struct Case {
    std::string text;
    std::string error;
  };
  const std::vector<Case> cases = {
      {kA + "\n", "revocation list line 1: '" + kA + "' is not key-sha256:<64 hex digits>"},
      {"key-sha256:" + kA.substr(1) + "\n", "revocation list line 1: "},
      {"key-sha256:" + kA + "0\n", "revocation list line 1: "},
      {"sha256:" + kA + "\n", "revocation list line 1: "},
      {"# ok\nkey-sha256:" + std::string(63, 'a') + "g\n", "revocation list line 2: "},
      {"key-sha256: " + kA + "\n", "revocation list line 1: "},
      {std::string(kMaxRevokedBytes + 1, '#'), "the revocation list is 4194305 bytes"},
  };
  for (const Case& c : cases) {
    const auto refused = Revocations::parse(c.text);
    ASSERT_FALSE(refused.ok()) << c.text.substr(0, 40);
    EXPECT_EQ(refused.error().rfind(c.error, 0), 0U) << refused.error();
  }
}

}  // namespace
}  // namespace jackpot
