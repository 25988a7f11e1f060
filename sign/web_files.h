#pragma once

// The web sign's page, script and style (sign/web/), built into the binary by
// cmake/EmbedTextFiles.cmake: (file name, text) pairs, e.g. ("sign.js", ...).

#include <string_view>
#include <utility>
#include <vector>

namespace jackpot::sign {

const std::vector<std::pair<std::string_view, std::string_view>>& web_files();

}  // namespace jackpot::sign
