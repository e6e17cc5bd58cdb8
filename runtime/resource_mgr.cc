// Variables by (container, name) per device, and resource-handle helpers.
#include "runtime/resource_mgr.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status.h"

namespace tfjit::runtime {

std::string ResourceHandle::DebugString() const {
  std::string shape = unknown_rank_ ? "?" : absl::StrCat("[", absl::StrJoin(dims_, ","), "]");
  return absl::StrCat("resource<", DTypeName(dtype_), shape, "> '", name_, "' on ", device_);
}

std::string VarRef::DebugString() const { return absl::StrCat("ref of variable '", name_, "'"); }

absl::StatusOr<Tensor> Deref(const Tensor& t) {
  const VarRef* ref = t.object_as<VarRef>();
  if (ref == nullptr) return t;
  Tensor value = ref->var()->Get();
  if (!value.valid()) {
    return FailedPrecondition("Attempting to use uninitialized value %s", ref->name());
  }
  return value;
}

absl::StatusOr<std::shared_ptr<Var>> ResourceMgr::LookupOrCreate(const std::string& container,
                                                                 const std::string& name,
                                                                 DType dtype) {
  std::lock_guard<std::mutex> lock(mu_);
  std::shared_ptr<Var>& var = vars_[absl::StrCat(container, "/", name)];
  if (var == nullptr) var = std::make_shared<Var>(dtype);
  if (var->dtype() != dtype) {
    return InvalidArgument(
        "variable '%s' (container '%s') exists with dtype %s, but a handle "
        "asks for %s; give the variables distinct shared_name attrs",
        name, container, DTypeName(var->dtype()), DTypeName(dtype));
  }
  return var;
}

absl::Status ResourceMgr::Delete(const std::string& container, const std::string& name) {
  std::lock_guard<std::mutex> lock(mu_);
  if (vars_.erase(absl::StrCat(container, "/", name)) == 0) {
    return NotFound("Resource %s/%s does not exist", container, name);
  }
  return absl::OkStatus();
}

ResourceMgr* ResourceMgrSet::ForDevice(const std::string& full_device_name) {
  std::lock_guard<std::mutex> lock(mu_);
  std::unique_ptr<ResourceMgr>& mgr = mgrs_[full_device_name];
  if (mgr == nullptr) mgr = std::make_unique<ResourceMgr>();
  return mgr.get();
}

absl::StatusOr<const ResourceHandle*> GetResourceHandle(const Tensor& t, absl::string_view what) {
  const ResourceHandle* h = t.object_as<ResourceHandle>();
  if (t.dtype() != DType::kResource || h == nullptr) {
    return InvalidArgument("%s must be a resource handle (a VarHandleOp output), got %s", what,
                           t.valid() ? t.ShapeString() : "nothing");
  }
  return h;
}

}  // namespace tfjit::runtime
