// The roster of supervisors and admins (controller/api/roster.h): what a roster file may say.
#include "controller/api/roster.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace jackpot {
namespace {

TEST(Roster, ReadsOnePrincipalALineAndSkipsCommentsAndBlanks) {
  const auto roster = Roster::parse(
      "# floor supervisors\n"
      "supervisor/ann\n"
      "  admin/ops-1  \r\n"
      "\n"
      "   # night shift\n"
      "supervisor/Bob.Smith_2");
  ASSERT_TRUE(roster.ok()) << roster.error();
  EXPECT_EQ(roster->principals(),
            (std::vector<std::string>{"supervisor/ann", "admin/ops-1", "supervisor/Bob.Smith_2"}));
  EXPECT_EQ(roster->sha256_hex().size(), 64U);
}

TEST(Roster, AdmitsWhomItNamesCaseFoldedAndEveryTableAndSign) {
  const auto roster = Roster::parse("supervisor/ann\nadmin/ops-1\n");
  ASSERT_TRUE(roster.ok());
  struct Case {
    Principal principal;
    bool admitted;
  };
  const std::vector<Case> cases = {
      {{Role::supervisor, "ann"}, true},   {{Role::supervisor, "ANN"}, true},
      {{Role::supervisor, "ann2"}, false}, {{Role::admin, "ann"}, false},
      {{Role::admin, "Ops-1"}, true},      {{Role::supervisor, "ops-1"}, false},
      {{Role::table, "T1"}, true},         {{Role::sign, "lobby"}, true},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(roster->admits(c.principal), c.admitted) << to_string(c.principal);
  }
}

TEST(Roster, RefusesWhatIsNotARosterOfSupervisorsAndAdmins) {
  struct Case {
    std::string text;
    std::string error;  // What the refusal starts with.
  };
  const std::vector<Case> cases = {
      {"", "the roster names no supervisor or admin"},
      {"# nobody\n\n", "the roster names no supervisor or admin"},
      {"supervisor/ann\nsupervisor/Ann\n", "roster line 2: 'supervisor/Ann' is on the roster"},
      {"supervisor/ann\ntable/T1\n", "roster line 2: 'table/T1': only supervisors and admins"},
      {"sign/lobby\n", "roster line 1: 'sign/lobby': only supervisors and admins"},
      {"supervisor ann\n", "roster line 1: 'supervisor ann' is not a principal"},
      {"boss/ann\n", "roster line 1: 'boss/ann' is not a principal"},
      {"supervisor/\n", "roster line 1: 'supervisor/' is not a principal"},
      {"supervisor/ann;rm\n", "roster line 1: 'supervisor/ann;rm' is not a principal"},
      {"supervisor/" + std::string(60, 'a') + "\n", "roster line 1: "},
      {std::string(kMaxRosterBytes + 1, '#'), "the roster is 65537 bytes"},
  };
  for (const Case& c : cases) {
    const auto refused = Roster::parse(c.text);
    ASSERT_FALSE(refused.ok()) << c.text.substr(0, 40);
    EXPECT_EQ(refused.error().rfind(c.error, 0), 0U) << refused.error();
  }
  std::string many;
  for (std::size_t i = 0; i <= kMaxRosterPrincipals; ++i) {
    many += "supervisor/s" + std::to_string(i) + "\n";
  }
  const auto too_many = Roster::parse(many);
  ASSERT_FALSE(too_many.ok());
  EXPECT_NE(too_many.error().find("more than 1000 principals"), std::string::npos);
}

}  // namespace
}  // namespace jackpot
