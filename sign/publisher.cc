#include "sign/publisher.h"

#include <utility>
#include <vector>

namespace jackpot::sign {

PaceDecision pace(std::uint64_t latest_sequence, std::uint64_t sent_sequence,
                  std::int64_t last_sent_us, std::int64_t now_us, const PaceLimits& limits) {
  using Kind = PaceDecision::Kind;
  if (latest_sequence > sent_sequence) return {Kind::send_state};
  if (sent_sequence != 0 && now_us - last_sent_us >= limits.heartbeat_us) {
    return {Kind::send_heartbeat};
  }
  return {Kind::wait};
}

SignPublisher::SignPublisher(std::uint64_t first_sequence) {
  SignState nothing;
  nothing.sequence = first_sequence;
  latest_ = std::make_shared<const SignState>(std::move(nothing));
  first_sequence_ = first_sequence;
}

std::uint64_t SignPublisher::publish(SignState state) {
  std::vector<std::shared_ptr<Wakeup>> to_wake;
  std::uint64_t sequence = 0;
  {
    const std::lock_guard lock(mutex_);
    if (latest_->sequence > first_sequence_ && latest_->shows_same_as(state)) {
      return latest_->sequence;
    }
    state.sequence = latest_->sequence + 1;
    sequence = state.sequence;
    latest_ = std::make_shared<const SignState>(std::move(state));
    to_wake.reserve(subscribers_.size());
    for (const auto& [id, wakeup] : subscribers_) to_wake.push_back(wakeup);
  }
  for (const auto& wakeup : to_wake) (*wakeup)();
  return sequence;
}

void SignPublisher::wake_all() {
  std::vector<std::shared_ptr<Wakeup>> to_wake;
  {
    const std::lock_guard lock(mutex_);
    to_wake.reserve(subscribers_.size());
    for (const auto& [id, wakeup] : subscribers_) to_wake.push_back(wakeup);
  }
  for (const auto& wakeup : to_wake) (*wakeup)();
}

std::shared_ptr<const SignState> SignPublisher::latest() const {
  const std::lock_guard lock(mutex_);
  return latest_;
}

std::uint64_t SignPublisher::subscribe(Wakeup wakeup) {
  const std::lock_guard lock(mutex_);
  const std::uint64_t id = next_id_++;
  subscribers_.emplace(id, std::make_shared<Wakeup>(std::move(wakeup)));
  return id;
}

void SignPublisher::unsubscribe(std::uint64_t id) {
  const std::lock_guard lock(mutex_);
  subscribers_.erase(id);
}

std::size_t SignPublisher::subscribers() const {
  const std::lock_guard lock(mutex_);
  return subscribers_.size();
}

}  // namespace jackpot::sign
