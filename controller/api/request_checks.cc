#include "controller/api/request_checks.h"

#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <array>
#include <string_view>
#include <utility>

#include "controller/limits/request_limits.h"

namespace jackpot {
namespace {

using google::protobuf::FieldDescriptor;
using google::protobuf::Message;
using google::protobuf::Reflection;

// Every string field of every request message, with its limit. A new string field in a request
// belongs here (tests/unit/request_checks_test.cc says so) and in docs/limits.md.
constexpr std::array<std::pair<std::string_view, std::size_t>, 31> kStringFieldLimits{{
    // TableService
    {"jackpot.v1.OpenRoundRequest.table_id", kMaxIdBytes},
    {"jackpot.v1.LockWagersRequest.table_id", kMaxIdBytes},
    {"jackpot.v1.SeatWager.link_id", kMaxIdBytes},
    {"jackpot.v1.SettleRoundRequest.table_id", kMaxIdBytes},
    {"jackpot.v1.SeatHand.keyed_hand", kMaxKeyedHandBytes},
    {"jackpot.v1.SeatCards.cards", kMaxCardBytes},
    {"jackpot.v1.SettleRoundRequest.community_cards", kMaxCardBytes},
    {"jackpot.v1.SettleRoundRequest.link_cards", kMaxCardBytes},
    {"jackpot.v1.VoidRoundRequest.table_id", kMaxIdBytes},
    {"jackpot.v1.VoidRoundRequest.reason", kMaxReasonBytes},
    {"jackpot.v1.WatchLinkStatusRequest.table_id", kMaxIdBytes},
    // AdminService
    {"jackpot.v1.ListMetersRequest.link_ids", kMaxIdBytes},
    {"jackpot.v1.SetLinkStatusRequest.link_id", kMaxIdBytes},
    {"jackpot.v1.SetLinkStatusRequest.reason", kMaxReasonBytes},
    {"jackpot.v1.AdjustMeterRequest.link_id", kMaxIdBytes},
    {"jackpot.v1.AdjustMeterRequest.reason", kMaxReasonBytes},
    {"jackpot.v1.AdjustMeterRequest.request_id", kMaxIdBytes},
    {"jackpot.v1.ReconciliationReportRequest.link_ids", kMaxIdBytes},
    // SupervisorService
    {"jackpot.v1.RebaseRoundCounterRequest.request_id", kMaxIdBytes},
    {"jackpot.v1.RebaseRoundCounterRequest.table_id", kMaxIdBytes},
    {"jackpot.v1.RebaseRoundCounterRequest.reason", kMaxReasonBytes},
    {"jackpot.v1.SupervisorVoidRoundRequest.request_id", kMaxIdBytes},
    {"jackpot.v1.SupervisorVoidRoundRequest.table_id", kMaxIdBytes},
    {"jackpot.v1.SupervisorVoidRoundRequest.reason", kMaxReasonBytes},
    // SupervisorService's payout RPCs and SignService (in the API, not served yet)
    {"jackpot.v1.RejectPayoutRequest.reason", kMaxReasonBytes},
    {"jackpot.v1.RejectPayoutRequest.request_id", kMaxIdBytes},
    {"jackpot.v1.ApprovePayoutRequest.request_id", kMaxIdBytes},
    {"jackpot.v1.WatchPendingPayoutsRequest.link_ids", kMaxIdBytes},
    {"jackpot.v1.WatchMetersRequest.sign_id", kMaxIdBytes},
    {"jackpot.v1.WatchMetersRequest.link_ids", kMaxIdBytes},
    {"jackpot.v1.WatchMetersRequest.table_ids", kMaxIdBytes},
}};

std::string too_long(const std::string& path, std::size_t bytes, std::size_t limit) {
  return path + " is " + std::to_string(bytes) + " bytes, more than the " + std::to_string(limit) +
         " allowed";
}

std::optional<std::string> message_problem(const Message& message, const std::string& prefix);

// The problem with one value of `field` (entry `index` when repeated), if any.
std::optional<std::string> value_problem(const Message& message, const FieldDescriptor& field,
                                         int index, const std::string& path) {
  const Reflection& reflection = *message.GetReflection();
  if (field.cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
    std::string scratch;
    const std::string& value =
        field.is_repeated()
            ? reflection.GetRepeatedStringReference(message, &field, index, &scratch)
            : reflection.GetStringReference(message, &field, &scratch);
    const std::size_t limit = string_field_limit(field).value_or(kMaxIdBytes);
    if (value.size() > limit) return too_long(path, value.size(), limit);
  } else if (field.cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
    const Message& nested = field.is_repeated()
                                ? reflection.GetRepeatedMessage(message, &field, index)
                                : reflection.GetMessage(message, &field);
    return message_problem(nested, path + ".");
  }
  return std::nullopt;
}

// Field paths read like the request: "seats[2].cards.cards[0]".
std::optional<std::string> message_problem(const Message& message, const std::string& prefix) {
  const Reflection& reflection = *message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection.ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    const std::string path = prefix + field->name();
    if (!field->is_repeated()) {
      if (auto problem = value_problem(message, *field, 0, path)) return problem;
      continue;
    }
    const auto entries = static_cast<std::size_t>(reflection.FieldSize(message, field));
    if (entries > kMaxRepeatedEntries) {
      return path + " has " + std::to_string(entries) + " entries, more than the " +
             std::to_string(kMaxRepeatedEntries) + " allowed";
    }
    for (int i = 0; i < static_cast<int>(entries); ++i) {
      if (auto problem = value_problem(message, *field, i, path + "[" + std::to_string(i) + "]")) {
        return problem;
      }
    }
  }
  return std::nullopt;
}

}  // namespace

std::optional<std::string> request_problem(const Message& request) {
  return message_problem(request, "");
}

std::optional<std::size_t> string_field_limit(const FieldDescriptor& field) {
  for (const auto& [name, limit] : kStringFieldLimits) {
    if (name == field.full_name()) return limit;
  }
  return std::nullopt;
}

}  // namespace jackpot
