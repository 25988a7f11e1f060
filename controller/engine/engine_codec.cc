#include "controller/engine/engine_codec.h"

#include <google/protobuf/arena.h>
#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/io/zero_copy_stream_impl_lite.h>

#include <cstddef>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "controller/engine/engine_codec_v2.h"
#include "jackpot/journal/v1/commands.pb.h"
#include "meters/invariant.h"

namespace jackpot {

// Each engine type's message: declared only, as std::declval is, to name the type (MessageOf).
journal::v1::OpenRoundRequest message_of(const OpenRoundRequest&);
journal::v1::OpenRoundAnswer message_of(const OpenRoundAnswer&);
journal::v1::LockWagersRequest message_of(const LockWagersRequest&);
journal::v1::LockWagersAnswer message_of(const LockWagersAnswer&);
journal::v1::SettleRoundRequest message_of(const SettleRoundRequest&);
journal::v1::SettleRoundAnswer message_of(const SettleRoundAnswer&);
journal::v1::VoidRoundRequest message_of(const VoidRoundRequest&);
journal::v1::VoidRoundAnswer message_of(const VoidRoundAnswer&);

namespace {

namespace pb = jackpot::journal::v1;

// The format written now: this byte, the message's length (a varint), then the message as
// deterministic Protobuf (proto/jackpot/journal/v1/commands.proto). Versions 1 and 2 are the
// hand-written format before it (engine_codec_v2.h), still read.
constexpr char kVersion = 3;

// ---- Engine value -> message -------------------------------------------------------------

pb::AwardKind to_proto(AwardKind kind) {
  switch (kind) {
    case AwardKind::percent:
      return pb::AWARD_KIND_PERCENT;
    case AwardKind::fixed:
      return pb::AWARD_KIND_FIXED;
    case AwardKind::dynamic:
      return pb::AWARD_KIND_DYNAMIC;
    case AwardKind::must_hit_by:
      return pb::AWARD_KIND_MUST_HIT_BY;
    case AwardKind::envy:
      return pb::AWARD_KIND_ENVY;
  }
  return pb::AWARD_KIND_PERCENT;  // Unreachable: every kind is listed.
}

pb::PayoutState to_proto(PayoutState state) {
  switch (state) {
    case PayoutState::pending:
      return pb::PAYOUT_STATE_PENDING;
    case PayoutState::paid:
      return pb::PAYOUT_STATE_PAID;
    case PayoutState::rejected:
      return pb::PAYOUT_STATE_REJECTED;
  }
  return pb::PAYOUT_STATE_PENDING;  // Unreachable: every state is listed.
}

// Each element in turn (defined below the messages' own, which it calls).
template <typename Value, typename Message>
void to_proto(const std::vector<Value>& values, google::protobuf::RepeatedPtrField<Message>* out);

void to_proto(const std::vector<std::string>& values,
              google::protobuf::RepeatedPtrField<std::string>* out) {
  out->Assign(values.begin(), values.end());
}

void to_proto(const OpenRoundRequest& v, pb::OpenRoundRequest* out) {
  out->set_table(v.table.value());
  out->set_round(v.round.value());
}

void to_proto(const WagerRequest& v, pb::WagerRequest* out) {
  out->set_seat(v.seat);
  out->set_link(v.link.value());
  out->set_amount_cents(v.amount_cents);
}

void to_proto(const LockWagersRequest& v, pb::LockWagersRequest* out) {
  out->set_table(v.table.value());
  out->set_round(v.round.value());
  to_proto(v.wagers, out->mutable_wagers());
}

void to_proto(const SeatHandRequest& v, pb::SeatHandRequest* out) {
  out->set_seat(v.seat);
  to_proto(v.cards, out->mutable_cards());
  if (v.keyed_hand) out->set_keyed_hand(*v.keyed_hand);
}

void to_proto(const SettleRoundRequest& v, pb::SettleRoundRequest* out) {
  out->set_table(v.table.value());
  out->set_round(v.round.value());
  to_proto(v.seats, out->mutable_seats());
  to_proto(v.board, out->mutable_board());
  to_proto(v.link_cards, out->mutable_link_cards());
}

void to_proto(const VoidRoundRequest& v, pb::VoidRoundRequest* out) {
  out->set_table(v.table.value());
  out->set_round(v.round.value());
  out->set_reason(v.reason);
}

void to_proto(const LevelMeterView& v, pb::LevelMeterView* out) {
  out->set_link(v.link.value());
  out->set_level(v.level);
  out->set_name(v.name.str());
  out->set_meter_micros(v.meter.micros());
  if (v.must_hit_by) out->set_must_hit_by_micros(v.must_hit_by->micros());
  if (v.ceiling) out->set_ceiling_micros(v.ceiling->micros());
}

void to_proto(const DynamicPayView& v, pb::DynamicPayView* out) {
  out->set_hand(v.hand.str());
  out->set_option(v.option);
  out->set_amount_micros(v.amount.micros());
}

void to_proto(const DynamicSelectionView& v, pb::DynamicSelectionView* out) {
  out->set_link(v.link.value());
  out->set_paytable_id(v.paytable_id.str());
  to_proto(v.pays, out->mutable_pays());
}

void to_proto(const OpenRoundAnswer& v, pb::OpenRoundAnswer* out) {
  out->set_table(v.table.value());
  out->set_round(v.round.value());
  to_proto(v.dynamic_pays, out->mutable_dynamic_pays());
}

void to_proto(const MustHitByHitView& v, pb::MustHitByHitView* out) {
  out->set_link(v.link.value());
  out->set_level(v.level);
  out->set_seat(v.seat);
  out->set_amount_micros(v.amount.micros());
  out->set_draw_id(v.draw_id);
  if (v.payout_state) out->set_payout_state(to_proto(*v.payout_state));
  if (v.revealed) {
    auto* revealed = out->mutable_revealed();
    revealed->set_point_micros(v.revealed->point.micros());
    revealed->set_salt(v.revealed->salt.data(), v.revealed->salt.size());
    revealed->set_commitment(v.revealed->commitment.data(), v.revealed->commitment.size());
    revealed->set_range_above_micros(v.revealed->range_above.micros());
    revealed->set_range_up_to_micros(v.revealed->range_up_to.micros());
  }
}

void to_proto(const LockWagersAnswer& v, pb::LockWagersAnswer* out) {
  out->set_table(v.table.value());
  out->set_round(v.round.value());
  to_proto(v.meters, out->mutable_meters());
  to_proto(v.must_hit_by_hits, out->mutable_must_hit_by_hits());
}

void to_proto(const AwardView& v, pb::AwardView* out) {
  out->set_link(v.link.value());
  out->set_kind(to_proto(v.kind));
  out->set_level(v.level);
  out->set_hand(v.hand.str());
  out->set_from_seat(v.from_seat);
  out->set_amount_micros(v.amount.micros());
  out->set_payout(v.payout.value());
  if (v.payout_state) out->set_payout_state(to_proto(*v.payout_state));
}

void to_proto(const SeatResultView& v, pb::SeatResultView* out) {
  out->set_seat(v.seat);
  out->set_link(v.link.value());
  out->set_paytable_id(v.paytable_id.str());
  out->set_hand(v.hand.str());
  out->set_dealer_keyed(v.dealer_keyed);
  to_proto(v.awards, out->mutable_awards());
  out->set_total_micros(v.total.micros());
}

void to_proto(const SettleRoundAnswer& v, pb::SettleRoundAnswer* out) {
  out->set_table(v.table.value());
  out->set_round(v.round.value());
  to_proto(v.results, out->mutable_results());
  to_proto(v.meters, out->mutable_meters());
}

void to_proto(const VoidRoundAnswer& v, pb::VoidRoundAnswer* out) {
  out->set_table(v.table.value());
  out->set_round(v.round.value());
  out->set_reversed_micros(v.reversed.micros());
  to_proto(v.meters, out->mutable_meters());
}

// ---- Message -> engine value -------------------------------------------------------------
// Proto3 enums are open: a parsed message may hold a number no engine enum has, which these
// map to nothing. known_enums() refuses such a message before any of it is converted.

std::optional<AwardKind> engine_value(pb::AwardKind kind) {
  switch (kind) {
    case pb::AWARD_KIND_PERCENT:
      return AwardKind::percent;
    case pb::AWARD_KIND_FIXED:
      return AwardKind::fixed;
    case pb::AWARD_KIND_DYNAMIC:
      return AwardKind::dynamic;
    case pb::AWARD_KIND_MUST_HIT_BY:
      return AwardKind::must_hit_by;
    case pb::AWARD_KIND_ENVY:
      return AwardKind::envy;
    default:
      return std::nullopt;
  }
}

std::optional<PayoutState> engine_value(pb::PayoutState state) {
  switch (state) {
    case pb::PAYOUT_STATE_PENDING:
      return PayoutState::pending;
    case pb::PAYOUT_STATE_PAID:
      return PayoutState::paid;
    case pb::PAYOUT_STATE_REJECTED:
      return PayoutState::rejected;
    default:
      return std::nullopt;
  }
}

template <typename Enum>
auto from_proto(Enum value) {
  const auto known = engine_value(value);
  JACKPOT_INVARIANT(known.has_value(), "known_enums() refused every unknown enum value");
  return *known;
}

// Each element in turn (defined below the messages' own, which it calls).
template <typename Value, typename Message>
void from_proto(const google::protobuf::RepeatedPtrField<Message>& messages,
                std::vector<Value>& out);

void from_proto(const google::protobuf::RepeatedPtrField<std::string>& texts,
                std::vector<std::string>& out) {
  out.assign(texts.begin(), texts.end());
}

void from_proto(const pb::OpenRoundRequest& m, OpenRoundRequest& out) {
  out.table = TableId(m.table());
  out.round = RoundId(m.round());
}

void from_proto(const pb::WagerRequest& m, WagerRequest& out) {
  out.seat = m.seat();
  out.link = LinkId(m.link());
  out.amount_cents = m.amount_cents();
}

void from_proto(const pb::LockWagersRequest& m, LockWagersRequest& out) {
  out.table = TableId(m.table());
  out.round = RoundId(m.round());
  from_proto(m.wagers(), out.wagers);
}

void from_proto(const pb::SeatHandRequest& m, SeatHandRequest& out) {
  out.seat = m.seat();
  from_proto(m.cards(), out.cards);
  if (m.has_keyed_hand()) out.keyed_hand = m.keyed_hand();
}

void from_proto(const pb::SettleRoundRequest& m, SettleRoundRequest& out) {
  out.table = TableId(m.table());
  out.round = RoundId(m.round());
  from_proto(m.seats(), out.seats);
  from_proto(m.board(), out.board);
  from_proto(m.link_cards(), out.link_cards);
}

void from_proto(const pb::VoidRoundRequest& m, VoidRoundRequest& out) {
  out.table = TableId(m.table());
  out.round = RoundId(m.round());
  out.reason = m.reason();
}

void from_proto(const pb::LevelMeterView& m, LevelMeterView& out) {
  out.link = LinkId(m.link());
  out.level = m.level();
  out.name = Name(m.name());
  out.meter = Money::from_micros(m.meter_micros());
  if (m.has_must_hit_by_micros()) out.must_hit_by = Money::from_micros(m.must_hit_by_micros());
  if (m.has_ceiling_micros()) out.ceiling = Money::from_micros(m.ceiling_micros());
}

void from_proto(const pb::DynamicPayView& m, DynamicPayView& out) {
  out.hand = Name(m.hand());
  out.option = m.option();
  out.amount = Money::from_micros(m.amount_micros());
}

void from_proto(const pb::DynamicSelectionView& m, DynamicSelectionView& out) {
  out.link = LinkId(m.link());
  out.paytable_id = Name(m.paytable_id());
  from_proto(m.pays(), out.pays);
}

void from_proto(const pb::OpenRoundAnswer& m, OpenRoundAnswer& out) {
  out.table = TableId(m.table());
  out.round = RoundId(m.round());
  from_proto(m.dynamic_pays(), out.dynamic_pays);
}

void from_proto(const pb::MustHitByHitView& m, MustHitByHitView& out) {
  out.link = LinkId(m.link());
  out.level = m.level();
  out.seat = m.seat();
  out.amount = Money::from_micros(m.amount_micros());
  out.draw_id = m.draw_id();
  if (m.has_payout_state()) out.payout_state = from_proto(m.payout_state());
  // known() refused a salt or commitment of any other size before decoding.
  if (m.has_revealed() && m.revealed().salt().size() == TriggerSalt{}.size() &&
      m.revealed().commitment().size() == Sha256Digest{}.size()) {
    HiddenTrigger revealed;
    revealed.point = Money::from_micros(m.revealed().point_micros());
    std::copy(m.revealed().salt().begin(), m.revealed().salt().end(), revealed.salt.begin());
    std::copy(m.revealed().commitment().begin(), m.revealed().commitment().end(),
              revealed.commitment.begin());
    revealed.range_above = Money::from_micros(m.revealed().range_above_micros());
    revealed.range_up_to = Money::from_micros(m.revealed().range_up_to_micros());
    out.revealed = revealed;
  }
}

void from_proto(const pb::LockWagersAnswer& m, LockWagersAnswer& out) {
  out.table = TableId(m.table());
  out.round = RoundId(m.round());
  from_proto(m.meters(), out.meters);
  from_proto(m.must_hit_by_hits(), out.must_hit_by_hits);
}

void from_proto(const pb::AwardView& m, AwardView& out) {
  out.link = LinkId(m.link());
  out.kind = from_proto(m.kind());
  out.level = m.level();
  out.hand = Name(m.hand());
  out.from_seat = m.from_seat();
  out.amount = Money::from_micros(m.amount_micros());
  out.payout = PayoutId(m.payout());
  if (m.has_payout_state()) out.payout_state = from_proto(m.payout_state());
}

void from_proto(const pb::SeatResultView& m, SeatResultView& out) {
  out.seat = m.seat();
  out.link = LinkId(m.link());
  out.paytable_id = Name(m.paytable_id());
  out.hand = Name(m.hand());
  out.dealer_keyed = m.dealer_keyed();
  from_proto(m.awards(), out.awards);
  out.total = Money::from_micros(m.total_micros());
}

void from_proto(const pb::SettleRoundAnswer& m, SettleRoundAnswer& out) {
  out.table = TableId(m.table());
  out.round = RoundId(m.round());
  from_proto(m.results(), out.results);
  from_proto(m.meters(), out.meters);
}

void from_proto(const pb::VoidRoundAnswer& m, VoidRoundAnswer& out) {
  out.table = TableId(m.table());
  out.round = RoundId(m.round());
  out.reversed = Money::from_micros(m.reversed_micros());
  from_proto(m.meters(), out.meters);
}

template <typename Value, typename Message>
void to_proto(const std::vector<Value>& values, google::protobuf::RepeatedPtrField<Message>* out) {
  out->Reserve(static_cast<int>(values.size()));
  for (const Value& value : values) to_proto(value, out->Add());
}

template <typename Value, typename Message>
void from_proto(const google::protobuf::RepeatedPtrField<Message>& messages,
                std::vector<Value>& out) {
  out.reserve(static_cast<std::size_t>(messages.size()));
  for (const Message& message : messages) from_proto(message, out.emplace_back());
}

// ---- Checks before decoding --------------------------------------------------------------
// Every enum field of the messages (tests/unit/engine_codec_test.cc checks that there are no
// others): AwardView.kind and .payout_state, MustHitByHitView.payout_state.

bool known(const pb::AwardView& m) {
  return engine_value(m.kind()) && (!m.has_payout_state() || engine_value(m.payout_state()));
}
bool known(const pb::MustHitByHitView& m) {
  // A revealed salt and commitment are 32 bytes each, as the engine writes them: anything else
  // is not an answer it gave.
  if (m.has_revealed() && (m.revealed().salt().size() != TriggerSalt{}.size() ||
                           m.revealed().commitment().size() != Sha256Digest{}.size())) {
    return false;
  }
  return !m.has_payout_state() || engine_value(m.payout_state());
}
bool known(const pb::SeatResultView& m) {
  for (const pb::AwardView& award : m.awards()) {
    if (!known(award)) return false;
  }
  return true;
}
template <typename Message>
bool known_enums(const Message& m) {
  if constexpr (std::is_same_v<Message, pb::LockWagersAnswer>) {
    for (const pb::MustHitByHitView& hit : m.must_hit_by_hits()) {
      if (!known(hit)) return false;
    }
  } else if constexpr (std::is_same_v<Message, pb::SettleRoundAnswer>) {
    for (const pb::SeatResultView& result : m.results()) {
      if (!known(result)) return false;
    }
  }
  return true;
}

// ---- The format --------------------------------------------------------------------------

template <typename T>
using MessageOf = decltype(message_of(std::declval<const T&>()));

// A message as written: the version byte, the message's length (a varint) and the message. With
// the length, a cut or a lengthened row is refused: Protobuf alone has no end mark, and a
// message cut between two fields would parse as one with fewer members.
std::size_t frame_size(std::size_t message_size) {
  return 1 + google::protobuf::io::CodedOutputStream::VarintSize64(message_size) + message_size;
}

// Writes the frame of `message`, whose sizes ByteSizeLong() has just cached and returned as
// `message_size`, into `out` (frame_size(message_size) bytes). Deterministic serialization: one
// value is always the same bytes.
void write(const google::protobuf::MessageLite& message, std::size_t message_size, char* out) {
  const std::size_t size = frame_size(message_size);
  JACKPOT_INVARIANT(size <= static_cast<std::size_t>(std::numeric_limits<int>::max()),
                    "a kept message is below 2 GiB (requests are at most 64 KiB)");
  google::protobuf::io::ArrayOutputStream stream(out, static_cast<int>(size));
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  coded.WriteRaw(&kVersion, 1);
  coded.WriteVarint64(message_size);
  message.SerializeWithCachedSizes(&coded);
  coded.Trim();
  JACKPOT_INVARIANT(!coded.HadError() && static_cast<std::size_t>(coded.ByteCount()) == size,
                    "a message fills its frame exactly");
}

// The messages are built on an arena whose first block is on the stack: a command's messages
// then take no allocation of their own, only its texts longer than std::string keeps inline.
class MessageArena {
 public:
  MessageArena() : arena_(options(first_block_)) {}
  template <typename T>
  MessageOf<T>* message(const T& value) {
    auto* message = google::protobuf::Arena::CreateMessage<MessageOf<T>>(&arena_);
    to_proto(value, message);
    return message;
  }

 private:
  static google::protobuf::ArenaOptions options(char* first_block) {
    google::protobuf::ArenaOptions options;
    options.initial_block = first_block;
    options.initial_block_size = kFirstBlock;
    return options;
  }
  static constexpr std::size_t kFirstBlock = 8192;
  alignas(std::max_align_t) char first_block_[kFirstBlock];
  google::protobuf::Arena arena_;
};

template <typename T>
std::string encode_any(const T& value) {
  MessageArena arena;
  const auto* message = arena.message(value);
  const std::size_t message_size = message->ByteSizeLong();
  std::string bytes(frame_size(message_size), '\0');
  write(*message, message_size, bytes.data());
  return bytes;
}

template <typename Request, typename Answer>
EncodedCommand encode_pair(const Request& request, const Answer& answer) {
  MessageArena arena;
  const auto* request_message = arena.message(request);
  const auto* answer_message = arena.message(answer);
  const std::size_t request_message_size = request_message->ByteSizeLong();
  const std::size_t answer_message_size = answer_message->ByteSizeLong();
  const std::size_t request_size = frame_size(request_message_size);
  std::string bytes(request_size + frame_size(answer_message_size), '\0');
  write(*request_message, request_message_size, bytes.data());
  write(*answer_message, answer_message_size, bytes.data() + request_size);
  return EncodedCommand(bytes, request_size);
}

// The value that `bytes` (version 3) hold, if they are exactly what encode() writes for it.
template <typename T>
std::optional<T> decode_current(std::string_view bytes) {
  if (bytes.size() > static_cast<std::size_t>(std::numeric_limits<int>::max())) return std::nullopt;
  google::protobuf::io::CodedInputStream header(
      reinterpret_cast<const std::uint8_t*>(bytes.data()) + 1, static_cast<int>(bytes.size() - 1));
  std::uint64_t length = 0;
  if (!header.ReadVarint64(&length)) return std::nullopt;
  const std::string_view body =
      bytes.substr(1 + static_cast<std::size_t>(header.CurrentPosition()));
  if (length != body.size()) return std::nullopt;
  MessageOf<T> message;
  if (!message.ParseFromArray(body.data(), static_cast<int>(body.size()))) return std::nullopt;
  if (!known_enums(message)) return std::nullopt;
  // One spelling per value: the parser also takes fields out of order, repeated scalars, default
  // values written out, over-long varints and fields it does not know. Writing the message back
  // without its unknown fields must give the same bytes.
  message.DiscardUnknownFields();
  const std::size_t message_size = message.ByteSizeLong();
  std::string again(frame_size(message_size), '\0');
  write(message, message_size, again.data());
  if (again != bytes) return std::nullopt;
  T value{};
  from_proto(message, value);
  return value;
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
  if (bytes.empty()) return std::nullopt;
  if (bytes.front() == kVersion) return decode_current<T>(bytes);
  return decode_version_1_or_2<T>(bytes);
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
