#include "sign/sign_state.h"

#include <algorithm>

namespace jackpot::sign {

std::int64_t shown_cents(Money meter, std::optional<Money> ceiling,
                         std::optional<Money> must_hit_by) {
  std::int64_t cents = std::max<std::int64_t>(meter.cents_floor(), 0);
  if (ceiling) cents = std::min(cents, ceiling->cents_floor());
  if (must_hit_by) cents = std::min(cents, must_hit_by->cents_floor());
  return std::max<std::int64_t>(cents, 0);
}

}  // namespace jackpot::sign
