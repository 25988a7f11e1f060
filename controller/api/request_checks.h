// The size checks every request passes before it reaches the engine: each string field within
// its byte limit, each repeated field within kMaxRepeatedEntries
// (controller/limits/request_limits.h).
//
// One table (request_checks.cc) names the limit of every string field of every request message
// the services take, by the field's full name; tests/unit/request_checks_test.cc fails when a
// request type or a string field is not in it. docs/limits.md lists the same table for clients.
// Only the gRPC adapters and the request fuzz target use this: it sees the API's messages.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

namespace google::protobuf {
class FieldDescriptor;
class Message;
}  // namespace google::protobuf

namespace jackpot {

// Why `request` is too large to be served (INVALID_ARGUMENT), naming the field and its limit and
// echoing no client text, e.g. "reason is 3145728 bytes, more than the 512 allowed"; nothing when
// every field is within its limit. Works on any jackpot.v1 request message (and the messages it
// nests), e.g. request_problem(open_round_request).
std::optional<std::string> request_problem(const google::protobuf::Message& request);

// The byte limit of a string field of a request message (by full name, e.g.
// "jackpot.v1.VoidRoundRequest.reason"), or nothing for a field the table does not name, which
// request_problem then holds to kMaxIdBytes, the strictest limit.
std::optional<std::size_t> string_field_limit(const google::protobuf::FieldDescriptor& field);

}  // namespace jackpot
