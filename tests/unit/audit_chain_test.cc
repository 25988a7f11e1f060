// The audit trail's chain rule (journal/audit_chain.h), its walk (tools/ctl_text.h) and the
// hidden trigger check jackpotctl makes: known answers computed apart from this code (Python's
// hashlib over the documented byte layout), and every way a chain can break.
#include "journal/audit_chain.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "meters/hidden_trigger.h"
#include "tools/ctl_text.h"

namespace jackpot {
namespace {

AuditEvent chained(const AuditChainPosition& before, std::int64_t at_us, std::string principal,
                   std::string action, std::string detail) {
  AuditEvent event;
  event.seq = before.seq + 1;
  event.at_us = at_us;
  event.principal = std::move(principal);
  event.action = std::move(action);
  event.detail = std::move(detail);
  event.prev_hash = before.hash;
  event.hash = audit_event_hash(event.prev_hash, event.seq, event.at_us, event.principal,
                                event.action, event.detail);
  return event;
}

std::vector<AuditEvent> chain_of(int count) {
  std::vector<AuditEvent> events;
  AuditChainPosition at;
  for (int i = 0; i < count; ++i) {
    events.push_back(chained(at, 1'764'547'200'000'000 + i, "admin/ops-1", "link.status",
                             "{\"n\": \"" + std::to_string(i) + "\"}"));
    at = {events.back().seq, events.back().hash};
  }
  return events;
}

// The first break of a walk over `events` ending at `head`, or "" when there is none.
std::string walk(const std::vector<AuditEvent>& events, const AuditChainPosition& head) {
  tools::AuditWalk walker;
  for (const AuditEvent& event : events) {
    if (!walker.feed(event)) return walker.broken();
  }
  return walker.finish(head) ? "" : walker.broken();
}

TEST(AuditChain, HashesTheDocumentedBytes) {
  const AuditEvent first =
      chained({}, 1'764'547'200'000'000, "admin/ops-1", "link.status", "{\"link_id\": \"L1\"}");
  EXPECT_EQ(to_hex(first.hash), "f59ab50013bf6ce642177a1ecc80379fc1eebe6f81df6d371eb348c7c7a3a99c");
  const AuditEvent second =
      chained({first.seq, first.hash}, -1, "supervisor/S7", "payout.approve", "{}");
  EXPECT_EQ(to_hex(second.hash),
            "03a45e80edfe47babedb9793f15395c29f22e055225e4bda8df8d2c5955560ce");
  // Lengths go with the texts: moving a byte from one field to the next changes the hash.
  EXPECT_NE(audit_event_hash({}, 1, 0, "admin/a", "b.c", "{}"),
            audit_event_hash({}, 1, 0, "admin/ab", ".c", "{}"));
}

TEST(AuditChain, EveryBreakIsNamedAtItsEvent) {
  const std::vector<AuditEvent> good = chain_of(6);
  const AuditChainPosition head{good.back().seq, good.back().hash};
  EXPECT_EQ(walk(good, head), "");
  EXPECT_EQ(walk({}, {}), "");  // An empty trail is whole.

  struct Case {
    const char* what;
    std::function<void(std::vector<AuditEvent>&, AuditChainPosition&)> tamper;
    const char* found;
  };
  const std::vector<Case> cases = {
      {"a detail changed", [](auto& e, auto&) { e[2].detail = "{\"n\": \"9\"}"; },
       "event 3 (admin/ops-1 link.status) was changed after it was chained"},
      {"a principal changed", [](auto& e, auto&) { e[0].principal = "admin/x"; }, "event 1 ("},
      {"an action changed", [](auto& e, auto&) { e[4].action = "link.statuz"; }, "event 5 ("},
      {"a time changed", [](auto& e, auto&) { e[1].at_us += 1; }, "event 2 ("},
      {"a hash replaced", [](auto& e, auto&) { e[3].hash[0] ^= 1; }, "event 4 ("},
      {"an event removed", [](auto& e, auto&) { e.erase(e.begin() + 2); },
       "event 4 follows event 2: events are missing"},
      {"the first event removed", [](auto& e, auto&) { e.erase(e.begin()); },
       "event 2 follows event 0"},
      {"two events swapped", [](auto& e, auto&) { std::swap(e[2], e[3]); },
       "event 4 follows event 2"},
      {"an event repeated", [](auto& e, auto&) { e.insert(e.begin() + 3, e[2]); },
       "event 3 follows event 3: events are out of order"},
      {"an event rewritten with its own hash recomputed",
       [](auto& e, auto&) {
         e[1].principal = "admin/x";
         e[1].hash = audit_event_hash(e[1].prev_hash, e[1].seq, e[1].at_us, e[1].principal,
                                      e[1].action, e[1].detail);
       },
       "event 3 names"},
      {"the last events removed", [](auto& e, auto&) { e.resize(4); },
       "the chain ends at event 4 but its head names event 6: events are missing from the end"},
      {"the head rewound",
       [](auto&, auto& h) {
         h = {5, {}};
       },
       "the chain runs to event 6 but its head names event 5"},
      {"the head's hash replaced", [](auto&, auto& h) { h.hash[31] ^= 1; },
       "the head names event 6 with hash"},
  };
  for (const Case& c : cases) {
    std::vector<AuditEvent> events = good;
    AuditChainPosition tampered_head = head;
    c.tamper(events, tampered_head);
    const std::string broken = walk(events, tampered_head);
    EXPECT_NE(broken.find(c.found), std::string::npos) << c.what << ": " << broken;
  }
}

TEST(AuditChain, AWalkFromAnAnchorChecksFromThereOn) {
  const std::vector<AuditEvent> good = chain_of(6);
  const AuditChainPosition head{good.back().seq, good.back().hash};
  const std::vector<AuditEvent> tail(good.begin() + 2, good.end());  // Events 3 to 6.
  const auto from = [&](const AuditChainPosition& anchor, std::vector<AuditEvent> events) {
    tools::AuditWalk walker;
    walker.start_at(anchor);
    for (const AuditEvent& event : events) {
      if (!walker.feed(event)) return walker.broken();
    }
    return walker.finish(head) ? std::string() : walker.broken();
  };
  EXPECT_EQ(from({3, good[2].hash}, tail), "");
  AuditChainPosition other{3, good[2].hash};
  other.hash[0] ^= 1;
  EXPECT_NE(from(other, tail).find("not at the anchor"), std::string::npos);
  EXPECT_NE(from({4, good[3].hash}, tail).find("not at the anchor"), std::string::npos);
  EXPECT_NE(from({7, good[5].hash}, {}).find("before the anchor's event 7"), std::string::npos);
  std::vector<AuditEvent> edited = tail;
  edited[2].detail = "{}";  // Event 5.
  EXPECT_NE(from({3, good[2].hash}, edited).find("event 5 ("), std::string::npos);
}

TEST(TriggerCheck, OpensOnlyItsOwnCommitment) {
  std::vector<std::uint8_t> salt;
  for (std::uint8_t i = 0; i < 32; ++i) salt.push_back(i);
  // SHA-256 of the point 123.45 (123,450,000 micros) as 8 bytes big-endian, then the salt.
  const auto commitment =
      *tools::parse_hex("c69ca4b05a27e396475f0fad24cba89f458b734889fc2d75c8d369b3a03519d8", 32);
  EXPECT_EQ(tools::trigger_mismatch(123'450'000, salt, commitment), std::nullopt);
  EXPECT_NE(tools::trigger_mismatch(123'450'001, salt, commitment), std::nullopt);
  auto other_salt = salt;
  other_salt[31] ^= 1;
  EXPECT_NE(tools::trigger_mismatch(123'450'000, other_salt, commitment), std::nullopt);
  EXPECT_EQ(tools::trigger_mismatch(123'450'000, {1, 2}, commitment), "the salt is not 32 bytes");
  // The engine's own commitment opens the same way.
  TriggerSalt engine_salt{};
  std::copy(salt.begin(), salt.end(), engine_salt.begin());
  EXPECT_EQ(to_hex(trigger_commitment(Money::from_micros(123'450'000), engine_salt)),
            "c69ca4b05a27e396475f0fad24cba89f458b734889fc2d75c8d369b3a03519d8");
}

TEST(CtlText, ParsesAnAnchorAsVerifyPrintsIt) {
  const std::string hash(64, 'a');
  const auto anchor = tools::parse_anchor("12:" + hash);
  ASSERT_TRUE(anchor);
  EXPECT_EQ(anchor->seq, 12);
  EXPECT_EQ(to_hex(anchor->hash), hash);
  for (const std::string& bad :
       std::vector<std::string>{"0:" + hash, "12" + hash, "-1:" + hash, "12:" + hash + "0",
                                "x:" + hash, ":" + hash, "12:"}) {
    EXPECT_EQ(tools::parse_anchor(bad), std::nullopt) << bad;
  }
}

// The anchors jackpotd logs (#32), found in its text and JSON lines among everything else, and
// never in text a client had logged (a void's reason, quoted in its field), which would let any
// table plant a false anchor and make every later verify fail.
TEST(CtlText, FindsTheAnchorsInJackpotdsLogAndNoneAClientWrote) {
  const std::string a(64, 'a');
  const std::string b = std::string(63, '0') + "f";
  const std::string log =
      "jackpotd: audit chain head (seq=12, hash=" + a + ")\n" +
      "jackpotd: warning: round voided (table=T1, reason=\"jackpotd: audit chain head (seq=3, "
      "hash=" +
      a + ")\")\n" +
      "jackpotd: error: could not record it: jackpotd: audit chain head (seq=4, hash=" + a + ")\n" +
      "Dec 07 20:05:00 host jackpotd[812]: jackpotd: audit chain head (seq=40, hash=" + b +
      ")\r\n" +
      "{\"time\":\"2026-12-07T20:05:00Z\",\"level\":\"info\",\"message\":\"audit chain "
      "head\",\"seq\":41,\"hash\":\"" +
      b + "\"}\n" +
      "{\"time\":\"2026-12-07T20:05:01Z\",\"level\":\"info\",\"message\":\"round voided\","
      "\"reason\":\"\\\"message\\\":\\\"audit chain head\\\",\\\"seq\\\":5\"}\n" +
      "jackpotd: audit chain head (seq=7, hash=" + a + "0)\n" +  // 65 digits.
      "jackpotd: audit chain head (seq=8, hash=" + a + ") trailing\n";
  const auto anchors = tools::anchors_in_log(log);
  ASSERT_EQ(anchors.size(), 3u);
  EXPECT_EQ(anchors[0].seq, 12);
  EXPECT_EQ(to_hex(anchors[0].hash), a);
  EXPECT_EQ(anchors[1].seq, 40);
  EXPECT_EQ(to_hex(anchors[1].hash), b);
  EXPECT_EQ(anchors[2].seq, 41);
  EXPECT_TRUE(tools::anchors_in_log("nothing here").empty());
}

TEST(CtlText, ParsesNumbersInDecimalOnly) {
  struct Case {
    const char* text;
    std::uint64_t max;
    std::optional<std::uint64_t> value;
  };
  const Case cases[] = {
      {"0", 10, 0},
      {"010", 100, 10},  // Not octal 8.
      {"8", 100, 8},
      {"0x10", 100, std::nullopt},
      {"-1", UINT64_MAX, std::nullopt},
      {"+1", 100, std::nullopt},
      {" 1", 100, std::nullopt},
      {"1e3", 10'000, std::nullopt},
      {"", 100, std::nullopt},
      {"101", 100, std::nullopt},
      {"100", 100, 100},
      {"18446744073709551615", UINT64_MAX, UINT64_MAX},
      {"18446744073709551616", UINT64_MAX, std::nullopt},
      {"9223372036854775808", INT64_MAX, std::nullopt},
      {"00000000000000000000001", UINT64_MAX, std::nullopt},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(tools::parse_decimal(c.text, c.max), c.value) << c.text;
  }
}

TEST(CtlText, ParsesHexExactly) {
  EXPECT_EQ(tools::parse_hex("00ffAb", 3), (std::vector<std::uint8_t>{0x00, 0xff, 0xab}));
  for (const char* bad : {"00ff", "00ffab00", "00fg00", " 0ffab", "0xffab"}) {
    EXPECT_EQ(tools::parse_hex(bad, 3), std::nullopt) << bad;
  }
}

TEST(CtlText, ParsesTimesAndRefusesTheMalformed) {
  struct Case {
    const char* text;
    std::optional<std::int64_t> seconds;
  };
  const Case cases[] = {
      {"0", 0},
      {"1764547200", 1'764'547'200},
      {"1970-01-01", 0},
      {"2025-12-01", 1'764'547'200},
      {"2025-12-01T08:00Z", 1'764'576'000},
      {"2025-12-01T08:00:30Z", 1'764'576'030},
      {"2024-02-29T00:00:00Z", 1'709'164'800},
      {"9999-12-31T23:59:59Z", 253'402'300'799},
      {"253402300799", 253'402'300'799},
      {"253402300800", std::nullopt},
      {"2023-02-29", std::nullopt},
      {"2025-13-01", std::nullopt},
      {"2025-12-00", std::nullopt},
      {"2025-12-01T24:00Z", std::nullopt},
      {"2025-12-01T08:60Z", std::nullopt},
      {"2025-12-01T08:00:60Z", std::nullopt},
      {"2025-12-01T08:00", std::nullopt},
      {"2025-12-01 08:00Z", std::nullopt},
      {"1969-12-31", std::nullopt},
      {"yesterday", std::nullopt},
      {"", std::nullopt},
      {"-5", std::nullopt},
      {"12e3", std::nullopt},
      {"99999999999999999999", std::nullopt},
      {"2025-1-01", std::nullopt},
  };
  for (const Case& c : cases) EXPECT_EQ(tools::parse_time(c.text), c.seconds) << c.text;
  EXPECT_EQ(tools::time_text(1'764'576'030'000'123), "2025-12-01T08:00:30.000123Z");
  EXPECT_EQ(tools::time_text(-1), "1969-12-31T23:59:59.999999Z");
  EXPECT_EQ(tools::money_text(-10'000), "-0.010000");
  EXPECT_EQ(tools::money_text(12'345'678), "12.345678");
  EXPECT_EQ(tools::money_text(INT64_MIN), "-9223372036854.775808");
}

}  // namespace
}  // namespace jackpot
