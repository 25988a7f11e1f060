#pragma once

// The engine_fuzz target's work, apart from libFuzzer's entry point so that fuzz_seeds can run
// the same sessions to write the codec's seeds and to show what a seed does.

#include <cstddef>
#include <cstdint>
#include <vector>

#include "journal/records.h"

namespace jackpot::fuzz {

// What a session did, when asked for.
struct SessionLog {
  bool trace = false;                 // Each command and its outcome on stderr.
  std::vector<AnswerRecord> answers;  // Every request and first answer kept for replays.
};

// Runs the commands `data` spells (engine_commands.h) against an engine on the fuzz floor with
// every check of engine_fuzz; a broken check aborts the process with what broke.
void run_session(const std::uint8_t* data, std::size_t size, SessionLog* log = nullptr);

}  // namespace jackpot::fuzz
