// Shape-changing copies and shape queries: Tile, Pad, PadV2, MirrorPad, ReverseV2,
// BroadcastTo, Size, Rank, ShapeN, Range and RaggedRange.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "core/range.h"
#include "frontend/attr.h"
#include "runtime/kernels/gather_util.h"

namespace tfjit::runtime {
namespace {

absl::Status TileKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> mult;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(1), "multiples", &mult));
  if (ctx.input(1).rank() != 1 || static_cast<int>(mult.size()) != in.rank()) {
    return KernelError(ctx,
                       "Expected multiples argument to be a vector of length %d but got length "
                       "%d (input is %s)",
                       in.rank(), ctx.input(1).num_elements(), in.ShapeString());
  }
  // The output's size first: the offset tables below are as long as its dims.
  std::vector<int64_t> tiled(mult.size());
  for (size_t k = 0; k < mult.size(); ++k) {
    if (mult[k] < 0) {
      return KernelError(ctx, "Expected multiples[%d] >= 0, but got %d", k, mult[k]);
    }
    if (__builtin_mul_overflow(in.dim(static_cast<int>(k)), mult[k], &tiled[k])) tiled[k] = -1;
  }
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, in.dtype(), tiled));
  if (std::find(tiled.begin(), tiled.end(), 0) != tiled.end()) {
    // Empty: no offset tables (a huge dim next to a zero one would still size them).
    ctx.set_output(0, Tensor(in.dtype(), tiled));
    return absl::OkStatus();
  }
  const std::vector<int64_t> strides = RowStrides(in.dims());
  std::vector<std::vector<int64_t>> offsets;
  std::vector<int64_t> out_dims;
  for (int d = 0; d < in.rank(); ++d) {
    const size_t k = static_cast<size_t>(d);
    const int64_t n = in.dim(d);
    std::vector<int64_t> o(static_cast<size_t>(n * mult[k]));
    for (size_t i = 0; i < o.size(); ++i) o[i] = (static_cast<int64_t>(i) % n) * strides[k];
    out_dims.push_back(n * mult[k]);
    offsets.push_back(std::move(o));
  }
  Tensor out(in.dtype(), out_dims);
  GatherByOffsets(ctx, in, offsets, nullptr, out);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// Reads paddings ([rank, 2], int32/int64, non-negative) into before/after pairs.
absl::Status ReadPaddings(const KernelContext& ctx, const Tensor& in, const Tensor& p,
                          std::vector<std::pair<int64_t, int64_t>>* pads) {
  if ((p.dtype() != DType::kInt32 && p.dtype() != DType::kInt64) || p.rank() != 2 ||
      p.dim(1) != 2 || p.dim(0) != in.rank()) {
    return KernelError(ctx,
                       "paddings must be an int32/int64 matrix of shape [%d, 2] (the input's "
                       "rank by before/after), got %s; input is %s",
                       in.rank(), p.ShapeString(), in.ShapeString());
  }
  pads->clear();
  for (int d = 0; d < in.rank(); ++d) {
    const int64_t before = ElementAsInt64(p, 2 * d), after = ElementAsInt64(p, 2 * d + 1);
    if (before < 0 || after < 0) {
      return KernelError(ctx, "Paddings must be non-negative: %d %d (dimension %d)", before, after,
                         d);
    }
    pads->push_back({before, after});
  }
  return absl::OkStatus();
}

// Pad (zeros) and PadV2 (a scalar constant_values).
absl::Status PadKernel(KernelContext& ctx) {
  const bool v2 = ctx.node().op() == "PadV2";
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, v2 ? 3 : 2));
  const Tensor& in = ctx.input(0);
  std::vector<std::pair<int64_t, int64_t>> pads;
  TFJIT_RETURN_IF_ERROR(ReadPaddings(ctx, in, ctx.input(1), &pads));
  Tensor fill(in.dtype(), {});
  if (v2) {
    const Tensor& c = ctx.input(2);
    if (c.dtype() != in.dtype() || c.num_elements() != 1) {
      return KernelError(ctx, "constant_values must be a scalar of the input's dtype; got %s",
                         c.ShapeString());
    }
    fill = c;
  }
  // The output's size first: the offset tables below are as long as its dims.
  std::vector<int64_t> padded(static_cast<size_t>(in.rank()));
  for (int d = 0; d < in.rank(); ++d) {
    const auto [before, after] = pads[static_cast<size_t>(d)];
    int64_t& size = padded[static_cast<size_t>(d)];
    if (__builtin_add_overflow(before, after, &size) ||
        __builtin_add_overflow(size, in.dim(d), &size)) {
      size = -1;
    }
  }
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, in.dtype(), padded));
  if (std::find(padded.begin(), padded.end(), 0) != padded.end()) {
    ctx.set_output(0, Tensor(in.dtype(), padded));
    return absl::OkStatus();
  }
  const std::vector<int64_t> strides = RowStrides(in.dims());
  std::vector<std::vector<int64_t>> offsets;
  std::vector<int64_t> out_dims;
  for (int d = 0; d < in.rank(); ++d) {
    const auto [before, after] = pads[static_cast<size_t>(d)];
    const int64_t n = in.dim(d);
    std::vector<int64_t> o(static_cast<size_t>(before + n + after), kFillOffset);
    for (int64_t i = 0; i < n; ++i)
      o[static_cast<size_t>(before + i)] = i * strides[static_cast<size_t>(d)];
    out_dims.push_back(static_cast<int64_t>(o.size()));
    offsets.push_back(std::move(o));
  }
  Tensor out(in.dtype(), out_dims);
  GatherByOffsets(ctx, in, offsets, fill.raw_data(), out);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// MirrorPad: REFLECT mirrors without the edge (pads < dim), SYMMETRIC with it (pads <= dim).
absl::Status MirrorPadKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  TFJIT_ASSIGN_OR_RETURN(std::string mode, tf::GetStringAttr(ctx.node(), "mode"));
  if (mode != "REFLECT" && mode != "SYMMETRIC") {
    return KernelError(ctx, "mode must be REFLECT or SYMMETRIC, got '%s'", mode);
  }
  const bool reflect = mode == "REFLECT";
  std::vector<std::pair<int64_t, int64_t>> pads;
  TFJIT_RETURN_IF_ERROR(ReadPaddings(ctx, in, ctx.input(1), &pads));
  const std::vector<int64_t> strides = RowStrides(in.dims());
  std::vector<std::vector<int64_t>> offsets;
  std::vector<int64_t> out_dims;
  for (int d = 0; d < in.rank(); ++d) {
    const auto [before, after] = pads[static_cast<size_t>(d)];
    const int64_t n = in.dim(d);
    const int64_t limit = reflect ? n - 1 : n;
    if (before > limit || after > limit) {
      return KernelError(ctx,
                         "paddings must be %s the dimension size: %d, %d %s %d (dimension %d "
                         "of %s, mode %s)",
                         reflect ? "less than" : "no greater than", before, after,
                         reflect ? "not less than" : "greater than", n, d, in.ShapeString(), mode);
    }
    std::vector<int64_t> o;
    for (int64_t i = -before; i < n + after; ++i) {
      int64_t p = i;
      if (p < 0) p = reflect ? -p : -p - 1;
      if (p >= n) p = reflect ? 2 * n - 2 - p : 2 * n - 1 - p;
      o.push_back(p * strides[static_cast<size_t>(d)]);
    }
    out_dims.push_back(static_cast<int64_t>(o.size()));
    offsets.push_back(std::move(o));
  }
  Tensor out(in.dtype(), out_dims);
  GatherByOffsets(ctx, in, offsets, nullptr, out);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status ReverseV2Kernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> axes;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(1), "axis", &axes));
  std::vector<bool> reversed(static_cast<size_t>(in.rank()), false);
  for (int64_t a : axes) {
    int64_t axis;
    TFJIT_RETURN_IF_ERROR(CanonicalAxis(ctx, a, in.rank(), &axis));
    if (reversed[static_cast<size_t>(axis)]) {
      return KernelError(ctx, "axis %d specified more than once.", axis);
    }
    reversed[static_cast<size_t>(axis)] = true;
  }
  const std::vector<int64_t> strides = RowStrides(in.dims());
  std::vector<std::vector<int64_t>> offsets;
  for (int d = 0; d < in.rank(); ++d) {
    const size_t k = static_cast<size_t>(d);
    offsets.push_back(reversed[k] ? StepOffsets(in.dim(d) - 1, -1, in.dim(d), strides[k])
                                  : StepOffsets(0, 1, in.dim(d), strides[k]));
  }
  Tensor out(in.dtype(), in.dims());
  GatherByOffsets(ctx, in, offsets, nullptr, out);
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status BroadcastToKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2));
  const Tensor& in = ctx.input(0);
  std::vector<int64_t> target;
  TFJIT_RETURN_IF_ERROR(ReadIndexVector(ctx, ctx.input(1), "shape", &target));
  const int rank = static_cast<int>(target.size());
  bool ok = in.rank() <= rank;
  for (int64_t t : target) ok = ok && t >= 0;
  for (int d = 0; ok && d < rank; ++d) {
    const int k = d - (rank - in.rank());  // the aligned input dim, < 0 when absent
    const int64_t t = target[static_cast<size_t>(d)];
    if (k >= 0 && in.dim(k) != t && in.dim(k) != 1) ok = false;
  }
  if (!ok) {
    return KernelError(ctx,
                       "Unable to broadcast tensor of shape %s to tensor of shape %s; aligned "
                       "from the right, each input dimension must equal the target's or be 1",
                       in.ShapeString(), DimsString(target));
  }
  // The output first: a target no budget holds is refused here, before the per-dimension
  // offset tables (as long as the target's dims) are built.
  Tensor out(in.dtype(), target);
  if (out.num_elements() > 0) {
    const std::vector<int64_t> strides = RowStrides(in.dims());
    std::vector<std::vector<int64_t>> offsets;
    for (int d = 0; d < rank; ++d) {
      const int k = d - (rank - in.rank());
      const bool spread = k < 0 || in.dim(k) == 1;
      offsets.push_back(StepOffsets(0, spread ? 0 : 1, target[static_cast<size_t>(d)],
                                    k < 0 ? 0 : strides[static_cast<size_t>(k)]));
    }
    GatherByOffsets(ctx, in, offsets, nullptr, out);
  }
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

// A scalar or vector of out_type (int32 or int64) holding `values`.
absl::StatusOr<Tensor> IndexOutput(const KernelContext& ctx, const std::vector<int64_t>& values,
                                   bool scalar) {
  TFJIT_ASSIGN_OR_RETURN(DType type, tf::GetTypeAttr(ctx.node(), "out_type"));
  if (type != DType::kInt32 && type != DType::kInt64) {
    return KernelError(ctx, "out_type must be int32 or int64, got %s", DTypeName(type));
  }
  Tensor out(type, scalar ? std::vector<int64_t>{}
                          : std::vector<int64_t>{static_cast<int64_t>(values.size())});
  for (size_t i = 0; i < values.size(); ++i) {
    if (type == DType::kInt64) {
      out.data<int64_t>()[i] = values[i];
      continue;
    }
    if (values[i] > std::numeric_limits<int32_t>::max()) {
      return KernelError(ctx,
                         "Number of elements was larger than representable by 32-bit output "
                         "type (%d); set out_type to int64",
                         values[i]);
    }
    out.data<int32_t>()[i] = static_cast<int32_t>(values[i]);
  }
  return out;
}

absl::Status SizeKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  TFJIT_ASSIGN_OR_RETURN(Tensor out, IndexOutput(ctx, {ctx.input(0).num_elements()}, true));
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status RankKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 1));
  ctx.set_output(0, Tensor::FromVector<int32_t>(DType::kInt32, {}, {ctx.input(0).rank()}));
  return absl::OkStatus();
}

absl::Status ShapeNKernel(KernelContext& ctx) {
  for (int i = 0; i < ctx.num_inputs(); ++i) {
    TFJIT_ASSIGN_OR_RETURN(Tensor out, IndexOutput(ctx, ctx.input(i).dims(), false));
    ctx.set_output(i, std::move(out));
  }
  return absl::OkStatus();
}

// Range(start, limit, delta): core/range.h, shared with the lowering.
template <typename T>
absl::Status RangeTyped(KernelContext& ctx) {
  const T start = ctx.input(0).data<T>()[0];
  const T limit = ctx.input(1).data<T>()[0];
  const T delta = ctx.input(2).data<T>()[0];
  absl::StatusOr<int64_t> n = range::Size(start, limit, delta);
  if (!n.ok()) return KernelError(ctx, "%s", n.status().message());
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, DTypeOf<T>::value, {*n}));
  Tensor out(DTypeOf<T>::value, {*n});
  range::Fill(start, delta, *n, out.data<T>());
  ctx.set_output(0, std::move(out));
  return absl::OkStatus();
}

absl::Status RangeKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const DType t = ctx.input(0).dtype();
  for (int i = 0; i < 3; ++i) {
    if (ctx.input(i).dtype() != t || ctx.input(i).rank() != 0) {
      return KernelError(ctx, "start, limit and delta must be scalars of one dtype; got %s, %s, %s",
                         ctx.input(0).ShapeString(), ctx.input(1).ShapeString(),
                         ctx.input(2).ShapeString());
    }
  }
  switch (t) {
    case DType::kInt32:
      return RangeTyped<int32_t>(ctx);
    case DType::kInt64:
      return RangeTyped<int64_t>(ctx);
    case DType::kFloat32:
      return RangeTyped<float>(ctx);
    case DType::kFloat64:
      return RangeTyped<double>(ctx);
    case DType::kFloat16:
      return RangeTyped<half>(ctx);
    case DType::kBFloat16:
      return RangeTyped<bfloat16>(ctx);
    default:
      return UnsupportedDType(ctx, t, "int32, int64, float16, bfloat16, float32, float64");
  }
}

// RaggedRange: row i holds starts[i], starts[i] + deltas[i], ... below (above, for negative
// deltas) limits[i]; scalar inputs broadcast. Row sizes as TF computes them: ceil((limit -
// start) / delta) for floats, exact integer division rounded up for integers, at least 0.
absl::Status RaggedRangeKernel(KernelContext& ctx) {
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 3));
  const Tensor* in[3] = {&ctx.input(0), &ctx.input(1), &ctx.input(2)};
  int64_t rows = 1;
  bool any_vector = false;
  for (const Tensor* t : in) {
    if (t->rank() > 1)
      return KernelError(ctx, "starts, limits and deltas must be scalars or vectors");
    if (t->rank() == 1) {
      if (any_vector && t->dim(0) != rows) {
        return KernelError(ctx, "starts, limits, and deltas must have the same shape");
      }
      rows = t->dim(0);
      any_vector = true;
    }
  }
  TFJIT_ASSIGN_OR_RETURN(DType split_type, tf::GetTypeAttr(ctx.node(), "Tsplits"));
  auto at = [&](const Tensor* t, int64_t i) { return t->rank() == 0 ? 0 : i; };
  std::vector<int64_t> sizes(static_cast<size_t>(rows));
  int64_t total = 0;
  for (int64_t i = 0; i < rows; ++i) {
    int64_t size = 0;
    if (IsFloatingDType(in[0]->dtype())) {
      const double s = ElementAsDouble(*in[0], at(in[0], i));
      const double l = ElementAsDouble(*in[1], at(in[1], i));
      const double d = ElementAsDouble(*in[2], at(in[2], i));
      if (d == 0) return KernelError(ctx, "Requires delta != 0");
      const double c = std::ceil((l - s) / d);
      if (!(c < 9e18)) return KernelError(ctx, "Requires ((limit - start) / delta) <= 9e18");
      size = c > 0 ? static_cast<int64_t>(c) : 0;
    } else {
      const int64_t s = ElementAsInt64(*in[0], at(in[0], i));
      const int64_t l = ElementAsInt64(*in[1], at(in[1], i));
      const int64_t d = ElementAsInt64(*in[2], at(in[2], i));
      if (d == 0) return KernelError(ctx, "Requires delta != 0");
      if ((d > 0 && l > s) || (d < 0 && l < s)) {
        const int64_t span = d > 0 ? l - s : s - l, step = d > 0 ? d : -d;
        size = (span + step - 1) / step;
      }
    }
    sizes[static_cast<size_t>(i)] = size;
    total += size;
  }
  TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, in[0]->dtype(), {total}, "rt_dense_values"));
  Tensor splits(split_type, {rows + 1});
  Tensor values(in[0]->dtype(), {total});
  int64_t pos = 0;
  for (int64_t i = 0; i <= rows; ++i) {
    if (split_type == DType::kInt32) {
      splits.data<int32_t>()[i] = static_cast<int32_t>(pos);
    } else {
      splits.data<int64_t>()[i] = pos;
    }
    if (i == rows) break;
    const double s = ElementAsDouble(*in[0], at(in[0], i));
    const double d = ElementAsDouble(*in[2], at(in[2], i));
    const int64_t si = ElementAsInt64(*in[0], at(in[0], i));
    const int64_t di = ElementAsInt64(*in[2], at(in[2], i));
    for (int64_t k = 0; k < sizes[static_cast<size_t>(i)]; ++k, ++pos) {
      if (IsFloatingDType(in[0]->dtype())) {
        // TF accumulates by repeated addition in T.
        DispatchFloat(values.dtype(), [&](auto tag) {
          using T = decltype(tag);
          values.data<T>()[pos] =
              k == 0 ? static_cast<T>(s)
                     : static_cast<T>(static_cast<ComputeType<T>>(values.data<T>()[pos - 1]) +
                                      static_cast<ComputeType<T>>(static_cast<T>(d)));
        });
      } else if (values.dtype() == DType::kInt32) {
        values.data<int32_t>()[pos] = static_cast<int32_t>(si + k * di);
      } else {
        values.data<int64_t>()[pos] = si + k * di;
      }
    }
  }
  ctx.set_output(0, std::move(splits));
  ctx.set_output(1, std::move(values));
  return absl::OkStatus();
}

}  // namespace

void RegisterShapeKernels(KernelRegistry& registry) {
  registry.Register("Tile", &TileKernel);
  registry.Register("Pad", &PadKernel);
  registry.Register("PadV2", &PadKernel);
  registry.Register("MirrorPad", &MirrorPadKernel);
  registry.Register("ReverseV2", &ReverseV2Kernel);
  registry.Register("BroadcastTo", &BroadcastToKernel);
  registry.Register("Size", &SizeKernel);
  registry.Register("Rank", &RankKernel);
  registry.Register("ShapeN", &ShapeNKernel);
  registry.Register("Range", &RangeKernel);
  registry.Register("RaggedRange", &RaggedRangeKernel);
}

}  // namespace tfjit::runtime
