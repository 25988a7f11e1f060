#pragma once

#include <memory>

#include "controller/engine_host.h"

namespace grpc {
class Service;
}

namespace jackpot {

// The gRPC adapters over the engine: thin translations between jackpot.v1 messages and engine
// requests and answers, and one table from EngineError to gRPC status codes. Only this module
// includes the generated gRPC headers.
std::unique_ptr<grpc::Service> make_table_service(EngineHost& host);
// `reports` may be null (no database): GetReconciliationReport is then UNAVAILABLE.
std::unique_ptr<grpc::Service> make_admin_service(EngineHost& host, ReconciliationSource* reports);

}  // namespace jackpot
