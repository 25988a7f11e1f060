#include "meters/records.h"

namespace jackpot {

void Records::clear() {
  transfers.clear();
  rounds.clear();
  wagers.clear();
  hands.clear();
  draws.clear();
  payouts.clear();
}

bool Records::empty() const {
  return transfers.empty() && rounds.empty() && wagers.empty() && hands.empty() && draws.empty() &&
         payouts.empty();
}

}  // namespace jackpot
