#include "controller/engine/engine_codec.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "jackpot/journal/v1/commands.pb.h"
#include "meters/random.h"
#include "tests/support/codec_v2_writer.h"
#include "tests/support/hex.h"

namespace jackpot {
namespace {

Money usd(const char* text) { return *Money::parse(text); }

SettleRoundAnswer a_settlement() {
  SettleRoundAnswer answer{TableId("HUH-1"), RoundId(42), {}, {}};
  SeatResultView seat{6, LinkId("huh-royal"), "PT-BJS-HUH-5CP-12", "Royal Flush", false, {}, {}};
  seat.awards.push_back(
      {LinkId("huh-royal"), AwardKind::percent, 1, "Royal Flush", 0, usd("12345.67"), PayoutId(9)});
  seat.awards.push_back(
      {LinkId("huh-royal"), AwardKind::envy, 0, "Royal Flush", 2, usd("-0.01"), PayoutId(10)});
  seat.total = usd("12345.66");
  answer.results.push_back(seat);
  answer.results.push_back({2, LinkId("huh-royal"), "PT-BJS-HUH-5CP-12", "", true, {}, {}});
  answer.meters.push_back(
      {LinkId("huh-royal"), 1, "Royal Flush", usd("1000.000001"), std::nullopt, usd("50000.00")});
  answer.meters.push_back(
      {LinkId("huh-royal"), 2, "Must-Hit-By $250", usd("50.00"), usd("250.00"), std::nullopt});
  return answer;
}

TEST(EngineCodec, EveryMessageRoundTrips) {
  const SettleRoundAnswer settle = a_settlement();
  EXPECT_EQ(decode<SettleRoundAnswer>(encode(settle)), settle);
  const SettleRoundRequest request{TableId("HUH-1"),
                                   RoundId(42),
                                   {{6, {"As", "Ks"}, std::nullopt}, {2, {}, "FULL_HOUSE"}},
                                   {"Qs", "Js", "Ts", "2d", "3c"},
                                   {}};
  EXPECT_EQ(decode<SettleRoundRequest>(encode(request)), request);
  const OpenRoundAnswer open{
      TableId("T"), RoundId(1), {{LinkId("L"), "D01", {{"Flush", 3, usd("4.00")}}}}};
  EXPECT_EQ(decode<OpenRoundAnswer>(encode(open)), open);
  const LockWagersRequest lock{
      TableId("T"), RoundId(std::uint64_t{1} << 62), {{1, LinkId("L"), 100}, {6, LinkId("L"), -5}}};
  EXPECT_EQ(decode<LockWagersRequest>(encode(lock)), lock);
  const LockWagersAnswer locked{
      TableId("T"), RoundId(1), settle.meters, {{LinkId("L"), 2, 4, usd("250.00"), 77}}};
  EXPECT_EQ(decode<LockWagersAnswer>(encode(locked)), locked);
  const VoidRoundAnswer voided{TableId("T"), RoundId(1), usd("3.50"), settle.meters};
  EXPECT_EQ(decode<VoidRoundAnswer>(encode(voided)), voided);
  const VoidRoundRequest void_request{TableId("T"), RoundId(1), "misdeal"};
  EXPECT_EQ(decode<VoidRoundRequest>(encode(void_request)), void_request);
  const OpenRoundRequest open_request{TableId("T"), RoundId(0)};
  EXPECT_EQ(decode<OpenRoundRequest>(encode(open_request)), open_request);
}

using testing::hex;
using testing::unhex;

// The journal keeps answers in this form and replays decode them after any upgrade: the bytes of
// a known message are pinned here, so that a change to the format fails a test before it ships.
//
// Version 1, as written by the codec before answers held Names (commit 715326d) until awards said
// whether their payout was paid at once: journals keep answers in it.
constexpr std::string_view kSettlementVersion1 =
    "01054855482d312a0206096875682d726f79616c1150542d424a532d4855482d3543502d31320b526f79"
    "616c20466c7573680002096875682d726f79616c00010b526f79616c20466c75736800e0e5dffd5b0909"
    "6875682d726f79616c04000b526f79616c20466c757368029f9c010ac0c9defd5b02096875682d726f79"
    "616c1150542d424a532d4855482d3543502d31320001000002096875682d726f79616c010b526f79616c"
    "20466c75736882a8d6b907000180d0dbc3f402096875682d726f79616c02104d7573742d4869742d4279"
    "202432353080c2d72f0180cab5ee0100";
constexpr std::string_view kSettlementVersion2 =
    "02054855482d312a0206096875682d726f79616c1150542d424a532d4855482d3543502d31320b526f79"
    "616c20466c7573680002096875682d726f79616c00010b526f79616c20466c75736800e0e5dffd5b0900"
    "096875682d726f79616c04000b526f79616c20466c757368029f9c010a00c0c9defd5b02096875682d72"
    "6f79616c1150542d424a532d4855482d3543502d31320001000002096875682d726f79616c010b526f79"
    "616c20466c75736882a8d6b907000180d0dbc3f402096875682d726f79616c02104d7573742d4869742d"
    "4279202432353080c2d72f0180cab5ee0100";

// Version 3: the version byte, the message's length and the message in deterministic Protobuf
// (`protoc --decode_raw` reads it after the first three bytes here).
constexpr std::string_view kSettlementVersion3 =
    "03ff010a054855482d31102a1a7b080612096875682d726f79616c1a1150542d424a532d4855482d3543"
    "502d3132220b526f79616c20466c75736832220a096875682d726f79616c1801220b526f79616c20466c"
    "75736830e0e5dffd5b380932220a096875682d726f79616c1004220b526f79616c20466c757368280230"
    "9f9c01380a38c0c9defd5b1a22080212096875682d726f79616c1a1150542d424a532d4855482d354350"
    "2d3132280122270a096875682d726f79616c10011a0b526f79616c20466c7573682082a8d6b9073080d0"
    "dbc3f402222a0a096875682d726f79616c10021a104d7573742d4869742d427920243235302080c2d72f"
    "2880cab5ee01";

// Every message with every member set (optional ones present, also with zero), so that a change
// to any field's number, type or spelling, or to how the library writes them, fails here first.
OpenRoundAnswer an_open_with_everything() {
  return {TableId("T"),
          RoundId(7),
          {{LinkId("L"), "D01", {{"Flush", 3, usd("4.00")}, {"Straight", 10, usd("0.000001")}}}}};
}
LockWagersAnswer a_lock_with_everything() {
  LockWagersAnswer answer{TableId("T"), RoundId(7), a_settlement().meters, {}};
  answer.meters[0].must_hit_by = Money();  // Present, zero.
  answer.must_hit_by_hits = {{LinkId("L"), 2, 4, usd("250.00"), 77, PayoutState::pending},
                             {LinkId("L"), 3, 5, usd("-1.00"), 78, PayoutState::paid},
                             {LinkId("L"), 4, 6, usd("1.00"), 79, std::nullopt}};
  return answer;
}
SettleRoundAnswer a_settlement_with_everything() {
  SettleRoundAnswer answer = a_settlement();
  answer.results[0].awards[0].payout_state = PayoutState::rejected;
  answer.results[0].awards[1].payout_state = PayoutState::pending;
  answer.results[1].awards.push_back(
      {LinkId("L"), AwardKind::fixed, 0, "Flush", 0, usd("5.00"), PayoutId(11), PayoutState::paid});
  answer.results[1].awards.push_back(
      {LinkId("L"), AwardKind::dynamic, 0, "Flush", 0, usd("7.00"), PayoutId(12), std::nullopt});
  answer.results[1].awards.push_back({LinkId("L"), AwardKind::must_hit_by, 2, "Must-Hit-By", 0,
                                      usd("250.00"), PayoutId(13), PayoutState::pending});
  return answer;
}

// A hit on a hidden-trigger level keeps the point it revealed, its salt and commitment, so that
// a replay answers them byte for byte.
TEST(EngineCodec, AHitKeepsTheHiddenPointItRevealed) {
  LockWagersAnswer answer{TableId("T"), RoundId(7), {}, {}};
  HiddenTrigger revealed;
  revealed.point = usd("123.45");
  for (std::uint8_t i = 0; i < 32; ++i) {
    revealed.salt[i] = i;
    revealed.commitment[i] = static_cast<std::uint8_t>(0xa0 + (i % 16));
  }
  revealed.range_above = usd("50.00");
  revealed.range_up_to = usd("250.00");
  answer.must_hit_by_hits = {
      {LinkId("L"), 2, 4, usd("123.45"), 77, PayoutState::paid, revealed},
      {LinkId("L"), 3, 5, usd("250.00"), 78, PayoutState::pending, std::nullopt}};
  const std::string bytes = encode(answer);
  EXPECT_EQ(hex(bytes),
            // Field 7 (0x3a), 84 bytes: the point (sint64 123,450,000), the salt, the
            // commitment, the range (50.00, 250.00].
            "0380010a0154100722660a014c1002180420a0cadd75284d30013a5408a0cadd751220000102030405"
            "060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f1a20a0a1a2a3a4a5a6a7a8a9aaabac"
            "adaeafa0a1a2a3a4a5a6a7a8a9aaabacadaeaf2080c2d72f2880cab5ee0122110a014c100318052080"
            "cab5ee01284e3000");
  EXPECT_EQ(decode<LockWagersAnswer>(bytes), answer);
}

TEST(EngineCodec, TheBytesOfEveryMessageNeverChange) {
  EXPECT_EQ(hex(encode(a_settlement())), kSettlementVersion3);
  EXPECT_EQ(hex(encode(OpenRoundRequest{TableId("T"), RoundId(7)})), "03050a01541007");
  EXPECT_EQ(hex(encode(an_open_with_everything())),
            "032f0a015410071a280a014c12034430311a0e0a05466c75736810031880a4e8031a0e0a085374726169"
            "676874100a1802");
  EXPECT_EQ(hex(encode(LockWagersRequest{
                TableId("T"), RoundId(9), {{1, LinkId("L"), 100}, {6, LinkId("L"), -5}}})),
            "03180a015410091a08080112014c18c8011a07080612014c1809");
  EXPECT_EQ(hex(encode(a_lock_with_everything())),
            "038f010a015410071a290a096875682d726f79616c10011a0b526f79616c20466c7573682082a8d6b907"
            "28003080d0dbc3f4021a2a0a096875682d726f79616c10021a104d7573742d4869742d42792024323530"
            "2080c2d72f2880cab5ee0122110a014c100218042080cab5ee01284d3000220f0a014c1003180520ff88"
            "7a284e3001220d0a014c100418062080897a284f");
  EXPECT_EQ(hex(encode(SettleRoundRequest{
                TableId("T"),
                RoundId(7),
                {{6, {"As", "Ks"}, std::nullopt}, {2, {}, "FULL_HOUSE"}, {3, {"2c"}, ""}},
                {"Qs", "Js", "Ts"},
                {"9h", "8h"}})),
            "033f0a015410071a0a08061202417312024b731a0e08021a0a46554c4c5f484f5553451a080803120232"
            "631a002202517322024a73220254732a0239682a023868");
  EXPECT_EQ(hex(encode(a_settlement_with_everything())),
            "03cf020a054855482d31102a1a7f080612096875682d726f79616c1a1150542d424a532d4855482d3543"
            "502d3132220b526f79616c20466c75736832240a096875682d726f79616c1801220b526f79616c20466c"
            "75736830e0e5dffd5b3809400232240a096875682d726f79616c1004220b526f79616c20466c75736828"
            "02309f9c01380a400038c0c9defd5b1a6e080212096875682d726f79616c1a1150542d424a532d485548"
            "2d3543502d3132280132150a014c10012205466c7573683080ade204380b400132130a014c1002220546"
            "6c7573683080bfd606380c321e0a014c10031802220b4d7573742d4869742d42793080cab5ee01380d40"
            "0022270a096875682d726f79616c10011a0b526f79616c20466c7573682082a8d6b9073080d0dbc3f402"
            "222a0a096875682d726f79616c10021a104d7573742d4869742d427920243235302080c2d72f2880cab5"
            "ee01");
  EXPECT_EQ(hex(encode(VoidRoundRequest{TableId("T"), RoundId(7), "misdeal"})),
            "030e0a015410071a076d69736465616c");
  EXPECT_EQ(
      hex(encode(VoidRoundAnswer{TableId("T"), RoundId(7), usd("-3.50"), a_settlement().meters})),
      "035f0a0154100718bf9fab0322270a096875682d726f79616c10011a0b526f79616c20466c7573682082"
      "a8d6b9073080d0dbc3f402222a0a096875682d726f79616c10021a104d7573742d4869742d4279202432"
      "35302080c2d72f2880cab5ee01");
  // And each decodes to itself.
  EXPECT_EQ(decode<OpenRoundAnswer>(encode(an_open_with_everything())), an_open_with_everything());
  EXPECT_EQ(decode<LockWagersAnswer>(encode(a_lock_with_everything())), a_lock_with_everything());
  EXPECT_EQ(decode<SettleRoundAnswer>(encode(a_settlement_with_everything())),
            a_settlement_with_everything());
}

// A journal's answers and requests in versions 1 and 2 still decode, to the values they held (an
// award's payout state unrecorded), and re-encode in version 3 to bytes that decode to the same
// values.
TEST(EngineCodec, ReadsTheOlderVersionsAJournalKept) {
  for (const std::string_view kept : {kSettlementVersion1, kSettlementVersion2}) {
    const auto settlement = decode<SettleRoundAnswer>(unhex(kept));
    ASSERT_TRUE(settlement.has_value()) << kept.substr(0, 2);
    EXPECT_EQ(*settlement, a_settlement());
    for (const SeatResultView& result : settlement->results) {
      for (const AwardView& award : result.awards) EXPECT_EQ(award.payout_state, std::nullopt);
    }
    EXPECT_EQ(encode(*settlement), unhex(kSettlementVersion3));
  }
  // The older format's writer, which tests use to make journals as older releases kept them,
  // writes what those releases wrote.
  EXPECT_EQ(hex(testing::encode_version_2(a_settlement())), kSettlementVersion2);
  const LockWagersRequest lock{
      TableId("T"), RoundId(9), {{1, LinkId("L"), 100}, {6, LinkId("L"), -5}}};
  EXPECT_EQ(decode<LockWagersRequest>(unhex("010154090201014cc80106014c09")), lock);
  EXPECT_EQ(decode<LockWagersRequest>(unhex("020154090201014cc80106014c09")), lock);
  // A lock answer with one Must-Hit-By hit (link "L", level 2, seat 3, amount 0, draw 4): version
  // 1 has no payout state; version 2 says none (00) or gives one (01, then the state).
  LockWagersAnswer locked{TableId("T"), RoundId(9), {}, {{LinkId("L"), 2, 3, Money(), 4}}};
  EXPECT_EQ(decode<LockWagersAnswer>(unhex("010154090001014c02030004")), locked);
  EXPECT_EQ(decode<LockWagersAnswer>(unhex("020154090001014c0203000400")), locked);
  locked.must_hit_by_hits[0].payout_state = PayoutState::paid;
  EXPECT_EQ(decode<LockWagersAnswer>(unhex("020154090001014c020300040101")), locked);
  EXPECT_EQ(decode<LockWagersAnswer>(encode(locked)), locked);
}

TEST(EngineCodec, ACommandsRequestAndAnswerAreEachEncodedAsAlone) {
  const SettleRoundRequest request{TableId("HUH-1"),
                                   RoundId(42),
                                   {{6, {"As", "Ks"}, std::nullopt}, {2, {}, "FULL_HOUSE"}},
                                   {"Qs", "Js", "Ts", "2d", "3c"},
                                   {}};
  const SettleRoundAnswer answer = a_settlement();
  const EncodedCommand command = encode_command(request, answer);
  EXPECT_EQ(command.request(), encode(request));
  EXPECT_EQ(command.answer(), encode(answer));
  EXPECT_EQ(decode<SettleRoundAnswer>(command.answer()), answer);
  // Copies share the bytes; a moved-from command is empty, not sizes without bytes.
  EncodedCommand copy = command;
  EXPECT_EQ(copy.answer().data(), command.answer().data());
  EncodedCommand moved = std::move(copy);
  EXPECT_EQ(moved, command);
  EXPECT_TRUE(copy.request().empty());  // NOLINT(bugprone-use-after-move): the point.
  EXPECT_TRUE(copy.answer().empty());   // NOLINT(bugprone-use-after-move)
}

std::string varint(std::uint64_t value) {
  std::string bytes;
  for (; value >= 0x80; value >>= 7) bytes += static_cast<char>((value & 0x7f) | 0x80);
  return bytes + static_cast<char>(value);
}

// Texts of every length, and strings whose capacity differs from their length, come back exactly.
TEST(EngineCodec, TextsOfEveryLengthAndCapacityComeBackExactly) {
  for (std::size_t length = 0; length < 70; ++length) {
    for (int history = 0; history < 4; ++history) {
      std::string reason;
      if (history == 1) reason.reserve(200);
      if (history == 2) {
        reason.assign(300, 'z');
        reason.clear();
      }
      if (history == 3) {
        reason.assign(17, 'z');
        reason.resize(0);
        reason.shrink_to_fit();
      }
      for (std::size_t i = 0; i < length; ++i) reason += static_cast<char>('a' + i % 26);
      const VoidRoundRequest request{TableId(std::string(length, 'T')), RoundId(5), reason};
      ASSERT_EQ(decode<VoidRoundRequest>(encode(request)), request)
          << "length " << length << ", history " << history;
    }
  }
}

TEST(EngineCodec, ALargeMessageEncodesWhole) {
  SettleRoundRequest request{TableId("HUH-1"), RoundId(42), {}, {}, {}};
  for (std::size_t i = 0; i < 5000; ++i) request.board.push_back(std::string(i % 40, 'x'));
  const std::string bytes = encode(request);
  EXPECT_GT(bytes.size(), 90'000u);
  EXPECT_EQ(decode<SettleRoundRequest>(bytes), request);
  const SettleRoundAnswer answer{TableId("T"), RoundId(1), {}, {}};
  const EncodedCommand command = encode_command(request, answer);
  EXPECT_EQ(command.request(), bytes);
  EXPECT_EQ(command.answer(), encode(answer));
}

// Settlements of every size, with texts of every length in every member, come back whole, and a
// command's pair holds exactly what each encodes alone.
TEST(EngineCodec, MessagesOfManySizesAndTextLengthsRoundTrip) {
  SplitMix64 random(77);
  const auto text = [&] {
    return std::string(static_cast<std::size_t>(uniform_below(random, 90)), 'a');
  };
  for (int trial = 0; trial < 300; ++trial) {
    SettleRoundRequest request{
        TableId(text()), RoundId(uniform_below(random, 1U << 20)), {}, {}, {}};
    SettleRoundAnswer answer{request.table, request.round, {}, {}};
    const auto seats = uniform_below(random, 30);
    for (std::uint64_t seat = 0; seat < seats; ++seat) {
      SeatHandRequest hand{static_cast<std::uint32_t>(seat), {text(), text()}, std::nullopt};
      if (seat % 3 == 0) hand.keyed_hand = text();
      request.seats.push_back(hand);
      request.board.push_back(text());
      SeatResultView result{static_cast<std::uint32_t>(seat),
                            LinkId(text()),
                            Name(text()),
                            Name(text()),
                            seat % 2 == 0,
                            {},
                            usd("1.00")};
      for (std::uint64_t award = uniform_below(random, 4); award > 0; --award) {
        result.awards.push_back({LinkId(text()), AwardKind::fixed, 1, Name(text()), 0,
                                 usd("-12345.67"), PayoutId(award)});
      }
      answer.results.push_back(result);
      answer.meters.push_back(
          {LinkId(text()), 1, Name(text()), usd("0.000001"), usd("250.00"), std::nullopt});
    }
    const EncodedCommand command = encode_command(request, answer);
    ASSERT_EQ(command.request(), encode(request)) << "trial " << trial;
    ASSERT_EQ(command.answer(), encode(answer)) << "trial " << trial;
    ASSERT_EQ(decode<SettleRoundRequest>(command.request()), request) << "trial " << trial;
    ASSERT_EQ(decode<SettleRoundAnswer>(command.answer()), answer) << "trial " << trial;
  }
}

// A message's bytes as written: the version, the length, the message.
std::string frame(const std::string& message) { return "\x03" + varint(message.size()) + message; }

// Each value has one encoding: decode() takes only the bytes encode() writes, so whatever
// decodes re-encodes to the bytes it came from.
TEST(EngineCodec, RefusesEveryOtherSpellingOfAValue) {
  using namespace std::string_literals;  // Literals with NUL bytes inside.
  // Field 1 (table, bytes) "T", then field 2 (round, varint).
  const std::string table = "\x0a\x01T"s;
  EXPECT_EQ(decode<OpenRoundRequest>(frame(table + "\x10\x7d")),
            (OpenRoundRequest{TableId("T"), RoundId(125)}));
  EXPECT_FALSE(decode<OpenRoundRequest>(frame("\x10\x7d\x0a\x01T"s))) << "fields out of order";
  EXPECT_FALSE(decode<OpenRoundRequest>(frame(table + "\x10\x01\x10\x7d"))) << "a field twice";
  EXPECT_FALSE(decode<OpenRoundRequest>(frame(table + "\x10\xfd\x00"s))) << "125 in two bytes";
  EXPECT_FALSE(decode<OpenRoundRequest>(frame(table + "\x10\x00"s))) << "round 0 written out";
  EXPECT_FALSE(decode<OpenRoundRequest>(frame("\x0a\x00\x10\x7d"s))) << "an empty table written";
  EXPECT_FALSE(decode<OpenRoundRequest>(frame(table + "\x10\x7d\x18\x01"))) << "an unknown field";
  EXPECT_FALSE(decode<OpenRoundRequest>("\x03\x85\x00"s + table + "\x10\x7d"))
      << "the length in two bytes";
  EXPECT_FALSE(decode<OpenRoundRequest>("\x03\x06"s + table + "\x10\x7d")) << "a length too long";
  EXPECT_FALSE(decode<OpenRoundRequest>("\x03\x04"s + table + "\x10\x7d")) << "a length too short";
  EXPECT_EQ(decode<OpenRoundRequest>(frame("\x0a\x01\xff"s)),
            (OpenRoundRequest{TableId("\xff"), {}}))
      << "texts are bytes, not UTF-8";

  // A settlement of round 1 at table "T" with one result (field 3): seat 1 and one award (field 6)
  // of the given kind (field 2) and, when given, payout state (field 8).
  const auto settlement = [&](char kind, std::string state = "") {
    const std::string award = "\x10"s + kind + state;
    const std::string result = "\x08\x01\x32"s + static_cast<char>(award.size()) + award;
    return frame(table + "\x10\x01\x1a" + static_cast<char>(result.size()) + result);
  };
  SettleRoundAnswer answer{TableId("T"), RoundId(1), {}, {}};
  answer.results.push_back({1, {}, "", "", false, {}, {}});
  answer.results[0].awards.push_back({{}, AwardKind::envy, 0, "", 0, Money(), PayoutId(0)});
  EXPECT_EQ(decode<SettleRoundAnswer>(settlement('\x04')), answer);
  EXPECT_FALSE(decode<SettleRoundAnswer>(settlement('\x05'))) << "an award kind of 5";
  answer.results[0].awards[0].payout_state = PayoutState::rejected;
  EXPECT_EQ(decode<SettleRoundAnswer>(settlement('\x04', "\x40\x02")), answer);
  EXPECT_FALSE(decode<SettleRoundAnswer>(settlement('\x04', "\x40\x03"))) << "a payout state of 3";
}

// decode() refuses enum numbers the engine has no value for by checking each enum field by name
// (known_enums() in engine_codec.cc): these must be every enum field of the messages, and every
// value of each enum must map to one engine value of its own.
TEST(EngineCodec, ItChecksEveryEnumFieldAndMapsEveryValue) {
  namespace pb = jackpot::journal::v1;
  const google::protobuf::FileDescriptor* file = pb::AwardView::descriptor()->file();
  std::set<std::string> enum_fields;
  for (int m = 0; m < file->message_type_count(); ++m) {
    const google::protobuf::Descriptor* message = file->message_type(m);
    EXPECT_EQ(message->nested_type_count(), 0) << message->full_name();
    for (int f = 0; f < message->field_count(); ++f) {
      if (message->field(f)->enum_type() != nullptr) {
        enum_fields.insert(message->field(f)->full_name());
      }
    }
  }
  EXPECT_EQ(enum_fields,
            (std::set<std::string>{"jackpot.journal.v1.AwardView.kind",
                                   "jackpot.journal.v1.AwardView.payout_state",
                                   "jackpot.journal.v1.MustHitByHitView.payout_state"}));

  const auto decoded_award = [](int kind, std::optional<int> state) {
    pb::SettleRoundAnswer answer;
    pb::AwardView* award = answer.add_results()->add_awards();
    award->set_kind(static_cast<pb::AwardKind>(kind));
    if (state) award->set_payout_state(static_cast<pb::PayoutState>(*state));
    const std::string message = answer.SerializeAsString();
    return decode<SettleRoundAnswer>(frame(message));
  };
  std::set<AwardKind> kinds;
  for (int i = 0; i < pb::AwardKind_descriptor()->value_count(); ++i) {
    const auto decoded = decoded_award(pb::AwardKind_descriptor()->value(i)->number(), {});
    ASSERT_TRUE(decoded) << pb::AwardKind_descriptor()->value(i)->name();
    kinds.insert(decoded->results[0].awards[0].kind);
  }
  EXPECT_EQ(kinds.size(), static_cast<std::size_t>(pb::AwardKind_descriptor()->value_count()));
  EXPECT_EQ(kinds.size(), std::size_t{5});  // Every AwardKind of the engine.
  std::set<PayoutState> states;
  for (int i = 0; i < pb::PayoutState_descriptor()->value_count(); ++i) {
    const auto decoded = decoded_award(1, pb::PayoutState_descriptor()->value(i)->number());
    ASSERT_TRUE(decoded) << pb::PayoutState_descriptor()->value(i)->name();
    states.insert(*decoded->results[0].awards[0].payout_state);
  }
  EXPECT_EQ(states.size(), static_cast<std::size_t>(pb::PayoutState_descriptor()->value_count()));
  EXPECT_EQ(states.size(), std::size_t{3});  // Every PayoutState of the engine.
  EXPECT_FALSE(decoded_award(-1, {})) << "a negative award kind";
  EXPECT_FALSE(decoded_award(1, -1)) << "a negative payout state";
  // And in a lock answer's Must-Hit-By hit.
  const auto decoded_hit = [](int state) {
    pb::LockWagersAnswer answer;
    answer.add_must_hit_by_hits()->set_payout_state(static_cast<pb::PayoutState>(state));
    return decode<LockWagersAnswer>(frame(answer.SerializeAsString()));
  };
  EXPECT_EQ(decoded_hit(1)->must_hit_by_hits[0].payout_state, PayoutState::paid);
  EXPECT_FALSE(decoded_hit(3)) << "a payout state of 3";
  EXPECT_FALSE(decoded_hit(-1)) << "a negative payout state";
}

// The same for the older format's reader: a flag is 0 or 1, a number has one spelling, an enum
// only its values.
TEST(EngineCodec, TheOlderFormatsReaderRefusesEveryOtherSpellingOfAValue) {
  using namespace std::string_literals;
  const std::string table = "\x02\x01T";  // The version, then table "T".
  EXPECT_EQ(decode<OpenRoundRequest>(table + varint(125)),
            (OpenRoundRequest{TableId("T"), RoundId(125)}));
  EXPECT_FALSE(decode<OpenRoundRequest>(table + "\xfd\x00"s)) << "125 in two bytes";
  EXPECT_FALSE(decode<OpenRoundRequest>(table + "\x80\x00"s)) << "0 in two bytes";
  EXPECT_FALSE(decode<OpenRoundRequest>(table + "\x80\x80\x80\x00"s)) << "0 in four bytes";
  const std::string nine = std::string(9, '\xff');
  EXPECT_EQ(decode<OpenRoundRequest>(table + nine + "\x01"),
            (OpenRoundRequest{TableId("T"), RoundId(~std::uint64_t{0})}));
  EXPECT_FALSE(decode<OpenRoundRequest>(table + nine + "\x03")) << "bits beyond 64";
  EXPECT_FALSE(decode<OpenRoundRequest>(table + nine + "\x7f")) << "bits beyond 64";

  // A seat's result: seat 1, link "L", paytable "P", no hand, then dealer_keyed, then one award
  // (link "L", then its kind, level 1, hand "H", from seat 0, amount 0, payout 7, then its
  // payout state: present, PAID), total 0, and no meters.
  const auto result = [&](char dealer_keyed, char kind, char state = '\x01') {
    return table + varint(1) + varint(1) + varint(1) + "\x01L\x01P" + varint(0) + dealer_keyed +
           varint(1) + "\x01L" + kind + varint(1) + "\x01H" + varint(0) + varint(0) + varint(7) +
           varint(1) + state + varint(0) + varint(0);
  };
  SettleRoundAnswer answer{TableId("T"), RoundId(1), {}, {}};
  answer.results.push_back({1, LinkId("L"), "P", "", true, {}, {}});
  answer.results[0].awards.push_back(
      {LinkId("L"), AwardKind::envy, 1, "H", 0, Money(), PayoutId(7), PayoutState::paid});
  EXPECT_EQ(decode<SettleRoundAnswer>(result('\x01', '\x04')), answer);
  EXPECT_FALSE(decode<SettleRoundAnswer>(result('\x02', '\x04'))) << "a flag of 2";
  EXPECT_FALSE(decode<SettleRoundAnswer>(result('\x01', '\x05'))) << "an award kind of 5";
  EXPECT_FALSE(decode<SettleRoundAnswer>(result('\x01', '\x04', '\x03'))) << "a payout state of 3";
}

TEST(EngineCodec, RefusesTruncatedForeignAndCorruptBytes) {
  // The older format has every member in order: any cut is refused.
  const std::string kept = unhex(kSettlementVersion2);
  for (std::size_t length = 0; length < kept.size(); ++length) {
    EXPECT_FALSE(decode<SettleRoundAnswer>(kept.substr(0, length))) << "length " << length;
  }
  EXPECT_FALSE(decode<SettleRoundAnswer>(kept + "x"));
  // The current format gives the message's length: a cut anywhere is refused too, also between
  // two fields, where the message alone would parse as one with fewer members.
  const std::string bytes = encode(a_settlement());
  for (std::size_t length = 0; length < bytes.size(); ++length) {
    EXPECT_FALSE(decode<SettleRoundAnswer>(bytes.substr(0, length))) << "length " << length;
  }
  EXPECT_FALSE(decode<SettleRoundAnswer>(bytes + "x"));
  EXPECT_FALSE(decode<SettleRoundAnswer>(bytes + "\x08\x01")) << "a whole field more";
  for (const char version : {'\0', '\4', '\x7f'}) {
    std::string other_version = bytes;
    other_version[0] = version;
    EXPECT_FALSE(decode<SettleRoundAnswer>(other_version)) << int{version};
  }
  // Random bytes never crash the decoder (they decode to something or to nothing).
  SplitMix64 random(8);
  for (int i = 0; i < 30'000; ++i) {
    std::string noise(1 + uniform_below(random, 64), '\0');
    for (char& c : noise) c = static_cast<char>(random.next_u64());
    noise[0] = static_cast<char>(1 + i % 3);  // Every version the codec reads.
    (void)decode<SettleRoundAnswer>(noise);
    (void)decode<LockWagersRequest>(noise);
  }
}

}  // namespace
}  // namespace jackpot
