#pragma once

// What jackpot-sign prints, as a pure function of the latest snapshot
// (tests/unit/sign_text_test.cc): a table of links and levels, the hits on show and each watched
// table's Dynamic Pays.

#include <cstdint>
#include <string>

#include "jackpot/v1/sign.pb.h"

namespace jackpot::tools {

// "$1,234.56" for 123,456 cents.
std::string dollars(std::int64_t cents);

struct SignScreen {
  std::string who;  // "sign/lobby at 127.0.0.1:50051"
  double heard_seconds_ago = 0;
  bool lost = false;        // Nothing heard for longer than the sign waits: every link UNAVAILABLE.
  std::string lost_reason;  // Why, for the top line.
};

// The screen for `snapshot`: a header line, one line per level (link, status, level, amount,
// Must-Hit-By amount, hidden trigger's commitment prefix), then HITS and TABLES when there are
// any. Lines end with '\n'; no terminal control codes.
std::string sign_screen(const ::jackpot::v1::MeterSnapshot& snapshot, const SignScreen& screen);

}  // namespace jackpot::tools
