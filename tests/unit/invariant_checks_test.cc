// The engine's invariants are checked after every command in the tests (ctest sets
// JACKPOTD_CHECK_INVARIANTS=1 for every test, and the daemons the e2e tests start inherit it) and
// in the sanitizer build: a command that broke one would abort the test, not pass it.
#include <gtest/gtest.h>

#include <cstdlib>
#include <string_view>

#include "controller/host/engine_host.h"

namespace jackpot {
namespace {

TEST(InvariantChecks, AreOnInEveryTest) {
  const char* value = std::getenv("JACKPOTD_CHECK_INVARIANTS");
  ASSERT_NE(value, nullptr) << "ctest sets JACKPOTD_CHECK_INVARIANTS=1 (tests/CMakeLists.txt)";
  EXPECT_EQ(std::string_view(value), "1");
  EXPECT_TRUE(invariant_checks_wanted());
  EXPECT_TRUE(HostTimings{}.check_invariants);
}

}  // namespace
}  // namespace jackpot
