// Buffer assignment, shared by the backends (issue 23): which buffer holds each value, which
// updates write into their operand's buffer, and where each buffer lies in a run's arena.
// Liveness of values over the schedule is liveness.h; this file turns values into buffers.
//
// Two pieces, used by both the CPU backend (backends/cpu: BufferPlan, the IR emitter) and the
// GPU backend (backends/gpu/gpu_program.cc), which keep only what is theirs (the CPU's packed
// GEMM constants and output tensors, the GPU's patch matrices and bias epilogues):
//
// - FrameAssignment: the buffers of one emitted instance ("frame") of a computation. A value
//   is a list of array buffers, its tuple leaves flattened depth-first. Parameters take their
//   caller's buffers; tuple and get-tuple-element only regroup buffers; a reshape shares its
//   operand's bytes when the backend's BufferPolicy says so; an array constant is its literal;
//   every other instruction gets fresh buffers from the backend (BufferSource). Then a
//   dynamic-update-slice (and, by policy, a scatter) writes into its operand's buffer when that
//   buffer is writable (this frame's own, or a parameter's where the caller allows it: a while
//   body's state) and nothing after it reads the old value: a loop that fills a buffer row by
//   row then costs O(row) per iteration, and its state never leaves its buffer.
//
// - ArenaAssignment: buffers' live intervals in the emitted program's steps, and their offsets
//   in one arena. A backend reports each access to a buffer at a step (one step per emitted
//   instruction, in the schedule's order) and each loop's [start, end]: a buffer touched in a
//   loop is live for all of it, as an iteration may read what the previous one wrote. Buffers
//   whose intervals are disjoint share bytes (first fit, largest first); a buffer never
//   touched keeps bytes of its own.
//
// ModuleBufferAssignment drives both over a whole module the way the backends do (entry,
// while condition and body, conditional branches, calls) and prints the result: what
// `tfjit-opt --print-buffer-assignment` shows and tests/hlo/passes/buffer_assignment.hlo
// checks. The backends add scratch buffers of their own to the same ArenaAssignment.
#ifndef TFJIT_COMPILER_PASSES_BUFFER_ASSIGNMENT_H_
#define TFJIT_COMPILER_PASSES_BUFFER_ASSIGNMENT_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "compiler/hlo/module.h"

namespace tfjit::passes {

// Where an array value lives: buffer `id` of the backend's table, or an array constant's
// literal (`constant`, id -1).
struct BufferRef {
  int id = -1;
  const hlo::Instruction* constant = nullptr;

  bool operator==(const BufferRef& o) const { return id == o.id && constant == o.constant; }
};

// The array buffers of one value, tuple leaves flattened depth-first.
using Leaves = std::vector<BufferRef>;

// The array shapes of `shape`'s leaves, depth-first (one entry for an array).
std::vector<hlo::Shape> LeafShapes(const hlo::Shape& shape);

// What a backend lets share storage.
struct BufferPolicy {
  // A reshape is its operand's bytes (row-major layouts: the CPU). Otherwise it is computed
  // into a buffer of its own.
  bool reshape_aliases = false;
  // A scatter writes into its operand's buffer as a dynamic-update-slice does (the CPU's
  // scatter loops can; the GPU's scatter kernel reads one buffer and writes another).
  bool scatter_in_place = false;
  // The entry's parameters are the run's own copies (the GPU copies them into its arena), so
  // updates may go into them. The CPU's are the caller's tensors.
  bool entry_parameters_writable = false;
};

// The backend's buffer table, as FrameAssignment asks it for buffers.
class BufferSource {
 public:
  virtual ~BufferSource() = default;
  // A fresh buffer for one array leaf of `value`.
  virtual int NewBuffer(const hlo::Instruction& value, const hlo::Shape& leaf) = 0;
  // A buffer NewBuffer gave that is no longer used (an update went into its operand's).
  virtual void DropBuffer(int id) = 0;
  // Whether the frame may write buffer `id` when the caller allows writing parameters (not,
  // e.g., the CPU's entry parameters, which are the caller's tensors).
  virtual bool MayWrite(int id) const { return true; }
};

class FrameAssignment {
 public:
  // Assigns `computation` called with one value per parameter. `params_writable`: the frame
  // may update its parameters' buffers in place (a while body, whose parameter is the loop
  // state the body's result replaces anyway). Everything in post order, the order the
  // backends emit instructions in.
  static absl::StatusOr<FrameAssignment> Build(const hlo::Computation& computation,
                                               std::vector<Leaves> params, bool params_writable,
                                               const BufferPolicy& policy, BufferSource& source);

  const hlo::Computation& computation() const { return *computation_; }
  const std::vector<const hlo::Instruction*>& order() const { return order_; }
  const Leaves& leaves(const hlo::Instruction* inst) const { return leaves_.at(inst); }
  const Leaves& root() const { return leaves(computation_->root()); }
  // An update (dynamic-update-slice, scatter) whose result lives in its operand's buffer.
  bool in_place(const hlo::Instruction* inst) const { return in_place_.contains(inst); }
  // A buffer this frame got from the source (not a parameter's, not a constant).
  bool owns(const BufferRef& ref) const {
    return ref.constant == nullptr && owned_.contains(ref.id);
  }
  // One line per value: "%name = {b3 b4}" (constants "const"), " in-place" for updates.
  std::string ToString() const;

 private:
  bool Writable(const BufferRef& ref) const;
  bool OldValueNeeded(size_t pos, const BufferRef& ref) const;
  void Rename(size_t from_pos, int from_id, int to_id);
  void AssignInPlaceUpdates(const BufferPolicy& policy, BufferSource& source);

  const hlo::Computation* computation_ = nullptr;
  std::vector<const hlo::Instruction*> order_;
  absl::flat_hash_map<const hlo::Instruction*, Leaves> leaves_;
  absl::flat_hash_set<const hlo::Instruction*> in_place_;
  absl::flat_hash_set<int> owned_;
  absl::flat_hash_set<int> writable_params_;
};

class ArenaAssignment {
 public:
  // A buffer of `bytes` bytes; `label` names it in ToString (e.g. "%dot.3" or "patches").
  int Add(int64_t bytes, std::string label = "");
  // Buffer `id` needs no arena bytes (dropped, or placed elsewhere: an output tensor, a
  // constant).
  void Exclude(int id);
  // An access to `id` at `step` (-1: before the first step, e.g. an entry parameter's copy).
  void Touch(int id, int64_t step);
  // `id` is read after the program ends (copied into an output).
  void KeepToEnd(int id);
  // Steps [start, end] are a loop: every buffer touched in them stays live through all of
  // them.
  void Loop(int64_t start, int64_t end);
  // After the last access: offsets, `alignment`-byte aligned, shared where intervals are
  // disjoint.
  void Finalize(int64_t alignment);
  // Finalize for a symbolic module (docs/HLO.md): buffer `id` takes per_batch[id] * b + its
  // bytes() - per_batch[id] * representative bytes at batch size b. Buffers of static size are
  // packed as Finalize packs them; the others after them, by a size per batch row of
  // per_batch + max(c, 0) (aligned), so that placing them at static_bytes + unit_offset * b
  // keeps every live-overlapping pair apart at every b >= 1 (offset and size both scale).
  void FinalizeSymbolic(int64_t alignment, const std::vector<int64_t>& per_batch,
                        int64_t representative);

  int size() const { return static_cast<int>(buffers_.size()); }
  // After FinalizeSymbolic: buffer `id` at batch size b sits at offset(id) + unit_offset(id) * b
  // of an arena of arena_bytes() + unit_bytes() * b bytes.
  int64_t unit_offset(int id) const { return at(id).unit_offset; }
  int64_t unit_bytes() const { return unit_bytes_; }
  int64_t bytes(int id) const { return at(id).bytes; }
  bool excluded(int id) const { return at(id).excluded; }
  int64_t offset(int id) const { return at(id).offset; }
  int64_t arena_bytes() const { return arena_bytes_; }
  // Every arena buffer with bytes of its own: what sharing saved.
  int64_t unshared_bytes() const { return unshared_bytes_; }
  // "arena N bytes (unshared M)", then one line per buffer: "b<id> <label> <bytes> bytes
  // [first, last] at <offset>", "excluded" for those without arena bytes, "end" for a last
  // step past the program.
  std::string ToString() const;

 private:
  struct Buffer {
    int64_t bytes = 0;
    std::string label;
    bool excluded = false;
    int64_t first = 0, last = -1;  // last < first: never touched
    bool touched = false;
    int64_t offset = 0;
    int64_t unit_offset = 0;  // FinalizeSymbolic
  };
  // First fit, largest (by `largest`) first, of `ids` by `size` (aligned), sharing where live
  // ranges are disjoint: each one's offset goes to `set`; returns the bytes they span.
  int64_t Pack(const std::vector<size_t>& ids, const std::vector<int64_t>& size,
               const std::vector<int64_t>& largest,
               const std::function<void(size_t, int64_t)>& set);
  const Buffer& at(int id) const { return buffers_[static_cast<size_t>(id)]; }
  Buffer& at(int id) { return buffers_[static_cast<size_t>(id)]; }

  std::vector<Buffer> buffers_;
  int64_t arena_bytes_ = 0;
  int64_t unshared_bytes_ = 0;
  int64_t unit_bytes_ = 0;
};

// Both pieces over a whole module, as a backend would run them: the entry's parameters are
// buffers of their own (read-only unless the policy says otherwise), its root is read after
// the end; a while's state gets fresh
// buffers its condition reads and its body updates (in place where it can), a conditional's
// branches and a call's callee read their operands' buffers. Fusions are one step (their
// computation is the kernel's body, not a frame).
class ModuleBufferAssignment {
 public:
  static absl::StatusOr<ModuleBufferAssignment> Build(const hlo::Module& module,
                                                      const BufferPolicy& policy,
                                                      int64_t alignment);
  const ArenaAssignment& arena() const { return arena_; }
  // Each frame (in emission order) with its values' buffers, then the arena.
  std::string ToString() const;

 private:
  ArenaAssignment arena_;
  std::string frames_;
};

}  // namespace tfjit::passes

#endif  // TFJIT_COMPILER_PASSES_BUFFER_ASSIGNMENT_H_
