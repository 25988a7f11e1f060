// The rule recovery applies to the database's commit mark before it serves (judge_database), and
// the state file that keeps the daemon's mark across restarts.
#include "controller/durability/commit_mark.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>

namespace jackpot {
namespace {

struct Case {
  const char* name;
  std::optional<CommitMark> known;
  CommitMark database;
  std::optional<std::uint64_t> accepted;
  MarkVerdict verdict;
};

TEST(JudgeDatabase, ServesOnlyADatabaseNotBehindWhatTheDaemonSawCommittedUnlessAccepted) {
  const CommitMark j10{"J", 10};
  const Case cases[] = {
      {"first start: nothing known", std::nullopt, {"J", 0}, std::nullopt, MarkVerdict::serve},
      {"same batch", j10, {"J", 10}, std::nullopt, MarkVerdict::serve},
      {"ahead (a stale state file)", j10, {"J", 14}, std::nullopt, MarkVerdict::serve},
      {"one batch behind", j10, {"J", 9}, std::nullopt, MarkVerdict::refuse_behind},
      {"empty database of the same journal",
       j10,
       {"J", 0},
       std::nullopt,
       MarkVerdict::refuse_behind},
      {"another journal, ahead", j10, {"K", 99}, std::nullopt, MarkVerdict::refuse_other_journal},
      {"another journal, behind", j10, {"K", 3}, std::nullopt, MarkVerdict::refuse_other_journal},
      {"behind, accepted at exactly its batch", j10, {"J", 7}, 7, MarkVerdict::serve_restored},
      {"behind, the override names another batch", j10, {"J", 7}, 8, MarkVerdict::refuse_behind},
      {"another journal, accepted", j10, {"K", 3}, 3, MarkVerdict::serve_restored},
      {"not behind, an override left in place", j10, {"J", 12}, 7, MarkVerdict::serve},
  };
  for (const Case& c : cases) {
    const MarkJudgement judgement = judge_database(c.known, c.database, c.accepted, "the file");
    EXPECT_EQ(judgement.verdict, c.verdict) << c.name << ": " << judgement.message;
    EXPECT_EQ(judgement.serving(),
              c.verdict == MarkVerdict::serve || c.verdict == MarkVerdict::serve_restored)
        << c.name;
  }
}

TEST(JudgeDatabase, ARefusalNamesBothMarksAndTheOverride) {
  const auto judgement = judge_database(CommitMark{"J", 10}, CommitMark{"J", 7}, std::nullopt,
                                        "the state file /var/lib/jackpotd/state");
  EXPECT_EQ(judgement.message,
            "the database is behind this daemon: its last committed batch is 7, but the state "
            "file /var/lib/jackpotd/state saw batch 10 of journal J committed (a standby promoted "
            "without the last transactions, or an older backup); serving it would lose "
            "acknowledged rounds and payouts; not serving. If this database is a deliberate "
            "restore, start jackpotd with --accept-database-batch 7 (recorded in the audit "
            "trail)");
}

std::string temporary_path() {
  char name[] = "/tmp/jackpotd-state-test.XXXXXX";
  close(mkstemp(name));
  unlink(name);
  return name;
}

TEST(StateFile, KeepsTheLastMarkNotedAndReadsItBack) {
  const std::string path = temporary_path();
  EXPECT_EQ(std::get<std::optional<CommitMark>>(read_state_file(path)), std::nullopt);
  {
    StateFileWriter writer(path);
    writer.note({"J", 1});
    writer.note({"J", 2});
    ASSERT_TRUE(writer.flush());
    EXPECT_EQ(std::get<std::optional<CommitMark>>(read_state_file(path)), (CommitMark{"J", 2}));
    writer.note({"J", 3});
  }  // The last mark is written when the writer goes.
  EXPECT_EQ(std::get<std::optional<CommitMark>>(read_state_file(path)), (CommitMark{"J", 3}));
  unlink(path.c_str());
}

TEST(StateFile, AFileThatIsNotAStateFileIsAnErrorNotAnEmptyMark) {
  const std::string path = temporary_path();
  for (const char* text : {"", "jackpotd-state 1\njournal J\nbatch x\n", "batch 5\n",
                           "jackpotd-state 2\njournal J\nbatch 5\n"}) {
    std::ofstream(path) << text;
    const auto read = read_state_file(path);
    ASSERT_TRUE(std::holds_alternative<std::string>(read)) << text;
    EXPECT_NE(std::get<std::string>(read).find(path), std::string::npos);
  }
  unlink(path.c_str());
}

}  // namespace
}  // namespace jackpot
