#include "controller/limits/request_limits.h"

#include <gtest/gtest.h>

#include <string>

namespace jackpot {
namespace {

TEST(QuotePrefix, ShortTextIsQuotedWhole) {
  EXPECT_EQ(quote_prefix("T1"), "'T1'");
  EXPECT_EQ(quote_prefix(""), "''");
}

TEST(QuotePrefix, LongTextIsCutAndItsLengthNamed) {
  const std::string huge(1'048'576, 'a');
  const std::string quoted = quote_prefix(huge);
  EXPECT_EQ(quoted, "'" + std::string(kEchoPrefixBytes, 'a') + "'\u2026 (1048576 bytes)");
  EXPECT_LT(quoted.size(), 80u);
}

TEST(QuotePrefix, NeverSplitsAUtf8Character) {
  // 39 ASCII bytes then a two-byte character across the cut: the character is left out whole.
  const std::string text = std::string(39, 'x') + "\xC3\xA9" + "tail";
  EXPECT_EQ(quote_prefix(text), "'" + std::string(39, 'x') + "'\u2026 (45 bytes)");
}

TEST(QuotePrefix, ControlBytesQuotesAndBackslashesAreEscaped) {
  EXPECT_EQ(quote_prefix(std::string("a\nb\0c", 5)), "'a\\x0Ab\\x00c'");
  EXPECT_EQ(quote_prefix("it's"), "'it\\x27s'");
  EXPECT_EQ(quote_prefix("a\\b"), "'a\\x5Cb'");
}

}  // namespace
}  // namespace jackpot
