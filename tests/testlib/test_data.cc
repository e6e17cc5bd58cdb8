// The project's test data files (test_data.h).
#include "tests/testlib/test_data.h"

#include <cstdlib>
#include <fstream>

#include "absl/strings/str_split.h"
#include "gtest/gtest.h"

namespace tfjit::testing {

std::vector<std::vector<std::string>> ReadTestDataTsv(const std::string& name) {
  const char* root = std::getenv("TFJIT_SOURCE_DIR");
  const std::string path =
      std::string(root != nullptr ? root : TFJIT_SOURCE_DIR) + "/tests/data/" + name;
  std::ifstream in(path);
  EXPECT_TRUE(in.good()) << "cannot read " << path;
  std::vector<std::vector<std::string>> rows;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    rows.push_back(absl::StrSplit(line, '\t'));
  }
  return rows;
}

}  // namespace tfjit::testing
