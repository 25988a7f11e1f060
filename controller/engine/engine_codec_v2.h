#pragma once

// The reader of the hand-written format that journals kept requests and answers in before the
// Protobuf one (engine_codec.h): versions 1 and 2, each message a version byte and then its
// members in declaration order (numbers as varints, signed ones zig-zag, texts and vectors by
// length, optionals by a presence flag). jackpotd no longer writes it (tests do, with
// tests/support/codec_v2_writer.h); it reads it so that every journal kept before still replays.

#include <optional>
#include <string_view>

#include "controller/engine/engine_types.h"

namespace jackpot {

// The message `bytes` hold, if they start with version 1 or 2 and are exactly what that
// version's writer wrote (one spelling per value: no over-long number, no flag other than 0 or
// 1, no unknown enum value, nothing after the end); nothing otherwise. Version 1 lacks each
// award's and each Must-Hit-By hit's payout state, which decode empty.
template <typename T>
std::optional<T> decode_version_1_or_2(std::string_view bytes);

}  // namespace jackpot
