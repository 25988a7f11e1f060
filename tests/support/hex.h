#pragma once

// Bytes as lower-case hex and back, for tests that pin or rewrite encoded bytes.

#include <string>
#include <string_view>

namespace jackpot::testing {

inline std::string hex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string text;
  for (const char c : bytes) {
    text += kDigits[(static_cast<unsigned char>(c) >> 4) & 15];
    text += kDigits[static_cast<unsigned char>(c) & 15];
  }
  return text;
}

// `text` as bytes: pairs of hex digits (a last odd digit is ignored).
inline std::string unhex(std::string_view text) {
  std::string bytes;
  for (std::size_t i = 0; i + 1 < text.size(); i += 2) {
    bytes += static_cast<char>(std::stoi(std::string(text.substr(i, 2)), nullptr, 16));
  }
  return bytes;
}

}  // namespace jackpot::testing
