#include "controller/daemon/refusal_tally.h"

#include <algorithm>

namespace jackpot {

std::string RefusalTally::kept_detail(std::string_view detail) {
  std::string kept(detail.substr(0, kMaxDetailBytes));
  for (char& c : kept) {
    if (c < 0x20 || c > 0x7e) c = '?';
  }
  return kept;
}

void RefusalTally::add(std::string_view reason, std::string_view detail, std::int64_t now_us) {
  const std::lock_guard lock(mutex_);
  std::pair<std::string, std::string> key{std::string(reason), kept_detail(detail)};
  auto found = kinds_.find(key);
  Kind* kind = nullptr;
  if (found != kinds_.end()) {
    kind = &found->second;
  } else if (kinds_.size() < kMaxKinds) {
    kind = &kinds_.emplace(key, Kind{key.first, key.second, 0, now_us, now_us}).first->second;
  } else {
    kind = &other_;
    if (other_.count == 0) other_ = Kind{"other", "", 0, now_us, now_us};
  }
  ++kind->count;
  kind->last_us = now_us;
}

void RefusalTally::restore(const std::vector<Kind>& kinds) {
  const std::lock_guard lock(mutex_);
  for (const Kind& kind : kinds) {
    Kind* into = nullptr;
    if (kind.reason == "other" && kind.detail.empty()) {
      into = &other_;
    } else if (auto found = kinds_.find({kind.reason, kind.detail}); found != kinds_.end()) {
      into = &found->second;
    } else if (kinds_.size() < kMaxKinds) {
      into = &kinds_.emplace(std::pair{kind.reason, kind.detail}, Kind{kind.reason, kind.detail})
                  .first->second;
    } else {
      into = &other_;
    }
    if (into == &other_ && other_.count == 0) other_ = Kind{"other", "", 0, kind.first_us, 0};
    if (into->count == 0 || kind.first_us < into->first_us) into->first_us = kind.first_us;
    into->last_us = std::max(into->last_us, kind.last_us);
    into->count += kind.count;
  }
}

std::vector<RefusalTally::Kind> RefusalTally::drain() {
  const std::lock_guard lock(mutex_);
  std::vector<Kind> drained;
  for (auto& [key, kind] : kinds_) drained.push_back(std::move(kind));
  if (other_.count > 0) drained.push_back(std::move(other_));
  kinds_.clear();
  other_ = Kind{};
  return drained;
}

}  // namespace jackpot
