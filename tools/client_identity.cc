#include "tools/client_identity.h"

#include <grpcpp/support/client_interceptor.h>

#include <fstream>
#include <sstream>
#include <vector>

namespace jackpot::tools {
namespace {

bool read(const std::string& path, std::string& text) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  std::stringstream buffer;
  buffer << in.rdbuf();
  text = buffer.str();
  return true;
}

// Names the principal on every call of a plaintext channel.
class NamePrincipal final : public grpc::experimental::Interceptor {
 public:
  explicit NamePrincipal(const std::string& principal) : principal_(principal) {}
  void Intercept(grpc::experimental::InterceptorBatchMethods* methods) override {
    if (methods->QueryInterceptionHookPoint(
            grpc::experimental::InterceptionHookPoints::PRE_SEND_INITIAL_METADATA)) {
      methods->GetSendInitialMetadata()->insert({"jackpot-principal", principal_});
    }
    methods->Proceed();
  }

 private:
  const std::string principal_;
};

class NamePrincipalFactory final : public grpc::experimental::ClientInterceptorFactoryInterface {
 public:
  explicit NamePrincipalFactory(std::string principal) : principal_(std::move(principal)) {}
  grpc::experimental::Interceptor* CreateClientInterceptor(
      grpc::experimental::ClientRpcInfo*) override {
    return new NamePrincipal(principal_);
  }

 private:
  const std::string principal_;
};

}  // namespace

std::shared_ptr<grpc::Channel> channel_as(const Connection& connection,
                                          const std::string& principal,
                                          const grpc::ChannelArguments& arguments,
                                          std::string& error) {
  if (connection.plaintext) {
    std::vector<std::unique_ptr<grpc::experimental::ClientInterceptorFactoryInterface>> naming;
    naming.push_back(std::make_unique<NamePrincipalFactory>(principal));
    return grpc::experimental::CreateCustomChannelWithInterceptors(
        connection.target, grpc::InsecureChannelCredentials(), arguments, std::move(naming));
  }
  if (connection.pki_dir.empty()) {
    error =
        "no certificates: give --pki DIR (a directory ops/pki made), or --plaintext against "
        "a daemon started with --plaintext on";
    return nullptr;
  }
  const auto slash = principal.find('/');
  const std::string name = slash == std::string::npos
                               ? principal
                               : principal.substr(0, slash) + "-" + principal.substr(slash + 1);
  grpc::SslCredentialsOptions options;
  for (const auto& [path, into] :
       {std::pair{connection.pki_dir + "/ca.pem", &options.pem_root_certs},
        std::pair{connection.pki_dir + "/" + name + ".pem", &options.pem_cert_chain},
        std::pair{connection.pki_dir + "/" + name + ".key", &options.pem_private_key}}) {
    if (!read(path, *into)) {
      error = "cannot read " + path + " (ops/pki client " + connection.pki_dir + " " +
              (slash == std::string::npos
                   ? principal
                   : principal.substr(0, slash) + " " + principal.substr(slash + 1)) +
              " makes it)";
      return nullptr;
    }
  }
  return grpc::CreateCustomChannel(connection.target, grpc::SslCredentials(options), arguments);
}

const char* status_code_name(grpc::StatusCode code) {
  switch (code) {
    case grpc::StatusCode::OK:
      return "OK";
    case grpc::StatusCode::CANCELLED:
      return "CANCELLED";
    case grpc::StatusCode::INVALID_ARGUMENT:
      return "INVALID_ARGUMENT";
    case grpc::StatusCode::DEADLINE_EXCEEDED:
      return "DEADLINE_EXCEEDED";
    case grpc::StatusCode::NOT_FOUND:
      return "NOT_FOUND";
    case grpc::StatusCode::ALREADY_EXISTS:
      return "ALREADY_EXISTS";
    case grpc::StatusCode::PERMISSION_DENIED:
      return "PERMISSION_DENIED";
    case grpc::StatusCode::RESOURCE_EXHAUSTED:
      return "RESOURCE_EXHAUSTED";
    case grpc::StatusCode::FAILED_PRECONDITION:
      return "FAILED_PRECONDITION";
    case grpc::StatusCode::ABORTED:
      return "ABORTED";
    case grpc::StatusCode::OUT_OF_RANGE:
      return "OUT_OF_RANGE";
    case grpc::StatusCode::UNIMPLEMENTED:
      return "UNIMPLEMENTED";
    case grpc::StatusCode::INTERNAL:
      return "INTERNAL";
    case grpc::StatusCode::UNAVAILABLE:
      return "UNAVAILABLE";
    case grpc::StatusCode::DATA_LOSS:
      return "DATA_LOSS";
    case grpc::StatusCode::UNAUTHENTICATED:
      return "UNAUTHENTICATED";
    default:
      return "UNKNOWN";
  }
}

}  // namespace jackpot::tools
