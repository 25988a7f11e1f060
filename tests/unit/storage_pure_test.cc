// The parts of storage/ that need no database: hashing, JSON, DSN redaction, embedded files.
#include <gtest/gtest.h>

#include <regex>

#include "storage/audit.h"
#include "storage/connection.h"
#include "storage/migrations.h"

namespace jackpot::storage {
namespace {

TEST(Sha256, MatchesTheStandardTestVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

TEST(JsonObject, EscapesEverythingRfc8259Requires) {
  EXPECT_EQ(json_object({}), "{}");
  EXPECT_EQ(json_object({{"a", "1"}, {"b", "two"}}), R"({"a":"1","b":"two"})");
  EXPECT_EQ(json_object({{"q\"uote", "back\\slash\nnew\tline\x01"}}),
            R"({"q\"uote":"back\\slash\nnew\tline\u0001"})");
  EXPECT_EQ(json_object({{"k", "caf\xc3\xa9"}}), "{\"k\":\"caf\xc3\xa9\"}");
}

TEST(RedactDsn, DropsThePasswordOnly) {
  const std::string shown =
      redact_dsn("host=db.example port=5433 user=jp password=s3cret dbname=x");
  EXPECT_EQ(shown.find("s3cret"), std::string::npos);
  EXPECT_NE(shown.find("host=db.example"), std::string::npos);
  EXPECT_NE(shown.find("port=5433"), std::string::npos);
  EXPECT_NE(shown.find("dbname=x"), std::string::npos);
  EXPECT_EQ(redact_dsn("postgresql://jp:s3cret@db.example/x").find("s3cret"), std::string::npos);
  EXPECT_EQ(redact_dsn("host='unterminated"), "<unparsable connection string>");
}

TEST(NetworkTimeouts, AreAddedWhereTheDsnSetsNoneAndKeepWhatItSets) {
  const std::string uri =
      with_network_timeouts("postgresql://jp:it's%5Csecret@db.example:5433/x?connect_timeout=3");
  EXPECT_NE(uri.find("host='db.example'"), std::string::npos) << uri;
  EXPECT_NE(uri.find("port='5433'"), std::string::npos) << uri;
  EXPECT_NE(uri.find("password='it\\'s\\\\secret'"), std::string::npos) << uri;
  EXPECT_NE(uri.find("connect_timeout='3'"), std::string::npos) << uri;
  EXPECT_EQ(uri.find("connect_timeout='10'"), std::string::npos) << uri;
  EXPECT_NE(uri.find("tcp_user_timeout='15000'"), std::string::npos) << uri;
  EXPECT_NE(uri.find("keepalives_idle='10'"), std::string::npos) << uri;
  // What comes out parses back to the same parameters.
  EXPECT_EQ(redact_dsn(with_network_timeouts(uri)), redact_dsn(uri));
  EXPECT_EQ(with_network_timeouts("host='unterminated"), "host='unterminated");
}

TEST(EmbeddedMigrations, AreNumberedFromOneWithoutGaps) {
  const auto& migrations = embedded_migrations();
  ASSERT_FALSE(migrations.empty());
  const std::regex name_pattern("[0-9]{4}_[a-z0-9_]+\\.sql");
  for (std::size_t i = 0; i < migrations.size(); ++i) {
    EXPECT_EQ(migrations[i].version, static_cast<int>(i) + 1);
    EXPECT_TRUE(std::regex_match(std::string(migrations[i].name), name_pattern))
        << migrations[i].name;
    EXPECT_EQ(std::stoi(std::string(migrations[i].name.substr(0, 4))), migrations[i].version);
    EXPECT_FALSE(migrations[i].sql.empty());
  }
}

}  // namespace
}  // namespace jackpot::storage
