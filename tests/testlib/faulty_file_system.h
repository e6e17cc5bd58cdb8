// A file system that breaks the way real disks do (core/file_system.h), for the fault tests:
// installed for its lifetime (ScopedFaultyFileSystem), it passes everything through to the
// real one except what its knobs break. Thread-safe knobs (atomics and a mutex), so compiles
// on other threads may go through it.
#ifndef TFJIT_TESTS_TESTLIB_FAULTY_FILE_SYSTEM_H_
#define TFJIT_TESTS_TESTLIB_FAULTY_FILE_SYSTEM_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/file_system.h"

namespace tfjit::testing {

class FaultyFileSystem : public FileSystem {
 public:
  // A write writes its first `n` bytes, then fails as a full disk does (-1: never).
  std::atomic<int64_t> fail_write_after{-1};
  // Every write fails at once with ENOSPC's status, writing nothing.
  std::atomic<bool> disk_full{false};
  // Every rename (either kind) fails.
  std::atomic<bool> fail_rename{false};
  // Writes, renames and folder creation under this prefix fail as on a read-only folder.
  void SetReadOnly(const std::string& prefix) {
    std::lock_guard<std::mutex> lock(mu_);
    read_only_ = prefix;
  }
  // Called with each file read (path, data) before the reader sees it: a test truncates or
  // replaces the data there, as another process rewriting the file mid-read would.
  void OnRead(std::function<void(const std::string& path, std::string& data)> hook) {
    std::lock_guard<std::mutex> lock(mu_);
    on_read_ = std::move(hook);
  }
  std::atomic<int> writes{0}, renames{0}, reads{0};

  // The write faults by name, for tests that try each (WriteFaults()): "write_cut" (a write
  // stops after `cut_at` bytes), "disk_full", "rename_fails", "read_only" (under `dir`).
  void Inject(const std::string& fault, int64_t cut_at, const std::string& dir) {
    if (fault == "write_cut") {
      fail_write_after = cut_at;
    } else if (fault == "disk_full") {
      disk_full = true;
    } else if (fault == "rename_fails") {
      fail_rename = true;
    } else if (fault == "read_only") {
      SetReadOnly(dir);
    }
  }

  absl::StatusOr<std::string> ReadFile(const std::string& path) override {
    ++reads;
    absl::StatusOr<std::string> data = FileSystem::ReadFile(path);
    std::function<void(const std::string&, std::string&)> hook;
    {
      std::lock_guard<std::mutex> lock(mu_);
      hook = on_read_;
    }
    if (data.ok() && hook) hook(path, *data);
    return data;
  }
  // The same hook for a range read (a checkpoint's record); a hook that shortens the data
  // makes the read fail as the real one does when the file ends first.
  absl::StatusOr<std::string> ReadFileRange(const std::string& path, uint64_t offset,
                                            uint64_t size) override {
    ++reads;
    absl::StatusOr<std::string> data = FileSystem::ReadFileRange(path, offset, size);
    std::function<void(const std::string&, std::string&)> hook;
    {
      std::lock_guard<std::mutex> lock(mu_);
      hook = on_read_;
    }
    if (data.ok() && hook) hook(path, *data);
    if (data.ok() && data->size() != size) {
      return absl::OutOfRangeError(
          absl::StrCat("'", path, "' ended early while it was read (injected)"));
    }
    return data;
  }
  absl::Status WriteFile(const std::string& path, absl::string_view data) override {
    ++writes;
    if (ReadOnly(path)) return Denied("cannot create", path);
    if (disk_full) return Full(path, data.size());
    const int64_t after = fail_write_after;
    if (after >= 0 && static_cast<size_t>(after) < data.size()) {
      (void)FileSystem::WriteFile(path, data.substr(0, static_cast<size_t>(after)));
      return Full(path, data.size());
    }
    return FileSystem::WriteFile(path, data);
  }
  absl::Status Rename(const std::string& from, const std::string& to) override {
    ++renames;
    if (ReadOnly(to)) return Denied("cannot rename to", to);
    if (fail_rename) return absl::UnknownError(absl::StrCat("injected: rename to '", to, "'"));
    return FileSystem::Rename(from, to);
  }
  absl::StatusOr<bool> RenameNoReplace(const std::string& from, const std::string& to) override {
    ++renames;
    if (ReadOnly(to)) return Denied("cannot publish", to);
    if (fail_rename) return absl::UnknownError(absl::StrCat("injected: publish '", to, "'"));
    return FileSystem::RenameNoReplace(from, to);
  }
  absl::Status CreateDirectories(const std::string& path) override {
    if (ReadOnly(path)) return Denied("cannot create the folder", path);
    return FileSystem::CreateDirectories(path);
  }

 private:
  bool ReadOnly(const std::string& path) {
    std::lock_guard<std::mutex> lock(mu_);
    return !read_only_.empty() && absl::StartsWith(path, read_only_);
  }
  static absl::Status Denied(const char* what, const std::string& path) {
    return absl::PermissionDeniedError(
        absl::StrCat(what, " '", path, "': Read-only file system (injected)"));
  }
  static absl::Status Full(const std::string& path, size_t bytes) {
    return absl::ResourceExhaustedError(absl::StrCat("cannot write ", bytes, " bytes to '", path,
                                                     "': No space left on device (injected)"));
  }

  std::mutex mu_;
  std::string read_only_;
  std::function<void(const std::string&, std::string&)> on_read_;
};

// The names FaultyFileSystem::Inject knows.
inline const std::vector<std::string>& WriteFaults() {
  static const std::vector<std::string> faults = {"write_cut", "disk_full", "rename_fails",
                                                  "read_only"};
  return faults;
}

// Installs a FaultyFileSystem for the scope.
class ScopedFaultyFileSystem {
 public:
  ScopedFaultyFileSystem() { SetFileSystemForTesting(&fs_); }
  ~ScopedFaultyFileSystem() { SetFileSystemForTesting(nullptr); }
  FaultyFileSystem* operator->() { return &fs_; }
  FaultyFileSystem& get() { return fs_; }

 private:
  FaultyFileSystem fs_;
};

}  // namespace tfjit::testing

#endif  // TFJIT_TESTS_TESTLIB_FAULTY_FILE_SYSTEM_H_
