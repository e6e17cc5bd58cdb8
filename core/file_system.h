// The file operations behind tfjit's disk writes and the reads of what it wrote: the disk
// cache (backends/cpu/object_cache.cc), .npy outputs (runtime/io/npy.cc and the CLI's
// --output-dir) and checkpoints, written and read (frontend/tensor_bundle.cc), all go through
// Files(). One seam,
// so tests inject the faults a real disk has (a write that fails after N bytes, a full disk, a
// failed rename, a read-only folder, a file changed by another process while it is read:
// tests/testlib/faulty_file_system.h) and check that each ends in a clear status or a
// recompile, never a crash, a wrong answer or a damaged cache.
//
// FileSystem's own methods are the real (POSIX) operations; a test's file system derives from
// it and calls them for what it does not break.
#ifndef TFJIT_CORE_FILE_SYSTEM_H_
#define TFJIT_CORE_FILE_SYSTEM_H_

#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace tfjit {

class FileSystem {
 public:
  virtual ~FileSystem() = default;
  // The whole file: NOT_FOUND when it does not exist, another code (from errno) saying why
  // otherwise.
  virtual absl::StatusOr<std::string> ReadFile(const std::string& path);
  // `size` bytes of `path` from byte `offset` (a checkpoint's record in a data file that may
  // be large): OUT_OF_RANGE when the file ends first (its size is in the message), NOT_FOUND
  // when it does not exist.
  virtual absl::StatusOr<std::string> ReadFileRange(const std::string& path, uint64_t offset,
                                                    uint64_t size);
  // Creates or truncates `path` and writes `data`. On an error the file may hold a prefix of
  // `data` (callers that must not leave one write a temporary name: WriteFileAtomically).
  // A full disk is RESOURCE_EXHAUSTED, a folder without write permission PERMISSION_DENIED.
  virtual absl::Status WriteFile(const std::string& path, absl::string_view data);
  // Renames `from` to `to`, replacing `to` if it exists (atomic on one file system).
  virtual absl::Status Rename(const std::string& from, const std::string& to);
  // Gives `from` the name `to` only if no file is called `to` (a hard link, then `from`
  // unlinked: atomic, so of two processes publishing one name exactly one wins). Returns
  // false, and removes `from`, when `to` already existed.
  virtual absl::StatusOr<bool> RenameNoReplace(const std::string& from, const std::string& to);
  // Removes the file `path`; OK when there was none.
  virtual absl::Status Remove(const std::string& path);
  // Creates `path` and its missing parents; OK when it exists.
  virtual absl::Status CreateDirectories(const std::string& path);
};

// The process's file system: the real one unless a test installed another.
FileSystem& Files();

// Tests only: `fs` serves every caller from now on (null: the real one again). Install it
// before the I/O it should see and remove it after; it must outlive its use.
void SetFileSystemForTesting(FileSystem* fs);

enum class Published {
  kWritten,  // `path` now holds the data
  kExisted,  // (replace = false) `path` existed already and was left as it was
};

// `data` as the whole of `path`, all or nothing: written under a temporary name in the same
// folder, then renamed over `path` (`replace`), or published only if `path` does not exist
// yet (`replace` false: kExisted when another writer got there first). On any error the
// temporary is removed and `path` is as it was.
absl::StatusOr<Published> WriteFileAtomically(const std::string& path, absl::string_view data,
                                              bool replace = true);

// A temporary name beside `path`, unique in this process and across processes.
std::string TemporaryNameFor(const std::string& path);

}  // namespace tfjit

#endif  // TFJIT_CORE_FILE_SYSTEM_H_
