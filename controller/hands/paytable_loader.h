#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "controller/hands/paytable.h"
#include "meters/result.h"

namespace jackpot {

// A paytable file that cannot be used; `message` is "origin:line:column: what is wrong".
struct PaytableError {
  std::string message;
};

// Parses and validates one paytable in Protobuf text format (jackpot.config.v1.Paytable).
// `origin` names the text in errors (its file name). Refused: syntax errors and unknown fields
// or hands; a missing id, game, base wager or label; a duplicate row; a hand the game cannot
// make; two labels with the same hand_key() (a dealer keying one would mean either row), a
// label that keys as another hand's name or keys nothing; a PERCENT row without a level or
// outside 1..100 %; a DYNAMIC row without exactly ten
// options; amounts that are not whole cents; a level used both for percentages and as a
// Must-Hit-By level; a Dynamic Pay selection that does not fit the DYNAMIC rows.
Result<Paytable, PaytableError> load_paytable(std::string_view text, std::string_view origin);

// A named text, e.g. a file's name and content.
struct PaytableSource {
  std::string origin;
  std::string text;
};

// Loads every source; also refuses two paytables with the same id. All errors are returned.
Result<std::vector<Paytable>, std::vector<PaytableError>> load_paytables(
    const std::vector<PaytableSource>& sources);

// The paytable files shipped in controller/hands/paytables/, built into the binary.
const std::vector<PaytableSource>& embedded_paytables();

}  // namespace jackpot
