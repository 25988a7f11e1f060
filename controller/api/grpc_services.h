#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "controller/api/refused_acts.h"
#include "controller/api/stream_limits.h"
#include "controller/api/transport_security.h"
#include "controller/host/engine_host.h"

namespace grpc {
class Service;
}

namespace jackpot {

class SignFeed;

// The configuration in force, as AdminService.GetConfig answers it. Nothing secret: the floor
// as loaded and the shipped paytables its tables use (hidden Must-Hit-By points are drawn at run
// time and never part of it).
struct ConfigInForce {
  std::uint64_t floor_version = 0;  // floor_versions.version of the floor's text.
  std::string floor_text;
  std::string floor_file;    // --floor as given.
  std::string floor_sha256;  // Of floor_text, lower-case hex.
  struct PaytableText {
    std::string id;
    std::string text;
  };
  std::vector<PaytableText> paytables;  // Those the floor's tables use, by id.
  std::string daemon_version;
};

// Closed until the daemon's start is on record (the daemon.start audit event, which names the
// floor version): until then TableService and AdminService answer every call UNAVAILABLE, so
// that no round is opened and nothing is changed under a floor that is not on record, and a
// start that fails after the server started leaves nothing behind. Opened once.
class StartGate {
 public:
  void open(ConfigInForce config);
  // The configuration in force once the gate is open; null before.
  const ConfigInForce* config() const {
    return opened_.load(std::memory_order_acquire) ? &config_ : nullptr;
  }

 private:
  ConfigInForce config_;
  std::atomic<bool> opened_{false};
};

// The gRPC adapters over the engine: thin translations between jackpot.v1 messages and engine
// requests and answers, and one table from EngineError to gRPC status codes. Only this module
// includes the generated gRPC headers. Both services answer UNAVAILABLE until `gate` opens.
// WatchLinkStatus streams beyond `limits` are refused RESOURCE_EXHAUSTED. Every call has passed
// the transport's authorisation (transport_security.h); a table's request for another table is
// refused PERMISSION_DENIED here, where the request is read, and counted through `refused`.
std::unique_ptr<grpc::Service> make_table_service(EngineHost& host, const StartGate& gate,
                                                  StreamLimits limits = {},
                                                  RefusalObserver refused = {});
// `reports` may be null (no database): GetReconciliationReport is then UNAVAILABLE.
std::unique_ptr<grpc::Service> make_admin_service(EngineHost& host, ReconciliationSource* reports,
                                                  const StartGate& gate);
// Payout approval and rejection, the pending payouts stream and RebaseRoundCounter (UNAVAILABLE
// until `gate` opens). WatchPendingPayouts streams beyond `limits` are refused
// RESOURCE_EXHAUSTED. A decision or re-base the engine refuses goes on the audit trail through
// `refused_acts` (payout.refused, round_counter.rebase_refused, round.void_refused); null: nowhere.
std::unique_ptr<grpc::Service> make_supervisor_service(EngineHost& host, const StartGate& gate,
                                                       StreamLimits limits = {},
                                                       RefusedActs* refused_acts = nullptr);

// SignService.WatchMeters over `feed` (UNAVAILABLE until `gate` opens): a sign's stream shows
// the links and tables it asks for. Streams beyond `limits` are refused RESOURCE_EXHAUSTED; a sign
// acting for another sign_id is refused PERMISSION_DENIED and counted through `refused`. The
// service owns a thread (sign-fan-out) that hands each publication to the streams in slices.
// `feed` must outlive the service and the server.
std::unique_ptr<grpc::Service> make_sign_service(SignFeed& feed, const StartGate& gate,
                                                 StreamLimits limits, RefusalObserver refused = {});

}  // namespace jackpot
