#pragma once

#include <utility>
#include <variant>

#include "meters/invariant.h"

namespace jackpot {

// A value or a named error (an enum of the module that returns it). Operations that can fail for
// operator reasons return a Result; they never throw and never change state when they fail.
template <typename T, typename E>
class [[nodiscard]] Result {
 public:
  Result(T value) : state_(std::in_place_index<0>, std::move(value)) {}  // NOLINT: implicit
  Result(E error) : state_(std::in_place_index<1>, error) {}             // NOLINT: implicit
  bool ok() const { return state_.index() == 0; }
  explicit operator bool() const { return ok(); }

  const T& value() const& {
    JACKPOT_INVARIANT(ok(), "value() of a failed Result");
    return std::get<0>(state_);
  }
  T& value() & {
    JACKPOT_INVARIANT(ok(), "value() of a failed Result");
    return std::get<0>(state_);
  }
  T&& value() && {
    JACKPOT_INVARIANT(ok(), "value() of a failed Result");
    return std::get<0>(std::move(state_));
  }
  const T& operator*() const& { return value(); }
  T& operator*() & { return value(); }
  const T* operator->() const { return &value(); }

  E error() const {
    JACKPOT_INVARIANT(!ok(), "error() of a successful Result");
    return std::get<1>(state_);
  }

 private:
  std::variant<T, E> state_;
};

}  // namespace jackpot
