#pragma once

// The line-by-line text files an operator writes for jackpotd (the roster, the revocation list):
// their lines, numbered from 1 for the refusals that name them, and ASCII case folding.

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace jackpot {

struct NumberedLine {
  std::size_t number = 0;  // From 1.
  std::string_view text;   // Without spaces, tabs and a carriage return at either end.
};

// The lines of `text` that are not blank once trimmed.
std::vector<NumberedLine> nonblank_lines(std::string_view text);

// `text` without spaces, tabs and carriage returns at either end.
std::string_view trimmed(std::string_view text);

// `text` in ASCII lower case.
std::string ascii_lower(std::string_view text);

}  // namespace jackpot
