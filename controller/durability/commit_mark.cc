#include "controller/durability/commit_mark.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "controller/log/log.h"

namespace jackpot {
namespace {

std::string describe(const CommitMark& mark) {
  return "batch " + std::to_string(mark.batch) + " of journal " + mark.journal;
}

}  // namespace

MarkJudgement judge_database(const std::optional<CommitMark>& known, const CommitMark& database,
                             std::optional<std::uint64_t> accepted, const std::string& where) {
  if (!known || known->journal.empty()) return {};
  const bool other_journal = known->journal != database.journal;
  const bool behind = !other_journal && database.batch < known->batch;
  if (!other_journal && !behind) return {};
  const std::string problem =
      other_journal
          ? "the database holds journal " + database.journal + " (last batch " +
                std::to_string(database.batch) + "), not the journal this daemon wrote: " + where +
                " names " + describe(*known)
          : "the database is behind this daemon: its last committed batch is " +
                std::to_string(database.batch) + ", but " + where + " saw " + describe(*known) +
                " committed (a standby promoted without the last " +
                "transactions, or an older backup); serving it would lose acknowledged rounds " +
                "and payouts";
  if (accepted && *accepted == database.batch) {
    return {MarkVerdict::serve_restored,
            problem + "; accepted by --accept-database-batch " + std::to_string(*accepted)};
  }
  std::string message = problem + "; not serving";
  if (accepted) {
    message += " (--accept-database-batch " + std::to_string(*accepted) +
               " names another batch than the database's " + std::to_string(database.batch) + ")";
  } else {
    message +=
        ". If this database is a deliberate restore, start jackpotd with "
        "--accept-database-batch " +
        std::to_string(database.batch) + " (recorded in the audit trail)";
  }
  return {other_journal ? MarkVerdict::refuse_other_journal : MarkVerdict::refuse_behind, message};
}

std::variant<std::optional<CommitMark>, std::string> read_state_file(const std::string& path) {
  std::error_code exists_error;
  if (!std::filesystem::exists(path, exists_error) && !exists_error) {
    return std::optional<CommitMark>();
  }
  std::ifstream in(path);
  if (!in) return "cannot read the state file " + path + ": " + std::strerror(errno);
  std::string header;
  std::string journal_word;
  std::string batch_word;
  CommitMark mark;
  std::string batch_text;
  std::getline(in, header);
  in >> journal_word >> mark.journal >> batch_word >> batch_text;
  std::uint64_t batch = 0;
  const auto [end, error] =
      std::from_chars(batch_text.data(), batch_text.data() + batch_text.size(), batch);
  if (header != "jackpotd-state 1" || journal_word != "journal" || batch_word != "batch" ||
      mark.journal.empty() || error != std::errc() ||
      end != batch_text.data() + batch_text.size()) {
    return "the state file " + path +
           " is not a jackpotd state file (expected 'jackpotd-state 1', 'journal <id>', "
           "'batch <n>'); not starting rather than guessing";
  }
  mark.batch = batch;
  return std::optional<CommitMark>(mark);
}

StateFileWriter::StateFileWriter(std::string path)
    : path_(std::move(path)), thread_([this] { loop(); }) {}

StateFileWriter::~StateFileWriter() {
  {
    std::lock_guard lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_all();
  thread_.join();
  flush();
}

void StateFileWriter::note(const CommitMark& mark) {
  {
    std::lock_guard lock(mutex_);
    noted_ = mark;
  }
  changed_.notify_one();
}

bool StateFileWriter::flush() {
  std::optional<CommitMark> mark;
  {
    std::lock_guard lock(mutex_);
    mark = noted_;
  }
  return !mark || write(*mark);
}

void StateFileWriter::loop() {
  std::unique_lock lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return stopping_ || noted_ != written_; });
    if (stopping_) return;
    const CommitMark mark = *noted_;
    lock.unlock();
    const bool written = write(mark);
    lock.lock();
    // A file that cannot be written is tried again a second later, not in a busy loop.
    if (!written) changed_.wait_for(lock, std::chrono::seconds(1), [&] { return stopping_; });
  }
}

bool StateFileWriter::write(const CommitMark& seen) {
  std::lock_guard writing(write_mutex_);
  // The latest mark noted, not the one the caller copied before it waited for write_mutex_: a
  // writer holding an older copy must never put it over a newer file (an operator's accepted
  // restore notes a lower mark than the one the loop may be about to write).
  CommitMark mark = seen;
  {
    std::lock_guard lock(mutex_);
    if (noted_) mark = *noted_;
    if (written_ == mark) return true;
  }
  const std::string text =
      "jackpotd-state 1\njournal " + mark.journal + "\nbatch " + std::to_string(mark.batch) + "\n";
  const std::string temporary = path_ + ".tmp";
  std::string error;
  const int fd = ::open(temporary.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) {
    error = "cannot create " + temporary + ": " + std::strerror(errno);
  } else {
    const bool written = ::write(fd, text.data(), text.size()) == static_cast<ssize_t>(text.size());
    const int saved = errno;
    // Synced before the rename, so that a crash leaves the old file or the new one, whole.
    const bool synced = written && ::fsync(fd) == 0;
    ::close(fd);
    if (!written || !synced) {
      error = "cannot write " + temporary + ": " + std::strerror(written ? errno : saved);
    } else if (::rename(temporary.c_str(), path_.c_str()) != 0) {
      error = "cannot rename " + temporary + " to " + path_ + ": " + std::strerror(errno);
    }
  }
  std::lock_guard lock(mutex_);
  if (!error.empty()) {
    if (error != last_error_) {
      log_error("the state file is not up to date (" + error + ")");
      last_error_ = error;
    }
    return false;
  }
  last_error_.clear();
  written_ = mark;
  return true;
}

}  // namespace jackpot
