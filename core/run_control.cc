// RunControl, the memory budget and the thread's current run (see run_control.h).
#include "core/run_control.h"

#include <unistd.h>

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "tfjit/cancellation.h"
#include "tfjit/tensor.h"

namespace tfjit {
namespace {

thread_local const RunControl* current_control = nullptr;
thread_local AllocationMode current_mode = AllocationMode::kCharge;

// The checkpoint hook (tests only): set rarely, read at every checkpoint.
std::atomic<bool> hook_set{false};
std::mutex hook_mu;
std::shared_ptr<const std::function<void(absl::string_view)>> hook;

std::chrono::steady_clock::time_point DeadlineOf(std::chrono::steady_clock::time_point start,
                                                 int64_t timeout_ms) {
  if (timeout_ms <= 0) return std::chrono::steady_clock::time_point::max();
  return start + std::chrono::milliseconds(timeout_ms);
}

std::string Bytes(int64_t bytes) {
  if (bytes >= (int64_t{1} << 30)) {
    return absl::StrFormat("%d bytes (%.1f GiB)", bytes, static_cast<double>(bytes) / (1 << 30));
  }
  if (bytes >= (int64_t{1} << 20)) {
    return absl::StrFormat("%d bytes (%.1f MiB)", bytes, static_cast<double>(bytes) / (1 << 20));
  }
  return absl::StrFormat("%d bytes", bytes);
}

}  // namespace

bool MemoryBudget::TryCharge(int64_t bytes) {
  int64_t now = in_use_.load(std::memory_order_relaxed);
  do {
    if (bytes > limit_ - now) return false;
  } while (!in_use_.compare_exchange_weak(now, now + bytes, std::memory_order_relaxed));
  UpdatePeak(now + bytes);
  return true;
}

void MemoryBudget::Charge(int64_t bytes) {
  UpdatePeak(in_use_.fetch_add(bytes, std::memory_order_relaxed) + bytes);
}

void MemoryBudget::UpdatePeak(int64_t now) {
  int64_t peak = peak_.load(std::memory_order_relaxed);
  while (now > peak && !peak_.compare_exchange_weak(peak, now, std::memory_order_relaxed)) {
  }
}

std::shared_ptr<void> UndoLog::Record(const void* key, std::shared_ptr<void> cell,
                                      std::function<void()> undo) {
  std::lock_guard<std::mutex> lock(mu_);
  auto [it, inserted] = index_.try_emplace(key, entries_.size());
  if (!inserted) return entries_[it->second].cell;
  entries_.push_back({cell, std::move(undo)});
  return cell;
}

void UndoLog::Rollback() {
  std::vector<Entry> entries;
  {
    std::lock_guard<std::mutex> lock(mu_);
    entries.swap(entries_);
    index_.clear();
  }
  for (auto it = entries.rbegin(); it != entries.rend(); ++it) it->undo();
}

bool UndoLog::empty() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.empty();
}

RunControl::RunControl(int64_t timeout_ms, std::shared_ptr<const CancellationToken> cancel,
                       std::shared_ptr<MemoryBudget> memory)
    : start_(std::chrono::steady_clock::now()),
      timeout_ms_(timeout_ms > 0 ? timeout_ms : 0),
      deadline_(DeadlineOf(start_, timeout_ms)),
      cancel_(std::move(cancel)),
      memory_(std::move(memory)) {}

double RunControl::elapsed_ms() const {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start_)
      .count();
}

bool RunControl::ShouldStop() const {
  if (stopped_.load(std::memory_order_relaxed)) return true;
  const bool stop = (cancel_ != nullptr && cancel_->cancelled()) ||
                    (timeout_ms_ > 0 && std::chrono::steady_clock::now() >= deadline_);
  if (stop) stopped_.store(true, std::memory_order_relaxed);
  return stop;
}

absl::Status RunControl::Check(absl::string_view where) const {
  if (!ShouldStop()) return absl::OkStatus();
  if (cancel_ != nullptr && cancel_->cancelled()) {
    return absl::CancelledError(absl::StrCat("Run was cancelled (stopped at ", where, " after ",
                                             absl::StrFormat("%.0f", elapsed_ms()), " ms)"));
  }
  return absl::DeadlineExceededError(absl::StrFormat(
      "Run exceeded its deadline: %.0f ms elapsed, limit %d ms (stopped at %s); raise "
      "RunOptions::timeout_ms / SessionOptions::run_timeout_ms (tfjit --timeout SECONDS)",
      elapsed_ms(), timeout_ms_, std::string(where)));
}

ScopedRunControl::ScopedRunControl(const RunControl* control, AllocationMode mode)
    : previous_control_(current_control), previous_mode_(current_mode) {
  current_control = control;
  current_mode = mode;
}

ScopedRunControl::~ScopedRunControl() {
  current_control = previous_control_;
  current_mode = previous_mode_;
}

const RunControl* CurrentRunControl() { return current_control; }

void RunCheckpointHook(absl::string_view where) {
  if (!hook_set.load(std::memory_order_acquire)) return;
  std::shared_ptr<const std::function<void(absl::string_view)>> h;
  {
    std::lock_guard<std::mutex> lock(hook_mu);
    h = hook;
  }
  if (h != nullptr) (*h)(where);
}

absl::Status RunCheckpoint(absl::string_view where) {
  RunCheckpointHook(where);
  const RunControl* control = current_control;
  if (control == nullptr || !control->ShouldStop()) return absl::OkStatus();
  return control->Check(where);
}

absl::Status RunCheckpoint(absl::FunctionRef<std::string()> where) {
  const RunControl* control = current_control;
  const bool stop = control != nullptr && control->ShouldStop();
  if (!stop && !CheckpointHookSet()) return absl::OkStatus();
  return RunCheckpoint(where());
}

void SetCheckpointHookForTesting(std::function<void(absl::string_view where)> h) {
  std::lock_guard<std::mutex> lock(hook_mu);
  hook = h ? std::make_shared<const std::function<void(absl::string_view)>>(std::move(h)) : nullptr;
  hook_set.store(hook != nullptr, std::memory_order_release);
}

bool IsRunStop(const absl::Status& status) {
  return status.code() == absl::StatusCode::kCancelled ||
         status.code() == absl::StatusCode::kDeadlineExceeded;
}

bool CheckpointHookSet() { return hook_set.load(std::memory_order_acquire); }

bool TensorBytes(DType dtype, const std::vector<int64_t>& dims, int64_t* bytes) {
  int64_t n = static_cast<int64_t>(DTypeSize(dtype));
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(n, d, &n)) return false;
  }
  *bytes = n;
  return true;
}

int64_t MaxTensorBytes() {
  static const int64_t max_bytes = [] {
    const long pages = sysconf(_SC_PHYS_PAGES);
    const long page = sysconf(_SC_PAGE_SIZE);
    const int64_t ceiling = int64_t{1} << 40;
    if (pages <= 0 || page <= 0) return ceiling;
    return std::min<int64_t>(ceiling, static_cast<int64_t>(pages) * page);
  }();
  return max_bytes;
}

std::shared_ptr<MemoryBudget> ChargeTensorAllocation(DType dtype, const std::vector<int64_t>& dims,
                                                     int64_t bytes) {
  const RunControl* control = current_control;
  if (control == nullptr || current_mode == AllocationMode::kUncharged) return nullptr;
  // A negative dim is the caller's contract broken (tensor.h), not a size: such tensors hold
  // no elements and get no buffer, as before this check existed (some callers still feed
  // placeholder dims with -1 unreplaced).
  for (int64_t d : dims) {
    if (d < 0) return nullptr;
  }
  const bool may_throw = current_mode == AllocationMode::kThrowOnRefusal;
  MemoryBudget* budget = control->memory();
  if (bytes < 0 || bytes > MaxTensorBytes()) {
    if (may_throw) {
      throw AllocationRefused{
          bytes, MaxTensorBytes(), budget != nullptr ? budget->in_use() : 0, true, dtype, dims};
    }
    return nullptr;
  }
  if (budget == nullptr) return nullptr;
  if (!budget->TryCharge(bytes)) {
    if (may_throw) {
      throw AllocationRefused{bytes, budget->limit(), budget->in_use(), false, dtype, dims};
    }
    budget->Charge(bytes);
  }
  return control->shared_memory();
}

absl::Status AllocationRefusedStatus(const AllocationRefused& r, absl::string_view where) {
  const std::string shape = absl::StrCat(DTypeName(r.dtype), "[", absl::StrJoin(r.dims, ","), "]");
  if (r.bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(where, ": cannot allocate a tensor of shape ", shape,
                     ": the element count overflows int64; check the shape inputs"));
  }
  if (r.ceiling) {
    return absl::ResourceExhaustedError(
        absl::StrCat(where, ": OOM when allocating tensor with shape ", shape, ": ", Bytes(r.bytes),
                     " is more than one tensor may take (", Bytes(r.limit),
                     ", the machine's memory or 2^40 bytes); check the shape inputs"));
  }
  return absl::ResourceExhaustedError(
      absl::StrCat(where, ": OOM when allocating tensor with shape ", shape, ": ", Bytes(r.bytes),
                   " requested, ", Bytes(r.in_use), " in use, memory limit ", Bytes(r.limit),
                   "; raise SessionOptions::memory_limit_bytes (tfjit --memory-limit BYTES)"));
}

absl::Status CheckAllocation(int64_t bytes, absl::string_view what, absl::string_view where) {
  if (bytes < 0 || bytes > MaxTensorBytes()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        where, ": cannot allocate ", what, ": ",
        bytes < 0 ? std::string("its size overflows int64")
                  : absl::StrCat(Bytes(bytes), " is more than one allocation may take (",
                                 Bytes(MaxTensorBytes()), ", the machine's memory or 2^40 bytes)"),
        "; check the shape inputs"));
  }
  const RunControl* control = current_control;
  MemoryBudget* budget = control != nullptr ? control->memory() : nullptr;
  if (budget == nullptr || budget->Fits(bytes)) return absl::OkStatus();
  return absl::ResourceExhaustedError(
      absl::StrCat(where, ": OOM when allocating ", what, ": ", Bytes(bytes), " requested, ",
                   Bytes(budget->in_use()), " in use, memory limit ", Bytes(budget->limit()),
                   "; raise SessionOptions::memory_limit_bytes (tfjit --memory-limit BYTES)"));
}

}  // namespace tfjit
