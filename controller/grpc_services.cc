#include "controller/grpc_services.h"

#include <grpcpp/grpcpp.h>

#include <chrono>

#include "controller/report_period.h"
#include "controller/request_checks.h"
#include "controller/request_limits.h"
#include "jackpot/v1/admin.grpc.pb.h"
#include "jackpot/v1/supervisor.grpc.pb.h"
#include "jackpot/v1/table.grpc.pb.h"
#include "meters/invariant.h"

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
      return StatusCode::FAILED_PRECONDITION;
    case EngineError::link_unavailable:
      return StatusCode::UNAVAILABLE;
    case EngineError::invalid_argument:
      return StatusCode::INVALID_ARGUMENT;
  }
  return StatusCode::INTERNAL;
}

Status to_status(const EngineFailure& failure) {
  return Status(status_code(failure.code), failure.message);
}

void fill_meter(const LevelMeterView& view, pb::LevelMeter* meter) {
  meter->set_link_id(view.link.value());
  meter->set_level(view.level);
  meter->set_name(view.name);
  meter->set_amount_cents(view.meter.cents_floor());
  if (view.must_hit_by) meter->set_must_hit_by_cents(view.must_hit_by->cents_floor());
  if (view.ceiling) meter->set_ceiling_cents(view.ceiling->cents_floor());
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

// Who is calling, for the record: the identity of the client's certificate once mutual TLS
// authenticates callers, and until then the unauthenticated peer's address.
std::string caller(const ServerContext& context) {
  const auto auth = context.auth_context();
  if (auth != nullptr && auth->IsPeerAuthenticated()) {
    std::string identity;
    for (const auto& part : auth->GetPeerIdentity()) {
      identity += (identity.empty() ? "" : ",") + std::string(part.data(), part.size());
    }
    if (!identity.empty()) return identity;
  }
  return "unauthenticated " + context.peer();
}

std::vector<std::string> strings(const google::protobuf::RepeatedPtrField<std::string>& field) {
  return {field.begin(), field.end()};
}

// Every call before the daemon's start is on record (StartGate).
Status starting() {
  return Status(StatusCode::UNAVAILABLE,
                "jackpotd is starting: its start is not on record yet; retry");
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

// Parses and checks the request of a raw unary call, then hands the call to `serve`; a request
// that does not parse or is too large is INVALID_ARGUMENT and never reaches the engine.
template <typename Request, typename Response, typename Serve>
grpc::ServerUnaryReactor* serve_unary(grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* bytes, grpc::ByteBuffer* out,
                                      Serve serve) {
  grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
  auto call = std::make_shared<UnaryCall<Request, Response>>(reactor, out);
  if (auto refusal = read_request(*bytes, call->request)) {
    call->finish(*refusal);
    return reactor;
  }
  serve(std::move(call));
  return reactor;
}

// The round commands use gRPC's callback API: a call waiting for its batch to commit holds no
// thread, and the committer answers a whole batch at once (docs/architecture.md §7). They are
// raw methods that parse their own requests, so that bytes that do not parse are
// INVALID_ARGUMENT with a message (read_request).
using TableServiceBase = pb::TableService::WithRawCallbackMethod_OpenRound<
    pb::TableService::WithRawCallbackMethod_LockWagers<
        pb::TableService::WithRawCallbackMethod_SettleRound<
            pb::TableService::WithRawCallbackMethod_VoidRound<
                pb::TableService::WithSplitStreamingMethod_WatchLinkStatus<
                    pb::TableService::Service>>>>>;

class TableServiceImpl final : public TableServiceBase {
 public:
  TableServiceImpl(EngineHost& host, const StartGate& gate) : host_(host), gate_(gate) {}

  grpc::ServerUnaryReactor* OpenRound(grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override {
    return serve_unary<pb::OpenRoundRequest, pb::OpenRoundResponse>(
        context, request, response, [this](auto call) { open_round(std::move(call)); });
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
        context, request, response, [this](auto call) { lock_wagers(std::move(call)); });
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
          }
        });
  }

  grpc::ServerUnaryReactor* SettleRound(grpc::CallbackServerContext* context,
                                        const grpc::ByteBuffer* request,
                                        grpc::ByteBuffer* response) override {
    return serve_unary<pb::SettleRoundRequest, pb::SettleRoundResponse>(
        context, request, response, [this](auto call) { settle_round(std::move(call)); });
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
            }
          }
          fill_meters(answer.meters, response->mutable_meters());
        });
  }

  grpc::ServerUnaryReactor* VoidRound(grpc::CallbackServerContext* context,
                                      const grpc::ByteBuffer* request,
                                      grpc::ByteBuffer* response) override {
    return serve_unary<pb::VoidRoundRequest, pb::VoidRoundResponse>(
        context, request, response, [this](auto call) { void_round(std::move(call)); });
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

  // The status of every link the table plays at once, then every change, until the call ends.
  // A split-streaming method reads its own request: bytes that do not parse are INVALID_ARGUMENT.
  Status StreamedWatchLinkStatus(ServerContext* context,
                                 grpc::ServerSplitStreamer<pb::WatchLinkStatusRequest,
                                                           pb::LinkStatusUpdate>* writer) override {
    pb::WatchLinkStatusRequest request;
    if (!writer->Read(&request)) return unparsable<pb::WatchLinkStatusRequest>();
    if (auto problem = request_problem(request)) {
      return Status(StatusCode::INVALID_ARGUMENT, *problem);
    }
    if (gate_.config() == nullptr) return starting();
    const TableId table(request.table_id());
    const auto links =
        host_.read([&](const Engine& engine) { return engine.links_of_table(table); });
    if (links.empty())
      return Status(StatusCode::NOT_FOUND, "no table " + quote_prefix(table.value()));
    std::map<std::string, LinkStatus> sent;
    std::uint64_t version = host_.status_version();
    while (!context->IsCancelled() && !host_.stopping()) {
      for (const LinkId& link : links) {
        const LinkStatus status =
            host_.read_durable([&](const Engine& engine) { return engine.link_status(link); })
                .value_or(LinkStatus::unavailable);
        const auto it = sent.find(link.value());
        if (it != sent.end() && it->second == status) continue;
        pb::LinkStatusUpdate update;
        update.set_link_id(link.value());
        update.set_status(link_status(status));
        update.set_reason(status == LinkStatus::open     ? "open"
                          : status == LinkStatus::closed ? "closed by an operator"
                                                         : "the controller cannot record changes");
        if (!writer->Write(update)) return Status::OK;
        sent[link.value()] = status;
      }
      version = host_.wait_for_status_change(version, std::chrono::milliseconds(500));
    }
    return Status::OK;
  }

 private:
  // Runs `command` on the engine now and finishes the call once its answer is durable: `fill`
  // writes a successful answer into the response; a refusal or a lost batch becomes its status.
  template <typename Request, typename Response, typename Command, typename Fill>
  void answer_when_durable(UnaryCallPtr<Request, Response> call, Command&& command, Fill fill) {
    if (gate_.config() == nullptr) {
      call->finish(starting());
      return;
    }
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
                            pb::AdminService::Service>>>>>>>;

class AdminServiceImpl final : public AdminServiceBase {
 public:
  AdminServiceImpl(EngineHost& host, ReconciliationSource* reports, const StartGate& gate)
      : host_(host), reports_(reports), gate_(gate) {}

  Status GetConfig(ServerContext*, const pb::GetConfigRequest*,
                   pb::GetConfigResponse* response) override {
    const ConfigInForce* config = gate_.config();
    if (config == nullptr) return starting();
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

  // Not implemented yet (issue #14 adds it): what the generated service answers.
  Status AdjustMeter(ServerContext* context, const pb::AdjustMeterRequest* request,
                     pb::AdjustMeterResponse* response) override {
    return pb::AdminService::Service::AdjustMeter(context, request, response);
  }

  Status GetReconciliationReport(ServerContext*, const pb::ReconciliationReportRequest* request,
                                 pb::ReconciliationReport* response) override {
    if (gate_.config() == nullptr) return starting();
    if (reports_ == nullptr) return Status(StatusCode::UNAVAILABLE, "no database");
    std::vector<LinkId> links;
    for (const auto& id : request->link_ids()) links.emplace_back(id);
    const auto period =
        check_report_period(wire_time(request->from_time(), request->has_from_time()),
                            wire_time(request->to_time(), request->has_to_time()), now_unix_us());
    if (!period) return Status(StatusCode::INVALID_ARGUMENT, period.error());
    const auto [from, to] = *period;
    // Up to now: the end is a snapshot recorded for this report, so that every transfer
    // committed before the request is in it.
    if (!to && !host_.snapshot_balances(SnapshotReason::request)) {
      return Status(StatusCode::UNAVAILABLE,
                    "the controller cannot record the balances now (the report's end); retry");
    }
    const auto report = reports_->reconcile(links, from, to);
    if (!report) return to_status(report.error());
    if (from) set_time(*from, *response->mutable_from_time());
    set_time(to.value_or(now_unix_us()), *response->mutable_to_time());
    for (const LinkReconciliation& link : *report) {
      if (!link.end_observed) {
        response->Clear();
        return Status(StatusCode::FAILED_PRECONDITION,
                      "no balance snapshot of link " + quote_prefix(link.link.value()) +
                          " was taken at or before to_time: the end of the period cannot be "
                          "observed; take one (TakeBalanceSnapshot) or choose a later to_time");
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

  Status TakeBalanceSnapshot(ServerContext*, const pb::TakeBalanceSnapshotRequest*,
                             pb::TakeBalanceSnapshotResponse* response) override {
    if (gate_.config() == nullptr) return starting();
    if (reports_ == nullptr) return Status(StatusCode::UNAVAILABLE, "no database");
    const auto taken = host_.snapshot_balances(SnapshotReason::request);
    if (!taken) {
      return Status(StatusCode::UNAVAILABLE,
                    "the controller cannot record changes now: no snapshot taken; retry");
    }
    for (const BalanceSnapshotRecord& snapshot : *taken) {
      auto* out = response->add_links();
      out->set_link_id(snapshot.link.value());
      out->set_through_transfer_id(snapshot.through.value());
    }
    return Status::OK;
  }

  Status AuditBalances(ServerContext*, const pb::AuditBalancesRequest*,
                       pb::AuditBalancesResponse* response) override {
    if (gate_.config() == nullptr) return starting();
    if (reports_ == nullptr) return Status(StatusCode::UNAVAILABLE, "no database");
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

  Status ListMeters(ServerContext*, const pb::ListMetersRequest* request,
                    pb::ListMetersResponse* response) override {
    if (gate_.config() == nullptr) return starting();
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
      }
      return 0;
    });
    if (!read) {
      response->clear_levels();
      return Status(StatusCode::UNAVAILABLE,
                    "the meters are not durable: the database is unavailable; retry");
    }
    return Status::OK;
  }

  Status SetLinkStatus(ServerContext* context, const pb::SetLinkStatusRequest* request,
                       pb::SetLinkStatusResponse* response) override {
    if (gate_.config() == nullptr) return starting();
    if (request->status() != pb::LINK_STATUS_OPEN && request->status() != pb::LINK_STATUS_CLOSED) {
      return Status(StatusCode::INVALID_ARGUMENT, "a link can be set OPEN or CLOSED");
    }
    if (request->reason().empty()) {
      return Status(StatusCode::INVALID_ARGUMENT, "a status change needs a reason");
    }
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
  // Reads the one request of a unary call, checks it and runs `method` on it: the status of a
  // request that does not parse or is too large, or the method's.
  template <typename Request, typename Response>
  Status serve_unary(ServerContext* context, Streamer<Request, Response>* stream,
                     Status (AdminServiceImpl::*method)(ServerContext*, const Request*,
                                                        Response*)) {
    Request request;
    if (!stream->Read(&request)) return unparsable<Request>();
    if (auto problem = request_problem(request)) {
      return Status(StatusCode::INVALID_ARGUMENT, *problem);
    }
    Response response;
    const Status status = (this->*method)(context, &request, &response);
    if (status.ok()) stream->Write(response);
    return status;
  }

  EngineHost& host_;
  ReconciliationSource* reports_;
  const StartGate& gate_;
};

// Only RebaseRoundCounter for now: the payout RPCs answer UNIMPLEMENTED (the generated base's
// default) until the identity issue (#16) brings supervisor principals.
class SupervisorServiceImpl final : public pb::SupervisorService::Service {
 public:
  SupervisorServiceImpl(EngineHost& host, const StartGate& gate) : host_(host), gate_(gate) {}

  Status RebaseRoundCounter(ServerContext* context, const pb::RebaseRoundCounterRequest* request,
                            pb::RebaseRoundCounterResponse* response) override {
    if (gate_.config() == nullptr) return starting();
    if (auto problem = request_problem(*request)) {
      return Status(StatusCode::INVALID_ARGUMENT, *problem);
    }
    const RebaseRoundCounterRequest command{request->request_id(), TableId(request->table_id()),
                                            RoundId(request->next_round_id()), request->reason()};
    // The audit trail names a principal by role (audit_log's check); until mTLS names the
    // caller (#16), the supervisor is the unauthenticated peer.
    std::string principal = caller(*context);
    if (principal.rfind("supervisor/", 0) != 0) principal = "supervisor/" + principal;
    const auto rebased = host_.run([&](Engine& engine, Records& records) {
      return engine.rebase_round_counter(command, principal, records);
    });
    if (!rebased) return to_status(rebased.error());
    response->set_table_id(rebased->table.value());
    response->set_epoch(rebased->epoch);
    response->set_last_round_id(rebased->last_round.value());
    response->set_next_round_id(rebased->next_round.value());
    response->set_requested_by(rebased->requested_by);
    set_time(rebased->time_us, *response->mutable_rebased_time());
    return Status::OK;
  }

 private:
  EngineHost& host_;
  const StartGate& gate_;
};

}  // namespace

void StartGate::open(ConfigInForce config) {
  JACKPOT_INVARIANT(!opened_.load(), "the start gate opened twice");
  config_ = std::move(config);
  opened_.store(true, std::memory_order_release);
}

std::unique_ptr<grpc::Service> make_table_service(EngineHost& host, const StartGate& gate) {
  return std::make_unique<TableServiceImpl>(host, gate);
}

std::unique_ptr<grpc::Service> make_admin_service(EngineHost& host, ReconciliationSource* reports,
                                                  const StartGate& gate) {
  return std::make_unique<AdminServiceImpl>(host, reports, gate);
}

std::unique_ptr<grpc::Service> make_supervisor_service(EngineHost& host, const StartGate& gate) {
  return std::make_unique<SupervisorServiceImpl>(host, gate);
}

}  // namespace jackpot
