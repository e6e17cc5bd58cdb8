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

// A check the compiled code evaluates at run time for a TF op whose kernel fails on bad input
// values (an out-of-range gather index) where HLO would clamp. Its value is one extra s64[1+k]
// element at the end of the ENTRY's ROOT tuple: [position, value components...], position -1
// when the input is good. The runtime turns a failed check into the kernel's error.
struct RuntimeCheck {
  std::string tf_node;
  std::string tf_op;
  // The error text with "{pos}" (the position: "[7]" for a flat position, or a multi-index
  // over position_dims, e.g. "[1,2]"), "{value}" (one component "7", or "[4, 0]" when
  // vector_value) and "{index}" (the components as TF's sparse ops print them, "[4,0]")
  // substituted. In a symbolic module (symbolic.h) a number that follows the batch size is
  // written as its extent in braces, e.g. "{36864*?b}", and takes its value at the run's
  // batch size.
  std::string message_template;
  bool flat_position = true;
  std::vector<int64_t> position_dims;
  bool vector_value = false;
  bool operator==(const RuntimeCheck&) const = default;

  // The message for a failed check's result [position, components...]; `batch`: the run's
  // batch size, for a symbolic module's check (0 leaves "{...?b...}" as it is).
  std::string Message(const std::vector<int64_t>& result, int64_t batch = 0) const;
};

// `text` with each "{k*?b+c}" (a RuntimeCheck message's batch-size number) replaced by its
// value at `batch`.
std::string SubstituteBatch(const std::string& text, int64_t batch);

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

  // A module whose shapes have symbolic dims (docs/HLO.md, "Symbolic batch size") holds them
  // at this batch size (dims()[0]); 0 when no shape is symbolic. The executable gets the
  // batch size from its arguments' shapes.
  int64_t batch_representative() const { return batch_representative_; }
  void set_batch_representative(int64_t b) { batch_representative_ = b; }

  // Run-time checks, in the order of their ROOT tuple elements (the last ones). Not printed:
  // a module parsed back from text has none.
  void AddRuntimeCheck(RuntimeCheck check) { runtime_checks_.push_back(std::move(check)); }
  const std::vector<RuntimeCheck>& runtime_checks() const { return runtime_checks_; }
  void set_runtime_checks(std::vector<RuntimeCheck> checks) { runtime_checks_ = std::move(checks); }

  // ROOT tuple elements (by index) whose leading dimension is known only at run time (Where's
  // rows): each is returned padded to its static size, and one s64[] element per entry, in
  // this order just before the run-time checks, holds how many leading rows are real. The
  // runtime slices the result to them. Not printed, as the checks.
  void AddRowCountedOutput(int64_t index) { row_counted_outputs_.push_back(index); }
  const std::vector<int64_t>& row_counted_outputs() const { return row_counted_outputs_; }

 private:
  std::string name_;
  std::vector<std::unique_ptr<Computation>> computations_;
  Computation* entry_ = nullptr;
  absl::flat_hash_set<std::string> names_;
  // Next numeric suffix to try per UniqueName prefix (keeps UniqueName O(1) amortised).
  absl::flat_hash_map<std::string, int64_t> next_suffix_;
  int64_t next_instruction_id_ = 0;
  std::vector<RuntimeCheck> runtime_checks_;
  std::vector<int64_t> row_counted_outputs_;
  int64_t batch_representative_ = 0;
};

// The batch size a parsed symbolic module is held at: a prime no real model uses as a static
// dim, so that a dim printed from it is never mistaken for a static one in a dump.
inline constexpr int64_t kDefaultBatchRepresentative = 1021;

}  // namespace tfjit::hlo

#endif  // TFJIT_COMPILER_HLO_MODULE_H_
