#include "controller/limits/request_limits.h"

#include <algorithm>
#include <cstdio>

namespace jackpot {

bool is_principal_id(std::string_view id) {
  return !id.empty() && std::all_of(id.begin(), id.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' ||
           c == '_' || c == '-';
  });
}

std::string quote_prefix(std::string_view text) {
  std::size_t cut = text.size();
  if (cut > kEchoPrefixBytes) {
    cut = kEchoPrefixBytes;
    // Back up to the start of a UTF-8 character: never split a multi-byte sequence.
    while (cut > 0 && (static_cast<unsigned char>(text[cut]) & 0xC0U) == 0x80U) --cut;
  }
  std::string out = "'";
  for (std::size_t i = 0; i < cut; ++i) {
    const auto byte = static_cast<unsigned char>(text[i]);
    if (byte < 0x20U || byte == 0x7FU || byte == '\\' || byte == '\'') {
      char escaped[5];
      std::snprintf(escaped, sizeof escaped, "\\x%02X", byte);
      out += escaped;
    } else {
      out += static_cast<char>(byte);
    }
  }
  out += '\'';
  if (cut < text.size()) {
    out += "\u2026 (" + std::to_string(text.size()) + " bytes)";
  }
  return out;
}

}  // namespace jackpot
