// Shared kernel helpers: located errors, index-vector inputs, axes and the parallel loop.
#include "runtime/kernels/kernel_util.h"

#include "absl/strings/str_cat.h"
#include "core/run_control.h"
#include "core/thread_pool.h"
#include "frontend/attr.h"
#include "runtime/resource_mgr.h"

namespace tfjit::runtime {

absl::Status NodeError(const KernelContext& ctx, absl::string_view message) {
  const tf::Node& node = ctx.node();
  absl::Status status = InvalidArgument("node '%s' (%s): %s", node.name(), node.op(), message);
  return AttachNode(std::move(status), node.name(), node.op());
}

absl::Status UnsupportedDType(const KernelContext& ctx, DType dtype, absl::string_view supported) {
  return KernelError(ctx, "no %s kernel for dtype %s (supported: %s); cast the input first",
                     ctx.node().op(), DTypeName(dtype), supported);
}

namespace {

// `t` as `to`, element by element (16-bit floats through float; integers by wrapping).
Tensor ConvertTensor(KernelContext& ctx, const Tensor& t, DType to) {
  Tensor out(to, t.dims());
  DispatchNumeric(t.dtype(), [&](auto from_tag) {
    using From = decltype(from_tag);
    DispatchNumeric(to, [&](auto to_tag) {
      using To = decltype(to_tag);
      const From* src = t.data<From>();
      To* dst = out.data<To>();
      ParallelFor(ctx, t.num_elements(), 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) {
          if constexpr (std::is_same_v<To, half> || std::is_same_v<To, bfloat16>) {
            dst[i] = To(static_cast<float>(src[i]));
          } else {
            dst[i] = static_cast<To>(static_cast<ComputeType<From>>(src[i]));
          }
        }
      });
    });
  });
  return out;
}

}  // namespace

absl::Status RunWidened(KernelContext& ctx, KernelFn kernel, DType narrow, DType wide) {
  std::vector<Tensor> inputs;
  inputs.reserve(static_cast<size_t>(ctx.num_inputs()));
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    const Tensor& in = ctx.input(i);
    inputs.push_back(in.dtype() == narrow ? ConvertTensor(ctx, in, wide) : in);
  }
  KernelContext inner(ctx.node(), inputs, ctx.pool());
  inner.set_state_store(ctx.state_store());
  inner.set_device(ctx.device(), ctx.resources());
  TFJIT_RETURN_IF_ERROR(kernel(inner));
  for (size_t i = 0; i < inner.outputs().size(); ++i) {
    Tensor& out = inner.outputs()[i];
    ctx.set_output(static_cast<int>(i),
                   out.dtype() == wide ? ConvertTensor(ctx, out, narrow) : std::move(out));
  }
  return absl::OkStatus();
}

absl::Status CheckNumInputs(const KernelContext& ctx, int n) {
  if (ctx.num_inputs() == n) return absl::OkStatus();
  return AttachNode(Internal("node '%s' (%s): kernel expects %d inputs, got %d", ctx.node().name(),
                             ctx.node().op(), n, ctx.num_inputs()),
                    ctx.node().name(), ctx.node().op());
}

absl::Status ReadIndexVector(const KernelContext& ctx, const Tensor& t, absl::string_view what,
                             std::vector<int64_t>* out) {
  if (t.dtype() != DType::kInt32 && t.dtype() != DType::kInt64) {
    return KernelError(ctx, "%s must be int32 or int64, got %s", what, t.ShapeString());
  }
  if (t.rank() > 1) {
    return KernelError(ctx, "%s must be a scalar or vector, got %s", what, t.ShapeString());
  }
  out->clear();
  const int64_t n = t.num_elements();
  out->reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) {
    out->push_back(t.dtype() == DType::kInt32 ? t.data<int32_t>()[i] : t.data<int64_t>()[i]);
  }
  return absl::OkStatus();
}

absl::Status CanonicalAxis(const KernelContext& ctx, int64_t axis, int rank, int64_t* out) {
  if (axis < -rank || axis >= rank) {
    return KernelError(ctx, "axis %d is out of range [%d, %d) for a rank-%d input", axis, -rank,
                       rank, rank);
  }
  *out = axis < 0 ? axis + rank : axis;
  return absl::OkStatus();
}

absl::Status CheckOutputShape(const KernelContext& ctx, DType dtype,
                              const std::vector<int64_t>& dims, absl::string_view what) {
  int64_t bytes = 0;
  if (!TensorBytes(dtype, dims, &bytes)) {
    return KernelError(ctx, "%s shape %s has a negative dim or more elements than int64 holds",
                       what, DimsString(dims));
  }
  absl::Status s =
      CheckAllocation(bytes, absl::StrCat(what, " ", DTypeName(dtype), DimsString(dims)),
                      absl::StrCat("node '", ctx.node().name(), "' (", ctx.node().op(), ")"));
  if (s.ok()) return s;
  return AttachNode(std::move(s), ctx.node().name(), ctx.node().op());
}

void ParallelFor(const KernelContext& ctx, int64_t n, int64_t cost_per_unit,
                 const std::function<void(int64_t, int64_t)>& fn) {
  if (n <= 0) return;
  if (ctx.pool() == nullptr) {
    fn(0, n);
    return;
  }
  // Shards on this thread must not throw AllocationRefused while others still run: they
  // charge the budget without refusing (the kernel's outputs were allocated before).
  ScopedRunControl no_throw(CurrentRunControl(), AllocationMode::kCharge);
  ctx.pool()->ParallelFor(n, cost_per_unit, fn);
}

absl::StatusOr<std::vector<int64_t>> ResizeOutputSize(const KernelContext& ctx) {
  const Tensor& in = ctx.input(0);
  if (in.rank() != 4) {
    return KernelError(ctx, "input must be 4-dimensional, got %s", in.ShapeString());
  }
  std::vector<int64_t> size;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(1), "size", &size));
  if (ctx.input(1).rank() != 1 || size.size() != 2) {
    return KernelError(ctx, "shape_t must be 1-dimensional with 2 elements, got %s",
                       ctx.input(1).ShapeString());
  }
  if (size[0] <= 0 || size[1] <= 0) {
    return KernelError(ctx, "output dimensions must be positive, got %s", DimsString(size));
  }
  if (in.dim(1) == 0 || in.dim(2) == 0) {
    return KernelError(ctx, "input image must be of non-zero size, got %s", in.ShapeString());
  }
  return size;
}

absl::StatusOr<tf::StridedPlan> PlanStridedSliceInputs(const KernelContext& ctx,
                                                       const std::vector<int64_t>& shape) {
  std::vector<int64_t> begin, end, strides;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(1), "begin", &begin));
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(2), "end", &end));
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(3), "strides", &strides));
  if (ctx.input(1).rank() != 1 || ctx.input(2).rank() != 1 || ctx.input(3).rank() != 1 ||
      end.size() != begin.size() || strides.size() != begin.size()) {
    return KernelError(ctx,
                       "Expected begin, end, and strides to be 1D equal size tensors, but got "
                       "shapes %s, %s, and %s instead",
                       ctx.input(1).ShapeString(), ctx.input(2).ShapeString(),
                       ctx.input(3).ShapeString());
  }
  TFJIT_ASSIGN_OR_RETURN(tf::StridedMasks masks, tf::GetStridedMasks(ctx.node()));
  tf::StridedPlan plan;
  const std::string error = tf::PlanStridedSlice(shape, begin, end, strides, masks, &plan);
  if (!error.empty()) return NodeError(ctx, error);
  return plan;
}

absl::StatusOr<VarTarget> VariableTarget(const KernelContext& ctx, int i) {
  VarTarget t;
  if (ctx.input(i).dtype() == DType::kResource) {
    absl::StatusOr<const ResourceHandle*> h =
        GetResourceHandle(ctx.input(i), absl::StrCat("input ", i, " (resource)"));
    if (!h.ok()) return NodeError(ctx, h.status().message());
    t.handle = *h;
    t.var = (*h)->var();
    t.name = (*h)->name();
    return t;
  }
  const VarRef* ref = ctx.input(i).object_as<VarRef>();
  if (ref == nullptr) {
    return KernelError(ctx, "input %d must be a variable reference (a VariableV2 output)", i);
  }
  t.var = ref->var();
  t.name = ref->name();
  return t;
}

absl::StatusOr<Tensor> InitializedValue(const VarTarget& target) {
  Tensor value = target.var->Get();
  if (value.valid()) return value;
  if (target.handle != nullptr) {
    return VariableNotFoundError(target.handle->container(), target.handle->name());
  }
  return FailedPrecondition("Attempting to use uninitialized value %s", target.name);
}

absl::Status ResizeFlags(const KernelContext& ctx, bool* align, bool* half_pixel) {
  TFJIT_ASSIGN_OR_RETURN(*align, tf::GetBoolAttrOr(ctx.node(), "align_corners", false));
  TFJIT_ASSIGN_OR_RETURN(*half_pixel, tf::GetBoolAttrOr(ctx.node(), "half_pixel_centers", false));
  if (*align && *half_pixel) {
    return KernelError(ctx, "If half_pixel_centers is True, align_corners must be False.");
  }
  return absl::OkStatus();
}

}  // namespace tfjit::runtime
