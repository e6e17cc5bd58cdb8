// CompilationCache: one compile per key (cluster signature, input dtypes and shapes, values of
// compile-time-constant inputs, device); concurrent callers of one key wait for that compile.
#ifndef TFJIT_RUNTIME_COMPILATION_CACHE_H_
#define TFJIT_RUNTIME_COMPILATION_CACHE_H_

#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "backends/backend.h"

namespace tfjit::runtime {

class CompilationCache {
 public:
  using ExecutablePtr = std::shared_ptr<const backends::Executable>;
  using CompileFn = std::function<absl::StatusOr<ExecutablePtr>()>;

  // Returns the cached result for `key` (errors are cached too, so a failing cluster is not
  // recompiled every run), or runs `compile` once. `*hit` tells which happened. A caller
  // that finds another caller compiling the key waits for it, while its own run may go on
  // (RunCheckpoint: its deadline and cancellation). A compile that ends because its run
  // stopped (CANCELLED, DEADLINE_EXCEEDED) is not cached: the next caller compiles again.
  absl::StatusOr<ExecutablePtr> GetOrCompile(const std::string& key, const CompileFn& compile,
                                             bool* hit);
  size_t size() const;

 private:
  struct Entry {
    std::mutex mu;
    std::condition_variable finished;  // a compile of the key ended (done, or abandoned)
    bool compiling = false;
    bool done = false;
    absl::StatusOr<ExecutablePtr> result;
  };
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<Entry>> entries_;
};

}  // namespace tfjit::runtime

#endif  // TFJIT_RUNTIME_COMPILATION_CACHE_H_
