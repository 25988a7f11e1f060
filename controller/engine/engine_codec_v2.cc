#include "controller/engine/engine_codec_v2.h"

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "controller/engine/engine_codec_v2_fields.h"

namespace jackpot {
namespace {

using codec_v2::fields;

// The last value of each enum the messages hold: the reader refuses larger numbers, which no
// writer wrote and which no switch over the enum expects.
constexpr AwardKind last_value(AwardKind) { return AwardKind::envy; }
constexpr PayoutState last_value(PayoutState) { return PayoutState::rejected; }

class Reader {
 public:
  // A reader that does not make Names reads them and throws them away: decode_version_1_or_2()
  // checks the bytes with one first, so that corrupt bytes add nothing to the process's table of
  // names. `bytes` starts with the version byte, 1 or 2.
  Reader(std::string_view bytes, bool make_names)
      : bytes_(bytes), make_names_(make_names), version_(static_cast<int>(bytes.front())) {}
  bool ok() const { return ok_; }
  int version() const { return version_; }
  bool at_end() const { return next_ == bytes_.size(); }

  template <typename... T>
  void operator()(T&... values) {
    (get(values), ...);
  }

 private:
  // Only the writer's own spelling of a number is read: no zero byte at the end of a longer
  // form, no bits beyond 64. Every value then has one encoding, so a kept request compared by
  // its bytes (replay()) is compared by its value, and corrupt bytes cannot pass for it.
  std::uint64_t varint() {
    std::uint64_t value = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      if (next_ >= bytes_.size()) return fail();
      const auto byte = static_cast<std::uint8_t>(bytes_[next_++]);
      if (shift == 63 && byte > 1) return fail();
      value |= std::uint64_t{byte & 0x7fU} << shift;
      if ((byte & 0x80U) == 0) return byte == 0 && shift > 0 ? fail() : value;
    }
    return fail();
  }
  std::uint64_t fail() {
    ok_ = false;
    next_ = bytes_.size();
    return 0;
  }
  void get(std::uint64_t& value) { value = varint(); }
  void get(std::uint32_t& value) {
    const std::uint64_t wide = varint();
    if (wide > 0xffffffffU) fail();
    value = static_cast<std::uint32_t>(wide);
  }
  void get(std::int64_t& value) {
    const std::uint64_t zigzag = varint();
    value = static_cast<std::int64_t>(zigzag >> 1) ^ -static_cast<std::int64_t>(zigzag & 1);
  }
  void get(bool& value) {
    const std::uint64_t raw = varint();
    if (raw > 1) fail();
    value = raw == 1;
  }
  void get(std::string& value) {
    const std::uint64_t size = varint();
    if (size > bytes_.size() - next_) {
      fail();
      return;
    }
    value.assign(bytes_.substr(next_, size));
    next_ += size;
  }
  void get(Name& value) {
    std::string text;
    get(text);
    if (make_names_) value = Name(text);
  }
  void get(Money& value) {
    std::int64_t micros = 0;
    get(micros);
    value = Money::from_micros(micros);
  }
  template <typename Tag, typename T>
  void get(StrongId<Tag, T>& value) {
    T raw{};
    get(raw);
    value = StrongId<Tag, T>(std::move(raw));
  }
  template <typename E>
  requires std::is_enum_v<E>
  void get(E& value) {
    const std::uint64_t raw = varint();
    if (raw > static_cast<std::uint64_t>(last_value(E{}))) fail();
    value = static_cast<E>(raw);
  }
  template <typename T>
  void get(std::optional<T>& value) {
    bool present = false;
    get(present);
    value.reset();
    if (!present) return;
    T inner{};
    get(inner);
    value = std::move(inner);
  }
  template <typename T>
  void get(std::vector<T>& values) {
    const std::uint64_t count = varint();
    values.clear();
    // Every element takes at least one byte: a count beyond the input is corrupt.
    if (count > bytes_.size() - next_) {
      fail();
      return;
    }
    for (std::uint64_t i = 0; i < count && ok_; ++i) {
      T value{};
      get(value);
      values.push_back(std::move(value));
    }
  }
  template <typename T>
  requires std::is_class_v<T>
  void get(T& message) { fields(*this, message); }

  std::string_view bytes_;
  bool make_names_ = true;
  int version_ = 2;
  std::size_t next_ = 1;  // After the version byte.
  bool ok_ = true;
};

}  // namespace

template <typename T>
std::optional<T> decode_version_1_or_2(std::string_view bytes) {
  if (bytes.empty() || (bytes.front() != 1 && bytes.front() != 2)) return std::nullopt;
  T value{};
  Reader check(bytes, false);
  fields(check, value);
  if (!check.ok() || !check.at_end()) return std::nullopt;
  value = T{};
  Reader reader(bytes, true);
  fields(reader, value);
  return value;
}

template std::optional<OpenRoundRequest> decode_version_1_or_2(std::string_view);
template std::optional<OpenRoundAnswer> decode_version_1_or_2(std::string_view);
template std::optional<LockWagersRequest> decode_version_1_or_2(std::string_view);
template std::optional<LockWagersAnswer> decode_version_1_or_2(std::string_view);
template std::optional<SettleRoundRequest> decode_version_1_or_2(std::string_view);
template std::optional<SettleRoundAnswer> decode_version_1_or_2(std::string_view);
template std::optional<VoidRoundRequest> decode_version_1_or_2(std::string_view);
template std::optional<VoidRoundAnswer> decode_version_1_or_2(std::string_view);

}  // namespace jackpot
