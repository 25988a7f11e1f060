// libFuzzer target: the floor text loader (controller/engine/floor_loader.h) on arbitrary text,
// against the shipped paytables.
//
// Checked for every input: the loader either refuses with messages that each name a position
// ("origin:line:column: what"), or returns a configuration that validate() accepts and that an
// engine can run: Engine::create() succeeds, and so does restoring its own snapshot.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "controller/engine/engine.h"
#include "controller/engine/floor_loader.h"
#include "meters/random.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jackpot;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto& paytables = fuzz::shipped_paytables();
  const auto loaded = load_floor(text, "floor", paytables);
  if (!loaded) {
    JACKPOT_INVARIANT(!loaded.error().empty(), "a refused floor says why");
    for (const std::string& message : loaded.error()) {
      if (!fuzz::names_position(message, "floor")) {
        invariant_failed("names_position(message)", "a floor error names no position: " + message,
                         __FILE__, __LINE__);
      }
    }
    return 0;
  }
  JACKPOT_INVARIANT(validate(*loaded, paytables).empty(), "a loaded floor is valid");
  fuzz::StoppedClock clock;
  SplitMix64 random(size);
  Records records;
  auto engine = Engine::create(*loaded, paytables, clock, random, records);
  if (!engine) {
    invariant_failed("Engine::create(floor)",
                     "a loaded floor does not run: " + engine.error().front(), __FILE__, __LINE__);
  }
  JACKPOT_INVARIANT(!(*engine)->check_invariants(), "a new engine keeps the invariants");
  const EngineSnapshot snapshot = (*engine)->snapshot();
  auto restored = Engine::restore(*loaded, paytables, clock, random, snapshot);
  JACKPOT_INVARIANT(restored.ok(), "a new engine restores from its own snapshot");
  JACKPOT_INVARIANT((*restored)->snapshot() == snapshot, "a restored engine is the same engine");
  return 0;
}
