// The real file operations (POSIX), the process's file system and atomic publishing
// (file_system.h).
#include "core/file_system.h"

#include <errno.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <filesystem>
#include <system_error>

#include "absl/strings/str_cat.h"

namespace tfjit {
namespace {

// A status for `errno_value` after `what` on `path`, with the code a caller can act on.
absl::Status ErrnoStatus(int errno_value, absl::string_view what, const std::string& path) {
  const std::string message = absl::StrCat(what, " '", path, "': ", std::strerror(errno_value));
  switch (errno_value) {
    case ENOENT:
    case ENOTDIR:
      return absl::NotFoundError(message);
    case EACCES:
    case EPERM:
    case EROFS:
      return absl::PermissionDeniedError(message);
    case ENOSPC:
    case EDQUOT:
    case EFBIG:
      return absl::ResourceExhaustedError(message);
    case EEXIST:
      return absl::AlreadyExistsError(message);
    default:
      return absl::UnknownError(message);
  }
}

std::atomic<FileSystem*> installed{nullptr};

}  // namespace

absl::StatusOr<std::string> FileSystem::ReadFile(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "cannot open", path);
  std::string data;
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof(buffer));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      return ErrnoStatus(e, "cannot read", path);
    }
    if (n == 0) break;
    data.append(buffer, static_cast<size_t>(n));
  }
  ::close(fd);
  return data;
}

absl::StatusOr<std::string> FileSystem::ReadFileRange(const std::string& path, uint64_t offset,
                                                      uint64_t size) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoStatus(errno, "cannot open", path);
  struct stat st;
  if (::fstat(fd, &st) != 0) {
    const int e = errno;
    ::close(fd);
    return ErrnoStatus(e, "cannot stat", path);
  }
  const uint64_t file_size = static_cast<uint64_t>(st.st_size);
  if (offset > file_size || size > file_size - offset) {
    ::close(fd);
    return absl::OutOfRangeError(absl::StrCat("'", path, "' has ", file_size, " bytes; bytes [",
                                              offset, ", ", offset + size, ") were asked for"));
  }
  std::string data(static_cast<size_t>(size), '\0');
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n =
        ::pread(fd, data.data() + done, data.size() - done, static_cast<off_t>(offset + done));
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      return ErrnoStatus(e, "cannot read", path);
    }
    if (n == 0) {  // shortened since fstat, by another process
      ::close(fd);
      return absl::OutOfRangeError(absl::StrCat("'", path, "' ended at byte ", offset + done,
                                                " while bytes [", offset, ", ", offset + size,
                                                ") were read"));
    }
    done += static_cast<size_t>(n);
  }
  ::close(fd);
  return data;
}

absl::Status FileSystem::WriteFile(const std::string& path, absl::string_view data) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return ErrnoStatus(errno, "cannot create", path);
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int e = errno;
      ::close(fd);
      return ErrnoStatus(e, absl::StrCat("cannot write ", data.size(), " bytes to"), path);
    }
    done += static_cast<size_t>(n);
  }
  // close reports a deferred write error (NFS, quotas).
  if (::close(fd) != 0) return ErrnoStatus(errno, "cannot finish writing", path);
  return absl::OkStatus();
}

absl::Status FileSystem::Rename(const std::string& from, const std::string& to) {
  if (::rename(from.c_str(), to.c_str()) != 0) {
    return ErrnoStatus(errno, absl::StrCat("cannot rename '", from, "' to"), to);
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> FileSystem::RenameNoReplace(const std::string& from, const std::string& to) {
  if (::link(from.c_str(), to.c_str()) != 0) {
    const int e = errno;
    ::unlink(from.c_str());
    if (e == EEXIST) return false;
    return ErrnoStatus(e, absl::StrCat("cannot publish '", from, "' as"), to);
  }
  ::unlink(from.c_str());
  return true;
}

absl::Status FileSystem::Remove(const std::string& path) {
  if (::unlink(path.c_str()) != 0 && errno != ENOENT) {
    return ErrnoStatus(errno, "cannot remove", path);
  }
  return absl::OkStatus();
}

absl::Status FileSystem::CreateDirectories(const std::string& path) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error) return ErrnoStatus(error.value(), "cannot create the folder", path);
  return absl::OkStatus();
}

FileSystem& Files() {
  static FileSystem* real = new FileSystem();
  FileSystem* fs = installed.load(std::memory_order_acquire);
  return fs != nullptr ? *fs : *real;
}

void SetFileSystemForTesting(FileSystem* fs) { installed.store(fs, std::memory_order_release); }

std::string TemporaryNameFor(const std::string& path) {
  static std::atomic<uint64_t> counter{0};
  return absl::StrCat(path, ".tmp.", ::getpid(), ".", counter.fetch_add(1), ".",
                      std::chrono::steady_clock::now().time_since_epoch().count());
}

absl::StatusOr<Published> WriteFileAtomically(const std::string& path, absl::string_view data,
                                              bool replace) {
  FileSystem& fs = Files();
  const std::string temp = TemporaryNameFor(path);
  if (absl::Status written = fs.WriteFile(temp, data); !written.ok()) {
    (void)fs.Remove(temp);
    return written;
  }
  if (replace) {
    if (absl::Status renamed = fs.Rename(temp, path); !renamed.ok()) {
      (void)fs.Remove(temp);
      return renamed;
    }
    return Published::kWritten;
  }
  absl::StatusOr<bool> published = fs.RenameNoReplace(temp, path);
  if (!published.ok()) {
    (void)fs.Remove(temp);
    return published.status();
  }
  return *published ? Published::kWritten : Published::kExisted;
}

}  // namespace tfjit
