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

}  // namespace jackpot::tools
