#include "controller/log/log.h"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <mutex>

namespace jackpot {

namespace {

std::atomic<LogFormat> g_format{LogFormat::text};
std::mutex g_write_mutex;

// The length of the well-formed UTF-8 sequence at text[i], or 0 when none starts there.
std::size_t utf8_length(std::string_view text, std::size_t i) {
  const auto byte = [&](std::size_t at) { return static_cast<unsigned char>(text[at]); };
  const unsigned char lead = byte(i);
  std::size_t length = 0;
  unsigned min = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    min = 0x80;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    min = 0x800;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    min = 0x10000;
  } else {
    return 0;
  }
  if (i + length > text.size()) return 0;
  unsigned code = lead & (0x7F >> length);
  for (std::size_t k = 1; k < length; ++k) {
    if ((byte(i + k) & 0xC0) != 0x80) return 0;
    code = (code << 6) | (byte(i + k) & 0x3F);
  }
  if (code < min || code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) return 0;
  return length;
}

// A JSON string: quotes, backslashes and control characters escaped, well-formed UTF-8 kept,
// any other byte (text that is not UTF-8: a path, a driver's message) as U+FFFD.
void json_string(std::string_view text, std::string& out) {
  out += '"';
  for (std::size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (static_cast<unsigned char>(c) >= 0x80) {
      if (const std::size_t length = utf8_length(text, i); length > 0) {
        out.append(text.substr(i, length));
        i += length - 1;
      } else {
        out += "\\ufffd";
      }
      continue;
    }
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
          char escaped[8];
          std::snprintf(escaped, sizeof escaped, "\\u%04x", static_cast<unsigned char>(c));
          out += escaped;
        } else {
          out += c;
        }
    }
  }
  out += '"';
}

// A text line's message as it is, but for control characters, escaped as in JSON: a message that
// carries someone's text (an error naming a request) stays one line, so no one can write a line
// of jackpotd's into its log (the audit chain's anchors are whole lines).
void plain_text(std::string_view text, std::string& out) {
  for (const char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte != 0x7f) {
      out += c;
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c == '\t') {
      out += "\\t";
    } else {
      char escaped[8];
      std::snprintf(escaped, sizeof escaped, "\\u%04x", byte);
      out += escaped;
    }
  }
}

bool needs_quotes(std::string_view text) {
  if (text.empty()) return true;
  for (const char c : text) {
    if (c == ' ' || c == '"' || c == '\\' || c == ',' || c == '(' || c == ')' ||
        static_cast<unsigned char>(c) < 0x20 || c == 0x7f) {
      return true;
    }
  }
  return false;
}

std::string utc_time(std::int64_t unix_us) {
  const std::time_t seconds = static_cast<std::time_t>(unix_us / 1'000'000);
  std::tm utc{};
  gmtime_r(&seconds, &utc);
  char text[40];
  const std::size_t length = std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%S", &utc);
  std::snprintf(text + length, sizeof text - length, ".%06lldZ",
                static_cast<long long>(unix_us % 1'000'000));
  return text;
}

}  // namespace

std::string_view to_string(LogLevel level) {
  switch (level) {
    case LogLevel::info:
      return "info";
    case LogLevel::warning:
      return "warning";
    case LogLevel::error:
      return "error";
  }
  return "info";
}

std::string render(const LogEvent& event, LogFormat format, std::int64_t unix_us) {
  std::string line;
  if (format == LogFormat::json) {
    line = "{\"time\":\"" + utc_time(unix_us) + "\",\"level\":\"" +
           std::string(to_string(event.level)) + "\",\"message\":";
    json_string(event.message, line);
    for (const LogField& field : event.fields) {
      line += ',';
      json_string(field.key, line);
      line += ':';
      if (field.number) {
        line += field.value;
      } else {
        json_string(field.value, line);
      }
    }
    line += '}';
    return line;
  }
  line = utc_time(unix_us) + " jackpotd: ";
  if (event.level != LogLevel::info) line += std::string(to_string(event.level)) + ": ";
  plain_text(event.message, line);
  if (!event.fields.empty()) {
    line += " (";
    for (std::size_t i = 0; i < event.fields.size(); ++i) {
      if (i > 0) line += ", ";
      line += event.fields[i].key + "=";
      if (needs_quotes(event.fields[i].value)) {
        json_string(event.fields[i].value, line);
      } else {
        line += event.fields[i].value;
      }
    }
    line += ")";
  }
  return line;
}

void set_log_format(LogFormat format) { g_format.store(format); }

namespace {

std::int64_t unix_us_now() {
  return std::chrono::duration_cast<std::chrono::microseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace

std::string render_now(const LogEvent& event) {
  return render(event, g_format.load(), unix_us_now());
}

void write_log(const LogEvent& event) { write_log(event, unix_us_now()); }

void write_log(const LogEvent& event, std::int64_t unix_us) {
  const std::string line = render(event, g_format.load(), unix_us) + "\n";
  const std::lock_guard lock(g_write_mutex);
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

void log_info(std::string message, std::vector<LogField> fields) {
  write_log({LogLevel::info, std::move(message), std::move(fields)});
}
void log_warning(std::string message, std::vector<LogField> fields) {
  write_log({LogLevel::warning, std::move(message), std::move(fields)});
}
void log_error(std::string message, std::vector<LogField> fields) {
  write_log({LogLevel::error, std::move(message), std::move(fields)});
}

}  // namespace jackpot
