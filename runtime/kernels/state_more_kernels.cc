// Fallback kernels of more `state` ops: VariableShape, and TF1 stacks (StackV2, StackPushV2,
// StackPopV2, StackCloseV2) with TF's stack_ops.cc rules: a fresh stack per StackV2 run, a
// max_size of -1 or less meaning unbounded, TF's messages for overflow, popping an empty
// stack and using a closed one.
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontend/attr.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/resource_mgr.h"

namespace tfjit::runtime {
namespace {

absl::Status VariableShape(KernelContext& ctx) {
  absl::StatusOr<const ResourceHandle*> h = GetResourceHandle(ctx.input(0), "input 0 (resource)");
  if (!h.ok()) return NodeError(ctx, h.status().message());
  const Tensor value = (*h)->var()->Get();
  if (!value.valid()) return VariableNotFoundError((*h)->container(), (*h)->name());
  TFJIT_ASSIGN_OR_RETURN(DType out_type, tf::GetTypeAttr(ctx.node(), "out_type"));
  const int64_t rank = value.rank();
  Tensor out(out_type, {rank});
  for (int64_t i = 0; i < rank; ++i) {
    if (out_type == DType::kInt32) {
      if (value.dim(static_cast<int>(i)) > INT32_MAX) {
        return KernelError(ctx, "variable's dim %d = %d does not fit out_type int32; use int64", i,
                           value.dim(static_cast<int>(i)));
      }
      out.data<int32_t>()[i] = static_cast<int32_t>(value.dim(static_cast<int>(i)));
    } else {
      out.data<int64_t>()[i] = value.dim(static_cast<int>(i));
    }
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// One stack: created by a StackV2 run, shared through its handle tensor.
class Stack : public TensorObject {
 public:
  Stack(std::string name, DType dtype, int64_t max_size)
      : name_(std::move(name)), dtype_(dtype), max_size_(max_size) {}
  std::string DebugString() const override {
    return absl::StrCat("stack<", DTypeName(dtype_), "> '", name_, "'");
  }
  DType dtype() const { return dtype_; }

  absl::Status Push(const Tensor& value) const {
    std::lock_guard<std::mutex> lock(mu_);
    TFJIT_RETURN_IF_ERROR(CheckOpen());
    if (max_size_ >= 0 && static_cast<int64_t>(elements_.size()) >= max_size_) {
      return InvalidArgument("Stack[%s] overflowed its max_size (%d)", name_, max_size_);
    }
    elements_.push_back(value);
    return absl::OkStatus();
  }
  absl::StatusOr<Tensor> Pop() const {
    std::lock_guard<std::mutex> lock(mu_);
    TFJIT_RETURN_IF_ERROR(CheckOpen());
    if (elements_.empty()) return InvalidArgument("Stack[%s] is empty.", name_);
    Tensor top = elements_.back();
    elements_.pop_back();
    return top;
  }
  void Close() const {
    std::lock_guard<std::mutex> lock(mu_);
    closed_ = true;
    elements_.clear();
  }

 private:
  absl::Status CheckOpen() const {
    if (closed_) return InvalidArgument("Stack[%s] has already been closed.", name_);
    return absl::OkStatus();
  }
  const std::string name_;
  const DType dtype_;
  const int64_t max_size_;
  // The handle tensor holds the stack as a const object; its contents are its mutable state.
  mutable std::mutex mu_;
  mutable std::vector<Tensor> elements_;
  mutable bool closed_ = false;
};

absl::StatusOr<const Stack*> StackOf(const KernelContext& ctx) {
  const Tensor& t = ctx.input(0);
  const auto* stack =
      t.dtype() == DType::kResource ? dynamic_cast<const Stack*>(t.object()) : nullptr;
  if (stack == nullptr) {
    return NodeError(
        ctx, absl::StrCat("input 0 must be a stack handle made by StackV2, got ", t.ShapeString()));
  }
  return stack;
}

absl::Status StackV2(KernelContext& ctx) {
  const Tensor& max = ctx.input(0);
  if (max.dtype() != DType::kInt32 || max.num_elements() != 1) {
    return KernelError(ctx, "max_size must be an int32 scalar, got %s", max.ShapeString());
  }
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(ctx.node(), "elem_type"));
  std::string name = tf::GetStringAttrOr(ctx.node(), "stack_name", "").value_or("");
  if (name.empty()) name = ctx.node().name();
  static std::atomic<int64_t> counter{0};
  name = absl::StrCat(name, "_", counter.fetch_add(1));
  ctx.set_output(0, Tensor::FromObject(DType::kResource, std::make_shared<Stack>(
                                                             name, dtype, max.data<int32_t>()[0])));
  return absl::OkStatus();
}

absl::Status StackPushV2(KernelContext& ctx) {
  TFJIT_ASSIGN_OR_RETURN(const Stack* stack, StackOf(ctx));
  const Tensor& value = ctx.input(1);
  if (value.dtype() != stack->dtype()) {
    return KernelError(ctx, "Stack and the element have different dtypes: %s vs %s",
                       DTypeName(stack->dtype()), DTypeName(value.dtype()));
  }
  absl::Status s = stack->Push(value);
  if (!s.ok()) return NodeError(ctx, s.message());
  ctx.set_output(0, value);
  return absl::OkStatus();
}

absl::Status StackPopV2(KernelContext& ctx) {
  TFJIT_ASSIGN_OR_RETURN(const Stack* stack, StackOf(ctx));
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(ctx.node(), "elem_type"));
  if (dtype != stack->dtype()) {
    return KernelError(ctx, "Stack holds %s, but elem_type is %s", DTypeName(stack->dtype()),
                       DTypeName(dtype));
  }
  absl::StatusOr<Tensor> top = stack->Pop();
  if (!top.ok()) return NodeError(ctx, top.status().message());
  ctx.set_output(0, *std::move(top));
  return absl::OkStatus();
}

absl::Status StackCloseV2(KernelContext& ctx) {
  TFJIT_ASSIGN_OR_RETURN(const Stack* stack, StackOf(ctx));
  stack->Close();
  return absl::OkStatus();
}

}  // namespace

void RegisterStateMoreKernels(KernelRegistry& registry) {
  registry.Register("VariableShape", VariableShape);
  registry.Register("StackV2", StackV2);
  registry.Register("StackPushV2", StackPushV2);
  registry.Register("StackPopV2", StackPopV2);
  registry.Register("StackCloseV2", StackCloseV2);
}

}  // namespace tfjit::runtime
