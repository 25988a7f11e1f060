#include "controller/api/roster.h"

#include <algorithm>
#include <cctype>
#include <span>

#include "meters/digest.h"

namespace jackpot {
namespace {

std::string folded(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

std::string_view trimmed(std::string_view line) {
  const auto first = line.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = line.find_last_not_of(" \t\r");
  return line.substr(first, last - first + 1);
}

}  // namespace

Result<Roster, std::string> Roster::parse(std::string_view text) {
  if (text.size() > kMaxRosterBytes) {
    return "the roster is " + std::to_string(text.size()) + " bytes, more than the " +
           std::to_string(kMaxRosterBytes) + " allowed";
  }
  Roster roster;
  std::size_t number = 0;
  std::size_t start = 0;
  while (start <= text.size()) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    const std::string_view line = trimmed(text.substr(start, end - start));
    start = end + 1;
    ++number;
    if (line.empty() || line.front() == '#') continue;
    const std::string where = "roster line " + std::to_string(number) + ": ";
    const std::optional<Principal> principal = principal_from_common_name(line);
    if (!principal) {
      return where + "'" + std::string(line.substr(0, 80)) +
             "' is not a principal (supervisor/<name> or admin/<name>: letters, digits, '.', "
             "'_' and '-')";
    }
    if (principal->role != Role::supervisor && principal->role != Role::admin) {
      return where + "'" + std::string(line) +
             "': only supervisors and admins are on the roster (the floor names the tables and "
             "signs)";
    }
    if (!roster.folded_.insert(folded(line)).second) {
      return where + "'" + std::string(line) +
             "' is on the roster already (names are compared "
             "case-folded)";
    }
    if (roster.principals_.size() == kMaxRosterPrincipals) {
      return where + "more than " + std::to_string(kMaxRosterPrincipals) + " principals";
    }
    roster.principals_.emplace_back(line);
  }
  if (roster.principals_.empty()) {
    return std::string("the roster names no supervisor or admin");
  }
  const Sha256Digest digest = sha256(text);
  roster.sha256_hex_ = to_hex(std::span<const std::uint8_t>(digest.data(), digest.size()));
  return roster;
}

bool Roster::admits(const Principal& principal) const {
  if (principal.role != Role::supervisor && principal.role != Role::admin) return true;
  return folded_.count(folded(to_string(principal))) != 0;
}

}  // namespace jackpot
