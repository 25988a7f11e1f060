#pragma once

namespace jackpot {

// 128-bit intermediates for exact products and sums of int64 micros. `__extension__` marks the
// GCC/Clang extension as intended under -Wpedantic.
__extension__ typedef __int128 Int128;

}  // namespace jackpot
