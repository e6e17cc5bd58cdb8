// The file-system seam (core/file_system.h): atomic writes are all or nothing under every
// injected fault (tests/testlib/faulty_file_system.h), publishing without replacing keeps the
// first writer's file, and the real operations report errors with codes a caller can act on.
#include "core/file_system.h"

#include <filesystem>
#include <string>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testlib/faulty_file_system.h"
#include "tests/testlib/temp_file.h"

namespace tfjit {
namespace {

namespace fs = std::filesystem;

std::string FreshDir(const std::string& name) {
  const std::string dir = absl::StrCat(testing::TestTempDir(), "/", name);
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

std::string Read(const std::string& path) {
  absl::StatusOr<std::string> data = Files().ReadFile(path);
  return data.ok() ? *data : "<" + std::string(data.status().message()) + ">";
}

int FilesIn(const std::string& dir) {
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) n += e.is_regular_file() ? 1 : 0;
  return n;
}

TEST(FileSystemTest, AtomicWritesReplaceOrPublishOnce) {
  const std::string dir = FreshDir("fs_atomic");
  const std::string path = dir + "/f";
  ASSERT_EQ(*WriteFileAtomically(path, "one"), Published::kWritten);
  EXPECT_EQ(Read(path), "one");
  ASSERT_EQ(*WriteFileAtomically(path, "two"), Published::kWritten);
  EXPECT_EQ(Read(path), "two");
  ASSERT_EQ(*WriteFileAtomically(path, "three", /*replace=*/false), Published::kExisted);
  EXPECT_EQ(Read(path), "two");
  EXPECT_EQ(FilesIn(dir), 1);  // no temporary left
}

TEST(FileSystemTest, EveryInjectedFaultLeavesTheFileAsItWas) {
  for (const std::string& fault : tfjit::testing::WriteFaults()) {
    for (const bool replace : {true, false}) {
      SCOPED_TRACE(absl::StrCat(fault, replace ? " replace" : " publish"));
      const std::string dir = FreshDir("fs_fault");
      const std::string path = dir + "/f";
      const std::string absent = dir + "/g";
      ASSERT_TRUE(WriteFileAtomically(path, "before").ok());
      testing::ScopedFaultyFileSystem faulty;
      faulty->Inject(fault, 2, dir);
      for (const std::string& target : {path, absent}) {
        absl::StatusOr<Published> r = WriteFileAtomically(target, "after, longer", replace);
        if (!replace && target == path) {
          // Publishing where a file exists fails or finds it; it never changes it.
          EXPECT_TRUE(!r.ok() || *r == Published::kExisted);
        } else {
          EXPECT_FALSE(r.ok());
        }
      }
      EXPECT_EQ(Read(path), "before");
      EXPECT_FALSE(fs::exists(absent));
      EXPECT_EQ(FilesIn(dir), 1) << "a temporary is left";
    }
  }
}

TEST(FileSystemTest, RealErrorsHaveCodesACallerCanActOn) {
  const std::string dir = FreshDir("fs_errors");
  EXPECT_EQ(Files().ReadFile(dir + "/missing").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(Files().WriteFile(dir + "/no/such/folder/f", "x").code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(Files().Remove(dir + "/missing").ok());
  ASSERT_TRUE(Files().WriteFile(dir + "/a", "a").ok());
  ASSERT_TRUE(Files().WriteFile(dir + "/b", "b").ok());
  absl::StatusOr<bool> published = Files().RenameNoReplace(dir + "/a", dir + "/b");
  ASSERT_TRUE(published.ok());
  EXPECT_FALSE(*published);
  EXPECT_FALSE(fs::exists(dir + "/a"));  // the loser's file is gone
  EXPECT_EQ(Read(dir + "/b"), "b");
  // The injected faults' statuses are the real ones' codes.
  testing::ScopedFaultyFileSystem faulty;
  faulty->disk_full = true;
  EXPECT_EQ(Files().WriteFile(dir + "/c", "c").code(), absl::StatusCode::kResourceExhausted);
  faulty->disk_full = false;
  faulty->SetReadOnly(dir);
  EXPECT_EQ(Files().WriteFile(dir + "/c", "c").code(), absl::StatusCode::kPermissionDenied);
}

}  // namespace
}  // namespace tfjit
