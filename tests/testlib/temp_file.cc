#include "tests/testlib/temp_file.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "gtest/gtest.h"

namespace tfjit::testing {

std::string TestTempDir() {
  static const std::string dir = [] {
    const std::filesystem::path path = std::filesystem::path(::testing::TempDir()) /
                                       ("tfjit_test_" + std::to_string(::getpid()));
    std::filesystem::create_directories(path);
    return path.string();
  }();
  return dir;
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
