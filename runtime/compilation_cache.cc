// CompilationCache: per-key entries locked during their single compilation.
#include "runtime/compilation_cache.h"

#include <chrono>

#include "core/run_control.h"
#include "core/status.h"

namespace tfjit::runtime {

absl::StatusOr<CompilationCache::ExecutablePtr> CompilationCache::GetOrCompile(
    const std::string& key, const CompileFn& compile, bool* hit) {
  std::shared_ptr<Entry> entry;
  {
    std::lock_guard<std::mutex> lock(mu_);
    std::shared_ptr<Entry>& slot = entries_[key];
    if (slot == nullptr) slot = std::make_shared<Entry>();
    entry = slot;
  }
  // One caller compiles a key at a time; the others wait for its result instead of
  // compiling again (other keys proceed in parallel), polling their own run meanwhile.
  std::unique_lock<std::mutex> lock(entry->mu);
  while (entry->compiling) {
    TFJIT_RETURN_IF_ERROR(RunCheckpoint("waiting for another run's compile of the cluster"));
    entry->finished.wait_for(lock, std::chrono::milliseconds(10));
  }
  *hit = entry->done;
  if (entry->done) return entry->result;
  entry->compiling = true;
  lock.unlock();
  absl::StatusOr<ExecutablePtr> result = compile();
  lock.lock();
  entry->compiling = false;
  if (result.ok() || !IsRunStop(result.status())) {
    entry->result = result;
    entry->done = true;
  }
  entry->finished.notify_all();
  return result;
}

size_t CompilationCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace tfjit::runtime
