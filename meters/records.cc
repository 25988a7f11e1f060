#include "meters/records.h"

namespace jackpot {

void Records::clear() {
  transfers.clear();
  rounds.clear();
  wagers.clear();
  hands.clear();
  draws.clear();
  payouts.clear();
  answers.clear();
  dynamic_pays.clear();
  hits.clear();
  link_statuses.clear();
}

bool Records::empty() const {
  return transfers.empty() && rounds.empty() && wagers.empty() && hands.empty() && draws.empty() &&
         payouts.empty() && answers.empty() && dynamic_pays.empty() && hits.empty() &&
         link_statuses.empty();
}

}  // namespace jackpot
