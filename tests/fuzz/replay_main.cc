// The main() of the fuzz targets in normal builds (TFJIT_FUZZ=OFF): runs the target once on
// every file of the folders (or files) given, in sorted order, so the seed corpus and every
// crash input ever found (tests/fuzz/regressions/<target>/) replay as a ctest test under the
// Release, ASan and TSan builds. A crash, sanitizer report or broken invariant fails the test;
// statuses returned by tfjit are the expected outcome of most inputs.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size);

int main(int argc, char** argv) {
  std::vector<std::filesystem::path> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::filesystem::path arg(argv[i]);
    std::error_code ec;
    if (std::filesystem::is_directory(arg, ec)) {
      for (const auto& entry : std::filesystem::recursive_directory_iterator(arg, ec)) {
        if (entry.is_regular_file()) inputs.push_back(entry.path());
      }
    } else if (std::filesystem::is_regular_file(arg, ec)) {
      inputs.push_back(arg);
    } else {
      std::fprintf(stderr, "%s: no such file or folder (skipped)\n", argv[i]);
    }
  }
  std::sort(inputs.begin(), inputs.end());
  // The empty input too: every target must handle it.
  LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(""), 0);
  for (const std::filesystem::path& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::fprintf(stderr, "replay %s (%zu bytes)\n", path.c_str(), bytes.size());
    LLVMFuzzerTestOneInput(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size());
  }
  std::printf("replayed %zu inputs without a crash\n", inputs.size() + 1);
  return 0;
}
