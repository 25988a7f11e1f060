#pragma once

// Who may act as a supervisor or an admin (issue #32): the site's roster, a text file given by
// --roster, names each of them, one principal a line. A client certificate the site CA issued for
// a supervisor or an admin not on the roster is refused (PERMISSION_DENIED not_on_roster), so
// that whoever holds the CA key cannot mint a second approver unseen: a new approver needs the
// roster changed too, and the roster in force is on the audit trail (daemon.start names its
// SHA-256 and its principals). Tables and signs are named by the floor, not here.
//
// The file: one principal a line ("supervisor/ann", "admin/ops-1": a principal as a certificate
// names it, access_rules.h), blank lines and lines starting with '#' ignored, leading and
// trailing spaces trimmed; at most kMaxRosterBytes and kMaxRosterPrincipals. Names are compared
// case-folded, as the two-person rule compares them: a roster that names one principal twice
// under two spellings is refused, and supervisor/Ann on a certificate is supervisor/ann.

#include <cstddef>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "controller/api/access_rules.h"
#include "meters/result.h"

namespace jackpot {

inline constexpr std::size_t kMaxRosterBytes = 64 * 1024;
inline constexpr std::size_t kMaxRosterPrincipals = 1000;

class Roster {
 public:
  // The roster a file's text describes, or why it is refused (naming the line): a line that is
  // not a principal, a table or sign (the floor names those), a name twice (case-folded), too
  // many bytes or names, or no name at all.
  static Result<Roster, std::string> parse(std::string_view text);

  // Whether `principal` may act: a table or a sign always (the floor decides which ones), a
  // supervisor or an admin when the roster names it, case-folded.
  bool admits(const Principal& principal) const;

  // The principals as the file names them, in its order; the SHA-256 of the file's text (hex).
  const std::vector<std::string>& principals() const { return principals_; }
  const std::string& sha256_hex() const { return sha256_hex_; }

 private:
  std::vector<std::string> principals_;
  std::set<std::string> folded_;
  std::string sha256_hex_;
};

}  // namespace jackpot
