// The access rules (controller/api/access_rules.h): principals from certificate common names,
// and the one table of RPC to roles, checked against the API itself through protobuf reflection
// so that a new RPC cannot be served without a row.
#include "controller/api/access_rules.h"

#include <google/protobuf/descriptor.h>
#include <gtest/gtest.h>

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "jackpot/v1/admin.pb.h"
#include "jackpot/v1/sign.pb.h"
#include "jackpot/v1/supervisor.pb.h"
#include "jackpot/v1/table.pb.h"

namespace jackpot {
namespace {

TEST(AccessRules, APrincipalIsAKnownRoleASlashAndAnId) {
  struct Case {
    std::string common_name;
    std::optional<Principal> principal;
  };
  const std::vector<Case> cases = {
      {"table/HUH-1", Principal{Role::table, "HUH-1"}},
      {"sign/lobby-east", Principal{Role::sign, "lobby-east"}},
      {"supervisor/alice", Principal{Role::supervisor, "alice"}},
      {"admin/ops.1", Principal{Role::admin, "ops.1"}},
      {"table/A_b.9-z", Principal{Role::table, "A_b.9-z"}},
      {"table/T 1", std::nullopt},  // Only letters, digits, '.', '_' and '-'.
      {"table/T1/x", std::nullopt},
      {"supervisor/alice\u200b", std::nullopt},
      {"supervisor/al\xc3\xaf"
       "ce",
       std::nullopt},
      {"table/" + std::string(58, 'T'), Principal{Role::table, std::string(58, 'T')}},
      {"table/" + std::string(59, 'T'), std::nullopt},  // 65 bytes: longer than a common name.
      {"table/", std::nullopt},
      {"table", std::nullopt},
      {"", std::nullopt},
      {"/HUH-1", std::nullopt},
      {"Table/HUH-1", std::nullopt},  // Roles are lower case.
      {"root/HUH-1", std::nullopt},
      {"table/HUH\n1", std::nullopt},
      {std::string("table/HUH\0001", 10), std::nullopt},
      {"jackpotd site CA", std::nullopt},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(principal_from_common_name(c.common_name), c.principal) << c.common_name;
  }
  EXPECT_EQ(to_string(Principal{Role::supervisor, "alice"}), "supervisor/alice");
}

// Every role against every RPC: the matrix the issue names, written out.
TEST(AccessRules, EachRoleCallsOnlyItsOwnRpcs) {
  const std::map<std::string, std::set<Role>> expected = {
      {"/jackpot.v1.TableService/OpenRound", {Role::table}},
      {"/jackpot.v1.TableService/LockWagers", {Role::table}},
      {"/jackpot.v1.TableService/SettleRound", {Role::table}},
      {"/jackpot.v1.TableService/VoidRound", {Role::table}},
      {"/jackpot.v1.TableService/WatchLinkStatus", {Role::table}},
      {"/jackpot.v1.SignService/WatchMeters", {Role::sign}},
      {"/jackpot.v1.SupervisorService/WatchPendingPayouts", {Role::supervisor}},
      {"/jackpot.v1.SupervisorService/ApprovePayout", {Role::supervisor}},
      {"/jackpot.v1.SupervisorService/RejectPayout", {Role::supervisor}},
      {"/jackpot.v1.SupervisorService/RebaseRoundCounter", {Role::supervisor}},
      {"/jackpot.v1.SupervisorService/VoidRound", {Role::supervisor}},
      {"/jackpot.v1.AdminService/GetConfig", {Role::admin}},
      {"/jackpot.v1.AdminService/ListMeters", {Role::admin}},
      {"/jackpot.v1.AdminService/SetLinkStatus", {Role::admin}},
      {"/jackpot.v1.AdminService/AdjustMeter", {Role::admin}},
      {"/jackpot.v1.AdminService/GetReconciliationReport", {Role::admin}},
      {"/jackpot.v1.AdminService/TakeBalanceSnapshot", {Role::admin}},
      {"/jackpot.v1.AdminService/AuditBalances", {Role::admin}},
      {"/jackpot.v1.AdminService/ReadAuditTrail", {Role::admin}},
      {"/grpc.health.v1.Health/Check", {Role::table, Role::sign, Role::supervisor, Role::admin}},
      {"/grpc.health.v1.Health/Watch", {Role::table, Role::sign, Role::supervisor, Role::admin}},
      {"/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo", {Role::admin}},
  };
  EXPECT_EQ(rpc_access_table().size(), expected.size());
  for (const auto& [method, allowed] : expected) {
    for (const Role role : {Role::table, Role::sign, Role::supervisor, Role::admin}) {
      const auto refusal = method_refusal(Principal{role, "x"}, method);
      if (allowed.count(role) != 0) {
        EXPECT_EQ(refusal, std::nullopt) << to_string(role) << " " << method;
      } else {
        EXPECT_EQ(refusal, AccessRefusal::role_not_allowed) << to_string(role) << " " << method;
      }
    }
  }
  for (const char* method : {"/jackpot.v1.TableService/Nothing", "", "/jackpot.v1.AdminService",
                             "/jackpot.v1.tableservice/OpenRound"}) {
    EXPECT_EQ(method_refusal(Principal{Role::admin, "x"}, method), AccessRefusal::unknown_method)
        << method;
  }
}

TEST(AccessRules, ATableActsOnlyForItselfAndASignOnlyAsItself) {
  const Principal table{Role::table, "HUH-1"};
  EXPECT_EQ(acting_refusal(table, "/jackpot.v1.TableService/SettleRound", "HUH-1"), std::nullopt);
  EXPECT_EQ(acting_refusal(table, "/jackpot.v1.TableService/SettleRound", "HUH-2"),
            AccessRefusal::acts_for_another);
  EXPECT_EQ(acting_refusal(table, "/jackpot.v1.TableService/OpenRound", "huh-1"),
            AccessRefusal::acts_for_another);  // Ids are compared exactly.
  EXPECT_EQ(acting_refusal(table, "/jackpot.v1.TableService/WatchLinkStatus", ""),
            AccessRefusal::acts_for_another);
  const Principal sign{Role::sign, "lobby"};
  EXPECT_EQ(acting_refusal(sign, "/jackpot.v1.SignService/WatchMeters", "lobby"), std::nullopt);
  EXPECT_EQ(acting_refusal(sign, "/jackpot.v1.SignService/WatchMeters", "bar"),
            AccessRefusal::acts_for_another);
  // Requests that name no caller.
  const Principal supervisor{Role::supervisor, "alice"};
  EXPECT_EQ(acting_refusal(supervisor, "/jackpot.v1.SupervisorService/ApprovePayout", "bob"),
            std::nullopt);
  EXPECT_EQ(acting_refusal(table, "/jackpot.v1.Nothing/Else", "HUH-1"),
            AccessRefusal::unknown_method);
  // The role is checked first: an admin naming a table is no table.
  EXPECT_EQ(acting_refusal(Principal{Role::admin, "HUH-1"}, "/jackpot.v1.TableService/OpenRound",
                           "HUH-1"),
            AccessRefusal::role_not_allowed);
}

// The table lists every RPC of every jackpot.v1 service, and each `names_caller` is a string
// field of that RPC's request.
TEST(AccessRules, TheTableCoversEveryRpcOfTheApi) {
  const google::protobuf::DescriptorPool* pool = google::protobuf::DescriptorPool::generated_pool();
  std::set<std::string> served;
  for (const char* file_name :
       {"jackpot/v1/common.proto", "jackpot/v1/table.proto", "jackpot/v1/sign.proto",
        "jackpot/v1/supervisor.proto", "jackpot/v1/admin.proto"}) {
    const google::protobuf::FileDescriptor* file = pool->FindFileByName(file_name);
    ASSERT_NE(file, nullptr) << file_name;
    for (int s = 0; s < file->service_count(); ++s) {
      const google::protobuf::ServiceDescriptor* service = file->service(s);
      for (int m = 0; m < service->method_count(); ++m) {
        served.insert("/" + service->full_name() + "/" + service->method(m)->name());
      }
    }
  }
  EXPECT_EQ(served.size(), 19u);
  std::set<std::string> listed;
  for (const RpcAccess& access : rpc_access_table()) {
    listed.insert(std::string(access.method));
    EXPECT_NE(access.roles, 0) << access.method;
    if (access.names_caller.empty()) continue;
    const std::string method(access.method);
    const std::size_t slash = method.rfind('/');
    const google::protobuf::ServiceDescriptor* service =
        pool->FindServiceByName(method.substr(1, slash - 1));
    ASSERT_NE(service, nullptr) << method;
    const google::protobuf::MethodDescriptor* rpc =
        service->FindMethodByName(method.substr(slash + 1));
    ASSERT_NE(rpc, nullptr) << method;
    const google::protobuf::FieldDescriptor* field =
        rpc->input_type()->FindFieldByName(std::string(access.names_caller));
    ASSERT_NE(field, nullptr) << method << " has no field " << access.names_caller;
    EXPECT_EQ(field->type(), google::protobuf::FieldDescriptor::TYPE_STRING) << method;
    EXPECT_FALSE(field->is_repeated()) << method;
  }
  for (const std::string& method : served) EXPECT_EQ(listed.count(method), 1u) << method;
}

}  // namespace
}  // namespace jackpot
