#include "meters/invariant.h"

#include <cstdio>
#include <cstdlib>

namespace jackpot {

void invariant_failed(const char* expression, std::string_view message, const char* file,
                      int line) {
  std::fprintf(stderr, "jackpotd: invariant broken at %s:%d: %s (%.*s)\n", file, line, expression,
               static_cast<int>(message.size()), message.data());
  std::fflush(stderr);
  std::abort();
}

}  // namespace jackpot
