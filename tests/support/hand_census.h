#pragma once

#include <array>
#include <cstdint>

namespace jackpot::testing {

// How many of all C(52, 7) seven-card hands fall in each Category (index = category), counted
// on `threads` threads. Shared by the census test and the census benchmark.
std::array<std::uint64_t, 10> seven_card_census(unsigned threads);

}  // namespace jackpot::testing
