#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "controller/engine/engine_config.h"
#include "controller/hands/paytable.h"
#include "meters/result.h"

namespace jackpot {

// Parses and validates a floor (links and tables) in Protobuf text format
// (jackpot.config.v1.Floor, proto/jackpot/config/v1/floor.proto) against the loaded paytables.
// `origin` names the text in errors (its file name). Every error is "origin:line:column: what is
// wrong", at the field or entry concerned.
//
// Refused first, all reported together: syntax errors, unknown fields and enum values (only the
// first of these: the parser stops there); links or tables without an id or with an id used
// twice; amounts that Money::parse refuses (naming the field); a table without a game, with
// seats outside 1..20, a link that is not on the floor or listed twice, a paytable that is not
// loaded. When none of those is found, the configuration is checked with validate(EngineConfig)
// and each of its messages is prefixed with the position of the link or table it names.
//
// Defaults for fields left out: base wager "1.00", sequential hits, spades, uniform weights,
// approval threshold "0.00" (every payout waits for a supervisor), no dual approval, no ceiling,
// no Must-Hit-By, trigger at the amount, community source the table's board (none at a High
// Card Flush table).
Result<EngineConfig, std::vector<std::string>> load_floor(std::string_view text,
                                                          std::string_view origin,
                                                          const std::vector<Paytable>& paytables);

// What a daemon refuses to start with although load_floor accepts it (an empty or comments-only
// text is a valid, empty Floor): a floor without a link or without a table would serve nothing.
// One message per problem, "origin: ..."; none when the floor can be served.
std::vector<std::string> unservable_floor(const EngineConfig& floor, std::string_view origin);

}  // namespace jackpot
