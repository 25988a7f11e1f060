#pragma once

#include <string_view>

namespace jackpot {

// Reports a broken invariant (a programmer error, never an operator error) and aborts. Operator
// errors are returned as named results; this is for states the code must never reach.
[[noreturn]] void invariant_failed(const char* expression, std::string_view message,
                                   const char* file, int line);

}  // namespace jackpot

// Always-on check, also in release builds: money code must not continue from a broken state.
#define JACKPOT_INVARIANT(condition, message)                                 \
  do {                                                                        \
    if (!(condition)) [[unlikely]] {                                          \
      ::jackpot::invariant_failed(#condition, (message), __FILE__, __LINE__); \
    }                                                                         \
  } while (false)
