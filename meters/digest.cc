#include "meters/digest.h"

#include <openssl/sha.h>

namespace jackpot {

Sha256Digest sha256(std::span<const std::uint8_t> message) {
  Sha256Digest digest{};
  SHA256(message.data(), message.size(), digest.data());
  return digest;
}

Sha256Digest sha256(std::string_view text) {
  return sha256({reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});
}

std::string to_hex(std::span<const std::uint8_t> bytes) {
  std::string out;
  append_hex(out, bytes);
  return out;
}

void append_hex(std::string& out, std::span<const std::uint8_t> bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  out.reserve(out.size() + 2 * bytes.size());
  for (const std::uint8_t byte : bytes) {
    out.push_back(kDigits[byte >> 4]);
    out.push_back(kDigits[byte & 0x0f]);
  }
}

}  // namespace jackpot
