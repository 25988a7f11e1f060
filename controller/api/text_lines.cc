#include "controller/api/text_lines.h"

#include <algorithm>
#include <cctype>

namespace jackpot {

std::string_view trimmed(std::string_view text) {
  const auto first = text.find_first_not_of(" \t\r");
  if (first == std::string_view::npos) return {};
  const auto last = text.find_last_not_of(" \t\r");
  return text.substr(first, last - first + 1);
}

std::vector<NumberedLine> nonblank_lines(std::string_view text) {
  std::vector<NumberedLine> lines;
  std::size_t number = 0;
  for (std::size_t start = 0; start <= text.size();) {
    const std::size_t end = std::min(text.find('\n', start), text.size());
    ++number;
    if (const std::string_view line = trimmed(text.substr(start, end - start)); !line.empty()) {
      lines.push_back({number, line});
    }
    start = end + 1;
  }
  return lines;
}

std::string ascii_lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return out;
}

}  // namespace jackpot
