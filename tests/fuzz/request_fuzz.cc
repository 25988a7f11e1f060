// libFuzzer target: the decoding and size checks every RPC's request passes before the engine
// (controller/api/request_checks.h), as the gRPC adapters run them.
//
// The first byte picks the RPC (every method of every jackpot.v1 service, by its request type);
// the rest are the request's bytes. Checked for every input: parsing either refuses or yields a
// message; request_problem() answers the same for the message and for its bytes written and
// parsed again; its refusal names a field, is short and printable, and never repeats a client
// string of more than a few bytes; an accepted request has every string within its limit and
// every repeated field within kMaxRepeatedEntries; quote_prefix() of every string is short.
#include <google/protobuf/descriptor.h>
#include <google/protobuf/message.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "controller/api/request_checks.h"
#include "controller/limits/request_limits.h"
#include "jackpot/v1/admin.pb.h"
#include "jackpot/v1/sign.pb.h"
#include "jackpot/v1/supervisor.pb.h"
#include "jackpot/v1/table.pb.h"
#include "meters/invariant.h"

namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::Message;

const std::vector<const Message*>& request_prototypes() {
  static const std::vector<const Message*> prototypes = [] {
    std::vector<const Message*> out;
    for (const auto* file : {jackpot::v1::OpenRoundRequest::descriptor()->file(),
                             jackpot::v1::ListMetersRequest::descriptor()->file(),
                             jackpot::v1::ApprovePayoutRequest::descriptor()->file(),
                             jackpot::v1::WatchMetersRequest::descriptor()->file()}) {
      for (int s = 0; s < file->service_count(); ++s) {
        for (int m = 0; m < file->service(s)->method_count(); ++m) {
          out.push_back(google::protobuf::MessageFactory::generated_factory()->GetPrototype(
              file->service(s)->method(m)->input_type()));
        }
      }
    }
    return out;
  }();
  return prototypes;
}

// Every string of `message`, however nested, with its field; and whether any field is past a
// limit, computed here independently of request_problem().
void walk(const Message& message, std::vector<std::string>& strings, bool& past_a_limit) {
  const auto* reflection = message.GetReflection();
  std::vector<const FieldDescriptor*> fields;
  reflection->ListFields(message, &fields);
  for (const FieldDescriptor* field : fields) {
    const int count = field->is_repeated() ? reflection->FieldSize(message, field) : 1;
    if (field->is_repeated() && static_cast<std::size_t>(count) > jackpot::kMaxRepeatedEntries) {
      past_a_limit = true;
    }
    for (int i = 0; i < count; ++i) {
      if (field->cpp_type() == FieldDescriptor::CPPTYPE_STRING) {
        const std::string value = field->is_repeated()
                                      ? reflection->GetRepeatedString(message, field, i)
                                      : reflection->GetString(message, field);
        const auto limit = jackpot::string_field_limit(*field);
        JACKPOT_INVARIANT(limit.has_value(), "every string field of a request has its limit");
        if (value.size() > *limit) past_a_limit = true;
        strings.push_back(value);
      } else if (field->cpp_type() == FieldDescriptor::CPPTYPE_MESSAGE) {
        walk(field->is_repeated() ? reflection->GetRepeatedMessage(message, field, i)
                                  : reflection->GetMessage(message, field),
             strings, past_a_limit);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const auto& prototypes = request_prototypes();
  const Message& prototype = *prototypes[data[0] % prototypes.size()];
  const std::unique_ptr<Message> request(prototype.New());
  if (!request->ParseFromArray(data + 1, static_cast<int>(size - 1))) return 0;

  const auto problem = jackpot::request_problem(*request);
  std::vector<std::string> strings;
  bool past_a_limit = false;
  walk(*request, strings, past_a_limit);
  JACKPOT_INVARIANT(problem.has_value() == past_a_limit,
                    "request_problem refuses exactly the requests with a field past its limit");

  const std::unique_ptr<Message> again(prototype.New());
  JACKPOT_INVARIANT(again->ParseFromString(request->SerializeAsString()),
                    "a parsed request parses again from its own bytes");
  JACKPOT_INVARIANT(jackpot::request_problem(*again) == problem,
                    "the checks answer the same for the same request");

  if (problem) {
    JACKPOT_INVARIANT(!problem->empty() && problem->size() < 200, "a refusal is short");
    for (const char c : *problem) {
      JACKPOT_INVARIANT(c >= 0x20 && c < 0x7f, "a refusal is printable ASCII");
    }
    JACKPOT_INVARIANT(problem->find("allowed") != std::string::npos, "a refusal names its limit");
    for (const std::string& text : strings) {
      // A refusal is a field path and two numbers, under 100 bytes: a longer client string
      // found in it can only be an echo.
      if (text.size() >= 100) {
        JACKPOT_INVARIANT(problem->find(text) == std::string::npos,
                          "a refusal does not echo the client's text");
      }
    }
  }
  for (const std::string& text : strings) {
    const std::string quoted = jackpot::quote_prefix(text);
    JACKPOT_INVARIANT(quoted.size() <= 4 * jackpot::kEchoPrefixBytes + 40,
                      "an echoed client string is short");
  }
  return 0;
}
