#pragma once

// Approving and rejecting payouts in tests that are not about request ids: each decision gets
// the request id "approve-<payout>-<supervisor>" or "reject-<payout>-<supervisor>", so that a
// retry of the same decision (after a lost answer) repeats its id, as a supervisor's client
// would.

#include <string>

#include "controller/engine/engine.h"

namespace jackpot::testing {

inline Result<Payout, EngineFailure> approve_payout(Engine& engine, PayoutId payout,
                                                    const std::string& supervisor, Records& out) {
  return engine.decide_payout({"approve-" + std::to_string(payout.value()) + "-" + supervisor,
                               payout, PayoutDecision::approve, ""},
                              supervisor, out);
}

inline Result<Payout, EngineFailure> reject_payout(Engine& engine, PayoutId payout,
                                                   const std::string& supervisor,
                                                   const std::string& reason, Records& out) {
  return engine.decide_payout({"reject-" + std::to_string(payout.value()) + "-" + supervisor,
                               payout, PayoutDecision::reject, reason},
                              supervisor, out);
}

}  // namespace jackpot::testing
