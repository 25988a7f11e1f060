#pragma once

#include <array>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

namespace jackpot {

using Sha256Digest = std::array<std::uint8_t, 32>;

// SHA-256 (FIPS 180-4) of a byte string, by OpenSSL: the hidden Must-Hit-By commitments, the
// floor's and the migrations' digests.
Sha256Digest sha256(std::span<const std::uint8_t> message);
Sha256Digest sha256(std::string_view text);

// Lower-case hex digits of `bytes`.
std::string to_hex(std::span<const std::uint8_t> bytes);
// The same hex digits, appended to `out` without a string of their own.
void append_hex(std::string& out, std::span<const std::uint8_t> bytes);

}  // namespace jackpot
