#include "tests/support/codec_v2_writer.h"

#include <cstdint>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "controller/engine/engine_codec_v2_fields.h"

namespace jackpot::testing {
namespace {

using codec_v2::fields;

// Version 2, as releases before the Protobuf format wrote it.
class Writer {
 public:
  int version() const { return 2; }
  std::string bytes = std::string(1, '\x02');

  template <typename... T>
  void operator()(T&... values) {
    (put(values), ...);
  }

 private:
  void varint(std::uint64_t value) {
    for (; value >= 0x80; value >>= 7) bytes += static_cast<char>((value & 0x7f) | 0x80);
    bytes += static_cast<char>(value);
  }
  void put(std::uint64_t value) { varint(value); }
  void put(std::uint32_t value) { varint(value); }
  void put(std::int64_t value) {  // Zig-zag.
    varint((static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63));
  }
  void put(bool value) { varint(value ? 1 : 0); }
  void put(const std::string& value) {
    varint(value.size());
    bytes += value;
  }
  void put(Name& value) { put(value.str()); }
  void put(Money value) { put(value.micros()); }
  template <typename Tag, typename T>
  void put(StrongId<Tag, T>& value) {
    put(value.value());
  }
  template <typename E>
  requires std::is_enum_v<E>
  void put(E value) { varint(static_cast<std::uint64_t>(value)); }
  template <typename T>
  void put(std::optional<T>& value) {
    put(value.has_value());
    if (value) put(*value);
  }
  template <typename T>
  void put(std::vector<T>& values) {
    varint(values.size());
    for (T& value : values) put(value);
  }
  template <typename T>
  requires std::is_class_v<T> &&(!std::is_same_v<T, std::string>)void put(T& message) {
    fields(*this, message);
  }
};

}  // namespace

template <typename T>
std::string encode_version_2(T value) {
  Writer writer;
  fields(writer, value);
  return std::move(writer.bytes);
}

template std::string encode_version_2(OpenRoundRequest);
template std::string encode_version_2(OpenRoundAnswer);
template std::string encode_version_2(LockWagersRequest);
template std::string encode_version_2(LockWagersAnswer);
template std::string encode_version_2(SettleRoundRequest);
template std::string encode_version_2(SettleRoundAnswer);
template std::string encode_version_2(VoidRoundRequest);
template std::string encode_version_2(VoidRoundAnswer);

}  // namespace jackpot::testing
