// Resources of a session: variables, held per device, and the handles (kResource scalars)
// that name them. A handle carries its device so compiled clusters can check TF's rule that
// a cluster touches only variables on its own device (known issue A).
#ifndef TFJIT_RUNTIME_RESOURCE_MGR_H_
#define TFJIT_RUNTIME_RESOURCE_MGR_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "core/run_control.h"
#include "tfjit/tensor.h"

namespace tfjit::runtime {

// A resource variable. Values are immutable tensors swapped under the lock: an assignment
// installs a new tensor, so a value read earlier (a ReadVariableOp output, a cluster's
// snapshot) never changes underneath its reader.
class Var : public std::enable_shared_from_this<Var> {
 public:
  explicit Var(DType dtype) : dtype_(dtype) {}
  DType dtype() const { return dtype_; }
  // The current value; an invalid Tensor while uninitialized.
  Tensor Get() const {
    std::lock_guard<std::mutex> lock(mu_);
    return value_;
  }
  // Installs `value`. With a run (by default the one installed on this thread around kernels,
  // core/run_control.h), the assignment goes in the run's undo log, so that a run that fails
  // puts the variable back (Session::Run: all of a step's updates, or none).
  void Set(Tensor value, const RunControl* run = CurrentRunControl()) {
    std::lock_guard<std::mutex> lock(mu_);
    if (run != nullptr) Journal(*run, value);
    value_ = std::move(value);
  }
  bool initialized() const {
    std::lock_guard<std::mutex> lock(mu_);
    return value_.valid();
  }
  // Serialises read-modify-write updates (AssignAdd, ...) and cluster write-backs.
  std::mutex& update_mu() const { return update_mu_; }

 private:
  // Records in `run`'s undo log the value before the run (first assignment) and `next` as this
  // run's latest (the record's cell). The undo, under the update lock and then mu_ (the order
  // every read-modify-write takes them in), puts the old value back only while the variable
  // still holds this run's latest, so a concurrent run's later assignment stays; it holds the
  // variable weakly (one destroyed meanwhile stays destroyed). Called under mu_.
  void Journal(const RunControl& run, const Tensor& next) {
    std::weak_ptr<Var> self = weak_from_this();
    if (self.expired()) return;  // not owned by a shared_ptr: nothing outlives the run
    auto mine = std::make_shared<Tensor>(next);
    auto undo = [self, old = value_, mine] {
      auto v = self.lock();
      if (v == nullptr) return;
      std::lock_guard<std::mutex> update(v->update_mu_);
      std::lock_guard<std::mutex> lock(v->mu_);
      if (v->value_.SharesBufferWith(*mine) && v->value_.dims() == mine->dims()) {
        v->value_ = old;
      }
    };
    auto cell = std::static_pointer_cast<Tensor>(run.undo()->Record(this, mine, undo));
    *cell = next;  // under mu_, where the undo reads it
  }

  const DType dtype_;
  mutable std::mutex mu_;
  mutable std::mutex update_mu_;
  Tensor value_;
};

// What a kResource scalar holds: which variable, where it lives, and where it came from.
class ResourceHandle : public TensorObject {
 public:
  ResourceHandle(std::string device, std::string container, std::string name, DType dtype,
                 std::vector<int64_t> dims, bool unknown_rank, std::string creator,
                 std::shared_ptr<Var> var)
      : device_(std::move(device)),
        container_(std::move(container)),
        name_(std::move(name)),
        dtype_(dtype),
        dims_(std::move(dims)),
        unknown_rank_(unknown_rank),
        creator_(std::move(creator)),
        var_(std::move(var)) {}

  // Full TF device name: "/job:localhost/replica:0/task:0/device:CPU:0".
  const std::string& device() const { return device_; }
  const std::string& container() const { return container_; }
  const std::string& name() const { return name_; }
  // Declared dtype and shape (attrs of VarHandleOp; -1 dims are unknown).
  DType dtype() const { return dtype_; }
  const std::vector<int64_t>& dims() const { return dims_; }
  bool unknown_rank() const { return unknown_rank_; }
  // The node that created the handle (a VarHandleOp).
  const std::string& creator() const { return creator_; }
  Var* var() const { return var_.get(); }
  std::string DebugString() const override;

 private:
  std::string device_, container_, name_;
  DType dtype_;
  std::vector<int64_t> dims_;
  bool unknown_rank_;
  std::string creator_;
  std::shared_ptr<Var> var_;
};

// What a TF1 reference-typed tensor (a VariableV2 output) holds: the variable itself, so a
// consumer reads its value when the consumer runs (TF's ref semantics) and Assign writes it.
class VarRef : public TensorObject {
 public:
  VarRef(std::string name, std::shared_ptr<Var> var)
      : name_(std::move(name)), var_(std::move(var)) {}
  const std::string& name() const { return name_; }
  Var* var() const { return var_.get(); }
  std::string DebugString() const override;

 private:
  std::string name_;
  std::shared_ptr<Var> var_;
};

// A tensor as its consumer sees it: a VarRef becomes the variable's current value
// (FAILED_PRECONDITION "Attempting to use uninitialized value <name>" when it has none);
// anything else is returned unchanged.
absl::StatusOr<Tensor> Deref(const Tensor& t);

// The variables of one device, by (container, name). Thread-safe.
class ResourceMgr {
 public:
  // The variable, created on first use. INVALID_ARGUMENT when it exists with another dtype.
  absl::StatusOr<std::shared_ptr<Var>> LookupOrCreate(const std::string& container,
                                                      const std::string& name, DType dtype);
  // Removes it (DestroyResourceOp); NOT_FOUND when absent.
  absl::Status Delete(const std::string& container, const std::string& name);

 private:
  std::mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<Var>> vars_;
};

// One ResourceMgr per device of a session, by full device name. Thread-safe.
class ResourceMgrSet {
 public:
  ResourceMgr* ForDevice(const std::string& full_device_name);

 private:
  std::mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<ResourceMgr>> mgrs_;
};

// The handle held by a kResource tensor, or INVALID_ARGUMENT naming `what` when `t` holds none.
absl::StatusOr<const ResourceHandle*> GetResourceHandle(const Tensor& t, absl::string_view what);

}  // namespace tfjit::runtime

#endif  // TFJIT_RUNTIME_RESOURCE_MGR_H_
