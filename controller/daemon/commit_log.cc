#include "controller/daemon/commit_log.h"

#include <algorithm>
#include <string>

namespace jackpot {

namespace {

LogField text(std::string key, std::string value) { return {std::move(key), std::move(value)}; }
LogField number(std::string key, std::uint64_t value) {
  return {std::move(key), std::to_string(value), true};
}

std::vector<LogField> payout_fields(const Payout& payout) {
  std::vector<LogField> fields = {text("table", payout.table.value()),
                                  text("round", std::to_string(payout.round.value())),
                                  number("seat", payout.seat),
                                  text("link", payout.link.value()),
                                  text("payout", std::to_string(payout.id.value())),
                                  text("kind", std::string(to_string(payout.kind))),
                                  text("amount", payout.amount.to_string())};
  if (payout.level > 0) fields.insert(fields.begin() + 4, number("meter_level", payout.level));
  return fields;
}

// The command's rejection of `payout` that left it pending (a request to reject a payout that
// needs two supervisors), or nothing.
const PayoutDecisionRecord* rejection_request(const Records& records, const Payout& payout) {
  if (payout.state != PayoutState::pending) return nullptr;
  for (const PayoutDecisionRecord& decision : records.payout_decisions) {
    if (decision.payout == payout.id && decision.decision == PayoutDecision::reject) {
      return &decision;
    }
  }
  return nullptr;
}

}  // namespace

std::vector<LogEvent> commit_events(const Records& records) {
  std::vector<LogEvent> events;
  for (const SupervisorVoidRecord& voided : records.supervisor_voids) {
    events.push_back(
        {LogLevel::warning,
         voided.outcome == SupervisorVoidOutcome::voided
             ? "round voided by a supervisor"
             : "round void requested by a supervisor; a second supervisor must decide",
         {text("table", voided.table.value()), text("round", std::to_string(voided.round.value())),
          text("by", voided.supervisor), text("reason", voided.reason),
          text("request_id", voided.request_id)}});
  }
  for (const RoundRecord& round : records.rounds) {
    if (round.phase != RoundPhase::voided) continue;
    events.push_back(
        {LogLevel::info,
         "round voided",
         {text("table", round.table.value()), text("round", std::to_string(round.round.value())),
          text("from", std::string(to_string(round.voided_from))), text("reason", round.reason)}});
  }
  for (const Payout& payout : records.payouts) {
    const bool jackpot = payout.kind == AwardKind::percent || payout.kind == AwardKind::must_hit_by;
    if (payout.state == PayoutState::rejected) {
      std::vector<LogField> fields = payout_fields(payout);
      fields.push_back(text("by", payout.rejected_by));
      fields.push_back(text("reason", payout.rejected_reason));
      events.push_back({LogLevel::warning, "payout rejected: the award returned to its level",
                        std::move(fields)});
    } else if (const PayoutDecisionRecord* request = rejection_request(records, payout)) {
      std::vector<LogField> fields = payout_fields(payout);
      fields.push_back(text("by", request->supervisor));
      fields.push_back(text("reason", request->reason));
      events.push_back({LogLevel::warning,
                        "payout rejection requested; a second supervisor must decide",
                        std::move(fields)});
    } else if (const SupervisorVoidRecord* voided =
                   payout.state == PayoutState::pending ? void_of(records, payout.id) : nullptr) {
      std::vector<LogField> fields = payout_fields(payout);
      fields.push_back(text("by", voided->supervisor));
      fields.push_back(text("reason", voided->reason));
      events.push_back({LogLevel::warning,
                        "payout rejection requested by a void of its round; a second supervisor "
                        "must decide",
                        std::move(fields)});
    } else if (!payout.approved_by.empty()) {
      std::vector<LogField> fields = payout_fields(payout);
      fields.push_back(text("by", payout.approved_by.back()));
      fields.push_back(number("approvals", payout.approved_by.size()));
      fields.push_back(number("required", payout.approvals_required));
      events.push_back({LogLevel::info,
                        payout.state == PayoutState::paid ? "payout approved and paid"
                                                          : "payout approved; another approval due",
                        std::move(fields)});
    } else if (payout.state == PayoutState::pending) {
      events.push_back({LogLevel::info,
                        jackpot ? "progressive hit; the payout waits for a supervisor"
                                : "payout waits for a supervisor",
                        payout_fields(payout)});
    } else if (jackpot) {
      events.push_back({LogLevel::info, "progressive hit paid", payout_fields(payout)});
    }
  }
  for (const LinkStatusRecord& status : records.link_statuses) {
    events.push_back({status.status == LinkStatus::open ? LogLevel::info : LogLevel::warning,
                      "link " + std::string(to_string(status.status)),
                      {text("link", status.link.value()), text("by", status.changed_by),
                       text("reason", status.reason)}});
  }
  for (const MeterAdjustmentRecord& adjustment : records.adjustments) {
    events.push_back(
        {LogLevel::warning,
         "meter adjusted",
         {text("link", adjustment.link.value()), number("meter_level", adjustment.level),
          text("amount", adjustment.amount.to_string()),
          text("meter_after", adjustment.meter_after.to_string()),
          text("by", adjustment.requested_by), text("reason", adjustment.reason)}});
  }
  for (const RoundCounterRebaseRecord& rebase : records.rebases) {
    events.push_back({LogLevel::warning,
                      "round counter re-based",
                      {text("table", rebase.table.value()),
                       text("last_round", std::to_string(rebase.last_round.value())),
                       text("next_round", std::to_string(rebase.next_round.value())),
                       number("epoch", rebase.epoch), text("by", rebase.requested_by),
                       text("reason", rebase.reason)}});
  }
  return events;
}

}  // namespace jackpot
