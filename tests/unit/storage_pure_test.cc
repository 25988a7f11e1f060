// The parts of storage/ that need no database: hashing, JSON, DSN redaction, embedded files.
#include <gtest/gtest.h>

#include <regex>
#include <string>
#include <utility>
#include <vector>

#include "storage/audit.h"
#include "storage/connection.h"
#include "storage/migrations.h"

namespace jackpot::storage {
namespace {

TEST(Sha256, MatchesTheStandardTestVectors) {
  EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
}

// A migration that has landed is never edited: databases that applied it record its SHA-256 and
// refuse to start on another text (apply_migrations). Each shipped file's digest, pinned: a new
// migration adds its row; an edit to a landed one (even a comment) fails here, not on a casino's
// database.
TEST(Migrations, NoLandedMigrationChanges) {
  const std::vector<std::pair<std::string, std::string>> landed = {
      {"0001_audit_log.sql", "e28838ffddecb4b4a26fc0c64fa4ef6a28cd131e55aafabad1f16008b226368d"},
      {"0002_ledger_and_rounds.sql",
       "5ae88298aa60aca9f0bcc2e524166aefab8ac1a15a7f9c1f1d68180b04a8e012"},
      {"0003_recovery_state.sql",
       "1c39a57c7e8a60e4ecb558ab80285393dbfa5f20b779b4704b898403a55865f1"},
      {"0004_transfer_times.sql",
       "08dac3b80833cb8bbd51a7f4e72f94bcfbc685e14d5c1e0b2b5df665f76c041d"},
      {"0005_audit_trail.sql", "e247d43a13082b47e0855b192157f8ccde422034f055f71b16fff4ab9092091e"},
      {"0006_hands_of_wagers.sql",
       "677a4974810592f769277bf6fc56560e89156f71dd4d5db770f5b8c3d229e56e"},
      {"0007_answers_in_round_events.sql",
       "6f323a3f75c572b914cba8bbd0e91b626066e815f417ca487ba01268533b908f"},
      {"0008_references_per_statement.sql",
       "b7a38c1a9ccff97788017e2f6a0cccf899c0b635a6788ff541ca903841245ab7"},
      {"0009_reference_checks_search_path.sql",
       "d7c6f37fc81a3be1556da425cccb5de572b44cd680dce6a3235a31067b450aa5"},
      {"0010_more_references_per_statement.sql",
       "e2afca53fa5573c9526af6d97dbddf4623cc0a247c2bc2ad54cacf5bc6f91dcf"},
      {"0011_journal_orphans.sql",
       "805b0a335b353a4c1d80e7f57ac056e1cefdfe7a18dd4b9f5305be0785daa1d1"},
      {"0012_commit_marks.sql", "c89569d2d88e162ff4eb7fea620d79aafbb81240c115b72f930d2b9490afc591"},
      {"0013_balance_snapshots.sql",
       "66ce386d7a61f75695f75c373186b2d997a65d88958818f2a4ee2ce97e1b9e98"},
      {"0014_recovery_indexes.sql",
       "3eb909dd3ddfca299e79066f31997f1def241246a907f23bb82f8b56a4dd6216"},
      {"0015_void_refunds_and_kept_dynamic_pays.sql",
       "c795a27daf593272c30fdcf8d87449834feac673a0d78d77a9b260714f9242a1"},
      {"0016_balance_snapshots_agree.sql",
       "a4508cfdb12af6e850fa8be0c235175000d0d057f7c69357ef14694c6e2810f2"},
      {"0017_meter_adjustments.sql",
       "281d9876fa6581de1bd11b99ce2daee6795e4ab86a7e53f4cfb29d8efa2ab5d6"},
      {"0018_round_counter_rebases.sql",
       "c9df19ec9822e257474f352dc182cdb97d6a9c74adc92c4c379c264095ff8629"},
      {"0019_rebase_reason_not_blank.sql",
       "5451b8094fc9dcf6dbd7976f83fb449514f9f981d5f0ee89d1feb03aec4e7279"},
      {"0020_kept_commands_format.sql",
       "2b7c5b58704e9143c0a32beb6a210cb83afb7fd82375dc974a8286fe85fd0df0"},
      {"0021_payout_decision_request_ids.sql",
       "6ad7a8d03c5062ffc17f360771163ba9e145b554ecfc3314b8d6486073422828"},
      {"0022_audit_chain.sql", "d44682589a5a0aaaf4bb021b689f1484eb5d23039b81ba9c61aa0e27dfe28d0c"},
      {"0023_rejection_requests.sql",
       "cb05ef6d31d1179f631b01ab58ff531bb23bb090206dafd3e319806cd3c671cf"},
      {"0024_supervisor_voids.sql",
       "6770efd758c6ba7b87806b4f1bc41c8214c4842853c5554da6051208ededfc73"},
      {"0025_floor_owner.sql", "0936535d612699731c3b95ce873654e7924720d61b33854e4af685e639b4384d"},
  };
  const auto& migrations = embedded_migrations();
  ASSERT_EQ(migrations.size(), landed.size()) << "a new migration needs its row here";
  for (std::size_t i = 0; i < migrations.size(); ++i) {
    EXPECT_EQ(migrations[i].name, landed[i].first);
    EXPECT_EQ(sha256_hex(migrations[i].sql), landed[i].second)
        << migrations[i].name << " was edited after it landed: add a new migration instead";
  }
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
