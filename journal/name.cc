#include "journal/name.h"

#include <mutex>
#include <ostream>
#include <unordered_set>

namespace jackpot {
namespace {

// Every distinct text ever made a Name. Never shrinks: a node-based set keeps each string at
// one address for the life of the process. Leaked on purpose, so that names stay valid in
// static destructors too.
struct Names {
  std::mutex mutex;
  std::unordered_set<std::string> texts;
};

Names& names() {
  static Names* const all = new Names;
  return *all;
}

const std::string* intern(std::string_view text) {
  Names& all = names();
  std::lock_guard lock(all.mutex);
  return &*all.texts.emplace(text).first;
}

}  // namespace

Name::Name() {
  static const std::string* const empty = intern("");
  text_ = empty;
}

Name::Name(std::string_view text) : text_(intern(text)) {}

std::ostream& operator<<(std::ostream& out, const Name& name) { return out << name.str(); }

}  // namespace jackpot
