#pragma once

#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <variant>

namespace jackpot {

// How far a journal goes: its identity (made once per database, kept by its copies) and the
// number of the last batch committed in it (docs/architecture.md §7a, "high-water mark").
struct CommitMark {
  std::string journal;
  std::uint64_t batch = 0;
  bool operator==(const CommitMark&) const = default;
};

// What the daemon may do with the database it just read.
enum class MarkVerdict {
  serve,                 // Not behind what the daemon knows (or it knows nothing yet).
  serve_restored,        // Behind, or another journal, but the operator accepted exactly this one.
  refuse_behind,         // Its last batch is older than one the daemon saw committed.
  refuse_other_journal,  // Not the journal the daemon wrote.
};

struct MarkJudgement {
  MarkVerdict verdict = MarkVerdict::serve;
  std::string message;  // Why, naming both marks; empty for a plain serve.
  bool serving() const {
    return verdict == MarkVerdict::serve || verdict == MarkVerdict::serve_restored;
  }
};

// The rule recovery applies before it serves a database. `known` is the highest mark the daemon
// saw committed (in memory while it runs, else from its state file; nothing on a first start);
// `database` is what the database holds now; `accepted` is the operator's override for a
// deliberate restore (--accept-database-batch), which accepts a database behind or of another
// journal only when its last batch is exactly that number, so that an override left in place
// accepts nothing else. `where` names the source of `known` in messages.
MarkJudgement judge_database(const std::optional<CommitMark>& known, const CommitMark& database,
                             std::optional<std::uint64_t> accepted, const std::string& where);

// The state file: the last mark the daemon saw committed, outside the database, so that a
// restarted daemon can tell a database that lost acknowledged batches. Text:
//   jackpotd-state 1
//   journal <uuid>
//   batch <n>
// Nothing when the file does not exist; an error (naming the file) when it cannot be read or
// parsed, which the daemon refuses to start on: the safe side.
std::variant<std::optional<CommitMark>, std::string> read_state_file(const std::string& path);

// Writes the state file after commits without slowing them: note() keeps the newest mark and
// wakes a thread of its own, which writes it to a temporary file, syncs it and renames it over
// the old one, so that the file is always whole. Writes coalesce under load, so the file may be a
// few batches behind the database, which errs on the safe side (a restart compares the database
// with an older mark). A failure to write is reported once per distinct reason on stderr.
class StateFileWriter {
 public:
  explicit StateFileWriter(std::string path);
  ~StateFileWriter();  // Writes the last mark noted, then stops.
  StateFileWriter(const StateFileWriter&) = delete;
  StateFileWriter& operator=(const StateFileWriter&) = delete;

  void note(const CommitMark& mark);
  // Writes the last mark noted now; false (with the reason logged) when it could not.
  bool flush();
  const std::string& path() const { return path_; }

 private:
  bool write(const CommitMark& mark);
  void loop();

  std::string path_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::optional<CommitMark> noted_;
  std::optional<CommitMark> written_;
  std::string last_error_;
  bool stopping_ = false;
  std::mutex write_mutex_;  // One write at a time: the thread's and flush()'s.
  std::thread thread_;
};

}  // namespace jackpot
