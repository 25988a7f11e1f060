#pragma once

#include <compare>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

namespace jackpot {

// A value of type T that only compares with ids of the same Tag, so that a table id can never be
// passed where a link id is expected.
template <typename Tag, typename T>
class StrongId {
 public:
  using value_type = T;

  StrongId() = default;
  explicit StrongId(T value) : value_(std::move(value)) {}

  const T& value() const { return value_; }

  friend auto operator<=>(const StrongId&, const StrongId&) = default;

 private:
  T value_{};
};

using LinkId = StrongId<struct LinkIdTag, std::string>;
using TableId = StrongId<struct TableIdTag, std::string>;
using LevelId = StrongId<struct LevelIdTag, std::uint32_t>;
using RoundId = StrongId<struct RoundIdTag, std::uint64_t>;
using PayoutId = StrongId<struct PayoutIdTag, std::uint64_t>;
using TransferId = StrongId<struct TransferIdTag, std::uint64_t>;

}  // namespace jackpot

template <typename Tag, typename T>
struct std::hash<jackpot::StrongId<Tag, T>> {
  std::size_t operator()(const jackpot::StrongId<Tag, T>& id) const noexcept {
    return std::hash<T>{}(id.value());
  }
};
