// Every refusal the engine makes has its own name (controller/engine/engine_types.h), the wire
// message starts with it, and docs/refusals.md lists each one: a new refusal without a row there
// fails here.
#include <gtest/gtest.h>

#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "controller/api/access_rules.h"
#include "controller/engine/engine_types.h"

namespace jackpot {
namespace {

std::string refusals_doc() {
  std::ifstream in(JACKPOTD_SOURCE_DIR "/docs/refusals.md");
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

TEST(RefusalNames, EveryRefusalHasItsOwnNameAndARowInTheDocs) {
  const std::string doc = refusals_doc();
  ASSERT_FALSE(doc.empty());
  std::set<std::string> names;
  int count = 0;
  for (int value = 0; value < 256; ++value) {
    const std::string name(to_string(static_cast<EngineError>(value)));
    if (name == "unknown") break;  // Past the last refusal.
    ++count;
    EXPECT_TRUE(names.insert(name).second) << name << " names two refusals";
    EXPECT_NE(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"), 0U);
    EXPECT_EQ(name.find_first_not_of("abcdefghijklmnopqrstuvwxyz_"), std::string::npos) << name;
    EXPECT_NE(doc.find("| `" + name + "` |"), std::string::npos)
        << name << " has no row in docs/refusals.md";
  }
  EXPECT_GE(count, 39);
  // The refusals of who may call what (controller/api/access_rules.h), named the same way.
  for (const AccessRefusal refusal : kAccessRefusals) {
    const std::string name(to_string(refusal));
    EXPECT_TRUE(names.insert(name).second) << name << " names two refusals";
    EXPECT_NE(doc.find("| `" + name + "` |"), std::string::npos)
        << name << " has no row in docs/refusals.md";
  }
  // No row for a refusal that does not exist.
  std::size_t rows = 0;
  for (std::size_t at = doc.find("\n| `"); at != std::string::npos;
       at = doc.find("\n| `", at + 1)) {
    ++rows;
  }
  EXPECT_EQ(rows, names.size());
}

}  // namespace
}  // namespace jackpot
