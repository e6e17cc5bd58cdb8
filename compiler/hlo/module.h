// Module: owns computations (callees before callers) and marks the ENTRY one.
#ifndef TFJIT_COMPILER_HLO_MODULE_H_
#define TFJIT_COMPILER_HLO_MODULE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "compiler/hlo/computation.h"

namespace tfjit::hlo {

class Module {
 public:
  explicit Module(std::string name) : name_(std::move(name)) {}
  Module(const Module&) = delete;
  Module& operator=(const Module&) = delete;

  const std::string& name() const { return name_; }

  // Creates an empty computation; `name` is made unique within the module.
  Computation* AddComputation(const std::string& name);
  Computation* entry() const { return entry_; }
  void set_entry(Computation* c) { entry_ = c; }
  // In creation order; callees are created before their callers.
  std::vector<Computation*> computations() const;
  Computation* FindComputation(const std::string& name) const;
  // Removes computations no instruction calls (the entry stays). Returns the count removed.
  int RemoveUnusedComputations();

  // A name unique in the module, starting with `prefix` ("add" -> "add", "add.1", ...).
  std::string UniqueName(const std::string& prefix);
  // Registers a name chosen elsewhere (the parser); false if it was already taken.
  bool ReserveName(const std::string& name);
  int64_t NextInstructionId() { return next_instruction_id_++; }

  // A deep copy (same names, same ids order). Used by caches and passes that keep originals.
  std::unique_ptr<Module> Clone() const;

 private:
  std::string name_;
  std::vector<std::unique_ptr<Computation>> computations_;
  Computation* entry_ = nullptr;
  absl::flat_hash_set<std::string> names_;
  // Next numeric suffix to try per UniqueName prefix (keeps UniqueName O(1) amortised).
  absl::flat_hash_map<std::string, int64_t> next_suffix_;
  int64_t next_instruction_id_ = 0;
};

}  // namespace tfjit::hlo

#endif  // TFJIT_COMPILER_HLO_MODULE_H_
