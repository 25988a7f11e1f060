#pragma once

// jackpotd's log: one line per event on stderr, with a level and the ids it concerns (table,
// round, payout, link, ...), as text for a person or as JSON for a log collector
// (--log-format). What a line holds is render(), a pure function; write() only picks the format
// and the time. No secret goes into a field: DSNs are logged redacted (storage::redacted_dsn).

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace jackpot {

enum class LogLevel : std::uint8_t { info, warning, error };
enum class LogFormat : std::uint8_t { text, json };

std::string_view to_string(LogLevel level);

struct LogField {
  std::string key;    // A fixed name: "table", "round", "payout", "link", "meter_level", "seat",
                      // ...; never "time", "level" or "message", the line's own keys.
  std::string value;  // As text; a number when `number`.
  bool number = false;
};

struct LogEvent {
  LogLevel level = LogLevel::info;
  std::string message;  // What happened, for a person.
  std::vector<LogField> fields;
};

// The event's line, without its newline. Text: "2026-12-03T06:20:00.123456Z jackpotd: LEVEL:
// MESSAGE (key=value, ...)" (the time in UTC) with the level left out for info, values containing
// spaces, quotes or control characters quoted. JSON:
// {"time":"2026-12-03T06:20:00.123456Z","level":"info","message":"...","key":value,...}, every
// string escaped, numbers bare. `unix_us` is the event's time.
std::string render(const LogEvent& event, LogFormat format, std::int64_t unix_us);

// Writes the event to stderr in the process's format (text until set_log_format), one line, whole
// even when several threads log at once, with the time now or the time it happened (Unix
// microseconds; a line written later than its event keeps the event's time).
void write_log(const LogEvent& event);
void write_log(const LogEvent& event, std::int64_t unix_us);
void set_log_format(LogFormat format);
// The event's line in the process's format with the time now, for a line that goes elsewhere
// than stderr (the "serving" line on stdout).
std::string render_now(const LogEvent& event);

// Shorthands.
void log_info(std::string message, std::vector<LogField> fields = {});
void log_warning(std::string message, std::vector<LogField> fields = {});
void log_error(std::string message, std::vector<LogField> fields = {});

}  // namespace jackpot
