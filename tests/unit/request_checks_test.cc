// request_problem() against the API itself: every string field of every request message of every
// service (found through protobuf reflection, so a new request type or field cannot be missed)
// has the limit this file's table gives it, is accepted at that limit and refused one byte past
// it without echoing the text; every repeated field takes kMaxRepeatedEntries entries and no
// more; docs/limits.md lists every field with its limit.
#include "controller/api/request_checks.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <vector>

#include "controller/limits/request_limits.h"
#include "jackpot/v1/admin.pb.h"
#include "jackpot/v1/sign.pb.h"
#include "jackpot/v1/supervisor.pb.h"
#include "jackpot/v1/table.pb.h"

namespace jackpot {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

// What each string field of a request may hold, in bytes. A field missing here fails
// EveryStringFieldOfEveryRequestHasItsLimit: add it here, to kStringFieldLimits in
// controller/api/request_checks.cc and to docs/limits.md.
const std::map<std::string, std::size_t> kExpectedLimits = {
    {"jackpot.v1.OpenRoundRequest.table_id", 64},
    {"jackpot.v1.LockWagersRequest.table_id", 64},
    {"jackpot.v1.SeatWager.link_id", 64},
    {"jackpot.v1.SettleRoundRequest.table_id", 64},
    {"jackpot.v1.SeatHand.keyed_hand", 64},
    {"jackpot.v1.SeatCards.cards", 3},
    {"jackpot.v1.SettleRoundRequest.community_cards", 3},
    {"jackpot.v1.SettleRoundRequest.link_cards", 3},
    {"jackpot.v1.VoidRoundRequest.table_id", 64},
    {"jackpot.v1.VoidRoundRequest.reason", 512},
    {"jackpot.v1.WatchLinkStatusRequest.table_id", 64},
    {"jackpot.v1.ListMetersRequest.link_ids", 64},
    {"jackpot.v1.SetLinkStatusRequest.link_id", 64},
    {"jackpot.v1.SetLinkStatusRequest.reason", 512},
    {"jackpot.v1.AdjustMeterRequest.link_id", 64},
    {"jackpot.v1.AdjustMeterRequest.reason", 512},
    {"jackpot.v1.AdjustMeterRequest.request_id", 64},
    {"jackpot.v1.RebaseRoundCounterRequest.request_id", 64},
    {"jackpot.v1.RebaseRoundCounterRequest.table_id", 64},
    {"jackpot.v1.RebaseRoundCounterRequest.reason", 512},
    {"jackpot.v1.SupervisorVoidRoundRequest.request_id", 64},
    {"jackpot.v1.SupervisorVoidRoundRequest.table_id", 64},
    {"jackpot.v1.SupervisorVoidRoundRequest.reason", 512},
    {"jackpot.v1.ReconciliationReportRequest.link_ids", 64},
    {"jackpot.v1.RejectPayoutRequest.reason", 512},
    {"jackpot.v1.RejectPayoutRequest.request_id", 64},
    {"jackpot.v1.ApprovePayoutRequest.request_id", 64},
    {"jackpot.v1.WatchPendingPayoutsRequest.link_ids", 64},
    {"jackpot.v1.WatchMetersRequest.sign_id", 64},
    {"jackpot.v1.WatchMetersRequest.link_ids", 64},
    {"jackpot.v1.WatchMetersRequest.table_ids", 64},
};

// A field inside a request: the fields leading to it from the request, the last one the field.
using FieldPath = std::vector<const FieldDescriptor*>;

struct RequestField {
  const Descriptor* request;
  FieldPath path;
};

std::string path_name(const FieldPath& path) {
  std::string name;
  for (const FieldDescriptor* field : path) {
    name += (name.empty() ? "" : ".") + field->name();
  }
  return name;
}

void collect_fields(const Descriptor* request, const Descriptor* message, FieldPath& path,
                    std::vector<RequestField>& out) {
  for (int i = 0; i < message->field_count(); ++i) {
    const FieldDescriptor* field = message->field(i);
    path.push_back(field);
    out.push_back({request, path});
    if (field->message_type() != nullptr && path.size() < 8) {
      collect_fields(request, field->message_type(), path, out);
    }
    path.pop_back();
  }
}

// Every field of every request message of every jackpot.v1 service, however deeply nested.
std::vector<RequestField> every_request_field() {
  std::vector<RequestField> fields;
  for (const google::protobuf::FileDescriptor* file :
       {v1::OpenRoundRequest::descriptor()->file(), v1::ListMetersRequest::descriptor()->file(),
        v1::ApprovePayoutRequest::descriptor()->file(),
        v1::WatchMetersRequest::descriptor()->file()}) {
    for (int s = 0; s < file->service_count(); ++s) {
      for (int m = 0; m < file->service(s)->method_count(); ++m) {
        const Descriptor* request = file->service(s)->method(m)->input_type();
        FieldPath path;
        collect_fields(request, request, path, fields);
      }
    }
  }
  return fields;
}

std::unique_ptr<Message> new_message(const Descriptor* type) {
  return std::unique_ptr<Message>(
      google::protobuf::MessageFactory::generated_factory()->GetPrototype(type)->New());
}

// The message that holds the last field of `path` inside `request`, creating the messages on
// the way (one entry of each repeated one).
Message* holder_of(Message& request, const FieldPath& path) {
  Message* message = &request;
  for (std::size_t i = 0; i + 1 < path.size(); ++i) {
    const auto* reflection = message->GetReflection();
    message = path[i]->is_repeated() ? reflection->AddMessage(message, path[i])
                                     : reflection->MutableMessage(message, path[i]);
  }
  return message;
}

// `request` with the string field at `path` set to `bytes` bytes.
std::unique_ptr<Message> with_string(const Descriptor* request, const FieldPath& path,
                                     std::size_t bytes) {
  auto message = new_message(request);
  Message* holder = holder_of(*message, path);
  const std::string text(bytes, 'x');
  if (path.back()->is_repeated()) {
    holder->GetReflection()->AddString(holder, path.back(), text);
  } else {
    holder->GetReflection()->SetString(holder, path.back(), text);
  }
  return message;
}

// `request` with `entries` default entries in the repeated field at `path`.
std::unique_ptr<Message> with_entries(const Descriptor* request, const FieldPath& path,
                                      std::size_t entries) {
  auto message = new_message(request);
  Message* holder = holder_of(*message, path);
  const auto* reflection = holder->GetReflection();
  for (std::size_t i = 0; i < entries; ++i) {
    switch (path.back()->cpp_type()) {
      case FieldDescriptor::CPPTYPE_STRING:
        reflection->AddString(holder, path.back(), "");
        break;
      case FieldDescriptor::CPPTYPE_MESSAGE:
        reflection->AddMessage(holder, path.back());
        break;
      case FieldDescriptor::CPPTYPE_UINT32:
        reflection->AddUInt32(holder, path.back(), 0);
        break;
      case FieldDescriptor::CPPTYPE_UINT64:
        reflection->AddUInt64(holder, path.back(), 0);
        break;
      case FieldDescriptor::CPPTYPE_INT64:
        reflection->AddInt64(holder, path.back(), 0);
        break;
      default:
        ADD_FAILURE() << path_name(path) << ": a repeated field of a type this test cannot fill";
        return message;
    }
  }
  return message;
}

TEST(RequestChecks, EveryStringFieldOfEveryRequestHasItsLimit) {
  std::size_t checked = 0;
  for (const RequestField& found : every_request_field()) {
    const FieldDescriptor* field = found.path.back();
    if (field->cpp_type() != FieldDescriptor::CPPTYPE_STRING) continue;
    const std::string where = found.request->name() + "." + path_name(found.path);
    const auto expected = kExpectedLimits.find(field->full_name());
    ASSERT_NE(expected, kExpectedLimits.end())
        << field->full_name() << " (in " << where
        << ") has no limit: add it to kStringFieldLimits in controller/api/request_checks.cc, to "
           "docs/limits.md and to kExpectedLimits here";
    EXPECT_EQ(string_field_limit(*field), expected->second) << field->full_name();

    EXPECT_EQ(request_problem(*with_string(found.request, found.path, expected->second)),
              std::nullopt)
        << where;
    const auto refused =
        request_problem(*with_string(found.request, found.path, expected->second + 1));
    ASSERT_TRUE(refused.has_value()) << where;
    EXPECT_NE(refused->find(std::to_string(expected->second + 1) + " bytes, more than the " +
                            std::to_string(expected->second) + " allowed"),
              std::string::npos)
        << *refused;
    EXPECT_NE(refused->find(field->name()), std::string::npos) << *refused;
    EXPECT_EQ(refused->find("xx"), std::string::npos) << "echoes the client's text: " << *refused;
    ++checked;
  }
  EXPECT_GE(checked, kExpectedLimits.size());
}

TEST(RequestChecks, EveryRepeatedFieldOfEveryRequestTakesAtMostTheEntryLimit) {
  std::size_t checked = 0;
  for (const RequestField& found : every_request_field()) {
    if (!found.path.back()->is_repeated()) continue;
    const std::string where = found.request->name() + "." + path_name(found.path);
    EXPECT_EQ(request_problem(*with_entries(found.request, found.path, kMaxRepeatedEntries)),
              std::nullopt)
        << where;
    const auto refused =
        request_problem(*with_entries(found.request, found.path, kMaxRepeatedEntries + 1));
    ASSERT_TRUE(refused.has_value()) << where;
    EXPECT_NE(refused->find("has 257 entries, more than the 256 allowed"), std::string::npos)
        << *refused;
    ++checked;
  }
  EXPECT_GE(checked, 10U);
}

TEST(RequestChecks, NamesTheFieldAsTheRequestReadsIt) {
  v1::SettleRoundRequest settle;
  settle.set_table_id("T1");
  settle.add_seats()->mutable_cards()->add_cards("As");
  auto* seat = settle.add_seats();
  seat->mutable_cards()->add_cards("Kd");
  seat->mutable_cards()->add_cards("10hh");
  EXPECT_EQ(request_problem(settle), "seats[1].cards.cards[1] is 4 bytes, more than the 3 allowed");

  settle.clear_seats();
  settle.add_seats()->set_keyed_hand("Full House");
  EXPECT_EQ(request_problem(settle), std::nullopt);
  settle.mutable_seats(0)->set_keyed_hand(std::string(65, 'F'));
  EXPECT_EQ(request_problem(settle), "seats[0].keyed_hand is 65 bytes, more than the 64 allowed");

  v1::VoidRoundRequest void_round;
  void_round.set_table_id("T1");
  void_round.set_reason(std::string(3 << 20, 'r'));
  EXPECT_EQ(request_problem(void_round), "reason is 3145728 bytes, more than the 512 allowed");

  v1::LockWagersRequest lock;
  for (int i = 0; i < 300; ++i) lock.add_wagers()->set_link_id("L");
  EXPECT_EQ(request_problem(lock), "wagers has 300 entries, more than the 256 allowed");
}

TEST(RequestChecks, TheLargestRealisticRequestIsFarBelowTheMessageLimit) {
  // The largest table (20 seats) wagering on 8 links with the longest ids, and settling with
  // seven three-byte cards per seat plus five community and five link cards.
  v1::LockWagersRequest lock;
  lock.set_table_id(std::string(kMaxIdBytes, 't'));
  lock.set_round_id(UINT64_MAX);
  for (std::uint32_t seat = 1; seat <= 20; ++seat) {
    for (int link = 0; link < 8; ++link) {
      auto* wager = lock.add_wagers();
      wager->set_seat(seat);
      wager->set_link_id(std::string(kMaxIdBytes, 'l'));
      wager->set_amount_cents(INT64_MAX);
    }
  }
  v1::SettleRoundRequest settle;
  settle.set_table_id(std::string(kMaxIdBytes, 't'));
  settle.set_round_id(UINT64_MAX);
  for (std::uint32_t seat = 1; seat <= 20; ++seat) {
    auto* hand = settle.add_seats();
    hand->set_seat(seat);
    for (int card = 0; card < 7; ++card) hand->mutable_cards()->add_cards("10h");
  }
  for (int card = 0; card < 5; ++card) {
    settle.add_community_cards("10s");
    settle.add_link_cards("10d");
  }
  EXPECT_EQ(request_problem(lock), std::nullopt);
  EXPECT_EQ(request_problem(settle), std::nullopt);
  const std::size_t largest = std::max(lock.ByteSizeLong(), settle.ByteSizeLong());
  std::printf("largest realistic request: LockWagers %zu bytes, SettleRound %zu bytes\n",
              lock.ByteSizeLong(), settle.ByteSizeLong());
  EXPECT_LT(largest * 2, static_cast<std::size_t>(kMaxReceiveMessageBytes));
}

TEST(RequestChecks, DocsListEveryStringFieldWithItsLimit) {
  std::ifstream file(std::string(JACKPOTD_SOURCE_DIR) + "/docs/limits.md");
  ASSERT_TRUE(file) << "docs/limits.md";
  std::stringstream text;
  text << file.rdbuf();
  for (const auto& [name, limit] : kExpectedLimits) {
    // A row: | `VoidRoundRequest.reason` ... | 512 bytes ... | status |
    const std::string field = "| `" + name.substr(std::string("jackpot.v1.").size()) + "`";
    const std::size_t row = text.str().find(field);
    ASSERT_NE(row, std::string::npos) << "docs/limits.md has no row for " << field;
    const std::string line = text.str().substr(row, text.str().find('\n', row) - row);
    EXPECT_NE(line.find("| " + std::to_string(limit) + " bytes"), std::string::npos) << line;
  }
}

}  // namespace
}  // namespace jackpot
