// ObjectCache: compiled CPU modules kept on disk, so that a later process (or session) that
// compiles the same module on the same machine loads the object code instead of compiling it.
//
// Key: a 128-bit digest (LLVM's xxh3_128) of everything the object code depends on: the file
// format, tfjit's code generator (a digest of backends/ and compiler/hlo/ taken at build
// time, codegen_id.h), LLVM's version, the host triple, CPU and features, the backend options,
// the optimized module's canonical text with the values of its array constants left out, and
// those constants' bytes. Entries: DIR/<32 hex digits>.tfjit-obj holding magic, format version,
// key, then a payload (compile stats, buffer plan, profile units, relocatable object files) and
// its CRC32C.
// A file that is missing, truncated, corrupt or of another format is a miss, and is replaced
// after compiling. Writes go to a temporary file renamed into place, so concurrent processes
// never read half a file. When the directory's entries pass max_bytes, the least recently
// used are deleted (a hit refreshes its file's time); the directory is scanned for that only
// when this process's tally of its bytes passes the cap, and every 256 stores.
#ifndef TFJIT_BACKENDS_CPU_OBJECT_CACHE_H_
#define TFJIT_BACKENDS_CPU_OBJECT_CACHE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "backends/backend.h"
#include "backends/cpu/buffer_plan.h"
#include "compiler/hlo/module.h"

namespace tfjit::cpu {

struct CachedObject {
  backends::CompileStats stats;  // of the compilation that produced it
  BufferPlan plan;
  std::vector<std::string> profile_units;  // EmittedModule::profile_units
  // Relocatable object files for the host (ELF), linked into one JIT together.
  std::vector<std::string> objects;
};

class ObjectCache {
 public:
  ObjectCache(std::string dir, int64_t max_bytes);

  // The key of the optimized `module` compiled with backend options `options` (their text).
  static std::string Key(const hlo::Module& module, absl::string_view options);

  // The entry stored under `key` for `module` (the module Key was computed from), or nullopt:
  // a miss, whatever the reason (a damaged file logs a warning).
  std::optional<CachedObject> Load(const std::string& key, const hlo::Module& module) const;
  // Writes the entry; an error says why it could not (the caller logs it and goes on).
  // Plans whose constants are not `module`'s are refused (INTERNAL).
  absl::Status Store(const std::string& key, const hlo::Module& module,
                     const CachedObject& entry) const;

  // Object files that depend on no module (the generated GEMM micro-kernels): stored under
  // the key of `what` (a description of the code) compiled for LLVM CPU `cpu` with
  // `features`, with the same file format, checks and eviction.
  static std::string ObjectsKey(absl::string_view what, absl::string_view cpu,
                                absl::string_view features);
  std::optional<std::vector<std::string>> LoadObjects(const std::string& key) const;
  absl::Status StoreObjects(const std::string& key, const std::vector<std::string>& objects) const;

  // Deletes the entry of `key` (one that loaded but is unusable, e.g. does not link), so the
  // next Store can publish a good one.
  void Remove(const std::string& key) const;

  // The file of `key` (for tests and messages).
  std::string PathOf(const std::string& key) const;

 private:
  // The payload stored under `key` after checking the file (magic, version, key, CRC32C), or
  // nullopt (a damaged file logs a warning and is deleted); a hit refreshes the file's time.
  std::optional<std::string> LoadBlob(const std::string& key) const;
  // Writes `payload` under `key` (a temporary file published only if no entry has the name:
  // entries are never rewritten in place), then evicts. Through Files() (core/file_system.h).
  absl::Status StoreBlob(const std::string& key, absl::string_view payload) const;

  // After storing `stored_bytes`: deletes the least recently used entries while the directory
  // is over max_bytes (scanning it only when this process's tally says it may be).
  void Evict(int64_t stored_bytes) const;

  std::string dir_;
  int64_t max_bytes_;
};

}  // namespace tfjit::cpu

#endif  // TFJIT_BACKENDS_CPU_OBJECT_CACHE_H_
