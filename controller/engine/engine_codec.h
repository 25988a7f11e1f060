#pragma once

// The first request and answer of every table command in the form the journal keeps them, so
// that a replay after a restart returns the first answer unchanged: a version byte (3), then the
// engine value as deterministic Protobuf (proto/jackpot/journal/v1/commands.proto). Journals
// written before hold versions 1 and 2, a hand-written format that is still read
// (engine_codec_v2.h).

#include <optional>
#include <string>
#include <string_view>

#include "controller/engine/engine_types.h"

namespace jackpot {

// decode() reads the current version and both older ones (members an older version lacks decode
// empty), and returns nothing for anything else: another or no version byte, bytes that do not
// parse, and bytes that parse but that encode() would not have written (fields out of order or
// repeated, a default value written out, a number spelt longer than it needs, an unknown field
// or enum value). So whatever decodes in the current version re-encodes to the same bytes (a
// kept request compared by its bytes is compared by its value), and whatever decodes in an older
// one re-encodes in the current version to bytes that decode to the same value.
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
