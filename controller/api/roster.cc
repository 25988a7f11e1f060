#include "controller/api/roster.h"

#include <span>

#include "controller/api/text_lines.h"
#include "meters/digest.h"

namespace jackpot {

Result<Roster, std::string> Roster::parse(std::string_view text) {
  if (text.size() > kMaxRosterBytes) {
    return "the roster is " + std::to_string(text.size()) + " bytes, more than the " +
           std::to_string(kMaxRosterBytes) + " allowed";
  }
  Roster roster;
  for (const auto& [number, line] : nonblank_lines(text)) {
    if (line.front() == '#') continue;
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
    if (!roster.folded_.insert(ascii_lower(line)).second) {
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
  return folded_.count(ascii_lower(to_string(principal))) != 0;
}

}  // namespace jackpot
