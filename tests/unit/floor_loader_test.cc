// The floor file (jackpot.config.v1.Floor): the shipped example loads; every field converts to
// the engine's configuration; every problem is refused with "origin:line:column: what".
#include "controller/engine/floor_loader.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "controller/hands/paytable_loader.h"

namespace jackpot {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;
using ::testing::SizeIs;
using ::testing::StartsWith;

const std::vector<Paytable>& shipped_paytables() {
  static const std::vector<Paytable> paytables = [] {
    auto loaded = load_paytables(embedded_paytables());
    JACKPOT_INVARIANT(loaded.ok(), "the shipped paytables load");
    return std::move(loaded).value();
  }();
  return paytables;
}

Money amount(const char* text) { return Money::parse(text).value(); }

std::string read_file(const std::string& path) {
  std::ifstream file(path);
  std::ostringstream text;
  text << file.rdbuf();
  return text.str();
}

// The loader's errors, or nothing when the floor loads.
std::vector<std::string> errors_of(const std::string& text) {
  auto loaded = load_floor(text, "f", shipped_paytables());
  if (loaded) return {};
  return loaded.error();
}

// The demo's floor: every feature the demo shows is on it (a hidden-trigger Must-Hit-By level, a
// link joining Hold'em and Stud tables through the flop and link cards, Seven-Card Stud Linked,
// Dynamic Pay, High Card Flush) and it validates.
TEST(FloorLoader, TheExampleFloorLoads) {
  const std::string path = std::string(JACKPOTD_SOURCE_DIR) + "/ops/floor.example.textproto";
  const std::string text = read_file(path);
  ASSERT_FALSE(text.empty()) << path;
  auto loaded = load_floor(text, path, shipped_paytables());
  ASSERT_TRUE(loaded.ok()) << ::testing::PrintToString(loaded.error());
  const EngineConfig& config = *loaded;
  EXPECT_THAT(validate(config, shipped_paytables()), IsEmpty());

  ASSERT_THAT(config.links, SizeIs(5));
  const LinkSettings& royal = config.links[0];
  EXPECT_EQ(royal.meters.id.value(), "huh-royal");
  EXPECT_EQ(royal.meters.base_wager, amount("1.00"));
  ASSERT_THAT(royal.meters.levels, SizeIs(2));
  EXPECT_EQ(royal.meters.levels[0].name, "Royal Flush");
  EXPECT_EQ(royal.meters.levels[0].seed, amount("1000.00"));
  EXPECT_EQ(royal.meters.levels[0].meter_rate_ppm, 150000);
  EXPECT_EQ(royal.meters.levels[0].reserve_rate_ppm, 25000);
  EXPECT_EQ(royal.meters.levels[0].ceiling, amount("50000.00"));
  EXPECT_EQ(royal.meters.levels[0].must_hit_by, std::nullopt);
  EXPECT_EQ(royal.meters.levels[1].name, "Must-Hit-By $250");
  EXPECT_EQ(royal.meters.levels[1].seed, amount("50.00"));
  EXPECT_EQ(royal.meters.levels[1].meter_rate_ppm, 100000);
  EXPECT_EQ(royal.meters.levels[1].must_hit_by, amount("250.00"));
  EXPECT_EQ(royal.meters.levels[1].trigger, TriggerMode::hidden_uniform);
  EXPECT_EQ(royal.max_wager_units, 5U);
  EXPECT_EQ(royal.approval_threshold, amount("100.00"));
  EXPECT_EQ(config.links[1].meters.id.value(), "five-card-link");
  EXPECT_EQ(config.links[2].meters.id.value(), "seven-card-link");
  EXPECT_EQ(config.links[3].meters.id.value(), "huh-dynamic");
  EXPECT_THAT(config.links[3].dynamic_count_weights, ElementsAre(5U, 3U, 2U));
  EXPECT_EQ(config.links[4].meters.id.value(), "high-card-flush");

  // Each table: its game, and each link it plays with the paytable and where its shared cards
  // come from.
  struct Played {
    std::string link, paytable;
    CommunitySource community;
  };
  struct Expected {
    std::string id;
    GameRule game;
    std::uint32_t seats;
    std::vector<Played> links;
  };
  const Played royal_link{"huh-royal", "PT-BJS-HUH-5CP-12", CommunitySource::board};
  const Played seven_card{"seven-card-link", "PT-BJS-7CL-E01", CommunitySource::link_cards};
  const std::vector<Expected> expected = {
      {"HUH-1",
       GameRule::heads_up_holdem,
       6,
       {royal_link, {"five-card-link", "PT-BJS-5CL-01", CommunitySource::flop}}},
      {"HUH-2",
       GameRule::heads_up_holdem,
       6,
       {royal_link, {"five-card-link", "PT-BJS-5CL-01", CommunitySource::flop}}},
      {"HUH-3", GameRule::heads_up_holdem, 6, {royal_link, seven_card}},
      {"HUH-4", GameRule::heads_up_holdem, 6, {royal_link, seven_card}},
      {"MS-1",
       GameRule::mississippi_stud,
       6,
       {{"five-card-link", "PT-BJS-5CL-01", CommunitySource::link_cards}}},
      {"MS-2", GameRule::mississippi_stud, 6, {seven_card}},
      {"HUH-D1",
       GameRule::heads_up_holdem,
       6,
       {{"huh-dynamic", "PT-PRG-HUH-D01", CommunitySource::board}}},
      {"HCF-1",
       GameRule::high_card_flush,
       7,
       {{"high-card-flush", "HCF-PROG-PAYTABLE-1", CommunitySource::none}}},
  };
  ASSERT_EQ(config.tables.size(), expected.size());
  for (std::size_t i = 0; i < expected.size(); ++i) {
    const TableSettings& table = config.tables[i];
    SCOPED_TRACE(expected[i].id);
    EXPECT_EQ(table.id.value(), expected[i].id);
    EXPECT_EQ(table.game, expected[i].game);
    EXPECT_EQ(table.seats, expected[i].seats);
    ASSERT_EQ(table.links.size(), expected[i].links.size());
    for (std::size_t j = 0; j < table.links.size(); ++j) {
      EXPECT_EQ(table.links[j].link.value(), expected[i].links[j].link);
      EXPECT_EQ(table.links[j].paytable_id, expected[i].links[j].paytable);
      EXPECT_EQ(table.links[j].community, expected[i].links[j].community);
    }
  }
}

// Every field set (and every enum value used) on one link, defaults on the other.
constexpr const char* kEveryField = R"floor(
links {
  id: "A"
  base_wager: "5.00"
  levels {
    level: 1
    name: "Royal"
    seed: "1000.00"
    meter_rate_ppm: 100000
    reserve_rate_ppm: 20000
    ceiling: "20000.00"
    overflow_level: 3
  }
  levels {
    level: 2
    name: "Must-Hit-By $250"
    seed: "50.00"
    meter_rate_ppm: 10000
    must_hit_by: "250.00"
    trigger: TRIGGER_HIDDEN_UNIFORM
  }
  levels { level: 3 name: "Bonus" seed: "100.00" meter_rate_ppm: 5000 trigger: TRIGGER_AT_AMOUNT }
  simultaneous_hits: SIMULTANEOUS_HITS_SPLIT
  suit_specific: SUIT_HEARTS
  dynamic_count_weights: [1, 2, 3]
  dynamic_option_weights: [10, 9, 8, 7, 6, 5, 4, 3, 2, 1]
  must_hit_by_weighted_by_wager: true
  approval_threshold: "500.00"
  dual_approval_threshold: "5000.25"
}
links {
  id: "B"
  levels { level: 1 name: "Royal" seed: "2500.00" meter_rate_ppm: 120000 }
}
links {
  id: "C"
  levels { level: 1 name: "Royal" seed: "10.00" meter_rate_ppm: 1000 }
  simultaneous_hits: SIMULTANEOUS_HITS_SEQUENTIAL
  suit_specific: SUIT_CLUBS
  approval_threshold: "0.00"
}
links {
  id: "D"
  levels { level: 1 name: "Royal" seed: "10.00" meter_rate_ppm: 1000 }
  suit_specific: SUIT_DIAMONDS
}
links {
  id: "E"
  levels { level: 1 name: "Royal" seed: "10.00" meter_rate_ppm: 1000 }
  suit_specific: SUIT_SPADES
}
tables {
  id: "HUH"
  game: TABLE_GAME_HEADS_UP_HOLDEM
  seats: 7
  links { link_id: "A" paytable_id: "PT-PRG-HUH-D05" }
  links { link_id: "B" paytable_id: "PT-BJS-5CL-01" community: COMMUNITY_FLOP }
  links { link_id: "C" paytable_id: "PT-BJS-HUH-5CP-02" community: COMMUNITY_BOARD }
}
tables {
  id: "HCF"
  game: TABLE_GAME_HIGH_CARD_FLUSH
  seats: 20
  links { link_id: "D" paytable_id: "HCF-PROG-PAYTABLE-1" }
  links { link_id: "E" paytable_id: "HCF-PROG-PAYTABLE-2" community: COMMUNITY_NONE }
}
tables {
  id: "MS"
  game: TABLE_GAME_MISSISSIPPI_STUD
  seats: 1
  links { link_id: "B" paytable_id: "PT-BJS-5CL-01" community: COMMUNITY_LINK_CARDS }
  links { link_id: "C" paytable_id: "MS Stud-01" }
}
)floor";

TEST(FloorLoader, ConvertsEveryField) {
  auto loaded = load_floor(kEveryField, "inline", shipped_paytables());
  ASSERT_TRUE(loaded.ok()) << ::testing::PrintToString(loaded.error());
  const EngineConfig& config = *loaded;
  ASSERT_THAT(config.links, SizeIs(5));

  const LinkSettings& a = config.links[0];
  EXPECT_EQ(a.meters.id.value(), "A");
  EXPECT_EQ(a.meters.base_wager, amount("5.00"));
  ASSERT_THAT(a.meters.levels, SizeIs(3));
  const LevelConfig& royal = a.meters.levels[0];
  EXPECT_EQ(royal.level, 1U);
  EXPECT_EQ(royal.name, "Royal");
  EXPECT_EQ(royal.seed, amount("1000.00"));
  EXPECT_EQ(royal.meter_rate_ppm, 100000);
  EXPECT_EQ(royal.reserve_rate_ppm, 20000);
  EXPECT_EQ(royal.ceiling, amount("20000.00"));
  EXPECT_EQ(royal.overflow_level, 3U);
  EXPECT_EQ(royal.must_hit_by, std::nullopt);
  EXPECT_EQ(royal.trigger, TriggerMode::at_amount);
  const LevelConfig& must_hit_by = a.meters.levels[1];
  EXPECT_EQ(must_hit_by.level, 2U);
  EXPECT_EQ(must_hit_by.name, "Must-Hit-By $250");
  EXPECT_EQ(must_hit_by.seed, amount("50.00"));
  EXPECT_EQ(must_hit_by.meter_rate_ppm, 10000);
  EXPECT_EQ(must_hit_by.reserve_rate_ppm, 0);
  EXPECT_EQ(must_hit_by.ceiling, std::nullopt);
  EXPECT_EQ(must_hit_by.overflow_level, 0U);
  EXPECT_EQ(must_hit_by.must_hit_by, amount("250.00"));
  EXPECT_EQ(must_hit_by.trigger, TriggerMode::hidden_uniform);
  EXPECT_EQ(a.meters.levels[2].level, 3U);
  EXPECT_EQ(a.meters.levels[2].trigger, TriggerMode::at_amount);
  EXPECT_EQ(a.simultaneous_hits, HitPolicy::split);
  EXPECT_EQ(a.suit_specific, Suit::hearts);
  EXPECT_THAT(a.dynamic_count_weights, ElementsAre(1U, 2U, 3U));
  EXPECT_THAT(a.dynamic_option_weights, ElementsAre(10U, 9U, 8U, 7U, 6U, 5U, 4U, 3U, 2U, 1U));
  EXPECT_TRUE(a.must_hit_by_weighted_by_wager);
  EXPECT_EQ(a.approval_threshold, amount("500.00"));
  EXPECT_EQ(a.dual_approval_threshold, amount("5000.25"));

  // Defaults.
  const LinkSettings& b = config.links[1];
  EXPECT_EQ(b.meters.id.value(), "B");
  EXPECT_EQ(b.meters.base_wager, amount("1.00"));
  EXPECT_EQ(b.meters.levels[0].ceiling, std::nullopt);
  EXPECT_EQ(b.meters.levels[0].must_hit_by, std::nullopt);
  EXPECT_EQ(b.meters.levels[0].trigger, TriggerMode::at_amount);
  EXPECT_EQ(b.meters.levels[0].reserve_rate_ppm, 0);
  EXPECT_EQ(b.simultaneous_hits, HitPolicy::sequential);
  EXPECT_EQ(b.suit_specific, Suit::spades);
  EXPECT_THAT(b.dynamic_count_weights, IsEmpty());
  EXPECT_THAT(b.dynamic_option_weights, IsEmpty());
  EXPECT_FALSE(b.must_hit_by_weighted_by_wager);
  EXPECT_EQ(b.approval_threshold, amount("0.00"));
  EXPECT_EQ(b.dual_approval_threshold, std::nullopt);

  EXPECT_EQ(config.links[2].simultaneous_hits, HitPolicy::sequential);
  EXPECT_EQ(config.links[2].suit_specific, Suit::clubs);
  EXPECT_EQ(config.links[2].approval_threshold, amount("0.00"));
  EXPECT_EQ(config.links[3].suit_specific, Suit::diamonds);
  EXPECT_EQ(config.links[4].suit_specific, Suit::spades);

  ASSERT_THAT(config.tables, SizeIs(3));
  const TableSettings& huh = config.tables[0];
  EXPECT_EQ(huh.id.value(), "HUH");
  EXPECT_EQ(huh.game, GameRule::heads_up_holdem);
  EXPECT_EQ(huh.seats, 7U);
  ASSERT_THAT(huh.links, SizeIs(3));
  EXPECT_EQ(huh.links[0].link.value(), "A");
  EXPECT_EQ(huh.links[0].paytable_id, "PT-PRG-HUH-D05");
  EXPECT_EQ(huh.links[0].community, CommunitySource::board);  // Unspecified: the board.
  EXPECT_EQ(huh.links[1].community, CommunitySource::flop);
  EXPECT_EQ(huh.links[2].community, CommunitySource::board);
  const TableSettings& hcf = config.tables[1];
  EXPECT_EQ(hcf.id.value(), "HCF");
  EXPECT_EQ(hcf.game, GameRule::high_card_flush);
  EXPECT_EQ(hcf.seats, 20U);
  ASSERT_THAT(hcf.links, SizeIs(2));
  EXPECT_EQ(hcf.links[0].paytable_id, "HCF-PROG-PAYTABLE-1");
  EXPECT_EQ(hcf.links[0].community, CommunitySource::none);  // Unspecified at High Card Flush.
  EXPECT_EQ(hcf.links[1].community, CommunitySource::none);
  const TableSettings& stud = config.tables[2];
  EXPECT_EQ(stud.game, GameRule::mississippi_stud);
  EXPECT_EQ(stud.seats, 1U);
  ASSERT_THAT(stud.links, SizeIs(2));
  EXPECT_EQ(stud.links[0].community, CommunitySource::link_cards);
  EXPECT_EQ(stud.links[1].paytable_id, "MS Stud-01");
  EXPECT_EQ(stud.links[1].community, CommunitySource::board);
}

// One valid link and one valid table, each on one line, to build the cases from.
const std::string kLink =
    R"(links { id: "L" levels { level: 1 name: "Royal" seed: "1000.00" meter_rate_ppm: 10000 } })";
const std::string kTable = R"(tables { id: "T" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6 )"
                           R"(links { link_id: "L" paytable_id: "PT-BJS-HUH-5CP-02" } })";

TEST(FloorLoader, TheCaseBuildingBlocksAreValid) {
  EXPECT_THAT(errors_of(kLink + "\n" + kTable), IsEmpty());
}

struct ErrorCase {
  const char* name;
  std::string text;
  std::vector<std::string> errors;  // Exactly, in order.
};

void PrintTo(const ErrorCase& error_case, std::ostream* out) { *out << error_case.name; }

class FloorErrors : public ::testing::TestWithParam<ErrorCase> {};

TEST_P(FloorErrors, AreReportedWithTheirPosition) {
  EXPECT_THAT(errors_of(GetParam().text), ElementsAreArray(GetParam().errors));
}

// A level line with the given extra fields, for amount cases.
std::string link_with(const std::string& link_fields, const std::string& level_fields) {
  return R"(links { id: "L" )" + link_fields +
         R"(levels { level: 1 name: "Royal" seed: "1000.00" )" + level_fields + "} }";
}

std::string table_with(const std::string& fields) {
  return kLink + "\n" + R"(tables { id: "T" )" + fields + " }";
}

const std::string kHuh = "game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6";
const std::string kOnL = R"(links { link_id: "L" paytable_id: "PT-BJS-HUH-5CP-02" })";

INSTANTIATE_TEST_SUITE_P(
    Floor, FloorErrors,
    ::testing::Values(
        // Syntax, unknown fields and enum values: the parser's first error.
        ErrorCase{"SyntaxError", R"(links { id: "L")", {"f:1:16: Expected identifier, got: "}},
        ErrorCase{
            "UnknownField",
            R"(links { id: "L" colour: "red" })",
            {R"(f:1:23: Message type "jackpot.config.v1.Link" has no field named "colour".)"}},
        ErrorCase{"UnknownEnumName",
                  table_with(R"(game: POKER)"),
                  {R"(f:2:30: Unknown enumeration value of "POKER" for field "game".)"}},
        ErrorCase{
            "UnprefixedEnumName",
            link_with("", "must_hit_by: \"2000.00\"\ntrigger: HIDDEN_UNIFORM"),
            {R"(f:2:24: Unknown enumeration value of "HIDDEN_UNIFORM" for field "trigger".)"}},
        ErrorCase{"UnknownEnumNumber",
                  link_with("", "trigger: 7"),
                  {"f:1:65: link 'L' level 1: trigger 7 is not a known value"}},
        ErrorCase{"UnknownCommunityNumber",
                  table_with(kHuh + R"( links { link_id: "L" paytable_id: "PT-BJS-HUH-5CP-02" )"
                                    "community: 9 }"),
                  {"f:2:114: table 'T': link 'L': community 9 is not a known value"}},
        // Ids.
        ErrorCase{"LinkWithoutId",
                  R"(links { levels { level: 1 name: "Royal" seed: "1000.00" } })",
                  {"f:1:1: the link has no id"}},
        ErrorCase{"DuplicateLinkId",
                  kLink + "\n" + kLink + "\n" + kTable,
                  {"f:2:9: duplicate link id 'L' (first at line 1)"}},
        ErrorCase{"TableWithoutId",
                  kLink + "\n" + "tables { " + kHuh + " " + kOnL + " }",
                  {"f:2:1: the table has no id"}},
        ErrorCase{"DuplicateTableId",
                  kLink + "\n" + kTable + "\n" + kTable,
                  {"f:3:10: duplicate table id 'T' (first at line 2)"}},
        // A table a client certificate could not name (table/<id> in at most 64 bytes).
        ErrorCase{"TableIdNoCertificateCanName",
                  kLink + "\n" + R"(tables { id: "T 1" )" + kHuh + " " + kOnL + " }",
                  {"f:2:10: table id 'T 1' cannot be named by a client certificate: at most 58 "
                   "letters, digits, '.', '_' or '-'"}},
        ErrorCase{"TableIdTooLongForACertificate",
                  kLink + "\n" + "tables { id: \"" + std::string(59, 't') + "\" " + kHuh + " " +
                      kOnL + " }",
                  {"f:2:10: table id '" + std::string(59, 't') +
                   "' cannot be named by a client certificate: at most 58 letters, digits, '.', "
                   "'_' or '-'"}},
        // Amounts.
        ErrorCase{"BaseWager",
                  link_with(R"(base_wager: "1,00" )", ""),
                  {"f:1:17: link 'L': base_wager '1,00': not a decimal amount"}},
        ErrorCase{"Seed",
                  R"(links { id: "L" levels { level: 1 name: "Royal" seed: "0.0000001" } })",
                  {"f:1:49: link 'L' level 1: seed '0.0000001': more than six decimal places"}},
        ErrorCase{"SeedMissing",
                  R"(links { id: "L" levels { level: 1 name: "Royal" } })",
                  {"f:1:17: link 'L' level 1: seed is missing"}},
        ErrorCase{"Ceiling",
                  link_with("", R"(ceiling: "lots" )"),
                  {"f:1:65: link 'L' level 1: ceiling 'lots': not a decimal amount"}},
        ErrorCase{"MustHitBy",
                  link_with("", R"(must_hit_by: "$250" )"),
                  {"f:1:65: link 'L' level 1: must_hit_by '$250': not a decimal amount"}},
        ErrorCase{"MustHitByOverflows",
                  link_with("", R"(must_hit_by: "99999999999999.00" )"),
                  {"f:1:65: link 'L' level 1: must_hit_by '99999999999999.00': amount "
                   "overflows"}},
        ErrorCase{"ApprovalThreshold",
                  link_with(R"(approval_threshold: "1.000.00" )", ""),
                  {"f:1:17: link 'L': approval_threshold '1.000.00': not a decimal amount"}},
        ErrorCase{"DualApprovalThreshold",
                  link_with(R"(dual_approval_threshold: "1e6" )", ""),
                  {"f:1:17: link 'L': dual_approval_threshold '1e6': not a decimal amount"}},
        // Tables.
        ErrorCase{
            "TableWithoutGame", table_with("seats: 6 " + kOnL), {"f:2:1: table 'T' has no game"}},
        ErrorCase{"SeatsMissing",
                  table_with("game: TABLE_GAME_HEADS_UP_HOLDEM " + kOnL),
                  {"f:2:1: table 'T': seats must be 1..20, not 0"}},
        ErrorCase{"TooManySeats",
                  table_with("game: TABLE_GAME_HEADS_UP_HOLDEM seats: 21 " + kOnL),
                  {"f:2:51: table 'T': seats must be 1..20, not 21"}},
        ErrorCase{"UnknownLink",
                  table_with(kHuh + R"( links { link_id: "M" paytable_id: "PT-BJS-HUH-5CP-02" })"),
                  {"f:2:68: table 'T': unknown link 'M'"}},
        ErrorCase{"TableLinkWithoutLinkId",
                  table_with(kHuh + R"( links { paytable_id: "PT-BJS-HUH-5CP-02" })"),
                  {"f:2:60: table 'T': a link entry has no link_id"}},
        ErrorCase{"UnknownPaytable",
                  table_with(kHuh + R"( links { link_id: "L" paytable_id: "PT-NONE" })"),
                  {"f:2:81: table 'T': unknown paytable 'PT-NONE'"}},
        ErrorCase{"TableLinkWithoutPaytable",
                  table_with(kHuh + R"( links { link_id: "L" })"),
                  {"f:2:60: table 'T': link 'L' has no paytable_id"}},
        ErrorCase{"SameLinkTwice",
                  table_with(kHuh + " " + kOnL + "\n" + kOnL),
                  {"f:3:1: table 'T': link 'L' is listed twice (first at line 2)"}},
        // Every problem is reported, in the order of the file.
        ErrorCase{
            "SeveralProblems",
            "links { id: \"L\" base_wager: \"x\" }\n"
            "links { id: \"L\" }\n"
            "tables { id: \"T\" seats: 0 links { link_id: \"M\" paytable_id: \"P\" } }",
            {"f:1:17: link 'L': base_wager 'x': not a decimal amount",
             "f:2:9: duplicate link id 'L' (first at line 1)", "f:3:1: table 'T' has no game",
             "f:3:18: table 'T': seats must be 1..20, not 0", "f:3:35: table 'T': unknown link 'M'",
             "f:3:48: table 'T': unknown paytable 'P'"}}),
    [](const ::testing::TestParamInfo<ErrorCase>& param) { return std::string(param.param.name); });

// What validate(EngineConfig) finds is reported at the entry of the link or table it names.
TEST(FloorLoader, ValidateMessagesAreReportedAtTheirLinkOrTable) {
  const std::string text =
      R"(links { id: "L" levels { level: 1 name: "Royal" seed: "1000.00" meter_rate_ppm: 10000 } })"
      "\n"
      R"(  links { id: "L2" levels { level: 1 name: "Royal" seed: "10.00" meter_rate_ppm: 2000000 } })"
      "\n"
      R"(tables { id: "T" game: TABLE_GAME_HEADS_UP_HOLDEM seats: 6 )"
      R"(links { link_id: "L" paytable_id: "PT-BJS-HUH-5CP-12" } })";
  const std::vector<std::string> errors = errors_of(text);
  ASSERT_THAT(errors, SizeIs(2));
  EXPECT_THAT(errors[0], StartsWith("f:2:3: link 'L2' level 1 (Royal): meter rate 2000000 ppm"));
  EXPECT_THAT(errors[1], StartsWith("f:3:1: table 'T' on link 'L': paytable PT-BJS-HUH-5CP-12 row "
                                    "'Must-Hit-By'"));
}

TEST(FloorLoader, ValidateIsNotAskedWhenTheFileItselfIsWrong) {
  // The seats problem is the loader's own; validate() would report it again.
  EXPECT_THAT(errors_of(table_with(R"(game: TABLE_GAME_HEADS_UP_HOLDEM seats: 30 )" + kOnL)),
              ElementsAre("f:2:51: table 'T': seats must be 1..20, not 30"));
}

TEST(FloorLoader, AnEmptyFloorIsAnEmptyConfiguration) {
  auto loaded = load_floor("", "empty", shipped_paytables());
  ASSERT_TRUE(loaded.ok());
  EXPECT_THAT(loaded->links, IsEmpty());
  EXPECT_THAT(loaded->tables, IsEmpty());
}

// A daemon refuses what load_floor accepts but would serve nothing (a table without a link is
// already the loader's refusal).
TEST(FloorLoader, AFloorWithoutALinkOrATableCannotBeServed) {
  struct Case {
    const char* name;
    std::string text;
    std::vector<std::string> problems;
  };
  const Case cases[] = {
      {"empty",
       "",
       {"f: the floor has no link (is the file empty, or only comments?)",
        "f: the floor has no table"}},
      {"comments only",
       "# links { id: \"L\" }\n\n  # nothing else\n",
       {"f: the floor has no link (is the file empty, or only comments?)",
        "f: the floor has no table"}},
      {"a link and no table", kLink, {"f: the floor has no table"}},
      {"a link and a table", kLink + "\n" + kTable, {}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    auto loaded = load_floor(c.text, "f", shipped_paytables());
    ASSERT_TRUE(loaded.ok()) << ::testing::PrintToString(loaded.error());
    EXPECT_THAT(unservable_floor(*loaded, "f"), ElementsAreArray(c.problems));
  }
}

}  // namespace
}  // namespace jackpot
