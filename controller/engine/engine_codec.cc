#include "controller/engine/engine_codec.h"

#include <algorithm>
#include <cstring>
#include <type_traits>

namespace jackpot {
namespace {

// The format written now. Version 1 (before answers said whether each award's payout was paid
// at once or waits for a supervisor) is still read, for the answers journals kept before: its
// messages lack the members that fields() reads only from version 2 on, which decode empty.
constexpr char kVersion = 2;
constexpr char kOldestVersion = 1;

// Each message lists its members once; the writer and the reader walk the same list.
template <typename A>
void fields(A& a, LevelMeterView& v) {
  a(v.link, v.level, v.name, v.meter, v.must_hit_by, v.ceiling);
}
template <typename A>
void fields(A& a, DynamicPayView& v) {
  a(v.hand, v.option, v.amount);
}
template <typename A>
void fields(A& a, DynamicSelectionView& v) {
  a(v.link, v.paytable_id, v.pays);
}
template <typename A>
void fields(A& a, OpenRoundRequest& v) {
  a(v.table, v.round);
}
template <typename A>
void fields(A& a, OpenRoundAnswer& v) {
  a(v.table, v.round, v.dynamic_pays);
}
template <typename A>
void fields(A& a, WagerRequest& v) {
  a(v.seat, v.link, v.amount_cents);
}
template <typename A>
void fields(A& a, LockWagersRequest& v) {
  a(v.table, v.round, v.wagers);
}
template <typename A>
void fields(A& a, MustHitByHitView& v) {
  a(v.link, v.level, v.seat, v.amount, v.draw_id);
  if (a.version() >= 2) a(v.payout_state);
}
template <typename A>
void fields(A& a, LockWagersAnswer& v) {
  a(v.table, v.round, v.meters, v.must_hit_by_hits);
}
template <typename A>
void fields(A& a, SeatHandRequest& v) {
  a(v.seat, v.cards, v.keyed_hand);
}
template <typename A>
void fields(A& a, SettleRoundRequest& v) {
  a(v.table, v.round, v.seats, v.board, v.link_cards);
}
template <typename A>
void fields(A& a, AwardView& v) {
  a(v.link, v.kind, v.level, v.hand, v.from_seat, v.amount, v.payout);
  if (a.version() >= 2) a(v.payout_state);
}
template <typename A>
void fields(A& a, SeatResultView& v) {
  a(v.seat, v.link, v.paytable_id, v.hand, v.dealer_keyed, v.awards, v.total);
}
template <typename A>
void fields(A& a, SettleRoundAnswer& v) {
  a(v.table, v.round, v.results, v.meters);
}
template <typename A>
void fields(A& a, VoidRoundRequest& v) {
  a(v.table, v.round, v.reason);
}
template <typename A>
void fields(A& a, VoidRoundAnswer& v) {
  a(v.table, v.round, v.reversed, v.meters);
}

// The most bytes a member of type T takes, but for texts over 32 bytes and the elements of
// vectors, which make their own room; 0 for a message, which makes its own.
template <typename T>
struct MemberBound {
  static constexpr std::size_t value = 0;
};
template <typename T>
requires std::is_integral_v<T> || std::is_enum_v<T>
struct MemberBound<T> {
  static constexpr std::size_t value = 10;  // A 64-bit varint.
};
template <>
struct MemberBound<Money> : MemberBound<std::int64_t> {};
template <>
struct MemberBound<std::string> {
  static constexpr std::size_t value = 1 + 32;  // Writer::text() for up to 32 bytes.
};
template <>
struct MemberBound<Name> : MemberBound<std::string> {};
template <typename Tag, typename T>
struct MemberBound<StrongId<Tag, T>> : MemberBound<T> {};
template <typename T>
struct MemberBound<std::optional<T>> {
  static constexpr std::size_t value = 1 + MemberBound<T>::value;
};
template <typename T>
struct MemberBound<std::vector<T>> : MemberBound<std::uint64_t> {};  // The count.

class Writer {
 public:
  // Writes into one buffer per thread that only ever grows, so that encoding neither allocates
  // nor clears memory on the way; view() shows the bytes until the next Writer on the thread.
  Writer() {
    std::string& bytes = buffer();
    if (bytes.size() < 512) bytes.resize(512);
    begin_ = cur_ = bytes.data();
    end_ = begin_ + bytes.size();
  }
  // Appends one message: the version byte, then its members.
  template <typename T>
  void message(const T& value) {
    reserve(1);
    *cur_++ = kVersion;
    // The member lists take non-const references so that the reader can fill them; the writer
    // only reads, so no copy of the message is needed.
    fields(*this, const_cast<T&>(value));
  }
  std::size_t size() const { return static_cast<std::size_t>(cur_ - begin_); }
  static constexpr int version() { return kVersion; }
  // The bytes written so far; valid until the next Writer on this thread.
  std::string_view view() const { return {begin_, size()}; }

  // One message's members: room for all of them is made once, then each is written through a
  // plain pointer with no check (but for what makes its own room: see reserve()).
  template <typename... T>
  void operator()(T&... values) {
    constexpr std::size_t bound = (MemberBound<T>::value + ...);
    static_assert(bound <= kSlack, "a message's members fit in the slack every reserve() leaves");
    reserve(bound);
    (put(values), ...);
  }

 private:
  struct Room {
    char* begin;
    char* cur;
    char* end;
  };
  // reserve(n) leaves room for n bytes and kSlack more. A message reserves its members' bound; a
  // nested message, a vector's element or a long text reserves its own in the middle, and after
  // a nested message or a vector the writer makes sure of kSlack again (members written after a
  // nested reserve at several levels could otherwise add up past one slack), which is enough
  // for the rest of the enclosing message: every message's bound is at most kSlack.
  static constexpr std::size_t kSlack = 256;
  static std::string& buffer() {
    thread_local std::string bytes;
    return bytes;
  }
  [[gnu::always_inline]] void reserve(std::size_t count) {
    if (static_cast<std::size_t>(end_ - cur_) < count + kSlack) [[unlikely]] {
      const Room grown = grow(static_cast<std::size_t>(cur_ - begin_), count + kSlack);
      begin_ = grown.begin;
      cur_ = grown.cur;
      end_ = grown.end;
    }
  }
  // Static, and the writer's pointers passed by value: the writer's address never leaves
  // encode_pair(), so the compiler keeps them in registers instead of reloading them after every
  // byte written (a char store may alias anything in memory).
  [[gnu::noinline]] static Room grow(std::size_t used, std::size_t count) {
    std::string& bytes = buffer();
    bytes.resize(std::max(2 * bytes.size(), used + count));
    return {bytes.data(), bytes.data() + used, bytes.data() + bytes.size()};
  }
  // The writers below write within room reserved before (see reserve()).
  [[gnu::always_inline]] void varint(std::uint64_t value) {
    char* out = cur_;
    while (value >= 0x80) {
      *out++ = static_cast<char>((value & 0x7f) | 0x80);
      value >>= 7;
    }
    *out++ = static_cast<char>(value);
    cur_ = out;
  }
  [[gnu::always_inline]] void text(const std::string& value) {
    const std::size_t size = value.size();
    char* out = cur_;
#if defined(__GLIBCXX__) && _GLIBCXX_USE_CXX11_ABI
    // Most texts here are short (cards, ids, labels): those take their one-byte length and one
    // 16-byte block, with no call. A libstdc++ std::string always owns at least 16 bytes at
    // data(): its inline buffer (15 and the terminator), or a heap block of capacity 16 or more.
    // The bytes copied past the text are overwritten by the next field or lie past the end,
    // never in view().
    // Clang 16 (the fuzz build) cannot make libstdc++ 12's std::string in a constant expression;
    // the gcc build checks this.
#if !defined(__clang__)
    static_assert(std::string().capacity() + 1 >= 16);
#endif
    if (size <= 16) [[likely]] {
      *out = static_cast<char>(size);  // The varint of a size below 0x80.
      std::memcpy(out + 1, value.data(), 16);
      cur_ = out + 1 + size;
      return;
    }
#endif
    // 16 to 32 (paytable ids, row labels): two 16-byte blocks that overlap, both within the text.
    if (size >= 16 && size <= 32) {
      *out = static_cast<char>(size);
      std::memcpy(out + 1, value.data(), 16);
      std::memcpy(out + 1 + size - 16, value.data() + size - 16, 16);
      cur_ = out + 1 + size;
      return;
    }
    reserve(10 + size);  // Beyond the member's bound.
    varint(size);
    std::memcpy(cur_, value.data(), size);
    cur_ += size;
  }
  void put(std::uint64_t value) { varint(value); }
  void put(std::uint32_t value) { varint(value); }
  void put(std::int64_t value) {  // Zig-zag, so that small negative numbers stay short.
    varint((static_cast<std::uint64_t>(value) << 1) ^ static_cast<std::uint64_t>(value >> 63));
  }
  void put(bool value) { varint(value ? 1 : 0); }
  void put(std::string& value) { text(value); }
  void put(Name& value) { text(value.str()); }
  void put(Money value) { put(value.micros()); }
  template <typename Tag, typename T>
  void put(StrongId<Tag, T>& value) {
    put(const_cast<T&>(value.value()));  // Read only, like every put().
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
    for (T& value : values) {
      if constexpr (MemberBound<T>::value > 0) reserve(MemberBound<T>::value);
      put(value);
    }
    reserve(0);  // kSlack again for the rest of the enclosing message (see kSlack).
  }
  template <typename T>
  requires std::is_class_v<T>
  void put(T& message) {
    fields(*this, message);
    reserve(0);  // As for a vector: a nested message may have spent its slack.
  }

  char* begin_ = nullptr;
  char* cur_ = nullptr;
  char* end_ = nullptr;
};

// The last value of each enum the messages hold: the reader refuses larger numbers, which no
// writer wrote and which no switch over the enum expects.
constexpr AwardKind last_value(AwardKind) { return AwardKind::envy; }
constexpr PayoutState last_value(PayoutState) { return PayoutState::rejected; }

class Reader {
 public:
  // A reader that does not make Names reads them and throws them away: decode() checks the bytes
  // with one first, so that corrupt bytes add nothing to the process's table of names.
  // `bytes` starts with a version byte that decode() accepted.
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
  int version_ = kVersion;
  std::size_t next_ = 1;  // After the version byte.
  bool ok_ = true;
};

template <typename T>
std::string encode_any(const T& value) {
  Writer writer;
  writer.message(value);
  return std::string(writer.view());
}

// Flattened, so that the writer's member functions (and with them its pointers) stay in one
// function: see Writer::grow().
template <typename Request, typename Answer>
[[gnu::flatten]] EncodedCommand encode_pair(const Request& request, const Answer& answer) {
  Writer writer;
  writer.message(request);
  const std::size_t request_size = writer.size();
  writer.message(answer);
  const std::string_view bytes = writer.view();
  return EncodedCommand(bytes, request_size);
}

}  // namespace

std::string encode(const OpenRoundRequest& value) { return encode_any(value); }
std::string encode(const OpenRoundAnswer& value) { return encode_any(value); }
std::string encode(const LockWagersRequest& value) { return encode_any(value); }
std::string encode(const LockWagersAnswer& value) { return encode_any(value); }
std::string encode(const SettleRoundRequest& value) { return encode_any(value); }
std::string encode(const SettleRoundAnswer& value) { return encode_any(value); }
std::string encode(const VoidRoundRequest& value) { return encode_any(value); }
std::string encode(const VoidRoundAnswer& value) { return encode_any(value); }

EncodedCommand encode_command(const OpenRoundRequest& request, const OpenRoundAnswer& answer) {
  return encode_pair(request, answer);
}
EncodedCommand encode_command(const LockWagersRequest& request, const LockWagersAnswer& answer) {
  return encode_pair(request, answer);
}
EncodedCommand encode_command(const SettleRoundRequest& request, const SettleRoundAnswer& answer) {
  return encode_pair(request, answer);
}
EncodedCommand encode_command(const VoidRoundRequest& request, const VoidRoundAnswer& answer) {
  return encode_pair(request, answer);
}

template <typename T>
std::optional<T> decode(std::string_view bytes) {
  if (bytes.empty() || bytes.front() < kOldestVersion || bytes.front() > kVersion) {
    return std::nullopt;
  }
  T value{};
  Reader check(bytes, false);
  fields(check, value);
  if (!check.ok() || !check.at_end()) return std::nullopt;
  value = T{};
  Reader reader(bytes, true);
  fields(reader, value);
  return value;
}

template std::optional<OpenRoundRequest> decode(std::string_view);
template std::optional<OpenRoundAnswer> decode(std::string_view);
template std::optional<LockWagersRequest> decode(std::string_view);
template std::optional<LockWagersAnswer> decode(std::string_view);
template std::optional<SettleRoundRequest> decode(std::string_view);
template std::optional<SettleRoundAnswer> decode(std::string_view);
template std::optional<VoidRoundRequest> decode(std::string_view);
template std::optional<VoidRoundAnswer> decode(std::string_view);

}  // namespace jackpot
