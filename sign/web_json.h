#pragma once

// What the web sign's pages read from /sign/events: a SignState as JSON, for the links and tables
// a page watches, and the tables' placards for a page's first snapshot. Plain text building, no
// I/O: the daemon's HTTP adapter sends it as Server-Sent Events.

#include <string>

#include "sign/sign_board.h"
#include "sign/sign_state.h"

namespace jackpot::sign {

// {"sequence":"N","links":[...],"tables":[...],"hits":[...]} and, with `placards`,
// "paytables":[...] of the watched tables. The sequence is a string (it passes 2^53); amounts are
// whole cents. Strings are escaped for JSON (control characters, quotes, backslashes, and "<"
// so that nothing can close a script).
std::string state_json(const SignState& state, const Watch& watch,
                       const SignFloor* placards = nullptr);

// A JSON string literal of `text`, quotes included.
std::string json_string(std::string_view text);

// One Server-Sent Event: "event: <name>\n", each line of `data` as "data: <line>\n", then a blank
// line.
std::string server_sent_event(std::string_view name, std::string_view data);

}  // namespace jackpot::sign
