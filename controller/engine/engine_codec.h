#pragma once

// The first request and answer of every table command in the form the journal keeps them, so
// that a replay after a restart returns the first answer unchanged: a version byte (3), the
// message's length (a varint), then the engine value as deterministic Protobuf
// (proto/jackpot/journal/v1/commands.proto). Journals written before hold versions 1 and 2, a
// hand-written format that is still read (engine_codec_v2.h). Migration 0020 came with version 3:
// a jackpotd from before refuses a database migrated past what it knows, and the migration's
// check refuses a new row in any other version.
//
// Kept by the engine for replays and read back for its rules (the open's Dynamic Pay selection,
// the lock's payout states), so the messages hold the engine's exact values (micros), not the
// API's (whole cents). The strict decode relies on the linked Protobuf library writing a value
// as it wrote it before; tests/unit/engine_codec_test.cc pins the bytes of every message.

#include <optional>
#include <string>
#include <string_view>

#include "controller/engine/engine_types.h"

namespace jackpot {

// decode() reads the current version and both older ones (members an older version lacks decode
// empty), and returns nothing for anything else: another or no version byte, a length that is
// not the message's (a cut or lengthened row), bytes that do not parse, and bytes that parse but
// that encode() would not have written (fields out of order or repeated, a default value written
// out, a number spelt longer than it needs, an unknown field or enum value). So whatever decodes
// in the current version re-encodes to the same bytes, corrupt bytes rarely pass for a value,
// and whatever decodes in an older version re-encodes in the current one to bytes that decode to
// the same value.
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
