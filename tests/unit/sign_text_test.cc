// What jackpot-sign prints (tools/sign_text.h): amounts, the table of levels, hits and Dynamic
// Pays, and every link UNAVAILABLE once the controller is lost.
#include "tools/sign_text.h"

#include <gtest/gtest.h>

namespace jackpot::tools {
namespace {

namespace pb = ::jackpot::v1;

TEST(SignText, Dollars) {
  struct Case {
    std::int64_t cents;
    const char* text;
  };
  const Case cases[] = {{0, "$0.00"},
                        {5, "$0.05"},
                        {100, "$1.00"},
                        {100100, "$1,001.00"},
                        {123456789, "$1,234,567.89"},
                        {-250, "-$2.50"},
                        {100000000, "$1,000,000.00"}};
  for (const Case& c : cases) EXPECT_EQ(dollars(c.cents), c.text) << c.cents;
}

pb::MeterSnapshot snapshot() {
  pb::MeterSnapshot made;
  made.set_sequence(42);
  auto* royal = made.add_levels();
  royal->set_link_id("L");
  royal->set_level(1);
  royal->set_name("Royal Flush");
  royal->set_amount_cents(100100);
  auto* must = made.add_levels();
  must->set_link_id("L");
  must->set_level(2);
  must->set_name("Must-Hit-By $250");
  must->set_amount_cents(5050);
  must->set_must_hit_by_cents(25000);
  auto* status = made.add_links();
  status->set_link_id("L");
  status->set_status(pb::LINK_STATUS_OPEN);
  auto* commitment = made.add_trigger_commitments();
  commitment->set_link_id("L");
  commitment->set_level(2);
  commitment->set_commitment(std::string("\xAB\xCD\x01\x02\x03\x04\x05\x06\x07", 9));
  auto* hit = made.add_hits();
  hit->set_link_id("L");
  hit->set_level(1);
  hit->set_table_id("T1");
  hit->set_round_id(7);
  hit->set_seat(3);
  hit->set_hand("Royal Flush");
  hit->set_amount_cents(100100);
  hit->set_reset_cents(100000);
  hit->mutable_hit_time()->set_seconds(3723);
  auto* table = made.add_tables();
  table->set_table_id("T1");
  table->set_round_id(8);
  auto* pay = table->add_selections()->add_pays();
  pay->set_hand("Four-of-a-Kind");
  pay->set_option(3);
  pay->set_amount_cents(12000);
  return made;
}

TEST(SignText, TheScreenShowsLevelsHitsAndDynamicPays) {
  const std::string screen = sign_screen(snapshot(), {"sign/lobby at h:1", 0.4, false, ""});
  const char* expected[] = {
      "jackpot-sign  sign/lobby at h:1  sequence 42  heard 0.4 s ago\n",
      "\nL               OPEN         1 Royal Flush                      $1,001.00\n",
      "\n                             2 Must-Hit-By $250                    $50.50         $250.00"
      "  hidden trigger abcd010203040506...\n",
      "HITS\n  01:02:03  L             Royal Flush                $1,001.00  table T1 round 7 "
      "seat 3  (now $1,000.00)",
      "TABLES\n  T1          round 8  Dynamic Pays: Four-of-a-Kind $120.00",
  };
  for (const char* part : expected)
    EXPECT_NE(screen.find(part), std::string::npos) << part << "\n" << screen;
  EXPECT_EQ(screen.find("UNAVAILABLE"), std::string::npos) << screen;
}

TEST(SignText, ALostControllerShowsEveryLinkUnavailable) {
  const std::string screen =
      sign_screen(snapshot(), {"sign/lobby at h:1", 7.0, true, "nothing heard for 7 s"});
  EXPECT_NE(screen.find("LINK UNAVAILABLE: nothing heard for 7 s\n"), std::string::npos) << screen;
  EXPECT_NE(screen.find("L               UNAVAILABLE  1 Royal Flush"), std::string::npos) << screen;
  EXPECT_EQ(screen.find("OPEN"), std::string::npos) << screen;
}

}  // namespace
}  // namespace jackpot::tools
