#include "tests/testlib/temp_file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace tfjit::testing {

namespace {

// The folder, removed when the process exits normally (a crashed test leaves its files for
// inspection). ctest starts a process per test, so the folders would otherwise pile up.
struct ProcessFolder {
  std::filesystem::path path;
  ProcessFolder()
      : path(std::filesystem::path(::testing::TempDir()) /
             ("tfjit_test_" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(path);
  }
  ~ProcessFolder() {
    std::error_code ignored;
    std::filesystem::remove_all(path, ignored);
  }
};

}  // namespace

std::string TestTempDir() {
  static const ProcessFolder folder;
  return folder.path.string();
}

std::string WriteTempFile(std::string name, const std::string& contents) {
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  const std::string path = (std::filesystem::path(TestTempDir()) / name).string();
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << contents;
  out.close();
  if (!out) ADD_FAILURE() << "could not write the test file " << path;
  return path;
}

}  // namespace tfjit::testing
