#pragma once

// A seeded whole-system simulation in the spirit of TigerBeetle's VOPR: the real Engine behind
// the real sequencer (EngineHost) over an in-memory journal (tests/sim/journal.h) that fails
// commits, loses answers and crashes at seeded points; random floors, rounds, voids, keyed and
// dealt hands, approvals and rejections, operators' meter adjustments, restarts and floor edits
// between restarts. After every
// step the state is checked against rules written from docs/architecture.md and a small
// reference model of this file's own (its own hand evaluator, paytables and ledger sums), not
// the engine's code. One seed decides everything: a failing seed replays exactly.

#include <cstdint>
#include <string>
#include <vector>

namespace jackpot::sim {

struct Options {
  std::uint32_t steps = 300;  // Commands and events per seed.
  bool trace = false;         // Print every step.
};

struct Stats {
  std::uint64_t commands = 0;
  std::uint64_t faults = 0;
  std::uint64_t crashes = 0;
  std::uint64_t restarts = 0;
  std::uint64_t floor_edits = 0;
  std::uint64_t floors_refused = 0;
  std::uint64_t settles = 0;
  std::uint64_t voids = 0;
  std::uint64_t supervisor_voids = 0;  // Supervisors' voids of hit rounds, requested or done.
  std::uint64_t percent_hits = 0;
  std::uint64_t must_hit_by_hits = 0;
  std::uint64_t approvals = 0;
  std::uint64_t rejections = 0;
  std::uint64_t replays = 0;
  std::uint64_t adjustments = 0;          // Operators' meter adjustments applied,
  std::uint64_t adjustments_refused = 0;  // and refused by the rules (adjustment.h).
  std::uint64_t secrecy_checks = 0;       // Steps that checked a hidden point's secrecy.
};

struct Outcome {
  bool passed = true;
  std::string rule;     // The rule broken, a short tag (see simulation.cc's kRule* names).
  std::string failure;  // What was seen.
  std::uint32_t step = 0;
  std::vector<std::string> trace;  // The last steps before the failure.
  Stats stats;
};

Outcome simulate(std::uint64_t seed, const Options& options);

}  // namespace jackpot::sim
