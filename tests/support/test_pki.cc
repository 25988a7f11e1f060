#include "tests/support/test_pki.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

namespace jackpot::testing {
namespace {

namespace fs = std::filesystem;

std::string read(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// "table/T1" -> "table T1" (ops/pki's arguments) and "table-T1" (its file names).
std::pair<std::string, std::string> split(const std::string& principal) {
  const auto slash = principal.find('/');
  EXPECT_NE(slash, std::string::npos) << principal;
  const std::string role = principal.substr(0, slash);
  const std::string id = principal.substr(slash + 1);
  return {role + " " + id, role + "-" + id};
}

std::string file_id(const std::string& principal, bool expired) {
  auto [args, name] = split(principal);
  return expired ? name + "-expired" : name;
}

}  // namespace

TestPki::TestPki(const std::string& name) {
  std::string pattern = (fs::temp_directory_path() / ("jackpotd-" + name + "-pki-XXXXXX")).string();
  if (::mkdtemp(pattern.data()) == nullptr) ADD_FAILURE() << "cannot make " << pattern;
  dir_ = pattern;
  run_pki("ca " + dir_);
  run_pki("server " + dir_);
  std::ofstream roster(roster_file());
  roster << "# The supervisors and admins the end-to-end tests act as.\n";
  for (const char* principal :
       {"supervisor/alice", "supervisor/bob", "supervisor/carol", "supervisor/dave",
        "supervisor/ann", "supervisor/e2e", "supervisor/S1", "admin/e2e", "admin/ops", "admin/dev",
        "admin/old", "admin/metrics"}) {
    roster << principal << "\n";
  }
  roster.close();
  // jackpotd refuses a roster its group or everyone may write, whatever the umask.
  fs::permissions(roster_file(), fs::perms::owner_read | fs::perms::owner_write);
}

TestPki::~TestPki() {
  std::error_code ignored;
  fs::remove_all(dir_, ignored);
}

TestPki& TestPki::site() {
  static TestPki pki("site");
  return pki;
}

TestPki& TestPki::other() {
  static TestPki pki("other");
  return pki;
}

void TestPki::run_pki(const std::string& args) {
  const std::string command = std::string(JACKPOTD_SOURCE_DIR) + "/ops/pki " + args + " >/dev/null";
  ASSERT_EQ(std::system(command.c_str()), 0) << command;
}

std::vector<std::string> TestPki::daemon_args() {
  return {"--tls-cert",      dir_ + "/server.pem", "--tls-key", dir_ + "/server.key",
          "--tls-client-ca", dir_ + "/ca.pem",     "--roster",  roster_file()};
}

void TestPki::make_client(const std::string& principal, bool expired) {
  const std::string key = principal + (expired ? ":expired" : "");
  const std::lock_guard lock(mutex_);
  if (made_.count(key) != 0) return;
  const auto [args, name] = split(principal);
  if (expired) {
    // ops/pki names the files by principal: made elsewhere, then moved aside.
    const std::string scratch = dir_ + "/expired-scratch";
    fs::create_directories(scratch);
    fs::copy_file(dir_ + "/ca.pem", scratch + "/ca.pem", fs::copy_options::overwrite_existing);
    fs::copy_file(dir_ + "/ca.key", scratch + "/ca.key", fs::copy_options::overwrite_existing);
    run_pki("client " + scratch + " " + args + " --expired --force");
    fs::rename(scratch + "/" + name + ".pem", dir_ + "/" + name + "-expired.pem");
    fs::rename(scratch + "/" + name + ".key", dir_ + "/" + name + "-expired.key");
  } else {
    run_pki("client " + dir_ + " " + args);
  }
  made_[key] = true;
}

std::string TestPki::certificate_file(const std::string& principal, bool expired) {
  make_client(principal, expired);
  return dir_ + "/" + file_id(principal, expired) + ".pem";
}

std::string TestPki::key_file(const std::string& principal, bool expired) {
  make_client(principal, expired);
  return dir_ + "/" + file_id(principal, expired) + ".key";
}

std::shared_ptr<grpc::ChannelCredentials> TestPki::credentials(const std::string& principal,
                                                               bool expired) {
  grpc::SslCredentialsOptions options;
  // The server's certificate is always the site's.
  options.pem_root_certs = read(site().dir() + "/ca.pem");
  if (!principal.empty()) {
    options.pem_cert_chain = read(certificate_file(principal, expired));
    options.pem_private_key = read(key_file(principal, expired));
  }
  return grpc::SslCredentials(options);
}

std::shared_ptr<grpc::Channel> channel_as(const std::string& address, const std::string& principal,
                                          const grpc::ChannelArguments& arguments) {
  return grpc::CreateCustomChannel(address, TestPki::site().credentials(principal), arguments);
}

std::string admin_tool_flags(const std::string& address, const std::string& principal) {
  TestPki::site().certificate_file(principal);
  return "--target " + address + " --pki " + TestPki::site().dir() + " --as " + principal;
}

std::pair<int, std::string> run_tool(const std::string& binary, const std::string& address,
                                     const std::string& principal, const std::string& arguments) {
  return run_command(binary + " " + admin_tool_flags(address, principal) + " " + arguments);
}

std::pair<int, std::string> run_command(const std::string& command) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string printed;
  if (pipe == nullptr) return {-1, printed};
  char chunk[512];
  while (std::fgets(chunk, sizeof chunk, pipe) != nullptr) printed += chunk;
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, printed};
}

std::string serving_address(const std::string& first_line) {
  std::smatch match;
  if (!std::regex_search(first_line, match, std::regex("serving gRPC on (\\S+),"))) return "";
  return match[1];
}

}  // namespace jackpot::testing
