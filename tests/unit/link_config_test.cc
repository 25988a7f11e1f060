#include "meters/link_config.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace jackpot {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

Money dollars(const char* text) { return *Money::parse(text); }

LevelConfig royal() {
  LevelConfig level;
  level.level = 1;
  level.name = "Royal Flush";
  level.seed = dollars("1000.00");
  level.meter_rate_ppm = 150'000;
  level.reserve_rate_ppm = 25'000;
  return level;
}

LinkConfig link_of(std::vector<LevelConfig> levels, const char* base = "1.00") {
  LinkConfig config;
  config.id = LinkId("huh-bank-1");
  config.base_wager = dollars(base);
  config.levels = std::move(levels);
  return config;
}

TEST(LinkConfig, AcceptsATypicalThreeLevelLink) {
  LevelConfig straight_flush = royal();
  straight_flush.level = 2;
  straight_flush.name = "Straight Flush";
  straight_flush.seed = dollars("100.00");
  straight_flush.meter_rate_ppm = 50'000;
  straight_flush.reserve_rate_ppm = 5'000;
  straight_flush.ceiling = dollars("5000.00");
  straight_flush.overflow_level = 1;
  LevelConfig must_hit_by = royal();
  must_hit_by.level = 3;
  must_hit_by.name = "Must-Hit-By $250";
  must_hit_by.seed = dollars("50.00");
  must_hit_by.meter_rate_ppm = 20'000;
  must_hit_by.reserve_rate_ppm = 0;
  must_hit_by.must_hit_by = dollars("250.00");
  must_hit_by.trigger = TriggerMode::hidden_uniform;
  EXPECT_THAT(validate(link_of({royal(), straight_flush, must_hit_by})), IsEmpty());
}

TEST(LinkConfig, BaseWagerMultipliesSeedAndMustHitByButNotTheCeiling) {
  LevelConfig level = royal();
  level.ceiling = dollars("20000.00");
  LevelConfig must_hit_by = royal();
  must_hit_by.level = 2;
  must_hit_by.name = "Must-Hit-By";
  must_hit_by.seed = dollars("50.00");
  must_hit_by.reserve_rate_ppm = 0;
  must_hit_by.meter_rate_ppm = 10'000;
  must_hit_by.must_hit_by = dollars("250.00");
  const auto rules = derive_rules(link_of({level, must_hit_by}, "5.00"));
  EXPECT_EQ(rules[0].seed, dollars("5000.00"));
  EXPECT_EQ(rules[0].ceiling, dollars("20000.00"));
  EXPECT_EQ(rules[0].meter_per_unit, dollars("0.75"));
  EXPECT_EQ(rules[0].reserve_per_unit, dollars("0.125"));
  EXPECT_EQ(rules[1].seed, dollars("250.00"));
  EXPECT_EQ(rules[1].must_hit_by, dollars("1250.00"));
}

TEST(LinkConfig, NamesEveryProblem) {
  const struct {
    const char* what;
    std::function<void(LinkConfig&)> mutate;
    const char* problem;
  } cases[] = {
      {"empty id", [](LinkConfig& c) { c.id = LinkId(""); }, "link '': the link id is empty"},
      {"zero base", [](LinkConfig& c) { c.base_wager = Money(); },
       "link 'huh-bank-1': base wager 0.00 must be a positive whole number of cents"},
      {"sub-cent base", [](LinkConfig& c) { c.base_wager = dollars("1.005"); },
       "link 'huh-bank-1': base wager 1.005 must be a positive whole number of cents"},
      {"no levels", [](LinkConfig& c) { c.levels.clear(); },
       "link 'huh-bank-1': the link has no levels"},
      {"misnumbered", [](LinkConfig& c) { c.levels[0].level = 2; },
       "link 'huh-bank-1' level 2 (Royal Flush): levels must be numbered 1, 2, 3, ... in order; "
       "expected 1"},
      {"no name", [](LinkConfig& c) { c.levels[0].name = ""; },
       "link 'huh-bank-1' level 1: the level has no name"},
      {"negative seed", [](LinkConfig& c) { c.levels[0].seed = dollars("-1.00"); },
       "link 'huh-bank-1' level 1 (Royal Flush): seed -1.00 must be a whole number of cents >= 0"},
      {"sub-cent seed", [](LinkConfig& c) { c.levels[0].seed = dollars("1000.001"); },
       "link 'huh-bank-1' level 1 (Royal Flush): seed 1000.001 must be a whole number of cents "
       ">= 0"},
      {"rate above 100%",
       [](LinkConfig& c) {
         c.levels[0].meter_rate_ppm = 1'000'001;
         c.levels[0].reserve_rate_ppm = 0;
       },
       "link 'huh-bank-1' level 1 (Royal Flush): meter rate 1000001 ppm is outside 0..1000000 ppm"},
      {"negative rate", [](LinkConfig& c) { c.levels[0].reserve_rate_ppm = -1; },
       "link 'huh-bank-1' level 1 (Royal Flush): reserve rate -1 ppm is outside 0..1000000 ppm"},
      {"rates above the wager",
       [](LinkConfig& c) {
         c.levels[0].meter_rate_ppm = 900'000;
         c.levels[0].reserve_rate_ppm = 200'000;
       },
       "link 'huh-bank-1': meter and reserve rates of all levels add up to 1100000 ppm, more than "
       "the whole wager (1000000 ppm)"},
      {"inexact rate",
       [](LinkConfig& c) {
         c.base_wager = dollars("0.25");
         c.levels[0].meter_rate_ppm = 150'001;
       },
       "link 'huh-bank-1' level 1 (Royal Flush): meter rate 150001 ppm of base wager 0.25 is not a "
       "whole number of micros; choose a rate that is"},
      {"ceiling below seed", [](LinkConfig& c) { c.levels[0].ceiling = dollars("1000.00"); },
       "link 'huh-bank-1' level 1 (Royal Flush): ceiling 1000.00 must be above the seed 1000.00"},
      {"overflow without ceiling", [](LinkConfig& c) { c.levels[0].overflow_level = 2; },
       "link 'huh-bank-1' level 1 (Royal Flush): overflow level 2 is set but the level has no "
       "ceiling"},
      {"overflow to itself",
       [](LinkConfig& c) {
         c.levels[0].ceiling = dollars("5000.00");
         c.levels[0].overflow_level = 1;
       },
       "link 'huh-bank-1' level 1 (Royal Flush): overflow level is the level itself; use 0 for its "
       "reserve"},
      {"overflow to nowhere",
       [](LinkConfig& c) {
         c.levels[0].ceiling = dollars("5000.00");
         c.levels[0].overflow_level = 7;
       },
       "link 'huh-bank-1' level 1 (Royal Flush): overflow level 7 does not exist"},
      {"MHB not above seed", [](LinkConfig& c) { c.levels[0].must_hit_by = dollars("1000.00"); },
       "link 'huh-bank-1' level 1 (Royal Flush): Must-Hit-By amount 1000.00 must be above the seed "
       "1000.00"},
      {"MHB with ceiling",
       [](LinkConfig& c) {
         c.levels[0].must_hit_by = dollars("2000.00");
         c.levels[0].ceiling = dollars("3000.00");
       },
       "link 'huh-bank-1' level 1 (Royal Flush): a Must-Hit-By level cannot have a ceiling"},
      {"hidden without MHB",
       [](LinkConfig& c) { c.levels[0].trigger = TriggerMode::hidden_uniform; },
       "link 'huh-bank-1' level 1 (Royal Flush): a hidden trigger needs a Must-Hit-By amount"},
  };
  for (const auto& c : cases) {
    LinkConfig config = link_of({royal()});
    c.mutate(config);
    EXPECT_THAT(validate(config), ElementsAre(c.problem)) << c.what;
  }
}

TEST(LinkConfig, RefusesOverflowCyclesAndOverflowIntoMustHitBy) {
  LevelConfig first = royal();
  first.ceiling = dollars("5000.00");
  first.overflow_level = 2;
  first.reserve_rate_ppm = 0;
  LevelConfig second = royal();
  second.level = 2;
  second.name = "Second";
  second.reserve_rate_ppm = 0;
  second.ceiling = dollars("5000.00");
  second.overflow_level = 1;
  EXPECT_THAT(validate(link_of({first, second})),
              ElementsAre("link 'huh-bank-1' level 1 (Royal Flush): overflow targets form a cycle",
                          "link 'huh-bank-1' level 2 (Second): overflow targets form a cycle"));

  second.ceiling.reset();
  second.overflow_level = 0;
  second.must_hit_by = dollars("2000.00");
  EXPECT_THAT(validate(link_of({first, second})),
              ElementsAre("link 'huh-bank-1' level 1 (Royal Flush): overflow level 2 is a "
                          "Must-Hit-By level, which only contributions may feed"));
}

}  // namespace
}  // namespace jackpot
