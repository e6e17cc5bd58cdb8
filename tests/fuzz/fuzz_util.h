// Helpers shared by the fuzz targets: splitting one fuzz input into several named files (for
// formats that are directories: TF.js models, SavedModels) and a per-process scratch folder.
#ifndef TFJIT_TESTS_FUZZ_FUZZ_UTIL_H_
#define TFJIT_TESTS_FUZZ_FUZZ_UTIL_H_

#include <unistd.h>

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <string_view>
#include <system_error>
#include <utility>
#include <vector>

namespace tfjit::fuzz {

// A multi-file input is parts joined by kFileSeparator; each part is "<relative name>\n<bytes>".
// The separator is unlikely in real files and short enough for libFuzzer to splice it (it is
// also in the dictionary written by scripts/fuzz.sh).
inline constexpr std::string_view kFileSeparator = "\n#tfjit-fuzz-file#\n";

struct FuzzFile {
  std::string name;        // relative path, sanitized (see SplitFiles)
  std::string_view bytes;  // view into the fuzz input
};

// Only plain relative names ([A-Za-z0-9._-] components joined by '/', no "..", at most 3
// levels and 80 characters) are written: the fuzzer must not write outside its folder.
inline bool SafeName(std::string_view name) {
  if (name.empty() || name.size() > 80 || name.front() == '/' || name.back() == '/') return false;
  int depth = 0;
  size_t start = 0;
  while (start <= name.size()) {
    size_t end = name.find('/', start);
    if (end == std::string_view::npos) end = name.size();
    const std::string_view part = name.substr(start, end - start);
    if (part.empty() || part == "." || part == ".." || ++depth > 3) return false;
    for (char c : part) {
      const bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                      c == '.' || c == '_' || c == '-';
      if (!ok) return false;
    }
    start = end + 1;
  }
  return true;
}

// Splits `data` into at most `max_files` files; parts with unsafe names are dropped.
inline std::vector<FuzzFile> SplitFiles(std::string_view data, size_t max_files) {
  std::vector<FuzzFile> files;
  size_t pos = 0;
  while (pos <= data.size() && files.size() < max_files) {
    size_t end = data.find(kFileSeparator, pos);
    if (end == std::string_view::npos) end = data.size();
    const std::string_view part = data.substr(pos, end - pos);
    const size_t nl = part.find('\n');
    if (nl != std::string_view::npos && SafeName(part.substr(0, nl))) {
      files.push_back({std::string(part.substr(0, nl)), part.substr(nl + 1)});
    }
    if (end == data.size()) break;
    pos = end + kFileSeparator.size();
  }
  return files;
}

// Joins files into the container form (the seed generator and tests use it).
inline std::string JoinFiles(const std::vector<std::pair<std::string, std::string>>& files) {
  std::string out;
  for (size_t i = 0; i < files.size(); ++i) {
    if (i > 0) out += kFileSeparator;
    out += files[i].first;
    out += '\n';
    out += files[i].second;
  }
  return out;
}

// A folder private to this process, emptied by Reset() before each input.
class ScratchDir {
 public:
  explicit ScratchDir(std::string_view target) {
    const char* tmp = std::getenv("TMPDIR");
    path_ = std::filesystem::path(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") /
            ("tfjit_fuzz_" + std::string(target) + "_" + std::to_string(::getpid()));
  }
  ~ScratchDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  const std::filesystem::path& path() const { return path_; }

  void Reset() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
    std::filesystem::create_directories(path_, ec);
  }

  // Writes `bytes` to path()/name (creating parent folders); false when it could not.
  bool Write(const std::string& name, std::string_view bytes) const {
    const std::filesystem::path file = path_ / name;
    std::error_code ec;
    std::filesystem::create_directories(file.parent_path(), ec);
    std::FILE* f = std::fopen(file.c_str(), "wb");
    if (f == nullptr) return false;
    const bool ok = std::fwrite(bytes.data(), 1, bytes.size(), f) == bytes.size();
    return std::fclose(f) == 0 && ok;
  }

 private:
  std::filesystem::path path_;
};

// A broken invariant (not a bad input): crash so libFuzzer and the replay test report it.
#define TFJIT_FUZZ_CHECK(cond)                                                               \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      std::fprintf(stderr, "%s:%d: fuzz invariant failed: %s\n", __FILE__, __LINE__, #cond); \
      std::abort();                                                                          \
    }                                                                                        \
  } while (0)

}  // namespace tfjit::fuzz

#endif  // TFJIT_TESTS_FUZZ_FUZZ_UTIL_H_
