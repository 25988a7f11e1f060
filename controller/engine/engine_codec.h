#pragma once

// A compact, versioned binary form of the engine's requests and answers, so that storage can keep
// the first answer to every command and a replay after a restart returns it unchanged.

#include <optional>
#include <string>
#include <string_view>

#include "controller/engine/engine_types.h"

namespace jackpot {

// Each encode() starts with a format version byte. decode() reads the current version and every
// older one that journals may hold (members an older version lacks decode empty); it refuses
// any other version, a truncated or over-long input, and any bytes encode() would not have
// written (a number spelt longer than it needs or wider than 64 bits, a flag other than 0 or 1,
// an unknown enum value), and returns nothing then. So whatever decodes in the current version
// re-encodes to the same bytes, and whatever decodes in an older one re-encodes (in the current
// version) to bytes that decode to the same value.
std::string encode(const OpenRoundRequest& value);
std::string encode(const OpenRoundAnswer& value);
std::string encode(const LockWagersRequest& value);
std::string encode(const LockWagersAnswer& value);
std::string encode(const SettleRoundRequest& value);
std::string encode(const SettleRoundAnswer& value);
std::string encode(const VoidRoundRequest& value);
std::string encode(const VoidRoundAnswer& value);

// A command's request and answer, each encoded as encode() does, in one shared buffer.
EncodedCommand encode_command(const OpenRoundRequest& request, const OpenRoundAnswer& answer);
EncodedCommand encode_command(const LockWagersRequest& request, const LockWagersAnswer& answer);
EncodedCommand encode_command(const SettleRoundRequest& request, const SettleRoundAnswer& answer);
EncodedCommand encode_command(const VoidRoundRequest& request, const VoidRoundAnswer& answer);

template <typename T>
std::optional<T> decode(std::string_view bytes);

}  // namespace jackpot
