// libFuzzer target: the replay codec (controller/engine/engine_codec.h) on arbitrary bytes.
//
// The first byte chooses the message type; the rest is decoded as that type. Checked for every
// input: decoding never reads out of bounds or crashes; what decodes in the current version
// re-encodes to exactly the bytes it came from (the codec has one encoding per value), what
// decodes in an older one re-encodes in the current one, and either decodes again to the same
// value.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "controller/engine/engine_codec.h"
#include "meters/invariant.h"

namespace {

template <typename T>
void round_trip(std::string_view bytes) {
  const std::optional<T> decoded = jackpot::decode<T>(bytes);
  if (!decoded) return;
  const std::string encoded = jackpot::encode(*decoded);
  // An older version's bytes re-encode in the current one (the first byte), to the same value.
  JACKPOT_INVARIANT(encoded == bytes || (!bytes.empty() && encoded[0] > bytes[0]),
                    "what decodes in the current version re-encodes to the same bytes");
  const std::optional<T> again = jackpot::decode<T>(encoded);
  JACKPOT_INVARIANT(again && *again == *decoded, "a re-encoded value decodes to itself");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace jackpot;
  if (size == 0) return 0;
  const std::string_view bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  switch (data[0] % 8) {
    case 0:
      round_trip<OpenRoundRequest>(bytes);
      break;
    case 1:
      round_trip<OpenRoundAnswer>(bytes);
      break;
    case 2:
      round_trip<LockWagersRequest>(bytes);
      break;
    case 3:
      round_trip<LockWagersAnswer>(bytes);
      break;
    case 4:
      round_trip<SettleRoundRequest>(bytes);
      break;
    case 5:
      round_trip<SettleRoundAnswer>(bytes);
      break;
    case 6:
      round_trip<VoidRoundRequest>(bytes);
      break;
    default:
      round_trip<VoidRoundAnswer>(bytes);
      break;
  }
  return 0;
}
