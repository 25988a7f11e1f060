#include "controller/api/grpc_services.h"

#include <grpcpp/grpcpp.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <span>
#include <thread>

#include "controller/api/report_period.h"
#include "controller/api/request_checks.h"
#include "controller/api/sign_feed.h"
#include "controller/api/stream_limits.h"
#include "controller/api/transport_security.h"
#include "controller/api/watch_set.h"
#include "controller/limits/request_limits.h"
#include "controller/log/log.h"
#include "jackpot/v1/admin.grpc.pb.h"
#include "jackpot/v1/sign.grpc.pb.h"
#include "jackpot/v1/supervisor.grpc.pb.h"
#include "jackpot/v1/table.grpc.pb.h"
#include "meters/invariant.h"
#include "sign/encodings.h"

namespace jackpot {
namespace {

namespace pb = ::jackpot::v1;
using grpc::ServerContext;
using grpc::Status;
using grpc::StatusCode;

// What the caller should do about each refusal decides its code (docs/architecture.md §7).
StatusCode status_code(EngineError error) {
  switch (error) {
    case EngineError::unknown_table:
    case EngineError::unknown_link:
    case EngineError::unknown_payout:
    case EngineError::round_not_found:
      return StatusCode::NOT_FOUND;
    case EngineError::round_id_not_increasing:
    case EngineError::round_superseded:
    case EngineError::round_id_jump_too_far:
    case EngineError::previous_round_open:
    case EngineError::wrong_round_state:
    case EngineError::link_closed:
    case EngineError::replay_differs:
    case EngineError::must_hit_by_needs_supervisor:
    case EngineError::payout_not_pending:
    case EngineError::already_approved:
    case EngineError::ledger_refused:
    case EngineError::report_end_unobserved:
    case EngineError::balances_disagree:
      return StatusCode::FAILED_PRECONDITION;
    case EngineError::link_unavailable:
    case EngineError::database_unavailable:
      return StatusCode::UNAVAILABLE;
    case EngineError::round_id_out_of_range:
    case EngineError::request_id_invalid:
    case EngineError::reason_missing:
    case EngineError::reason_invalid:
    case EngineError::requester_missing:
    case EngineError::requester_invalid:
    case EngineError::adjustment_zero:
    case EngineError::seat_unknown:
    case EngineError::link_not_played:
    case EngineError::wager_repeated:
    case EngineError::wager_amount_invalid:
    case EngineError::wager_above_max:
    case EngineError::wager_overflow:
    case EngineError::seat_not_wagering:
    case EngineError::seat_reported_twice:
    case EngineError::hand_ambiguous:
    case EngineError::hand_missing:
    case EngineError::link_cards_unexpected:
    case EngineError::card_invalid:
    case EngineError::card_count_wrong:
    case EngineError::card_dealt_twice:
    case EngineError::keyed_hand_unknown:
    case EngineError::keyed_hand_not_a_hand:
      return StatusCode::INVALID_ARGUMENT;
    case EngineError::audit_trail_altered:
      return StatusCode::DATA_LOSS;
  }
  return StatusCode::INTERNAL;
}

// The refusal's name starts the message, so that a client can act on it without parsing the
// text: "seat_not_wagering: seat 3 did not wager this round" (docs/refusals.md lists them).
Status to_status(const EngineFailure& failure) {
  return Status(status_code(failure.code),
                std::string(to_string(failure.code)) + ": " + failure.message);
}

void fill_meter(const LevelMeterView& view, pb::LevelMeter* meter) {
  meter->set_link_id(view.link.value());
  meter->set_level(view.level);
  meter->set_name(view.name);
  meter->set_amount_cents(view.meter.cents_floor());
  if (view.must_hit_by) meter->set_must_hit_by_cents(view.must_hit_by->cents_floor());
  if (view.ceiling) meter->set_ceiling_cents(view.ceiling->cents_floor());
}

// A hidden trigger's commitment as the API publishes it (common.proto TriggerCommitment).
void fill_trigger_commitment(const LinkId& link, std::uint32_t level, const HiddenTrigger& trigger,
                             pb::TriggerCommitment& out) {
  out.set_link_id(link.value());
  out.set_level(level);
  out.set_commitment(trigger.commitment.data(), trigger.commitment.size());
  out.set_above_micros(trigger.range_above.micros());
  out.set_up_to_micros(trigger.range_up_to.micros());
}

// A hit's point revealed, with its salt and the commitment they open.
void fill_revealed_trigger(const LinkId& link, std::uint32_t level, const HiddenTrigger& trigger,
                           pb::MustHitByHit& out) {
  fill_trigger_commitment(link, level, trigger, *out.mutable_revealed_trigger());
  out.set_trigger_point_micros(trigger.point.micros());
  out.set_trigger_salt(trigger.salt.data(), trigger.salt.size());
}

template <typename Repeated>
void fill_meters(const std::vector<LevelMeterView>& views, Repeated* meters) {
  for (const LevelMeterView& view : views) fill_meter(view, meters->Add());
}

pb::AwardKind award_kind(AwardKind kind) {
  switch (kind) {
    case AwardKind::percent:
      return pb::AWARD_KIND_PERCENT;
    case AwardKind::fixed:
      return pb::AWARD_KIND_FIXED;
    case AwardKind::dynamic:
      return pb::AWARD_KIND_DYNAMIC;
    case AwardKind::must_hit_by:
      return pb::AWARD_KIND_MUST_HIT_BY;
    case AwardKind::envy:
      return pb::AWARD_KIND_ENVY;
  }
  return pb::AWARD_KIND_UNSPECIFIED;
}

// Empty for an answer kept before the engine recorded it: the wire says UNSPECIFIED then.
pb::PayoutState payout_state(std::optional<PayoutState> state) {
  if (!state) return pb::PAYOUT_STATE_UNSPECIFIED;
  switch (*state) {
    case PayoutState::pending:
      return pb::PAYOUT_STATE_PENDING;
    case PayoutState::paid:
      return pb::PAYOUT_STATE_PAID;
    case PayoutState::rejected:
      return pb::PAYOUT_STATE_REJECTED;
  }
  return pb::PAYOUT_STATE_UNSPECIFIED;
}

pb::LinkStatus link_status(LinkStatus status) {
  switch (status) {
    case LinkStatus::open:
      return pb::LINK_STATUS_OPEN;
    case LinkStatus::closed:
      return pb::LINK_STATUS_CLOSED;
    case LinkStatus::unavailable:
      return pb::LINK_STATUS_UNAVAILABLE;
  }
  return pb::LINK_STATUS_UNSPECIFIED;
}

// Who is calling, for the record: the principal the transport let through
// (transport_security.h). The wrappers every method runs in refuse a call without one first
// (unidentified()), so "unidentified" is never recorded.
std::string caller(const grpc::ServerContextBase& context) {
  const auto principal = call_principal(context);
  return principal ? to_string(*principal) : std::string("unidentified");
}

// A call the transport let through whose principal the handler cannot read: not expected (the
// transport checked the same certificate), refused rather than served without a name.
Status unidentified() {
  return Status(StatusCode::UNAUTHENTICATED,
                "not_a_principal: jackpotd cannot read the principal of this call from its "
                "certificate");
}

// The one rule that needs the request: a table acts only for the table its certificate names
// (the request field access_rules.h names for the method); the refusal, counted, or nothing.
template <typename Request>
std::optional<Status> refused_acting(const grpc::ServerContextBase& context,
                                     std::string_view method, const Request& request,
                                     const RefusalObserver& refused) {
  const auto principal = call_principal(context);
  if (!principal) {
    const Status status = unidentified();
    if (refused) refused(AccessRefusal::not_a_principal, status.error_message());
    return status;
  }
  std::string named;
  if (const std::string_view field = caller_field(method); !field.empty()) {
    const auto* descriptor = Request::descriptor()->FindFieldByName(std::string(field));
    JACKPOT_INVARIANT(descriptor != nullptr, "access_rules names a field the request lacks");
    named = request.GetReflection()->GetString(request, descriptor);
  }
  const auto refusal = acting_refusal(*principal, method, named);
  if (!refusal) return std::nullopt;
  Status status(StatusCode::PERMISSION_DENIED,
                "acts_for_another: " + quote_prefix(to_string(*principal)) +
                    " may act only for its own " + std::string(to_string(principal->role)) +
                    ", not for " + quote_prefix(named));
  if (refused) refused(*refusal, status.error_message());
  return status;
}

std::vector<std::string> strings(const google::protobuf::RepeatedPtrField<std::string>& field) {
  return {field.begin(), field.end()};
}

// Every call before the daemon's start is on record (StartGate).
Status starting() {
  return Status(StatusCode::UNAVAILABLE,
                "jackpotd is starting: its start is not on record yet; retry");
}

// The one check of the start gate, made by the shared wrapper every RPC goes through
// (serve_unary, AdminServiceImpl::serve_unary, the streamed WatchLinkStatus) before it reads its
// request: no method of any service runs before the start is on record.
std::optional<Status> refused_before_start(const StartGate& gate) {
  if (gate.config() == nullptr) return starting();
  return std::nullopt;
}

// Why a request's bytes are refused when they do not parse as its message (a truncated or
// foreign message, a string field that is not UTF-8, or no message at all). gRPC itself would
// answer UNIMPLEMENTED (callback methods) or INTERNAL (sync methods) with no message.
template <typename Request>
Status unparsable() {
  return Status(StatusCode::INVALID_ARGUMENT,
                "the request is not a valid " + Request::descriptor()->full_name() +
                    ": its bytes do not parse as that message (string fields must be UTF-8)");
}

// Parses a request's bytes and checks its sizes (request_problem): the refusal, or nothing when
// `request` holds a request the service may serve.
template <typename Request>
std::optional<Status> read_request(const grpc::ByteBuffer& bytes, Request& request) {
  grpc::ByteBuffer copy(bytes);  // Deserialize consumes its buffer; this shares the slices.
  if (!grpc::SerializationTraits<Request>::Deserialize(&copy, &request).ok()) {
    return unparsable<Request>();
  }
  if (auto problem = request_problem(request)) {
    return Status(StatusCode::INVALID_ARGUMENT, *problem);
  }
  return std::nullopt;
}

// A unary call on the raw callback API: the request as parsed, the response being filled, and
// how the call ends. Shared by the adapter and the engine's answer callback.
template <typename Request, typename Response>
class UnaryCall {
 public:
  UnaryCall(grpc::ServerUnaryReactor* reactor, grpc::ByteBuffer* out)
      : reactor_(reactor), out_(out) {}

  Request request;
  Response response;

  // Ends the call with `status`, and with the response when `status` is OK.
  void finish(const Status& status) {
    if (status.ok()) {
      bool own_buffer = false;
      const Status serialized =
          grpc::SerializationTraits<Response>::Serialize(response, out_, &own_buffer);
      if (!serialized.ok()) {
        reactor_->Finish(serialized);
        return;
      }
    }
    reactor_->Finish(status);
  }

 private:
  grpc::ServerUnaryReactor* reactor_;
  grpc::ByteBuffer* out_;
};

template <typename Request, typename Response>
using UnaryCallPtr = std::shared_ptr<UnaryCall<Request, Response>>;

// Refuses every call before the start is on record (refused_before_start), then parses and
// checks the request of a raw unary call and hands the call to `serve`; a request that does not
// parse or is too large is INVALID_ARGUMENT, one made for another table PERMISSION_DENIED, and
// neither reaches the engine.
template <typename Request, typename Response, typename Serve>
grpc::ServerUnaryReactor* serve_unary(const StartGate& gate, grpc::CallbackServerContext* context,
                                      std::string_view method, const RefusalObserver& refused,
                                      const grpc::ByteBuffer* bytes, grpc::ByteBuffer* out,
                                      Serve serve) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto call = std::make_shared<UnaryCall<Request, Response>>(reactor, out);
  if (auto refusal = refused_before_start(gate)) {
    call->finish(*refusal);
    return reactor;
  }
  if (auto refusal = read_request(*bytes, call->request)) {
    call->finish(*refusal);
    return reactor;
  }
  if (auto refusal = refused_acting(*context, method, call->request, refused)) {
    call->finish(*refusal);
    return reactor;
  }
  serve(std::move(call));
  return reactor;
}

void set_time(std::int64_t unix_us, google::protobuf::Timestamp& out) {
  std::int64_t seconds = unix_us / 1'000'000;
  std::int64_t micros = unix_us % 1'000'000;
  if (micros < 0) {
    micros += 1'000'000;
    --seconds;
  }
  out.set_seconds(seconds);
  out.set_nanos(static_cast<std::int32_t>(micros * 1'000));
}

void fill_payout(const Payout& payout, pb::Payout& out) {
  out.set_payout_id(payout.id.value());
  out.set_table_id(payout.table.value());
  out.set_round_id(payout.round.value());
  out.set_seat(payout.seat);
  out.set_link_id(payout.link.value());
  out.set_kind(award_kind(payout.kind));
  out.set_level(payout.level);
  out.set_hand(std::string(payout.hand.view()));
  out.set_amount_cents(payout.amount.cents_floor());
  out.set_state(payout_state(payout.state));
  out.set_approvals_required(payout.approvals_required);
  for (const std::string& supervisor : payout.approved_by) out.add_approved_by(supervisor);
  set_time(payout.created_us, *out.mutable_created_time());
  out.set_rejected_by(payout.rejected_by);
  out.set_rejected_reason(payout.rejected_reason);
  for (const std::string& supervisor : payout.rejection_requested_by) {
    out.add_rejection_requested_by(supervisor);
  }
}

// A WatchLinkStatus call refused before it streams anything.
class RefusedStream final : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  explicit RefusedStream(const Status& status) { Finish(status); }
  void OnDone() override { delete this; }
};

// A server stream that writes one message at a time and deletes itself once gRPC is done with
// it and nothing holds it (a notification holds it while it pumps it). What comes next is the
// derived stream's: next(), asked under the stream's lock whenever no write is under way, gives
// bytes to write, a status to finish with, or nothing for now.
class WriteStream : public grpc::ServerWriteReactor<grpc::ByteBuffer> {
 public:
  void hold() { holds_.fetch_add(1); }
  void release() {
    if (holds_.fetch_sub(1) == 1) delete this;
  }

  // Something may be ready to send: writes it, unless a write is under way (its end looks again)
  // or the stream finished.
  void pump() {
    std::unique_lock lock(mutex_);
    if (writing_ || finished_) return;
    Step step = next(cancelled_);
    if (step.finish) {
      finished_ = true;
      lock.unlock();
      Finish(*step.finish);  // The last call on this object: OnDone may delete it.
      return;
    }
    if (!step.write) return;
    bytes_ = std::move(*step.write);
    writing_ = true;
    lock.unlock();
    StartWrite(&bytes_);
  }

  void OnWriteDone(bool ok) override {
    {
      std::lock_guard lock(mutex_);
      writing_ = false;
      if (!ok) cancelled_ = true;  // The stream is broken: nothing more can be sent.
    }
    pump();
  }
  void OnCancel() override {
    {
      std::lock_guard lock(mutex_);
      cancelled_ = true;
    }
    pump();
  }
  void OnDone() override {
    detach();
    release();
  }

 protected:
  struct Step {
    std::optional<grpc::ByteBuffer> write;
    std::optional<Status> finish;
  };
  static Step write(grpc::ByteBuffer bytes) { return {std::move(bytes), std::nullopt}; }
  static Step finish(Status status) { return {std::nullopt, std::move(status)}; }
  static Step nothing() { return {}; }
  static Status cancelled_by_client() {
    return Status(StatusCode::CANCELLED, "the client cancelled the watch");
  }
  // `message` serialised, or the stream's end when it cannot be.
  template <typename Message>
  static Step write_message(const Message& message, const char* what) {
    grpc::ByteBuffer bytes;
    bool own_buffer = false;
    if (!grpc::SerializationTraits<Message>::Serialize(message, &bytes, &own_buffer).ok()) {
      return finish(Status(StatusCode::INTERNAL, std::string(what) + " could not be serialised"));
    }
    return write(std::move(bytes));
  }

  ~WriteStream() override = default;
  // What to do now, with mutex_ held; `cancelled`: the client cancelled or a write failed.
  virtual Step next(bool cancelled) = 0;
  // gRPC is done with the stream: leave whatever registry counts it.
  virtual void detach() = 0;

  std::mutex mutex_;  // Guards the derived stream's state too.

 private:
  std::atomic<int> holds_{1};  // gRPC's, until OnDone.
  grpc::ByteBuffer bytes_;     // The write under way.
  bool writing_ = false;
  bool cancelled_ = false;
  bool finished_ = false;
};

class StatusStream;
// Every open WatchLinkStatus stream.
using StatusStreams = WatchSet<StatusStream>;

// One table's WatchLinkStatus stream: sends each link's status whenever it differs from what the
// table last heard; finishes OK when the daemon stops, and when the client cancels.
class StatusStream final : public WriteStream {
 public:
  static grpc::ServerWriteReactor<grpc::ByteBuffer>* open(EngineHost& host,
                                                          std::shared_ptr<StatusStreams> streams,
                                                          std::vector<LinkId> links,
                                                          std::string peer) {
    auto* stream = new StatusStream(host, streams, std::move(links), std::move(peer));
    if (auto refused = streams->add(stream, stream->peer_)) {
      delete stream;
      return new RefusedStream(Status(StatusCode::RESOURCE_EXHAUSTED, *refused));
    }
    stream->pump();
    return stream;
  }

 private:
  StatusStream(EngineHost& host, std::shared_ptr<StatusStreams> streams, std::vector<LinkId> links,
               std::string peer)
      : host_(host),
        streams_(std::move(streams)),
        links_(std::move(links)),
        peer_(std::move(peer)),
        sent_(links_.size()) {}
  ~StatusStream() override = default;

  Step next(bool cancelled) override {
    if (cancelled) return finish(cancelled_by_client());
    if (host_.stopping()) return finish(Status::OK);
    const std::vector<LinkStatusView> now = host_.link_statuses(links_);
    for (std::size_t i = 0; i < links_.size(); ++i) {
      if (sent_[i] && *sent_[i] == now[i].status) continue;
      sent_[i] = now[i].status;
      pb::LinkStatusUpdate update;
      update.set_link_id(links_[i].value());
      update.set_status(link_status(now[i].status));
      update.set_reason(now[i].status == LinkStatus::open ? "open"
                        : now[i].status == LinkStatus::closed
                            ? "closed by an operator"
                            : "the controller cannot record changes");
      if (now[i].since_us != 0) set_time(now[i].since_us, *update.mutable_since());
      return write_message(update, "a link status update");
    }
    return nothing();
  }
  void detach() override { streams_->remove(this, peer_); }

  EngineHost& host_;
  std::shared_ptr<StatusStreams> streams_;
  const std::vector<LinkId> links_;
  const std::string peer_;
  std::vector<std::optional<LinkStatus>> sent_;  // What the table last heard, per link.
};

class PayoutStream;

// The payouts that wait for a supervisor as committed, and every WatchPendingPayouts stream. Fed
// by the host's commit observer with committed batches only, so that a stream never shows a
// payout or an approval that a failed commit takes back; the list starts as the engine holds it
// when the service is made (recovered from the database, all of it committed).
class PayoutFeed {
 public:
  PayoutFeed(StreamLimits limits, std::vector<Payout> pending) : streams_(limits) {
    for (Payout& payout : pending) pending_.emplace(payout.id.value(), std::move(payout));
  }

  // Counts and keeps `stream` and hands it the list as it is now, in payout id order; the
  // refusal's message when a bound is reached.
  std::optional<std::string> add(PayoutStream* stream, const std::string& peer);
  void remove(PayoutStream* stream, const std::string& peer) { streams_.remove(stream, peer); }
  // A committed batch (on the host's responder thread, in commit order): each payout that waits
  // for a supervisor, new or changed, goes to every stream.
  void committed(const std::vector<Records>& batch);
  // The engine was rebuilt from the database after a failure: a batch reported failed may have
  // landed, so the list starts again from what the database holds, and every stream open now
  // finishes UNAVAILABLE (the client watches again for the list as it is). Called with the
  // host's lock held: takes no stream's lock.
  void recovered(std::vector<Payout> pending);
  // The daemon is stopping (or a status changed): each stream looks at whether to finish.
  void poke() { streams_.pump_all(); }

 private:
  std::mutex mutex_;  // Before the set's: a change is queued in the order it committed.
  std::map<std::uint64_t, Payout> pending_;
  WatchSet<PayoutStream> streams_;
};

// The initial metadata a WatchPendingPayouts stream that jackpotd took sends at once.
constexpr std::string_view kWatchOpenKey = "jackpot-watch";

// One supervisor's WatchPendingPayouts stream: the pending payouts of its links at once, then
// each change, one write at a time, from a queue of at most kMaxQueued events (a client that
// falls that far behind is finished RESOURCE_EXHAUSTED and reconnects for a fresh list);
// finishes OK when the daemon stops.
class PayoutStream final : public WriteStream {
 public:
  static constexpr std::size_t kMaxQueued = 4096;

  static grpc::ServerWriteReactor<grpc::ByteBuffer>* open(grpc::CallbackServerContext& context,
                                                          EngineHost& host,
                                                          std::shared_ptr<PayoutFeed> feed,
                                                          std::set<std::string> links,
                                                          std::string peer) {
    auto* stream = new PayoutStream(host, feed, std::move(links), std::move(peer));
    if (auto refused = feed->add(stream, stream->peer_)) {
      delete stream;
      return new RefusedStream(Status(StatusCode::RESOURCE_EXHAUSTED, *refused));
    }
    // At once, so that a client knows its watch is in place even when nothing waits (and can
    // tell a watch that was open from one refused at its opening: supervisor.proto).
    context.AddInitialMetadata(std::string(kWatchOpenKey), "open");
    stream->StartSendInitialMetadata();
    stream->pump();
    return stream;
  }

  // Queues what the stream's links see; the feed calls it in commit order. The list a stream
  // starts with is queued whatever its length (`initial`); changes beyond kMaxQueued unsent
  // finish the stream.
  void push(const Payout& payout, bool initial = false) {
    if (!links_.empty() && links_.count(payout.link.value()) == 0) return;
    std::lock_guard lock(mutex_);
    if (!initial && queue_.size() >= kMaxQueued) {
      overflowed_ = true;
      return;
    }
    queue_.push_back(payout);
  }

  // What it was sent may miss a change (PayoutFeed::recovered): it finishes at its next pump.
  void mark_stale() { stale_.store(true); }

 private:
  PayoutStream(EngineHost& host, std::shared_ptr<PayoutFeed> feed, std::set<std::string> links,
               std::string peer)
      : host_(host), feed_(std::move(feed)), links_(std::move(links)), peer_(std::move(peer)) {}
  ~PayoutStream() override = default;

  // The next queued event; the end when the daemon stops, the client cancels, the queue
  // overflowed or the list went stale.
  Step next(bool cancelled) override {
    if (cancelled) return finish(cancelled_by_client());
    if (overflowed_) {
      return finish(Status(StatusCode::RESOURCE_EXHAUSTED,
                           "the watch fell more than " + std::to_string(kMaxQueued) +
                               " changes behind; watch again for the list as it is now"));
    }
    if (host_.stopping()) return finish(Status::OK);
    if (stale_.load()) {
      return finish(Status(StatusCode::UNAVAILABLE,
                           "the controller rebuilt its state after a database failure; watch "
                           "again for the list as it is now"));
    }
    if (queue_.empty()) return nothing();
    pb::PayoutEvent event;
    fill_payout(queue_.front(), *event.mutable_payout());
    queue_.pop_front();
    return write_message(event, "a payout event");
  }
  void detach() override { feed_->remove(this, peer_); }

  EngineHost& host_;
  std::shared_ptr<PayoutFeed> feed_;
  const std::set<std::string> links_;  // Empty: every link.
  const std::string peer_;
  std::deque<Payout> queue_;
  bool overflowed_ = false;
  std::atomic<bool> stale_{false};
};

std::optional<std::string> PayoutFeed::add(PayoutStream* stream, const std::string& peer) {
  std::lock_guard lock(mutex_);
  return streams_.add(stream, peer, [&](PayoutStream* added) {
    for (const auto& [id, payout] : pending_) added->push(payout, /*initial=*/true);
  });
}

void PayoutFeed::committed(const std::vector<Records>& batch) {
  std::vector<Payout> changed;
  std::vector<PayoutStream*> told;
  {
    std::lock_guard lock(mutex_);
    for (const Records& records : batch) {
      for (const Payout& payout : records.payouts) {
        if (payout.approvals_required == 0) continue;  // Paid at once: no supervisor's.
        if (payout.state == PayoutState::pending) {
          pending_.insert_or_assign(payout.id.value(), payout);
        } else {
          pending_.erase(payout.id.value());
        }
        changed.push_back(payout);
      }
    }
    if (changed.empty()) return;
    // Queued under the feed's lock, so that a stream opening now gets the list before these.
    told = streams_.hold_all([&](PayoutStream* stream) {
      for (const Payout& payout : changed) stream->push(payout);
    });
  }
  WatchSet<PayoutStream>::pump_and_release(told);
}

void PayoutFeed::recovered(std::vector<Payout> pending) {
  std::lock_guard lock(mutex_);
  pending_.clear();
  for (Payout& payout : pending) pending_.emplace(payout.id.value(), std::move(payout));
  streams_.for_each([](PayoutStream* stream) { stream->mark_stale(); });
}

// The round commands use gRPC's callback API: a call waiting for its batch to commit holds no
// thread, and the committer answers a whole batch at once (docs/architecture.md §7). They are
// raw methods that parse their own requests, so that bytes that do not parse are
// INVALID_ARGUMENT with a message (read_request).
using TableServiceBase = pb::TableService::WithRawCallbackMethod_OpenRound<
    pb::TableService::WithRawCallbackMethod_LockWagers<
        pb::TableService::WithRawCallbackMethod_SettleRound<
            pb::TableService::WithRawCallbackMethod_VoidRound<
                pb::TableService::WithRawCallbackMethod_WatchLinkStatus<
                    pb::TableService::Service>>>>>;

class TableServiceImpl final : public TableServiceBase {
 public:
  TableServiceImpl(EngineHost& host, const StartGate& gate, StreamLimits limits,
                   RefusalObserver refused)
      : host_(host),
        gate_(gate),
        refused_(std::move(refused)),
        streams_(std::make_shared<StatusStreams>(limits)) {
    // Every change reaches the streams; the service may go before the host.
    host_.on_status_change([weak = std::weak_ptr<StatusStreams>(streams_)] {
      if (const auto streams = weak.lock()) streams->pump_all();
    });
  }

  grpc::ServerUnaryReactor* OpenRound(grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override {
    return serve_unary<pb::OpenRoundRequest, pb::OpenRoundResponse>(
        gate_, context, "/jackpot.v1.TableService/OpenRound", refused_, request, response,
        [this](auto call) { open_round(std::move(call)); });
  }

  void open_round(UnaryCallPtr<pb::OpenRoundRequest, pb::OpenRoundResponse> call) {
    const pb::OpenRoundRequest* request = &call->request;
    pb::OpenRoundResponse* response = &call->response;
    const OpenRoundRequest command{TableId(request->table_id()), RoundId(request->round_id())};
    answer_when_durable(
        std::move(call),
        [&](Engine& engine, Records& records) { return engine.open_round(command, records); },
        [response](const OpenRoundAnswer& answer) {
          response->set_table_id(answer.table.value());
          response->set_round_id(answer.round.value());
          for (const DynamicSelectionView& selection : answer.dynamic_pays) {
            auto* out = response->add_dynamic_pays();
            out->set_link_id(selection.link.value());
            out->set_paytable_id(selection.paytable_id);
            for (const DynamicPayView& pay : selection.pays) {
              auto* pay_out = out->add_pays();
              pay_out->set_hand(pay.hand);
              pay_out->set_option(pay.option);
              pay_out->set_amount_cents(pay.amount.cents_floor());
            }
          }
        });
  }

  grpc::ServerUnaryReactor* LockWagers(grpc::CallbackServerContext* context,
                                       const grpc::ByteBuffer* request,
                                       grpc::ByteBuffer* response) override {
    return serve_unary<pb::LockWagersRequest, pb::LockWagersResponse>(
        gate_, context, "/jackpot.v1.TableService/LockWagers", refused_, request, response,
        [this](auto call) { lock_wagers(std::move(call)); });
  }

  void lock_wagers(UnaryCallPtr<pb::LockWagersRequest, pb::LockWagersResponse> call) {
    const pb::LockWagersRequest* request = &call->request;
    pb::LockWagersResponse* response = &call->response;
    LockWagersRequest command{TableId(request->table_id()), RoundId(request->round_id()), {}};
    command.wagers.reserve(static_cast<std::size_t>(request->wagers_size()));
    for (const auto& wager : request->wagers()) {
      command.wagers.push_back({wager.seat(), LinkId(wager.link_id()), wager.amount_cents()});
    }
    answer_when_durable(
        std::move(call),
        [&](Engine& engine, Records& records) { return engine.lock_wagers(command, records); },
        [response](const LockWagersAnswer& answer) {
          response->set_table_id(answer.table.value());
          response->set_round_id(answer.round.value());
          fill_meters(answer.meters, response->mutable_meters());
          for (const MustHitByHitView& hit : answer.must_hit_by_hits) {
            auto* out = response->add_must_hit_by_hits();
            out->set_link_id(hit.link.value());
            out->set_level(hit.level);
            out->set_seat(hit.seat);
            out->set_amount_cents(hit.amount.cents_floor());
            out->set_draw_id(hit.draw_id);
            out->set_payout_state(payout_state(hit.payout_state));
            if (hit.revealed) fill_revealed_trigger(hit.link, hit.level, *hit.revealed, *out);
          }
        });
  }

  grpc::ServerUnaryReactor* SettleRound(grpc::CallbackServerContext* context,
                                        const grpc::ByteBuffer* request,
                                        grpc::ByteBuffer* response) override {
    return serve_unary<pb::SettleRoundRequest, pb::SettleRoundResponse>(
        gate_, context, "/jackpot.v1.TableService/SettleRound", refused_, request, response,
        [this](auto call) { settle_round(std::move(call)); });
  }

  void settle_round(UnaryCallPtr<pb::SettleRoundRequest, pb::SettleRoundResponse> call) {
    const pb::SettleRoundRequest* request = &call->request;
    pb::SettleRoundResponse* response = &call->response;
    SettleRoundRequest command{TableId(request->table_id()),
                               RoundId(request->round_id()),
                               {},
                               strings(request->community_cards()),
                               strings(request->link_cards())};
    command.seats.reserve(static_cast<std::size_t>(request->seats_size()));
    for (const auto& seat : request->seats()) {
      SeatHandRequest hand{seat.seat(), {}, std::nullopt};
      if (seat.has_cards()) hand.cards = strings(seat.cards().cards());
      if (seat.hand_case() == pb::SeatHand::kKeyedHand) hand.keyed_hand = seat.keyed_hand();
      command.seats.push_back(std::move(hand));
    }
    answer_when_durable(
        std::move(call),
        [&](Engine& engine, Records& records) { return engine.settle_round(command, records); },
        [response](const SettleRoundAnswer& answer) {
          response->set_table_id(answer.table.value());
          response->set_round_id(answer.round.value());
          for (const SeatResultView& result : answer.results) {
            auto* out = response->add_results();
            out->set_seat(result.seat);
            out->set_link_id(result.link.value());
            out->set_paytable_id(result.paytable_id);
            out->set_hand(result.hand);
            out->set_dealer_keyed(result.dealer_keyed);
            out->set_total_cents(result.total.cents_floor());
            for (const AwardView& award : result.awards) {
              auto* award_out = out->add_awards();
              award_out->set_link_id(award.link.value());
              award_out->set_kind(award_kind(award.kind));
              award_out->set_level(award.level);
              award_out->set_hand(award.hand);
              award_out->set_from_seat(award.from_seat);
              award_out->set_amount_cents(award.amount.cents_floor());
              award_out->set_payout_id(award.payout.value());
              award_out->set_payout_state(payout_state(award.payout_state));
            }
          }
          fill_meters(answer.meters, response->mutable_meters());
        });
  }

  grpc::ServerUnaryReactor* VoidRound(grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override {
    return serve_unary<pb::VoidRoundRequest, pb::VoidRoundResponse>(
        gate_, context, "/jackpot.v1.TableService/VoidRound", refused_, request, response,
        [this](auto call) { void_round(std::move(call)); });
  }

  void void_round(UnaryCallPtr<pb::VoidRoundRequest, pb::VoidRoundResponse> call) {
    const pb::VoidRoundRequest* request = &call->request;
    pb::VoidRoundResponse* response = &call->response;
    const VoidRoundRequest command{TableId(request->table_id()), RoundId(request->round_id()),
                                   request->reason()};
    answer_when_durable(
        std::move(call),
        [&](Engine& engine, Records& records) { return engine.void_round(command, records); },
        [response](const VoidRoundAnswer& answer) {
          response->set_table_id(answer.table.value());
          response->set_round_id(answer.round.value());
          response->set_reversed_micros(answer.reversed.micros());
          fill_meters(answer.meters, response->mutable_meters());
        });
  }

  // The status of every link the table plays at once, then every change, until the call ends;
  // on the callback API, so that a stream holds no thread while it waits. A raw method that reads
  // its own request: bytes that do not parse are INVALID_ARGUMENT (read_request).
  grpc::ServerWriteReactor<grpc::ByteBuffer>* WatchLinkStatus(
      grpc::CallbackServerContext* context, const grpc::ByteBuffer* bytes) override {
    if (auto refusal = refused_before_start(gate_)) return new RefusedStream(*refusal);
    pb::WatchLinkStatusRequest request;
    if (auto refusal = read_request(*bytes, request)) return new RefusedStream(*refusal);
    if (auto refusal = refused_acting(*context, "/jackpot.v1.TableService/WatchLinkStatus", request,
                                      refused_)) {
      return new RefusedStream(*refusal);
    }
    const TableId table(request.table_id());
    auto links = host_.read([&](const Engine& engine) { return engine.links_of_table(table); });
    if (links.empty()) {
      return new RefusedStream(
          to_status({EngineError::unknown_table, "no table " + quote_prefix(table.value())}));
    }
    return StatusStream::open(host_, streams_, std::move(links), peer_host(context->peer()));
  }

 private:
  // Runs `command` on the engine now and finishes the call once its answer is durable: `fill`
  // writes a successful answer into the response; a refusal or a lost batch becomes its status.
  template <typename Request, typename Response, typename Command, typename Fill>
  void answer_when_durable(UnaryCallPtr<Request, Response> call, Command&& command, Fill fill) {
    host_.submit(std::forward<Command>(command), [call, fill](const auto& answer) {
      if (!answer) {
        call->finish(to_status(answer.error()));
        return;
      }
      fill(*answer);
      call->finish(Status::OK);
    });
  }

  EngineHost& host_;
  const StartGate& gate_;
  const RefusalObserver refused_;
  std::shared_ptr<StatusStreams> streams_;
};

std::optional<WireTime> wire_time(const google::protobuf::Timestamp& time, bool present) {
  if (!present) return std::nullopt;
  return WireTime{time.seconds(), time.nanos()};
}

std::int64_t now_unix_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// Refuses every call before the start is on record (refused_before_start), then reads the one
// request of a sync streamed unary call, checks it and runs `serve(request, response)` on it:
// the status of a request that does not parse or is too large, or serve's.
template <typename Request, typename Response, typename Serve>
Status serve_streamed_unary(const StartGate& gate, const grpc::ServerContextBase& context,
                            grpc::ServerUnaryStreamer<Request, Response>* stream, Serve serve) {
  if (auto refusal = refused_before_start(gate)) return *refusal;
  if (!call_principal(context)) return unidentified();
  Request request;
  if (!stream->Read(&request)) return unparsable<Request>();
  if (auto problem = request_problem(request)) {
    return Status(StatusCode::INVALID_ARGUMENT, *problem);
  }
  Response response;
  const Status status = serve(request, response);
  if (status.ok()) stream->Write(response);
  return status;
}

// The admin calls block (database reads), so they stay on the sync API, as streamed unary
// methods that read their own request: bytes that do not parse are INVALID_ARGUMENT with a
// message, and every request passes request_problem before its method runs.
using AdminServiceBase = pb::AdminService::WithStreamedUnaryMethod_GetConfig<
    pb::AdminService::WithStreamedUnaryMethod_ListMeters<
        pb::AdminService::WithStreamedUnaryMethod_SetLinkStatus<
            pb::AdminService::WithStreamedUnaryMethod_AdjustMeter<
                pb::AdminService::WithStreamedUnaryMethod_GetReconciliationReport<
                    pb::AdminService::WithStreamedUnaryMethod_TakeBalanceSnapshot<
                        pb::AdminService::WithStreamedUnaryMethod_AuditBalances<
                            pb::AdminService::WithStreamedUnaryMethod_ReadAuditTrail<
                                pb::AdminService::Service>>>>>>>>;

class AdminServiceImpl final : public AdminServiceBase {
 public:
  AdminServiceImpl(EngineHost& host, ReconciliationSource* reports, const StartGate& gate)
      : host_(host), reports_(reports), gate_(gate) {}

  Status GetConfig(ServerContext*, const pb::GetConfigRequest*,
                   pb::GetConfigResponse* response) override {
    const ConfigInForce* config = gate_.config();
    if (config == nullptr) return starting();  // Not reached: serve_unary checked the gate.
    response->set_config_version(config->floor_version);
    response->set_config_text(config->floor_text);
    response->set_floor_file(config->floor_file);
    response->set_floor_sha256(config->floor_sha256);
    for (const ConfigInForce::PaytableText& paytable : config->paytables) {
      auto* out = response->add_paytables();
      out->set_paytable_id(paytable.id);
      out->set_text(paytable.text);
    }
    response->set_daemon_version(config->daemon_version);
    return Status::OK;
  }

  template <typename Request, typename Response>
  using Streamer = grpc::ServerUnaryStreamer<Request, Response>;

  Status StreamedGetConfig(ServerContext* context,
                           Streamer<pb::GetConfigRequest, pb::GetConfigResponse>* stream) override {
    return serve_unary(context, stream, &AdminServiceImpl::GetConfig);
  }
  Status StreamedListMeters(
      ServerContext* context,
      Streamer<pb::ListMetersRequest, pb::ListMetersResponse>* stream) override {
    return serve_unary(context, stream, &AdminServiceImpl::ListMeters);
  }
  Status StreamedSetLinkStatus(
      ServerContext* context,
      Streamer<pb::SetLinkStatusRequest, pb::SetLinkStatusResponse>* stream) override {
    return serve_unary(context, stream, &AdminServiceImpl::SetLinkStatus);
  }
  Status StreamedAdjustMeter(
      ServerContext* context,
      Streamer<pb::AdjustMeterRequest, pb::AdjustMeterResponse>* stream) override {
    return serve_unary(context, stream, &AdminServiceImpl::AdjustMeter);
  }
  Status StreamedGetReconciliationReport(
      ServerContext* context,
      Streamer<pb::ReconciliationReportRequest, pb::ReconciliationReport>* stream) override {
    return serve_unary(context, stream, &AdminServiceImpl::GetReconciliationReport);
  }
  Status StreamedTakeBalanceSnapshot(
      ServerContext* context,
      Streamer<pb::TakeBalanceSnapshotRequest, pb::TakeBalanceSnapshotResponse>* stream) override {
    return serve_unary(context, stream, &AdminServiceImpl::TakeBalanceSnapshot);
  }
  Status StreamedAuditBalances(
      ServerContext* context,
      Streamer<pb::AuditBalancesRequest, pb::AuditBalancesResponse>* stream) override {
    return serve_unary(context, stream, &AdminServiceImpl::AuditBalances);
  }
  Status StreamedReadAuditTrail(
      ServerContext* context,
      Streamer<pb::ReadAuditTrailRequest, pb::ReadAuditTrailResponse>* stream) override {
    return serve_unary(context, stream, &AdminServiceImpl::ReadAuditTrail);
  }

  // A report's read (or a snapshot's request) on the audit trail before it is served: who asked
  // for what. What cannot be recorded is not served.
  std::optional<Status> unrecorded_read(const ServerContext& context, std::string_view action,
                                        std::vector<std::pair<std::string, std::string>> detail) {
    if (auto failure = reports_->append_audit_events(
            {{caller(context), std::string(action), std::move(detail)}})) {
      return to_status(*failure);
    }
    return std::nullopt;
  }

  Status GetReconciliationReport(ServerContext* context,
                                 const pb::ReconciliationReportRequest* request,
                                 pb::ReconciliationReport* response) override {
    if (reports_ == nullptr) return Status(StatusCode::UNAVAILABLE, "no database");
    std::vector<LinkId> links;
    for (const auto& id : request->link_ids()) links.emplace_back(id);
    const auto period =
        check_report_period(wire_time(request->from_time(), request->has_from_time()),
                            wire_time(request->to_time(), request->has_to_time()), now_unix_us());
    if (!period) return Status(StatusCode::INVALID_ARGUMENT, period.error());
    const auto [from, to] = *period;
    // As asked, unknown ids too (the read then answers NOT_FOUND): control characters, which
    // the audit trail's JSON cannot hold as text, as '?', and at most 512 bytes.
    std::string link_list;
    for (const LinkId& link : links) link_list += (link_list.empty() ? "" : ",") + link.value();
    for (char& c : link_list) {
      if (static_cast<unsigned char>(c) < 0x20) c = '?';
    }
    if (link_list.size() > 512) {
      std::size_t cut = 509;  // Not inside a UTF-8 sequence.
      while (cut > 0 && (static_cast<unsigned char>(link_list[cut]) & 0xC0) == 0x80) --cut;
      link_list = link_list.substr(0, cut) + "...";
    }
    if (auto refused = unrecorded_read(*context, "report.reconciliation",
                                       {{"links", links.empty() ? "all" : link_list},
                                        {"from_us", from ? std::to_string(*from) : "start"},
                                        {"to_us", to ? std::to_string(*to) : "now"}})) {
      return *refused;
    }
    // Up to now: the end is a snapshot recorded for this report, so that every transfer
    // committed before the request is in it.
    if (!to && !host_.snapshot_balances(SnapshotReason::request)) {
      return Status(StatusCode::UNAVAILABLE,
                    "the controller could not record the balances in time (the report's end); "
                    "retry");
    }
    const auto report = reports_->reconcile(links, from, to);
    if (!report) return to_status(report.error());
    if (from) set_time(*from, *response->mutable_from_time());
    // Up to now, the report covers up to the snapshot just recorded: its time, not the clock
    // after the read (later, so it would claim transfers that are not in the report).
    std::int64_t end_us = to.value_or(0);
    if (!to) {
      for (const LinkReconciliation& link : *report) end_us = std::max(end_us, link.end_taken_us);
      if (report->empty()) end_us = now_unix_us();
    }
    set_time(end_us, *response->mutable_to_time());
    for (const LinkReconciliation& link : *report) {
      if (!link.end_observed) {
        response->Clear();
        return to_status({EngineError::report_end_unobserved,
                          "no balance snapshot of link " + quote_prefix(link.link.value()) +
                              " was taken at or before to_time: the end of the period cannot be "
                              "observed; take one (TakeBalanceSnapshot) or choose a later "
                              "to_time"});
      }
      for (const LevelReconciliation& level : link.levels) {
        auto* out = response->add_levels();
        out->set_link_id(link.link.value());
        out->set_level(level.level);
        out->set_start_micros(level.start.micros());
        out->set_contributions_micros(level.contributions.micros());
        out->set_seeds_micros(level.seeds.micros());
        out->set_overflow_in_micros(level.overflow_in.micros());
        out->set_awards_micros(level.awards.micros());
        out->set_overflow_out_micros(level.overflow_out.micros());
        out->set_adjustments_micros(level.adjustments.micros());
        out->set_end_micros(level.end.micros());
        out->set_balanced(level.balanced);
        out->set_difference_micros(level.difference.micros());
        out->set_start_through_transfer_id(link.start_through_transfer);
        if (link.start_taken_us)
          set_time(*link.start_taken_us, *out->mutable_start_snapshot_time());
        out->set_end_through_transfer_id(link.end_through_transfer);
        set_time(link.end_taken_us, *out->mutable_end_snapshot_time());
      }
    }
    return Status::OK;
  }

  Status TakeBalanceSnapshot(ServerContext* context, const pb::TakeBalanceSnapshotRequest*,
                             pb::TakeBalanceSnapshotResponse* response) override {
    if (reports_ == nullptr) return Status(StatusCode::UNAVAILABLE, "no database");
    if (auto refused = unrecorded_read(*context, "balance.snapshot", {})) return *refused;
    const auto taken = host_.snapshot_balances(SnapshotReason::request);
    if (!taken) {
      return Status(StatusCode::UNAVAILABLE,
                    "the controller could not record the snapshot in time: it may still be "
                    "recorded; retry");
    }
    for (const BalanceSnapshotRecord& snapshot : *taken) {
      auto* out = response->add_links();
      out->set_link_id(snapshot.link.value());
      out->set_through_transfer_id(snapshot.through.value());
    }
    return Status::OK;
  }

  Status AuditBalances(ServerContext* context, const pb::AuditBalancesRequest*,
                       pb::AuditBalancesResponse* response) override {
    if (reports_ == nullptr) return Status(StatusCode::UNAVAILABLE, "no database");
    if (auto refused = unrecorded_read(*context, "report.balance_audit", {})) return *refused;
    const auto audit = reports_->audit_balances();
    if (!audit) return to_status(audit.error());
    bool consistent = true;
    for (const AccountAuditLine& line : *audit) {
      auto* out = response->add_accounts();
      out->set_link_id(line.link.value());
      out->set_account(std::string(to_string(line.account.kind)));
      out->set_level(line.account.level);
      out->set_from_snapshot_micros(line.from_snapshot.micros());
      out->set_full_sum_micros(line.full_sum.micros());
      consistent = consistent && line.from_snapshot == line.full_sum;
    }
    response->set_consistent(consistent);
    return Status::OK;
  }

  Status ReadAuditTrail(ServerContext*, const pb::ReadAuditTrailRequest* request,
                        pb::ReadAuditTrailResponse* response) override {
    if (reports_ == nullptr) return Status(StatusCode::UNAVAILABLE, "no database");
    if (request->limit() > kMaxAuditPage) {
      return Status(StatusCode::INVALID_ARGUMENT, "limit " + std::to_string(request->limit()) +
                                                      " is above " + std::to_string(kMaxAuditPage) +
                                                      " events a page");
    }
    if (request->after_seq() > static_cast<std::uint64_t>(INT64_MAX)) {
      return Status(StatusCode::INVALID_ARGUMENT, "after_seq is above the largest event number");
    }
    const int limit = request->limit() == 0 ? kMaxAuditPage : static_cast<int>(request->limit());
    const auto page = reports_->audit_trail(static_cast<std::int64_t>(request->after_seq()), limit);
    if (!page) return to_status(page.error());
    for (const AuditEvent& event : page->events) {
      auto* out = response->add_events();
      out->set_seq(static_cast<std::uint64_t>(event.seq));
      set_time(event.at_us, *out->mutable_time());
      out->set_principal(event.principal);
      out->set_action(event.action);
      out->set_detail_json(event.detail);
      out->set_prev_hash(event.prev_hash.data(), event.prev_hash.size());
      out->set_hash(event.hash.data(), event.hash.size());
    }
    response->set_head_seq(static_cast<std::uint64_t>(page->head.seq));
    response->set_head_hash(page->head.hash.data(), page->head.hash.size());
    return Status::OK;
  }

  Status ListMeters(ServerContext*, const pb::ListMetersRequest* request,
                    pb::ListMetersResponse* response) override {
    std::vector<LinkId> ids;
    for (const auto& id : request->link_ids()) ids.emplace_back(id);
    const auto read = host_.read_durable([&](const Engine& engine) {
      for (const LevelMeterView& view : engine.meters(ids)) {
        auto* out = response->add_levels();
        out->set_link_id(view.link.value());
        out->set_level(view.level);
        out->set_name(view.name);
        out->set_meter_micros(view.meter.micros());
        out->set_reserve_micros(engine.link(view.link)->reserve(view.level).micros());
        if (const auto& trigger = engine.link(view.link)->hidden_trigger(view.level)) {
          fill_trigger_commitment(view.link, view.level, *trigger,
                                  *response->add_trigger_commitments());
        }
      }
      return 0;
    });
    if (!read) {
      response->Clear();
      return Status(StatusCode::UNAVAILABLE,
                    "the meters are not durable: the database is unavailable; retry");
    }
    return Status::OK;
  }

  Status AdjustMeter(ServerContext* context, const pb::AdjustMeterRequest* request,
                     pb::AdjustMeterResponse* response) override {
    const AdjustMeterRequest command{request->request_id(), LinkId(request->link_id()),
                                     request->level(), Money::from_micros(request->amount_micros()),
                                     request->reason()};
    const auto adjusted = host_.run([&](Engine& engine, Records& records) {
      return engine.adjust_meter(command, caller(*context), records);
    });
    if (!adjusted) return to_status(adjusted.error());
    auto* balance = response->mutable_balance();
    balance->set_link_id(adjusted->link.value());
    balance->set_level(adjusted->level);
    balance->set_name(adjusted->name);
    balance->set_meter_micros(adjusted->meter.micros());
    balance->set_reserve_micros(adjusted->reserve.micros());
    response->set_transfer_id(adjusted->transfer.value());
    return Status::OK;
  }

  Status SetLinkStatus(ServerContext* context, const pb::SetLinkStatusRequest* request,
                       pb::SetLinkStatusResponse* response) override {
    if (request->status() != pb::LINK_STATUS_OPEN && request->status() != pb::LINK_STATUS_CLOSED) {
      return Status(StatusCode::INVALID_ARGUMENT, "a link can be set OPEN or CLOSED");
    }
    // An empty or blank reason is the engine's refusal (reason_missing), like every other.
    const LinkStatus wanted =
        request->status() == pb::LINK_STATUS_OPEN ? LinkStatus::open : LinkStatus::closed;
    const auto changed = host_.change_status([&](Engine& engine, Records& records) {
      return engine.set_link_status(LinkId(request->link_id()), wanted, caller(*context),
                                    request->reason(), records);
    });
    if (!changed) return to_status(changed.error());
    response->set_link_id(request->link_id());
    response->set_status(link_status(*changed));
    return Status::OK;
  }

 private:
  template <typename Request, typename Response>
  Status serve_unary(ServerContext* context, Streamer<Request, Response>* stream,
                     Status (AdminServiceImpl::*method)(ServerContext*, const Request*,
                                                        Response*)) {
    return serve_streamed_unary(gate_, *context, stream,
                                [&](const Request& request, Response& response) {
                                  return (this->*method)(context, &request, &response);
                                });
  }

  EngineHost& host_;
  static constexpr int kMaxAuditPage = 500;  // admin.proto ReadAuditTrailRequest.limit.
  ReconciliationSource* reports_;
  const StartGate& gate_;
};

// The supervisor's unary calls stay on the sync API like the admin calls, as streamed methods
// that read their own request (serve_streamed_unary); WatchPendingPayouts is on the callback API,
// so that a stream holds no thread while it waits, and reads its own request (read_request).
using SupervisorServiceBase = pb::SupervisorService::WithStreamedUnaryMethod_VoidRound<
    pb::SupervisorService::WithStreamedUnaryMethod_RebaseRoundCounter<
        pb::SupervisorService::WithStreamedUnaryMethod_ApprovePayout<
            pb::SupervisorService::WithStreamedUnaryMethod_RejectPayout<
                pb::SupervisorService::WithRawCallbackMethod_WatchPendingPayouts<
                    pb::SupervisorService::Service>>>>>;

class SupervisorServiceImpl final : public SupervisorServiceBase {
 public:
  SupervisorServiceImpl(EngineHost& host, const StartGate& gate, StreamLimits limits,
                        RefusedActs* refused_acts)
      : host_(host),
        gate_(gate),
        feed_(std::make_shared<PayoutFeed>(
            limits, host.read([](const Engine& engine) { return engine.pending_payouts(); }))),
        refused_acts_(refused_acts) {
    // Committed batches only reach the streams; the service may go before the host.
    host_.observe_commits([weak = std::weak_ptr<PayoutFeed>(feed_)](
                              const std::vector<Records>& batch, double, bool ok) {
      if (!ok) return;
      if (const auto feed = weak.lock()) feed->committed(batch);
    });
    host_.on_status_change([weak = std::weak_ptr<PayoutFeed>(feed_)] {
      if (const auto feed = weak.lock()) feed->poke();
    });
    host_.observe_recoveries([weak = std::weak_ptr<PayoutFeed>(feed_)](const Engine& rebuilt) {
      if (const auto feed = weak.lock()) feed->recovered(rebuilt.pending_payouts());
    });
  }

  Status StreamedRebaseRoundCounter(
      ServerContext* context,
      grpc::ServerUnaryStreamer<pb::RebaseRoundCounterRequest, pb::RebaseRoundCounterResponse>*
          stream) override {
    return serve_streamed_unary(gate_, *context, stream,
                                [&](const pb::RebaseRoundCounterRequest& request,
                                    pb::RebaseRoundCounterResponse& response) {
                                  return rebase_round_counter(*context, request, response);
                                });
  }
  Status StreamedVoidRound(
      ServerContext* context,
      grpc::ServerUnaryStreamer<pb::SupervisorVoidRoundRequest, pb::SupervisorVoidRoundResponse>*
          stream) override {
    return serve_streamed_unary(gate_, *context, stream,
                                [&](const pb::SupervisorVoidRoundRequest& request,
                                    pb::SupervisorVoidRoundResponse& response) {
                                  return void_round(*context, request, response);
                                });
  }
  Status StreamedApprovePayout(
      ServerContext* context,
      grpc::ServerUnaryStreamer<pb::ApprovePayoutRequest, pb::ApprovePayoutResponse>* stream)
      override {
    return serve_streamed_unary(
        gate_, *context, stream,
        [&](const pb::ApprovePayoutRequest& request, pb::ApprovePayoutResponse& response) {
          return decide(
              *context,
              {request.request_id(), PayoutId(request.payout_id()), PayoutDecision::approve, ""},
              *response.mutable_payout());
        });
  }
  Status StreamedRejectPayout(
      ServerContext* context,
      grpc::ServerUnaryStreamer<pb::RejectPayoutRequest, pb::RejectPayoutResponse>* stream)
      override {
    return serve_streamed_unary(
        gate_, *context, stream,
        [&](const pb::RejectPayoutRequest& request, pb::RejectPayoutResponse& response) {
          return decide(*context,
                        {request.request_id(), PayoutId(request.payout_id()),
                         PayoutDecision::reject, request.reason()},
                        *response.mutable_payout());
        });
  }
  // The pending payouts of the links asked for (every link when none) at once, then each new
  // payout that waits for a supervisor and each change of one, as committed.
  grpc::ServerWriteReactor<grpc::ByteBuffer>* WatchPendingPayouts(
      grpc::CallbackServerContext* context, const grpc::ByteBuffer* bytes) override {
    if (auto refusal = refused_before_start(gate_)) return new RefusedStream(*refusal);
    if (!call_principal(*context)) return new RefusedStream(unidentified());
    pb::WatchPendingPayoutsRequest request;
    if (auto refusal = read_request(*bytes, request)) return new RefusedStream(*refusal);
    std::set<std::string> links;
    for (const std::string& link : request.link_ids()) {
      if (host_.read([&](const Engine& engine) { return engine.link(LinkId(link)); }) == nullptr) {
        return new RefusedStream(
            to_status({EngineError::unknown_link, "no link " + quote_prefix(link)}));
      }
      links.insert(link);
    }
    return PayoutStream::open(*context, host_, feed_, std::move(links), peer_host(context->peer()));
  }

 private:
  // A supervisor's approval or rejection, as the caller's principal, answered once durable.
  Status decide(const ServerContext& context, const PayoutDecisionRequest& command,
                pb::Payout& out) {
    const std::string supervisor = caller(context);  // A supervisor (access_rules.h).
    const auto decided = host_.run([&](Engine& engine, Records& records) {
      return engine.decide_payout(command, supervisor, records);
    });
    if (!decided) {
      record_refusal(
          supervisor, "payout.refused", decided.error(),
          {{"payout_id", std::to_string(command.payout.value())},
           {"request_id", command.request_id},
           {"decision", command.decision == PayoutDecision::approve ? "approve" : "reject"},
           {"reason", command.reason}});
      return to_status(decided.error());
    }
    fill_payout(*decided, out);
    return Status::OK;
  }

  // A supervisor's act the engine refused, on its way to the audit trail (who tried what, and
  // why it was refused: RefusedActs), unless it was refused for want of a database, which could
  // not record it either. The caller gets the refusal at once.
  void record_refusal(const std::string& principal, const std::string& action,
                      const EngineFailure& failure,
                      std::vector<std::pair<std::string, std::string>> detail) {
    if (refused_acts_ == nullptr || failure.code == EngineError::link_unavailable ||
        failure.code == EngineError::database_unavailable) {
      return;
    }
    detail.emplace_back("refusal", std::string(to_string(failure.code)));
    detail.emplace_back("message", failure.message);
    // The trail's detail is JSON text: a NUL (which a refused request may hold) cannot be in it.
    for (auto& [key, value] : detail) std::replace(value.begin(), value.end(), '\0', '?');
    refused_acts_->add({principal, action, std::move(detail)});
  }

  Status void_round(const ServerContext& context, const pb::SupervisorVoidRoundRequest& request,
                    pb::SupervisorVoidRoundResponse& response) {
    const SupervisorVoidRequest command{request.request_id(), TableId(request.table_id()),
                                        RoundId(request.round_id()), request.reason()};
    const std::string supervisor = caller(context);  // A supervisor (access_rules.h).
    const auto voided = host_.run([&](Engine& engine, Records& records) {
      return engine.supervisor_void_round(command, supervisor, records);
    });
    if (!voided) {
      record_refusal(supervisor, "round.void_refused", voided.error(),
                     {{"request_id", command.request_id},
                      {"table_id", command.table.value()},
                      {"round_id", std::to_string(command.round.value())},
                      {"reason", command.reason}});
      return to_status(voided.error());
    }
    response.set_table_id(voided->table.value());
    response.set_round_id(voided->round.value());
    response.set_state(voided->outcome == SupervisorVoidOutcome::voided
                           ? pb::ROUND_VOID_STATE_VOIDED
                           : pb::ROUND_VOID_STATE_REQUESTED);
    response.set_reversed_micros(voided->reversed.micros());
    for (const PayoutId payout : voided->payouts) response.add_payout_ids(payout.value());
    for (const PayoutId payout : voided->rejected) {
      response.add_rejected_payout_ids(payout.value());
    }
    response.set_requested_by(voided->supervisor);
    set_time(voided->time_us, *response.mutable_voided_time());
    return Status::OK;
  }

  Status rebase_round_counter(const ServerContext& context,
                              const pb::RebaseRoundCounterRequest& request,
                              pb::RebaseRoundCounterResponse& response) {
    const RebaseRoundCounterRequest command{request.request_id(), TableId(request.table_id()),
                                            RoundId(request.next_round_id()), request.reason()};
    const std::string principal = caller(context);  // A supervisor (access_rules.h).
    const auto rebased = host_.run([&](Engine& engine, Records& records) {
      return engine.rebase_round_counter(command, principal, records);
    });
    if (!rebased) {
      record_refusal(principal, "round_counter.rebase_refused", rebased.error(),
                     {{"table_id", request.table_id()},
                      {"request_id", request.request_id()},
                      {"next_round_id", std::to_string(request.next_round_id())},
                      {"reason", request.reason()}});
      return to_status(rebased.error());
    }
    response.set_table_id(rebased->table.value());
    response.set_epoch(rebased->epoch);
    response.set_last_round_id(rebased->last_round.value());
    response.set_next_round_id(rebased->next_round.value());
    response.set_requested_by(rebased->requested_by);
    set_time(rebased->time_us, *response.mutable_rebased_time());
    return Status::OK;
  }

  EngineHost& host_;
  const StartGate& gate_;
  std::shared_ptr<PayoutFeed> feed_;
  RefusedActs* refused_acts_;  // Null without a database.
};

// ---- SignService -----------------------------------------------------------------------------

class SignStream;

pb::PaytableLine::Kind line_kind(sign::RowKind kind) {
  switch (kind) {
    case sign::RowKind::percent:
      return pb::PaytableLine::KIND_PERCENT;
    case sign::RowKind::fixed:
      return pb::PaytableLine::KIND_FIXED;
    case sign::RowKind::dynamic:
      return pb::PaytableLine::KIND_DYNAMIC;
    case sign::RowKind::must_hit_by:
      return pb::PaytableLine::KIND_MUST_HIT_BY;
  }
  return pb::PaytableLine::KIND_UNSPECIFIED;
}

pb::LinkStatus shown_status(sign::LinkShownStatus status) {
  switch (status) {
    case sign::LinkShownStatus::open:
      return pb::LINK_STATUS_OPEN;
    case sign::LinkShownStatus::closed:
      return pb::LINK_STATUS_CLOSED;
    case sign::LinkShownStatus::unavailable:
      return pb::LINK_STATUS_UNAVAILABLE;
  }
  return pb::LINK_STATUS_UNSPECIFIED;
}

std::int64_t unix_now_us() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// A state as a sign watching `watch` is sent it; the placards of its tables when `paytables`.
void fill_sign_snapshot(const sign::SignState& state, const sign::Watch& watch,
                        const sign::SignFloor* paytables, pb::MeterSnapshot& out) {
  out.set_sequence(state.sequence);
  set_time(state.built_us, *out.mutable_published_time());
  for (const sign::LinkShown& link : state.links) {
    if (!watch.shows_link(link.link)) continue;
    pb::SignLinkStatus& status = *out.add_links();
    status.set_link_id(link.link);
    status.set_status(shown_status(link.status));
    for (const sign::LevelShown& level : link.levels) {
      pb::LevelMeter& meter = *out.add_levels();
      meter.set_link_id(link.link);
      meter.set_level(level.level);
      meter.set_name(level.name);
      meter.set_amount_cents(level.amount_cents);
      meter.set_must_hit_by_cents(level.must_hit_by_cents);
      meter.set_ceiling_cents(level.ceiling_cents);
      if (level.trigger) {
        pb::TriggerCommitment& commitment = *out.add_trigger_commitments();
        commitment.set_link_id(link.link);
        commitment.set_level(level.level);
        commitment.set_commitment(level.trigger->commitment.data(),
                                  level.trigger->commitment.size());
        commitment.set_above_micros(level.trigger->above.micros());
        commitment.set_up_to_micros(level.trigger->up_to.micros());
      }
    }
  }
  for (const sign::TableShown& table : state.tables) {
    if (watch.tables.count(table.table) == 0) continue;
    pb::TableDynamicPays& pays = *out.add_tables();
    pays.set_table_id(table.table);
    pays.set_round_id(table.round);
    for (const sign::TableShown::LinkPays& link : table.links) {
      pb::DynamicPaySelection& selection = *pays.add_selections();
      selection.set_link_id(link.link);
      selection.set_paytable_id(link.paytable);
      for (const sign::DynamicPayShown& pay : link.pays) {
        pb::DynamicPay& shown = *selection.add_pays();
        shown.set_hand(pay.hand);
        shown.set_option(pay.option);
        shown.set_amount_cents(pay.amount_cents);
      }
    }
  }
  for (const sign::HitShown& hit : state.hits) {
    if (!watch.shows_link(hit.link)) continue;
    pb::HitAnnouncement& shown = *out.add_hits();
    shown.set_link_id(hit.link);
    shown.set_level(hit.level);
    shown.set_table_id(hit.table);
    shown.set_round_id(hit.round);
    shown.set_seat(hit.seat);
    shown.set_hand(hit.hand);
    shown.set_amount_cents(hit.amount_cents);
    set_time(hit.hit_us, *shown.mutable_hit_time());
    shown.set_reset_cents(hit.reset_cents);
  }
  if (paytables == nullptr) return;
  for (const sign::TableFacts& table : paytables->tables) {
    if (watch.tables.count(table.table) == 0) continue;
    for (const sign::TableLinkFacts& link : table.links) {
      pb::TablePaytable& placard = *out.add_paytables();
      placard.set_table_id(table.table);
      placard.set_link_id(link.link);
      placard.set_paytable_id(link.paytable);
      for (const sign::PaytableRowShown& row : link.rows) {
        pb::PaytableLine& line = *placard.add_lines();
        line.set_hand(row.hand);
        line.set_kind(line_kind(row.kind));
        line.set_level(row.level);
        line.set_percent(row.percent);
        line.set_amount_cents(row.amount_cents);
        for (const std::int64_t option : row.option_cents) line.add_option_cents(option);
        line.set_envy_cents(row.envy_cents);
      }
    }
  }
}

template <typename Message>
std::optional<grpc::ByteBuffer> serialized(const Message& message) {
  grpc::ByteBuffer bytes;
  bool own_buffer = false;
  if (!grpc::SerializationTraits<Message>::Serialize(message, &bytes, &own_buffer).ok()) {
    return std::nullopt;
  }
  return bytes;
}

// Every open WatchMeters stream: the bounds on how many, and the latest encoding of a state per
// watch, so that a thousand signs watching the same links share one encoding. The service's
// SlicedFanOut pumps them at each publication.
class SignStreams {
 public:
  SignStreams(SignFeed& feed, StreamLimits limits) : feed_(feed), streams_(limits) {}

  WatchSet<SignStream>& set() { return streams_; }
  std::optional<std::string> add(SignStream* stream, const std::string& peer) {
    auto refused = streams_.add(stream, peer);
    if (!refused) feed_.counts().grpc_streams.fetch_add(1);
    return refused;
  }
  void remove(SignStream* stream, const std::string& peer) {
    streams_.remove(stream, peer);
    feed_.counts().grpc_streams.fetch_sub(1);
  }

  // The state's update for `watch`, encoded once per state and watch.
  std::optional<grpc::ByteBuffer> encoded(const sign::SignState& state, const sign::Watch& watch) {
    return encodings_.get(watch.key(), state.sequence, [&] {
      pb::SignUpdate update;
      fill_sign_snapshot(state, watch, nullptr, *update.mutable_meters());
      return serialized(update);
    });
  }

  SignFeed& feed() { return feed_; }

 private:
  SignFeed& feed_;
  WatchSet<SignStream> streams_;
  sign::LatestEncodings<grpc::ByteBuffer> encodings_;
};

// One sign's WatchMeters stream: the snapshot with its tables' placards at once, then the latest
// state at each publication it is woken for (pace()), or a heartbeat after a quiet spell, one
// write at a time: a sign still busy with a write is sent the latest once it is done, never a
// backlog. Finishes OK when the feed stops, CANCELLED when the client cancels.
class SignStream final : public WriteStream {
 public:
  static grpc::ServerWriteReactor<grpc::ByteBuffer>* open(std::shared_ptr<SignStreams> streams,
                                                          sign::Watch watch, std::string peer) {
    auto* stream = new SignStream(streams, std::move(watch), std::move(peer));
    if (auto refused = streams->add(stream, stream->peer_)) {
      delete stream;
      return new RefusedStream(Status(StatusCode::RESOURCE_EXHAUSTED, *refused));
    }
    stream->pump();
    return stream;
  }

 private:
  SignStream(std::shared_ptr<SignStreams> streams, sign::Watch watch, std::string peer)
      : streams_(std::move(streams)), watch_(std::move(watch)), peer_(std::move(peer)) {}
  ~SignStream() override = default;

  Step next(bool cancelled) override {
    if (cancelled) return finish(cancelled_by_client());
    SignFeed& feed = streams_->feed();
    if (feed.stopping()) return finish(Status::OK);
    const std::shared_ptr<const sign::SignState> latest = feed.publisher().latest();
    const std::int64_t now = unix_now_us();
    if (!snapshot_sent_) {
      snapshot_sent_ = true;
      sent_ = latest->sequence;
      last_sent_us_ = now;
      pb::SignUpdate update;
      fill_sign_snapshot(*latest, watch_, &feed.floor(), *update.mutable_meters());
      return write_message(update, "a sign snapshot");
    }
    switch (sign::pace(latest->sequence, sent_, last_sent_us_, now, feed.pace()).kind) {
      case sign::PaceDecision::Kind::wait:
        return nothing();
      case sign::PaceDecision::Kind::send_state: {
        feed.counts().grpc_skipped.fetch_add(latest->sequence - sent_ - 1);
        sent_ = latest->sequence;
        last_sent_us_ = now;
        auto bytes = streams_->encoded(*latest, watch_);
        if (!bytes)
          return finish(Status(StatusCode::INTERNAL, "a sign update could not be serialised"));
        return write(std::move(*bytes));
      }
      case sign::PaceDecision::Kind::send_heartbeat: {
        last_sent_us_ = now;
        pb::SignUpdate update;
        update.mutable_heartbeat()->set_sequence(sent_);
        set_time(now, *update.mutable_heartbeat()->mutable_sent_time());
        return write_message(update, "a sign heartbeat");
      }
    }
    return nothing();
  }
  void detach() override { streams_->remove(this, peer_); }

  std::shared_ptr<SignStreams> streams_;
  const sign::Watch watch_;
  const std::string peer_;
  bool snapshot_sent_ = false;
  std::uint64_t sent_ = 0;  // The sequence of the last state sent.
  std::int64_t last_sent_us_ = 0;
};

using SignServiceBase =
    pb::SignService::WithRawCallbackMethod_WatchMeters<pb::SignService::Service>;

class SignServiceImpl final : public SignServiceBase {
 public:
  SignServiceImpl(SignFeed& feed, const StartGate& gate, StreamLimits limits,
                  RefusalObserver refused)
      : feed_(feed),
        gate_(gate),
        refused_(std::move(refused)),
        streams_(std::make_shared<SignStreams>(feed, limits)),
        fan_out_(std::make_shared<SlicedFanOut<SignStream>>(
            std::shared_ptr<WatchSet<SignStream>>(streams_, &streams_->set()), "sign-fan-out")) {
    subscription_ = feed.publisher().subscribe([weak = std::weak_ptr(fan_out_)] {
      if (const auto fan_out = weak.lock()) fan_out->wake();
    });
  }
  // A wakeup already under way on the feed's thread may hold the fan-out a moment longer: it is
  // then destroyed there (after the feed stopped, at the daemon's end), running any pass owed.
  ~SignServiceImpl() override { feed_.publisher().unsubscribe(subscription_); }

  grpc::ServerWriteReactor<grpc::ByteBuffer>* WatchMeters(grpc::CallbackServerContext* context,
                                                          const grpc::ByteBuffer* bytes) override {
    if (auto refusal = refused_before_start(gate_)) return new RefusedStream(*refusal);
    pb::WatchMetersRequest request;
    if (auto refusal = read_request(*bytes, request)) return new RefusedStream(*refusal);
    if (auto refusal =
            refused_acting(*context, "/jackpot.v1.SignService/WatchMeters", request, refused_)) {
      return new RefusedStream(*refusal);
    }
    sign::Watch watch;
    const sign::SignFloor& floor = feed_.floor();
    for (const std::string& link : request.link_ids()) {
      const bool known =
          std::any_of(floor.links.begin(), floor.links.end(),
                      [&](const sign::LinkFacts& facts) { return facts.link == link; });
      if (!known) {
        return new RefusedStream(
            to_status({EngineError::unknown_link, "no link " + quote_prefix(link)}));
      }
      watch.links.insert(link);
    }
    for (const std::string& table : request.table_ids()) {
      const bool known =
          std::any_of(floor.tables.begin(), floor.tables.end(),
                      [&](const sign::TableFacts& facts) { return facts.table == table; });
      if (!known) {
        return new RefusedStream(
            to_status({EngineError::unknown_table, "no table " + quote_prefix(table)}));
      }
      watch.tables.insert(table);
    }
    return SignStream::open(streams_, std::move(watch), peer_host(context->peer()));
  }

 private:
  SignFeed& feed_;
  const StartGate& gate_;
  RefusalObserver refused_;
  std::shared_ptr<SignStreams> streams_;
  std::shared_ptr<SlicedFanOut<SignStream>> fan_out_;  // After streams_: it goes first.
  std::uint64_t subscription_ = 0;
};
}  // namespace

void StartGate::open(ConfigInForce config) {
  JACKPOT_INVARIANT(!opened_.load(), "the start gate opened twice");
  config_ = std::move(config);
  opened_.store(true, std::memory_order_release);
}

std::unique_ptr<grpc::Service> make_table_service(EngineHost& host, const StartGate& gate,
                                                  StreamLimits limits, RefusalObserver refused) {
  return std::make_unique<TableServiceImpl>(host, gate, limits, std::move(refused));
}

std::unique_ptr<grpc::Service> make_admin_service(EngineHost& host, ReconciliationSource* reports,
                                                  const StartGate& gate) {
  return std::make_unique<AdminServiceImpl>(host, reports, gate);
}

std::unique_ptr<grpc::Service> make_supervisor_service(EngineHost& host, const StartGate& gate,
                                                       StreamLimits limits,
                                                       RefusedActs* refused_acts) {
  return std::make_unique<SupervisorServiceImpl>(host, gate, limits, refused_acts);
}

std::unique_ptr<grpc::Service> make_sign_service(SignFeed& feed, const StartGate& gate,
                                                 StreamLimits limits, RefusalObserver refused) {
  return std::make_unique<SignServiceImpl>(feed, gate, limits, std::move(refused));
}

}  // namespace jackpot
