#pragma once

// How the tools reach jackpotd as a principal: over mutual TLS with the principal's certificate
// from a directory ops/pki made (DIR/ca.pem, DIR/ROLE-ID.pem and .key), or, against a daemon
// started with --plaintext on (development), without TLS, naming the principal in the
// jackpot-principal metadata of every call.

#include <grpcpp/grpcpp.h>

#include <memory>
#include <string>

namespace jackpot::tools {

struct Connection {
  std::string target = "127.0.0.1:50051";
  std::string pki_dir;     // ops/pki's directory; required unless plaintext.
  bool plaintext = false;  // Development: --plaintext on at the daemon.
};

// A channel to `connection.target` as `principal` ("table/T1"); null with `error` set when the
// certificate files cannot be read.
std::shared_ptr<grpc::Channel> channel_as(const Connection& connection,
                                          const std::string& principal,
                                          const grpc::ChannelArguments& arguments,
                                          std::string& error);

// The status code's name as gRPC spells it ("FAILED_PRECONDITION"), for the tools' messages.
const char* status_code_name(grpc::StatusCode code);

}  // namespace jackpot::tools
