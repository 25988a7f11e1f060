#include "journal/records.h"

#include <algorithm>

#include "meters/invariant.h"

namespace jackpot {

EncodedCommand::EncodedCommand(std::string_view request, std::string_view answer)
    : request_size_(request.size()), answer_size_(answer.size()) {
  auto bytes = std::make_shared_for_overwrite<char[]>(request.size() + answer.size());
  request.copy(bytes.get(), request.size());
  answer.copy(bytes.get() + request.size(), answer.size());
  bytes_ = std::move(bytes);
}

EncodedCommand::EncodedCommand(std::string_view bytes, std::size_t request_size)
    : request_size_(request_size), answer_size_(bytes.size() - request_size) {
  JACKPOT_INVARIANT(request_size <= bytes.size(), "the request is within the bytes");
  auto copy = std::make_shared_for_overwrite<char[]>(bytes.size());
  bytes.copy(copy.get(), bytes.size());
  bytes_ = std::move(copy);
}

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
  balance_snapshots.clear();
  adjustments.clear();
  rebases.clear();
  payout_decisions.clear();
  supervisor_voids.clear();
}

const SupervisorVoidRecord* void_of(const Records& records, PayoutId payout) {
  for (const SupervisorVoidRecord& voided : records.supervisor_voids) {
    if (std::find(voided.payouts.begin(), voided.payouts.end(), payout) != voided.payouts.end()) {
      return &voided;
    }
  }
  return nullptr;
}

bool Records::empty() const {
  return transfers.empty() && rounds.empty() && wagers.empty() && hands.empty() && draws.empty() &&
         payouts.empty() && answers.empty() && dynamic_pays.empty() && hits.empty() &&
         link_statuses.empty() && balance_snapshots.empty() && adjustments.empty() &&
         rebases.empty() && payout_decisions.empty() && supervisor_voids.empty();
}

std::string_view to_string(PayoutDecision decision) {
  switch (decision) {
    case PayoutDecision::approve:
      return "approve";
    case PayoutDecision::reject:
      return "reject";
  }
  return "unknown";
}

std::string_view to_string(SupervisorVoidOutcome outcome) {
  switch (outcome) {
    case SupervisorVoidOutcome::requested:
      return "requested";
    case SupervisorVoidOutcome::voided:
      return "voided";
  }
  return "unknown";
}

std::string_view to_string(RoundPhase phase) {
  switch (phase) {
    case RoundPhase::open:
      return "open";
    case RoundPhase::locked:
      return "locked";
    case RoundPhase::settled:
      return "settled";
    case RoundPhase::voided:
      return "voided";
  }
  return "unknown";
}

std::string_view to_string(AwardKind kind) {
  switch (kind) {
    case AwardKind::percent:
      return "percent";
    case AwardKind::fixed:
      return "fixed";
    case AwardKind::dynamic:
      return "dynamic";
    case AwardKind::must_hit_by:
      return "must_hit_by";
    case AwardKind::envy:
      return "envy";
  }
  return "unknown";
}

std::string_view to_string(DrawKind kind) {
  switch (kind) {
    case DrawKind::must_hit_by_winner:
      return "must_hit_by_winner";
    case DrawKind::hidden_trigger:
      return "hidden_trigger";
    case DrawKind::dynamic_count:
      return "dynamic_count";
    case DrawKind::dynamic_hand:
      return "dynamic_hand";
    case DrawKind::dynamic_option:
      return "dynamic_option";
    case DrawKind::dynamic_carried_over:
      return "dynamic_carried_over";
  }
  return "unknown";
}

std::string_view to_string(LinkStatus status) {
  switch (status) {
    case LinkStatus::open:
      return "open";
    case LinkStatus::closed:
      return "closed";
    case LinkStatus::unavailable:
      return "unavailable";
  }
  return "unknown";
}

std::string_view to_string(SnapshotReason reason) {
  switch (reason) {
    case SnapshotReason::start:
      return "start";
    case SnapshotReason::recovery:
      return "recovery";
    case SnapshotReason::stop:
      return "stop";
    case SnapshotReason::interval:
      return "interval";
    case SnapshotReason::request:
      return "request";
  }
  return "unknown";
}

}  // namespace jackpot
