// Per-run limits that code deep below the executor must see without taking them as arguments
// (Tensor's constructor, compiled code's loops): the deadline, the cancellation token and the
// session's memory budget. The executor installs the current run on its thread around each
// kernel and compiled cluster (ScopedRunControl); Tensor allocation charges the budget of the
// run installed on its thread.
#ifndef TFJIT_CORE_RUN_CONTROL_H_
#define TFJIT_CORE_RUN_CONTROL_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "tfjit/dtype.h"

namespace tfjit {

class CancellationToken;

// Bytes of live tensors that the runs of one session allocated, against the session's cap
// (SessionOptions::memory_limit_bytes). Thread-safe. Check-then-charge is not atomic across
// concurrent runs: two runs may together pass the cap by one allocation each.
class MemoryBudget {
 public:
  explicit MemoryBudget(int64_t limit_bytes) : limit_(limit_bytes) {}
  int64_t limit() const { return limit_; }
  int64_t in_use() const { return in_use_.load(std::memory_order_relaxed); }
  int64_t peak() const { return peak_.load(std::memory_order_relaxed); }
  // Adds `bytes` unless the total would pass the limit; returns whether it did.
  bool TryCharge(int64_t bytes);
  // Adds `bytes` unconditionally (an allocation its caller checked with Fits first).
  void Charge(int64_t bytes);
  void Release(int64_t bytes) { in_use_.fetch_sub(bytes, std::memory_order_relaxed); }
  bool Fits(int64_t bytes) const { return bytes <= limit_ - in_use(); }
  // Starts a new peak measurement at the current use (RunStats::peak_memory_bytes).
  void ResetPeak() { peak_.store(in_use(), std::memory_order_relaxed); }

 private:
  void UpdatePeak(int64_t now);
  const int64_t limit_;
  std::atomic<int64_t> in_use_{0};
  std::atomic<int64_t> peak_{0};
};

// What a run changed that outlives it (the session's variables), kept so that a run that
// fails can put it back: Session::Run rolls back on any error, so a step's updates land all
// together or not at all. Thread-safe (a run's kernels record from several threads).
class UndoLog {
 public:
  // `key` (a variable) was changed by the run. The first call for a key records `cell` (what
  // its undo reads: the value this run installed last, which the caller keeps current through
  // the returned cell) and `undo` (puts back the value from before the run unless another run
  // changed it since, checked and done atomically). Later calls return the first cell.
  std::shared_ptr<void> Record(const void* key, std::shared_ptr<void> cell,
                               std::function<void()> undo);
  // Runs the undos, newest first, and forgets them.
  void Rollback();
  bool empty() const;

 private:
  struct Entry {
    std::shared_ptr<void> cell;
    std::function<void()> undo;
  };
  mutable std::mutex mu_;
  std::vector<Entry> entries_;
  std::unordered_map<const void*, size_t> index_;  // key -> its entry (a step may assign
                                                   // thousands of variables)
};

// One run's deadline, cancellation token and memory budget, and its undo log. Immutable after
// construction apart from the stop flag and the log, so any thread may poll it.
class RunControl {
 public:
  // timeout_ms <= 0: no deadline. `cancel` and `memory` may be null.
  RunControl(int64_t timeout_ms, std::shared_ptr<const CancellationToken> cancel,
             std::shared_ptr<MemoryBudget> memory);

  // OK, CANCELLED or DEADLINE_EXCEEDED (elapsed and limit) saying that the run stopped at
  // `where` (a node or cluster).
  absl::Status Check(absl::string_view where) const;
  // Cheap: whether the run should stop (cancelled or past its deadline). Sticky.
  bool ShouldStop() const;
  double elapsed_ms() const;
  int64_t timeout_ms() const { return timeout_ms_; }
  MemoryBudget* memory() const { return memory_.get(); }
  const std::shared_ptr<MemoryBudget>& shared_memory() const { return memory_; }
  UndoLog* undo() const { return &undo_; }

 private:
  const std::chrono::steady_clock::time_point start_;
  const int64_t timeout_ms_;
  const std::chrono::steady_clock::time_point deadline_;
  const std::shared_ptr<const CancellationToken> cancel_;
  const std::shared_ptr<MemoryBudget> memory_;
  mutable std::atomic<bool> stopped_{false};
  mutable UndoLog undo_;
};

// Thrown by Tensor's constructor, only while a ScopedRunControl in kThrowOnRefusal mode is
// installed on the thread (the executor's kernel call, which catches it and returns
// RESOURCE_EXHAUSTED): a kernel cannot return a status from a constructor, and its output
// must not be allocated at all.
struct AllocationRefused {
  int64_t bytes = -1;    // -1: the element count overflows int64
  int64_t limit = 0;     // the cap it would pass (the session's, or the per-tensor ceiling)
  int64_t in_use = 0;    // the session's bytes in use then
  bool ceiling = false;  // refused by the per-tensor ceiling rather than the session's cap
  DType dtype = DType::kInvalid;
  std::vector<int64_t> dims;
};

enum class AllocationMode {
  kCharge,          // charge the budget even past the cap (allocations checked beforehand)
  kThrowOnRefusal,  // refuse with AllocationRefused (the executor's kernel call)
  // Charge nothing: the run is installed for its deadline and cancellation only (a compile,
  // whose constants may outlive the run in the compilation cache).
  kUncharged,
};

// Installs `control` as the thread's current run (null: none) for the scope's lifetime.
class ScopedRunControl {
 public:
  ScopedRunControl(const RunControl* control, AllocationMode mode);
  ~ScopedRunControl();
  ScopedRunControl(const ScopedRunControl&) = delete;
  ScopedRunControl& operator=(const ScopedRunControl&) = delete;

 private:
  const RunControl* previous_control_;
  AllocationMode previous_mode_;
};

// The run installed on this thread, or null.
const RunControl* CurrentRunControl();

// A checkpoint: a point between two pieces of work a run cannot interrupt (a compile stage,
// a part of LLVM's code generation, a compiled kernel). Runs the test hook, if one is set,
// with `where`, then returns the current run's Check(where): OK when no run is installed on
// the thread or it may go on, else CANCELLED or DEADLINE_EXCEEDED saying it stopped at
// `where`. Cheap when no hook is set: one atomic load and the run's ShouldStop.
absl::Status RunCheckpoint(absl::string_view where);
// The same, with `where` built only when it is used (a hook is set, or the run stops): for
// checkpoints passed often, e.g. once per lowered node.
absl::Status RunCheckpoint(absl::FunctionRef<std::string()> where);

// Whether `status` says a run stopped (CANCELLED or DEADLINE_EXCEEDED): not a property of
// what was being computed, so never cached as its result.
bool IsRunStop(const absl::Status& status);

// Tests only: `hook` runs at every checkpoint, on whichever thread reaches it, before the
// run is checked (null: none). A test makes one stage slow (sleeps past the run's deadline
// there) or cancels the run at it, instead of relying on the machine's speed.
void SetCheckpointHookForTesting(std::function<void(absl::string_view where)> hook);
// Whether a checkpoint hook is set (callers ask before building a `where`).
bool CheckpointHookSet();
// Runs the checkpoint hook, if one is set, with `where` (for checkpoints that check their run
// themselves, e.g. the executor's before each node).
void RunCheckpointHook(absl::string_view where);

// Bytes of `dims` elements of `dtype`; false for a negative dim or an overflow of int64.
bool TensorBytes(DType dtype, const std::vector<int64_t>& dims, int64_t* bytes);
// The largest single tensor tfjit allocates: the machine's physical memory, at most 2^40.
int64_t MaxTensorBytes();

// For Tensor's constructor: checks `bytes` of (dtype, dims) against the per-tensor ceiling
// and the current run's budget. Returns the budget charged (null: none installed, nothing
// charged); the allocation's deleter releases the bytes to it. Throws AllocationRefused in
// kThrowOnRefusal mode; otherwise charges anyway (bytes < 0 then: charges nothing). Dims
// with a negative entry are let through uncharged (no elements; the old behaviour).
std::shared_ptr<MemoryBudget> ChargeTensorAllocation(DType dtype, const std::vector<int64_t>& dims,
                                                     int64_t bytes);

// "RESOURCE_EXHAUSTED" status for a refused allocation at node `where`, naming the request,
// the limit and the option that raises it.
absl::Status AllocationRefusedStatus(const AllocationRefused& refused, absl::string_view where);

// For allocations that are not Tensors (a TensorList's element slots, a compiled cluster's
// arena): OK when `bytes` fit the per-tensor ceiling and the current run's budget, else
// RESOURCE_EXHAUSTED naming `where` and `what`. Charges nothing.
absl::Status CheckAllocation(int64_t bytes, absl::string_view what, absl::string_view where);

}  // namespace tfjit

#endif  // TFJIT_CORE_RUN_CONTROL_H_
