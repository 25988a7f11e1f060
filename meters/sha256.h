#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

namespace jackpot {

using Sha256Digest = std::array<std::uint8_t, 32>;

// SHA-256 (FIPS 180-4) of a byte string. A self-contained implementation so that meters/ needs
// no library; used for the hidden Must-Hit-By commitments, not on any hot path.
Sha256Digest sha256(std::span<const std::uint8_t> message);

std::string to_hex(std::span<const std::uint8_t> bytes);
// The same hex digits, appended to `out` without a string of their own.
void append_hex(std::string& out, std::span<const std::uint8_t> bytes);

}  // namespace jackpot
