// Fallback kernels of the xla family (docs/DESIGN.md, "Op families"): XlaDotV2/XlaDot
// (XLA's DotGeneral) and XlaConvV2/XlaConv (ConvGeneralDilated with feature groups), on the
// dimension numbers frontend/xla_dims.h decodes and validates for both the kernels and the
// lowerings. The inputs are converted to the output type (preferred_element_type for the V2
// ops) and accumulated in double for floating outputs, in int64 (wrapping to the output
// width, as XLA's integer arithmetic does) for integer ones.
#include <cstdint>
#include <vector>

#include "frontend/attr.h"
#include "frontend/xla_dims.h"
#include "runtime/kernels/gather_util.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

// The output dtype: preferred_element_type (V2), else T.
absl::StatusOr<DType> OutputType(const KernelContext& ctx) {
  if (ctx.node().op() == "XlaDotV2" || ctx.node().op() == "XlaConvV2") {
    return tf::GetTypeAttr(ctx.node(), "preferred_element_type");
  }
  return ctx.input(0).dtype();
}

// `t`'s elements as the accumulator type A (double or int64).
template <typename A>
std::vector<A> Widen(const Tensor& t) {
  std::vector<A> v(static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if constexpr (std::is_same_v<A, double>) {
      v[static_cast<size_t>(i)] = ElementAsDouble(t, i);
    } else {
      v[static_cast<size_t>(i)] = ElementAsInt64(t, i);
    }
  }
  return v;
}

// Writes out[i] = acc(i) for every output element, converted to out's dtype; acc runs in
// the accumulator type A (double for floating outputs, int64 for integer ones).
template <typename F>
absl::Status Produce(KernelContext& ctx, Tensor& out, F&& acc) {
  const bool ok = DispatchReal(out.dtype(), [&](auto tag) {
    using T = decltype(tag);
    using A = std::conditional_t<kIsFloat<T>, double, int64_t>;
    T* o = out.data<T>();
    const std::vector<A> lhs = Widen<A>(ctx.input(0));
    const std::vector<A> rhs = Widen<A>(ctx.input(1));
    ParallelFor(ctx, out.num_elements(), 64, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) {
        const A sum = acc(i, lhs.data(), rhs.data());
        if constexpr (kIsFloat<T>) {
          o[i] = static_cast<T>(static_cast<ComputeType<T>>(sum));
        } else {
          // Two's-complement wrap to T's width, as XLA's integer arithmetic does.
          o[i] = static_cast<T>(static_cast<uint64_t>(sum));
        }
      }
    });
  });
  if (!ok) return UnsupportedDType(ctx, out.dtype(), "real number types");
  return absl::OkStatus();
}

// Row-major multi-index of flat position `k` in `dims`.
std::vector<int64_t> Unflatten(int64_t k, const std::vector<int64_t>& dims) {
  std::vector<int64_t> idx(dims.size());
  for (size_t d = dims.size(); d-- > 0;) {
    idx[d] = dims[d] == 0 ? 0 : k % dims[d];
    if (dims[d] != 0) k /= dims[d];
  }
  return idx;
}

absl::Status XlaDotKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& lhs = ctx.input(0);
  const Tensor& rhs = ctx.input(1);
  TFJIT_ASSIGN_OR_RETURN(tf::XlaDotPlan plan, tf::PlanXlaDot(ctx.node(), lhs.dims(), rhs.dims()));
  TFJIT_ASSIGN_OR_RETURN(DType out_type, OutputType(ctx));
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, out_type, plan.out_dims));
  const std::vector<int64_t> ls = RowStrides(lhs.dims()), rs = RowStrides(rhs.dims());
  // The contracted positions: one (lhs, rhs) offset pair per contracting multi-index.
  std::vector<int64_t> kdims;
  for (int64_t d : plan.lhs_contracting) kdims.push_back(lhs.dim(static_cast<int>(d)));
  int64_t k_count = 1;
  for (int64_t d : kdims) k_count *= d;
  std::vector<int64_t> k_lhs(static_cast<size_t>(k_count)), k_rhs(static_cast<size_t>(k_count));
  for (int64_t k = 0; k < k_count; ++k) {
    const std::vector<int64_t> idx = Unflatten(k, kdims);
    for (size_t j = 0; j < idx.size(); ++j) {
      k_lhs[static_cast<size_t>(k)] += idx[j] * ls[static_cast<size_t>(plan.lhs_contracting[j])];
      k_rhs[static_cast<size_t>(k)] += idx[j] * rs[static_cast<size_t>(plan.rhs_contracting[j])];
    }
  }
  // Output dim i reads lhs dim / rhs dim (or both, for batch dims) at stride.
  std::vector<int64_t> out_lhs_stride, out_rhs_stride;
  for (size_t j = 0; j < plan.lhs_batch.size(); ++j) {
    out_lhs_stride.push_back(ls[static_cast<size_t>(plan.lhs_batch[j])]);
    out_rhs_stride.push_back(rs[static_cast<size_t>(plan.rhs_batch[j])]);
  }
  for (int64_t d : plan.lhs_free) {
    out_lhs_stride.push_back(ls[static_cast<size_t>(d)]);
    out_rhs_stride.push_back(0);
  }
  for (int64_t d : plan.rhs_free) {
    out_lhs_stride.push_back(0);
    out_rhs_stride.push_back(rs[static_cast<size_t>(d)]);
  }
  Tensor out(out_type, plan.out_dims);
  TFJIT_RETURN_IF_ERROR(Produce(ctx, out, [&](int64_t i, const auto* l, const auto* r) {
    const std::vector<int64_t> idx = Unflatten(i, plan.out_dims);
    int64_t lo = 0, ro = 0;
    for (size_t d = 0; d < idx.size(); ++d) {
      lo += idx[d] * out_lhs_stride[d];
      ro += idx[d] * out_rhs_stride[d];
    }
    std::remove_const_t<std::remove_pointer_t<decltype(l)>> sum = 0;
    for (int64_t k = 0; k < k_count; ++k) {
      sum += l[lo + k_lhs[static_cast<size_t>(k)]] * r[ro + k_rhs[static_cast<size_t>(k)]];
    }
    return sum;
  }));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status XlaConvKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 7));
  const Tensor& lhs = ctx.input(0);
  const Tensor& rhs = ctx.input(1);
  std::vector<int64_t> strides, padding, lhs_dilation, rhs_dilation, groups;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(2), "window_strides", &strides));
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(3).Reshaped({ctx.input(3).num_elements()}),
                                        "padding", &padding));
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(4), "lhs_dilation", &lhs_dilation));
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(5), "rhs_dilation", &rhs_dilation));
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(6), "feature_group_count", &groups));
  if (groups.size() != 1) {
    return KernelError(ctx, "feature_group_count must be a scalar, got %s",
                       ctx.input(6).ShapeString());
  }
  TFJIT_ASSIGN_OR_RETURN(tf::XlaConvPlan plan,
                         tf::PlanXlaConv(ctx.node(), lhs.dims(), rhs.dims(), strides, padding,
                                         lhs_dilation, rhs_dilation, groups[0]));
  TFJIT_ASSIGN_OR_RETURN(DType out_type, OutputType(ctx));
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, out_type, plan.out_dims));
  const std::vector<int64_t> ls = RowStrides(lhs.dims()), rs = RowStrides(rhs.dims());
  const size_t n = plan.window.size();
  const int64_t k_in = rhs.dim(static_cast<int>(plan.kernel_input_feature));
  const int64_t per_group =
      rhs.dim(static_cast<int>(plan.kernel_output_feature)) / plan.feature_group_count;
  std::vector<int64_t> window_dims;
  for (const tf::XlaConvWindow& w : plan.window) window_dims.push_back(w.size);
  int64_t window_count = 1;
  for (int64_t d : window_dims) window_count *= d;
  // The window's taps (kernel spatial indices), once rather than per output element.
  std::vector<std::vector<int64_t>> taps;
  for (int64_t w = 0; w < window_count; ++w) taps.push_back(Unflatten(w, window_dims));
  Tensor out(out_type, plan.out_dims);
  TFJIT_RETURN_IF_ERROR(Produce(ctx, out, [&](int64_t i, const auto* l, const auto* r) {
    const std::vector<int64_t> o = Unflatten(i, plan.out_dims);
    const int64_t b = o[static_cast<size_t>(plan.output_batch)];
    const int64_t f = o[static_cast<size_t>(plan.output_feature)];
    const int64_t first_feature = (f / per_group) * k_in;
    std::remove_const_t<std::remove_pointer_t<decltype(l)>> sum = 0;
    for (const std::vector<int64_t>& k : taps) {
      int64_t lo = b * ls[static_cast<size_t>(plan.input_batch)];
      int64_t ro = f * rs[static_cast<size_t>(plan.kernel_output_feature)];
      bool inside = true;
      for (size_t s = 0; s < n && inside; ++s) {
        const tf::XlaConvWindow& win = plan.window[s];
        // Position in the padded, lhs-dilated input; a real element only at multiples of
        // the dilation.
        const int64_t pos = o[static_cast<size_t>(plan.output_spatial[s])] * win.stride -
                            win.pad_lo + k[s] * win.rhs_dilation;
        const int64_t extent = lhs.dim(static_cast<int>(plan.input_spatial[s]));
        if (pos < 0 || pos % win.lhs_dilation != 0 || pos / win.lhs_dilation >= extent) {
          inside = false;
          break;
        }
        lo += (pos / win.lhs_dilation) * ls[static_cast<size_t>(plan.input_spatial[s])];
        ro += k[s] * rs[static_cast<size_t>(plan.kernel_spatial[s])];
      }
      if (!inside) continue;
      for (int64_t c = 0; c < k_in; ++c) {
        sum += l[lo + (first_feature + c) * ls[static_cast<size_t>(plan.input_feature)]] *
               r[ro + c * rs[static_cast<size_t>(plan.kernel_input_feature)]];
      }
    }
    return sum;
  }));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

}  // namespace

void RegisterXlaKernels(KernelRegistry& registry) {
  registry.Register("XlaDotV2", &XlaDotKernel);
  registry.Register("XlaDot", &XlaDotKernel);
  registry.Register("XlaConvV2", &XlaConvKernel);
  registry.Register("XlaConv", &XlaConvKernel);
}

}  // namespace tfjit::runtime
