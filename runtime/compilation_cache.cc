// CompilationCache: per-key entries locked during their single compilation.
#include "runtime/compilation_cache.h"

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
  // Holding the entry's lock while compiling makes concurrent callers of the same key wait for
  // the one compile instead of compiling again; other keys proceed in parallel.
  std::lock_guard<std::mutex> lock(entry->mu);
  *hit = entry->done;
  if (!entry->done) {
    entry->result = compile();
    entry->done = true;
  }
  return entry->result;
}

size_t CompilationCache::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace tfjit::runtime
