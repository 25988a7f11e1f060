// libFuzzer target: arbitrary command sequences against the round engine
// (controller/engine/engine.h).
//
// An engine on the small fixed floor of engine_fuzz_floor.textproto, with a stopped clock and a
// seeded deterministic random source, runs the commands the input spells (engine_commands.h):
// opens, locks, settlements (dealt or keyed hands, boards, link cards), voids, approvals,
// rejections, link status changes, repeats of earlier commands and snapshot/restore round trips,
// with fuzz-chosen tables, rounds, seats, wagers, cards and hands. Checked after every command
// (engine_session.cc):
//   - check_invariants() finds nothing (every link's ledger, awards_payable = pending payouts);
//   - a refused command changed nothing (snapshot() before and after) and recorded nothing;
//   - a round command that succeeded answers its first answer when repeated at once, recording
//     and changing nothing; repeated later, it answers its first answer again, or is refused
//     only when its round has left memory (a table keeps its last two rounds);
//   - restore(snapshot()) succeeds and its snapshot() is the same (on RESTORE, and at the end).
#include <cstddef>
#include <cstdint>

#include "tests/fuzz/engine_session.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  jackpot::fuzz::run_session(data, size);
  return 0;
}
