// Variable kernels: resource variables (VarHandleOp, ReadVariableOp, Assign*VariableOp,
// VarIsInitializedOp, ResourceGather, DestroyResourceOp) and TF1 reference variables
// (VariableV2, Assign, AssignAdd/Sub, IsVariableInitialized). Values live in the session's
// per-device ResourceMgr and persist across runs; an assignment installs a new tensor.
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "frontend/attr.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/resource_mgr.h"

namespace tfjit::runtime {
namespace {

// TF's default container for resources of a local session.
constexpr char kDefaultContainer[] = "localhost";

absl::StatusOr<ResourceMgr*> Resources(const KernelContext& ctx) {
  if (ctx.resources() == nullptr) {
    return FailedPrecondition("node %s needs variables, but this run has no resource manager",
                              ctx.node().DebugName());
  }
  return ctx.resources();
}

// (container, name) of a VarHandleOp or VariableV2: the node's name when shared_name is empty.
std::pair<std::string, std::string> VariableKey(const tf::Node& node) {
  std::string container = tf::GetStringAttrOr(node, "container", "").value_or("");
  std::string name = tf::GetStringAttrOr(node, "shared_name", "").value_or("");
  if (container.empty()) container = kDefaultContainer;
  if (name.empty()) name = node.name();
  return {container, name};
}

absl::Status VarHandleOp(KernelContext& ctx) {
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(ctx.node(), "dtype"));
  tf::PartialShape shape;
  shape.unknown_rank = true;
  if (absl::StatusOr<tf::PartialShape> s = tf::GetShapeAttr(ctx.node(), "shape"); s.ok()) {
    shape = *s;
  }
  TFJIT_ASSIGN_OR_RETURN(ResourceMgr * mgr, Resources(ctx));
  auto [container, name] = VariableKey(ctx.node());
  absl::StatusOr<std::shared_ptr<Var>> var = mgr->LookupOrCreate(container, name, dtype);
  if (!var.ok()) return NodeError(ctx, var.status().message());
  auto handle = std::make_shared<ResourceHandle>(ctx.device(), container, name, dtype, shape.dims,
                                                 shape.unknown_rank, ctx.node().name(), *var);
  ctx.set_output(0, Tensor::FromObject(DType::kResource, std::move(handle)));
  return absl::OkStatus();
}

absl::StatusOr<const ResourceHandle*> Handle(const KernelContext& ctx) {
  absl::StatusOr<const ResourceHandle*> h = GetResourceHandle(ctx.input(0), "input 0 (resource)");
  if (!h.ok()) return NodeError(ctx, h.status().message());
  return h;
}

absl::Status Uninitialized(const ResourceHandle& h) {
  return VariableNotFoundError(h.container(), h.name());
}

absl::StatusOr<Tensor> ReadValue(const KernelContext& ctx, const ResourceHandle& h) {
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(ctx.node(), "dtype"));
  if (dtype != h.var()->dtype()) {
    return NodeError(ctx, absl::StrCat("Trying to read variable with wrong dtype. Expected ",
                                       DTypeName(h.var()->dtype()), " got ", DTypeName(dtype)));
  }
  Tensor value = h.var()->Get();
  if (!value.valid()) return Uninitialized(h);
  return value;
}

absl::Status ReadVariableOp(KernelContext& ctx) {
  TFJIT_ASSIGN_OR_RETURN(const ResourceHandle* h, Handle(ctx));
  TFJIT_ASSIGN_OR_RETURN(Tensor value, ReadValue(ctx, *h));
  ctx.set_output(0, value);
  return absl::OkStatus();
}

absl::Status CheckValueDType(const KernelContext& ctx, const Var& var, const Tensor& value) {
  if (value.dtype() != var.dtype()) {
    return NodeError(ctx, absl::StrCat("Variable and value dtypes don't match; respectively, ",
                                       DTypeName(var.dtype()), " and ", DTypeName(value.dtype())));
  }
  return absl::OkStatus();
}

absl::Status AssignVariableOp(KernelContext& ctx) {
  TFJIT_ASSIGN_OR_RETURN(const ResourceHandle* h, Handle(ctx));
  TFJIT_RETURN_IF_ERROR(CheckValueDType(ctx, *h->var(), ctx.input(1)));
  std::lock_guard<std::mutex> lock(h->var()->update_mu());
  h->var()->Set(ctx.input(1).Clone());  // the caller may still own the fed buffer
  return absl::OkStatus();
}

// old + sign * delta for same-shaped tensors, in a new tensor.
Tensor AddScaled(const Tensor& old, const Tensor& delta, int sign) {
  Tensor out(old.dtype(), old.dims());
  DispatchNumeric(old.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using C = ComputeType<T>;
    const T* a = old.data<T>();
    const T* d = delta.data<T>();
    T* o = out.data<T>();
    for (int64_t i = 0; i < old.num_elements(); ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        o[i] = sign > 0 ? (a[i] || d[i]) : (a[i] && !d[i]);
      } else {
        o[i] = static_cast<T>(sign > 0 ? C(a[i]) + C(d[i]) : C(a[i]) - C(d[i]));
      }
    }
  });
  return out;
}

// Read-modify-write of a variable under its update lock; `what` names the variable.
absl::Status UpdateVar(KernelContext& ctx, Var& var, const std::string& what, int sign,
                       Tensor* result, const ResourceHandle* handle) {
  const Tensor& delta = ctx.input(1);
  TFJIT_RETURN_IF_ERROR(CheckValueDType(ctx, var, delta));
  std::lock_guard<std::mutex> lock(var.update_mu());
  Tensor old = var.Get();
  if (!old.valid()) {
    if (handle != nullptr) return Uninitialized(*handle);
    return FailedPrecondition("Attempting to use uninitialized value %s", what);
  }
  if (old.dims() != delta.dims()) {
    return NodeError(ctx, absl::StrCat("Cannot update variable with shape ", DimsString(old.dims()),
                                       " using a Tensor with shape ", DimsString(delta.dims()),
                                       ", shapes must be equal."));
  }
  if (!IsNumericDType(old.dtype()) || old.dtype() == DType::kBool) {
    return UnsupportedDType(ctx, old.dtype(), "numeric types");
  }
  *result = AddScaled(old, delta, sign);
  var.Set(*result);
  return absl::OkStatus();
}

template <int kSign>
absl::Status AssignUpdateVariableOp(KernelContext& ctx) {
  TFJIT_ASSIGN_OR_RETURN(const ResourceHandle* h, Handle(ctx));
  Tensor result;
  return UpdateVar(ctx, *h->var(), h->name(), kSign, &result, h);
}

absl::Status VarIsInitializedOp(KernelContext& ctx) {
  TFJIT_ASSIGN_OR_RETURN(const ResourceHandle* h, Handle(ctx));
  ctx.set_output(0, Tensor::FromVector<bool>(DType::kBool, {}, {h->var()->initialized()}));
  return absl::OkStatus();
}

absl::Status DestroyResourceOp(KernelContext& ctx) {
  TFJIT_ASSIGN_OR_RETURN(const ResourceHandle* h, Handle(ctx));
  TFJIT_ASSIGN_OR_RETURN(ResourceMgr * mgr, Resources(ctx));
  absl::Status s = mgr->Delete(h->container(), h->name());
  const bool ignore = tf::GetBoolAttrOr(ctx.node(), "ignore_lookup_error", true).value_or(true);
  return s.ok() || ignore ? absl::OkStatus() : NodeError(ctx, s.message());
}

absl::Status ResourceGather(KernelContext& ctx) {
  TFJIT_ASSIGN_OR_RETURN(const ResourceHandle* h, Handle(ctx));
  TFJIT_ASSIGN_OR_RETURN(Tensor params, ReadValue(ctx, *h));
  TFJIT_ASSIGN_OR_RETURN(int64_t batch_dims, tf::GetIntAttrOr(ctx.node(), "batch_dims", 0));
  if (batch_dims != 0) {
    return Unimplemented(
        "node %s: ResourceGather with batch_dims=%d is not supported; use "
        "ReadVariableOp + GatherV2",
        ctx.node().DebugName(), batch_dims);
  }
  if (params.rank() < 1) return KernelError(ctx, "params must be at least 1 dimensional");
  const Tensor& indices = ctx.input(1);
  if (indices.dtype() != DType::kInt32 && indices.dtype() != DType::kInt64) {
    return UnsupportedDType(ctx, indices.dtype(), "int32, int64");
  }
  std::vector<int64_t> dims = indices.dims();
  for (int i = 1; i < params.rank(); ++i) dims.push_back(params.dim(i));
  Tensor out(params.dtype(), dims);
  const size_t row_bytes =
      params.num_elements() == 0 ? 0 : params.byte_size() / static_cast<size_t>(params.dim(0));
  for (int64_t i = 0; i < indices.num_elements(); ++i) {
    const int64_t index =
        indices.dtype() == DType::kInt32 ? indices.data<int32_t>()[i] : indices.data<int64_t>()[i];
    if (index < 0 || index >= params.dim(0)) {
      return KernelError(ctx, "indices[%d] = %d is not in [0, %d)", i, index, params.dim(0));
    }
    std::memcpy(static_cast<char*>(out.raw_data()) + i * row_bytes,
                static_cast<const char*>(params.raw_data()) + index * row_bytes, row_bytes);
  }
  ctx.set_output(0, out);
  return absl::OkStatus();
}

// TF1 reference variables. VariableV2 outputs a VarRef; the executor dereferences it for
// every consumer except the ref inputs of Assign* and IsVariableInitialized.
absl::Status VariableV2(KernelContext& ctx) {
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(ctx.node(), "dtype"));
  TFJIT_ASSIGN_OR_RETURN(ResourceMgr * mgr, Resources(ctx));
  auto [container, name] = VariableKey(ctx.node());
  absl::StatusOr<std::shared_ptr<Var>> var = mgr->LookupOrCreate(container, name, dtype);
  if (!var.ok()) return NodeError(ctx, var.status().message());
  ctx.set_output(0, Tensor::FromObject(dtype, std::make_shared<VarRef>(ctx.node().name(), *var)));
  return absl::OkStatus();
}

absl::StatusOr<const VarRef*> RefInput(const KernelContext& ctx) {
  const VarRef* ref = ctx.input(0).object_as<VarRef>();
  if (ref == nullptr) {
    return NodeError(ctx, "input 0 must be a variable reference (a VariableV2 output)");
  }
  return ref;
}

absl::Status Assign(KernelContext& ctx) {
  TFJIT_ASSIGN_OR_RETURN(const VarRef* ref, RefInput(ctx));
  Var& var = *ref->var();
  const Tensor& value = ctx.input(1);
  TFJIT_RETURN_IF_ERROR(CheckValueDType(ctx, var, value));
  const bool validate = tf::GetBoolAttrOr(ctx.node(), "validate_shape", true).value_or(true);
  std::lock_guard<std::mutex> lock(var.update_mu());
  Tensor old = var.Get();
  if (validate && old.valid() && old.dims() != value.dims()) {
    return NodeError(
        ctx, absl::StrCat("Assign requires shapes of both tensors to match. lhs "
                          "shape= ",
                          DimsString(old.dims()), " rhs shape= ", DimsString(value.dims())));
  }
  Tensor copy = value.Clone();
  var.Set(copy);
  ctx.set_output(0, copy);
  return absl::OkStatus();
}

template <int kSign>
absl::Status AssignUpdate(KernelContext& ctx) {
  TFJIT_ASSIGN_OR_RETURN(const VarRef* ref, RefInput(ctx));
  Tensor result;
  TFJIT_RETURN_IF_ERROR(UpdateVar(ctx, *ref->var(), ref->name(), kSign, &result, nullptr));
  ctx.set_output(0, result);
  return absl::OkStatus();
}

absl::Status IsVariableInitialized(KernelContext& ctx) {
  TFJIT_ASSIGN_OR_RETURN(const VarRef* ref, RefInput(ctx));
  ctx.set_output(0, Tensor::FromVector<bool>(DType::kBool, {}, {ref->var()->initialized()}));
  return absl::OkStatus();
}

}  // namespace

// The leading Ref(T) inputs of a TF1 optimizer (ApplyAdam: var, m, v); 0 for other ops.
int OptimizerRefInputs(absl::string_view op);  // optimizers_kernels.cc

bool TakesVariableRef(const tf::Node& node, int input) {
  if (input < OptimizerRefInputs(node.op())) return true;
  if (input != 0) return false;
  const std::string& op = node.op();
  // The TF1 scatters (scatter_segment_kernels.cc) and StridedSliceAssign (array_slice_kernels.cc)
  // update their ref in place too.
  static const auto* kRefScatters = new absl::flat_hash_set<std::string>{
      "ScatterUpdate", "ScatterAdd",   "ScatterSub",        "ScatterMul",
      "ScatterDiv",    "ScatterMin",   "ScatterMax",        "ScatterNdUpdate",
      "ScatterNdAdd",  "ScatterNdSub", "StridedSliceAssign"};
  return op == "Assign" || op == "AssignAdd" || op == "AssignSub" ||
         op == "IsVariableInitialized" || kRefScatters->contains(op);
}

void RegisterVariableKernels(KernelRegistry& registry) {
  registry.Register("VarHandleOp", VarHandleOp);
  registry.Register("ReadVariableOp", ReadVariableOp);
  registry.Register("AssignVariableOp", AssignVariableOp);
  registry.Register("AssignAddVariableOp", AssignUpdateVariableOp<1>);
  registry.Register("AssignSubVariableOp", AssignUpdateVariableOp<-1>);
  registry.Register("VarIsInitializedOp", VarIsInitializedOp);
  registry.Register("DestroyResourceOp", DestroyResourceOp);
  registry.Register("ResourceGather", ResourceGather);
  registry.Register("VariableV2", VariableV2);
  registry.Register("Variable", VariableV2);  // TF's pre-V2 ref variable, same semantics
  registry.Register("Assign", Assign);
  registry.Register("AssignAdd", AssignUpdate<1>);
  registry.Register("AssignSub", AssignUpdate<-1>);
  registry.Register("IsVariableInitialized", IsVariableInitialized);
}

}  // namespace tfjit::runtime
