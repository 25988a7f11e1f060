// libFuzzer target: the paytable text loader (controller/hands/paytable_loader.h) on arbitrary
// text.
//
// Checked for every input: the loader either refuses with a message that names a position
// ("origin:line:column: what"), or returns a paytable that keeps the loader's promises: an id,
// rows with labels and hands the game can make, PERCENT rows within 1..100 % with a level,
// and a Dynamic Pay selection that fits its DYNAMIC rows. Loading the same text twice under two
// origins is refused as a duplicate id.
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "controller/hands/paytable.h"
#include "controller/hands/paytable_loader.h"
#include "tests/fuzz/fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jackpot;
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  const auto loaded = load_paytable(text, "paytable");
  if (!loaded) {
    if (!fuzz::names_position(loaded.error().message, "paytable")) {
      invariant_failed("names_position(message)",
                       "a paytable error names no position: " + loaded.error().message, __FILE__,
                       __LINE__);
    }
    return 0;
  }
  const Paytable& paytable = *loaded;
  JACKPOT_INVARIANT(!paytable.id.empty(), "a loaded paytable has an id");
  std::uint32_t dynamic_rows = 0;
  for (const PaytableRow& row : paytable.rows) {
    JACKPOT_INVARIANT(!row.label.empty(), "every row has a label");
    JACKPOT_INVARIANT(game_can_make(paytable.rule, row.hand), "every row's hand can be made");
    if (row.kind == PayKind::dynamic) ++dynamic_rows;
    if (row.kind == PayKind::percent) {
      JACKPOT_INVARIANT(row.percent >= 1 && row.percent <= 100, "a percentage is 1..100");
      JACKPOT_INVARIANT(row.level >= 1, "a PERCENT row names its level");
    }
  }
  JACKPOT_INVARIANT(paytable.dynamic_min_selected <= paytable.dynamic_max_selected,
                    "the Dynamic Pay counts are in order");
  JACKPOT_INVARIANT(paytable.dynamic_max_selected <= dynamic_rows,
                    "no more Dynamic Pays are selected than there are DYNAMIC rows");

  const std::vector<PaytableSource> twice = {{"a", std::string(text)}, {"b", std::string(text)}};
  JACKPOT_INVARIANT(!load_paytables(twice).ok(), "two paytables with one id are refused");
  return 0;
}
