// Parses and verifies every *.hlo file in the source tree (except lit tests that expect a
// failure), then checks that print -> parse -> print is the identity on it (HLO.md).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"

namespace tfjit::hlo {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> FindHloFiles(const fs::path& root) {
  std::vector<fs::path> files;
  std::error_code ec;
  fs::recursive_directory_iterator it(root, fs::directory_options::skip_permission_denied, ec);
  for (; !ec && it != fs::recursive_directory_iterator(); it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (it->is_directory() && (name == ".git" || name.rfind("build", 0) == 0)) {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file() && it->path().extension() == ".hlo") files.push_back(it->path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

TEST(CorpusRoundTripTest, EveryHloFileRoundTrips) {
  const char* env = std::getenv("TFJIT_SOURCE_DIR");
  const fs::path root = env != nullptr ? env : TFJIT_SOURCE_DIR;
  const std::vector<fs::path> files = FindHloFiles(root);
  ASSERT_FALSE(files.empty()) << "no .hlo files under " << root;
  int checked = 0;
  for (const fs::path& file : files) {
    SCOPED_TRACE(file.string());
    std::ifstream in(file);
    std::stringstream text;
    text << in.rdbuf();
    // lit tests that expect tfjit-opt to fail (`// RUN: not ...`) hold invalid modules.
    if (text.str().find("RUN: not ") != std::string::npos) continue;
    ++checked;
    auto first = ParseAndVerifyModule(text.str());
    ASSERT_TRUE(first.ok()) << first.status();
    const std::string printed = PrintModule(**first);
    auto second = ParseAndVerifyModule(printed);
    ASSERT_TRUE(second.ok()) << second.status() << "\n" << printed;
    EXPECT_EQ(PrintModule(**second), printed);
    EXPECT_EQ(Fingerprint(**second), Fingerprint(**first));
  }
  EXPECT_GE(checked, 8) << "the seed corpus in tests/hlo/corpus went missing";
}

}  // namespace
}  // namespace tfjit::hlo
