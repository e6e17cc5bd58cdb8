// Lowerings of the image and index ops of detection/pose models (NHWC): MaxPool and AvgPool
// as reduce-window, ResizeBilinear as gathers and lerps along W then H (TF's arithmetic),
// DepthToSpace/SpaceToDepth and SpaceToBatchND/BatchToSpaceND as pad/reshape/transpose/slice,
// GatherNd as gather, TopKV2 as the custom-call tfjit.top_k (HLO has no sort). Ops whose output
// shape depends on input values (NMS, SparseToDense, Where) get entries that keep them in the
// runtime with a reason for `tfjit explain`.
#include <algorithm>
#include <cmath>
#include <limits>
#include <utility>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/run_control.h"
#include "core/status.h"
#include "core/top_k.h"
#include "frontend/attr.h"
#include "frontend/conv_attrs.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::Instruction;
using hlo::Opcode;

std::string Dims(const std::vector<int64_t>& d) { return absl::StrCat("[", absl::StrJoin(d, ","), "]"); }

// ---- Pooling ----

// The NHWC or NCHW reduce-window of a MaxPool/AvgPool node (geometry from frontend/conv_attrs.h, as
// the fallback kernel); `out` gets the output's H and W. reduce-window's own size rule,
// (in + pads - k) / s + 1 (0 when the window does not fit), gives the same sizes.
// An NCHW node pools dims 2 and 3 (`*h_dim` gets the H dim: 1 for NHWC, 2 for NCHW).
absl::StatusOr<std::vector<hlo::WindowDim>> PoolWindow(const tf::Node& node,
                                                       const hlo::Shape& x,
                                                       std::vector<int64_t>* out,
                                                       int64_t* h_dim) {
  TFJIT_ASSIGN_OR_RETURN(tf::WindowAttrs a,
                         tf::ReadPoolAttrs(node, x.dims(), tf::Layouts::kNhwcOrNchw));
  const std::vector<int64_t> nhwc = a.nchw ? tf::NchwToNhwc(x.dims()) : x.dims();
  TFJIT_ASSIGN_OR_RETURN(tf::Window2D geometry,
                         tf::ComputeWindow(node, a, nhwc[1], nhwc[2], a.ksize[1], a.ksize[2]));
  *h_dim = a.nchw ? 2 : 1;
  const tf::SpatialDim* spatial[] = {&geometry.h, &geometry.w};
  std::vector<hlo::WindowDim> window(4);
  out->assign(2, 0);
  for (size_t i = 0; i < 2; ++i) {
    hlo::WindowDim& w = window[i + static_cast<size_t>(*h_dim)];
    w.size = spatial[i]->k;
    w.stride = spatial[i]->stride;
    w.pad_lo = spatial[i]->pad_before;
    w.pad_hi = spatial[i]->pad_after;
    (*out)[i] = spatial[i]->out;
  }
  return window;
}

// The smallest value of `t`: max's identity (-inf for floats).
double Lowest(DType t) {
  switch (t) {
    case DType::kInt8: return std::numeric_limits<int8_t>::lowest();
    case DType::kInt16: return std::numeric_limits<int16_t>::lowest();
    case DType::kInt32: return std::numeric_limits<int32_t>::lowest();
    case DType::kInt64: return static_cast<double>(std::numeric_limits<int64_t>::lowest());
    default: return IsFloatingDType(t) ? -std::numeric_limits<double>::infinity() : 0.0;
  }
}

absl::Status LowerMaxPool(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  std::vector<int64_t> out;
  int64_t h_dim = 1;
  TFJIT_ASSIGN_OR_RETURN(std::vector<hlo::WindowDim> window,
                         PoolWindow(node, x->shape(), &out, &h_dim));
  const DType t = x->shape().element_type();
  TFJIT_ASSIGN_OR_RETURN(Instruction * init, ctx.Splat(t, Lowest(t), {}));
  hlo::Attributes attrs;
  attrs.window = std::move(window);
  hlo::Computation* max = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kMaximum, t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * r,
                         ctx.b().Add(Opcode::kReduceWindow, {x, init}, std::move(attrs), {max}));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// Sum over the window (padding cells add 0), divided by the count of non-padding cells of
// each output position (a constant). 16-bit floats sum in f32 like the kernel.
absl::Status LowerAvgPool(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  std::vector<int64_t> out;
  int64_t h_dim = 1;
  TFJIT_ASSIGN_OR_RETURN(std::vector<hlo::WindowDim> window,
                         PoolWindow(node, x->shape(), &out, &h_dim));
  const DType t = x->shape().element_type();
  const DType acc_t = (t == DType::kFloat16 || t == DType::kBFloat16) ? DType::kFloat32 : t;
  if (acc_t != t) {
    TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Convert(x, acc_t));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(acc_t, 0.0, {}));
  Tensor counts(acc_t, {out[0], out[1]});
  for (int64_t i = 0; i < out[0]; ++i) {
    for (int64_t j = 0; j < out[1]; ++j) {
      int64_t n = 1;
      for (int d = 0; d < 2; ++d) {
        const hlo::WindowDim& w = window[static_cast<size_t>(d + h_dim)];
        const int64_t start = (d == 0 ? i : j) * w.stride - w.pad_lo;
        const int64_t in = x->shape().dim(static_cast<int>(d + h_dim));
        n *= std::min(start + w.size, in) - std::max<int64_t>(start, 0);
      }
      // A window entirely in the padding (explicit padding only) divides 0 by 1, not by 0.
      const double c = static_cast<double>(std::max<int64_t>(n, 1));
      if (acc_t == DType::kFloat64) counts.data<double>()[i * out[1] + j] = c;
      else counts.data<float>()[i * out[1] + j] = static_cast<float>(c);
    }
  }
  hlo::Attributes attrs;
  attrs.window = std::move(window);
  hlo::Computation* add = hlo::GetOrAddScalarBinaryComputation(ctx.module(), Opcode::kAdd, acc_t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * sum,
                         ctx.b().Add(Opcode::kReduceWindow, {x, zero}, std::move(attrs), {add}));
  Instruction* count = ctx.b().Constant(hlo::Literal::FromTensor(counts));
  TFJIT_ASSIGN_OR_RETURN(Instruction * countb, ctx.b().Broadcast(count, sum->shape().dims(),
                                                                {h_dim, h_dim + 1}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Binary(Opcode::kDivide, sum, countb));
  if (acc_t != t) {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Convert(r, t));
  }
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- ResizeBilinear ----

// Per output coordinate o: the two source coordinates and the weight of the upper one, as
// TF's kernel computes them (its scale, legacy or half-pixel scaler, in float).
struct Interpolation {
  Tensor lower, upper;  // s32[out]
  Tensor lerp;          // f32[out]
};

Interpolation InterpolationOf(int64_t in, int64_t out, bool align_corners, bool half_pixel) {
  const float scale = (align_corners && out > 1)
                          ? static_cast<float>(in - 1) / static_cast<float>(out - 1)
                          : static_cast<float>(in) / static_cast<float>(out);
  Interpolation r{Tensor(DType::kInt32, {out}), Tensor(DType::kInt32, {out}),
                  Tensor(DType::kFloat32, {out})};
  for (int64_t o = 0; o < out; ++o) {
    const float src = half_pixel ? (static_cast<float>(o) + 0.5f) * scale - 0.5f
                                 : static_cast<float>(o) * scale;
    const float src_floor = std::floor(src);
    r.lower.data<int32_t>()[o] =
        static_cast<int32_t>(std::max<int64_t>(static_cast<int64_t>(src_floor), 0));
    r.upper.data<int32_t>()[o] =
        static_cast<int32_t>(std::min<int64_t>(static_cast<int64_t>(std::ceil(src)), in - 1));
    r.lerp.data<float>()[o] = src - src_floor;
  }
  return r;
}

// x with dim `axis` replaced by x[..., index[k], ...] for each k (a gather).
absl::StatusOr<Instruction*> TakeAlong(LoweringContext& ctx, Instruction* x, int64_t axis,
                                       const Tensor& index) {
  hlo::Attributes attrs;
  hlo::GatherDims& g = attrs.gather;
  g.index_vector_dim = 1;
  g.start_index_map = {axis};
  g.collapsed_slice_dims = {axis};
  g.slice_sizes = x->shape().dims();
  g.slice_sizes[static_cast<size_t>(axis)] = 1;
  for (int64_t d = 0; d < x->shape().rank(); ++d) {
    if (d != axis) g.offset_dims.push_back(d);
  }
  Instruction* indices = ctx.b().Constant(hlo::Literal::FromTensor(index));
  return ctx.b().Add(Opcode::kGather, {x, indices}, std::move(attrs));
}

// a + (b - a) * lerp[k] along dim `axis`: TF's compute_lerp.
absl::StatusOr<Instruction*> Lerp(LoweringContext& ctx, Instruction* a, Instruction* b,
                                  int64_t axis, const Tensor& lerp) {
  Instruction* w = ctx.b().Constant(hlo::Literal::FromTensor(lerp));
  TFJIT_ASSIGN_OR_RETURN(Instruction * wb, ctx.b().Broadcast(w, a->shape().dims(), {axis}));
  TFJIT_ASSIGN_OR_RETURN(Instruction * diff, ctx.b().Binary(Opcode::kSubtract, b, a));
  TFJIT_ASSIGN_OR_RETURN(Instruction * scaled, ctx.b().Binary(Opcode::kMultiply, diff, wb));
  return ctx.b().Binary(Opcode::kAdd, a, scaled);
}

// TF's kernel, separably: along W first (top = tl + (tr - tl) * x_lerp for every input row),
// then along H (top + (bottom - top) * y_lerp), which is its arithmetic exactly. Each step is
// two gathers and a lerp the backends fuse into one loop; the dense interpolation matrices
// used before cost O(in) multiply-adds per output instead of two.
absl::Status LowerResizeBilinear(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(bool align, tf::GetBoolAttrOr(node, "align_corners", false));
  TFJIT_ASSIGN_OR_RETURN(bool half_pixel, tf::GetBoolAttrOr(node, "half_pixel_centers", false));
  if (align && half_pixel) {
    return InvalidArgument("node %s: If half_pixel_centers is True, align_corners must be False.",
                           node.DebugName());
  }
  const hlo::Shape& s = x->shape();
  if (s.rank() != 4) {
    return InvalidArgument("node %s: input must be 4-dimensional, got %s", node.DebugName(),
                           s.ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> size, ctx.ConstantInputAsInts(node, 1));
  if (size.size() != 2) {
    return InvalidArgument("node %s: shape_t must be 1-dimensional with 2 elements, got %s",
                           node.DebugName(), Dims(size));
  }
  if (size[0] <= 0 || size[1] <= 0) {
    return InvalidArgument("node %s: output dimensions must be positive, got %s",
                           node.DebugName(), Dims(size));
  }
  if (s.dim(1) <= 0 || s.dim(2) <= 0) {
    return InvalidArgument("node %s: input image must be of non-zero size, got %s",
                           node.DebugName(), s.ToString());
  }
  // The intermediate [N, H, OW, C] and the output [N, OH, OW, C]: a huge requested size is
  // refused before anything is built.
  const std::vector<std::pair<std::string, std::vector<int64_t>>> allocations = {
      {"the column-interpolated image", {s.dim(0), s.dim(1), size[1], s.dim(3)}},
      {"the output", {s.dim(0), size[0], size[1], s.dim(3)}}};
  for (const auto& [what, dims] : allocations) {
    int64_t bytes = -1;
    if (!TensorBytes(DType::kFloat32, dims, &bytes)) bytes = -1;
    TFJIT_RETURN_IF_ERROR(CheckAllocation(
        bytes, absl::StrCat(what, " ", Dims(dims), " of size ", Dims(size)), node.DebugName()));
  }
  if (s.element_type() != DType::kFloat32) {
    TFJIT_ASSIGN_OR_RETURN(x, ctx.b().Convert(x, DType::kFloat32));
  }
  const Interpolation cols = InterpolationOf(s.dim(2), size[1], align, half_pixel);
  const Interpolation rows = InterpolationOf(s.dim(1), size[0], align, half_pixel);
  TFJIT_ASSIGN_OR_RETURN(Instruction * left, TakeAlong(ctx, x, 2, cols.lower));
  TFJIT_ASSIGN_OR_RETURN(Instruction * right, TakeAlong(ctx, x, 2, cols.upper));
  TFJIT_ASSIGN_OR_RETURN(Instruction * across, Lerp(ctx, left, right, 2, cols.lerp));
  TFJIT_ASSIGN_OR_RETURN(Instruction * top, TakeAlong(ctx, across, 1, rows.lower));
  TFJIT_ASSIGN_OR_RETURN(Instruction * bottom, TakeAlong(ctx, across, 1, rows.upper));
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, Lerp(ctx, top, bottom, 1, rows.lerp));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- DepthToSpace / SpaceToDepth (NHWC, DCR order) ----

// `x` reshaped to `split`, transposed by `perm` and reshaped to `merged`: how the depth/space
// and space/batch ops move blocks of elements.
absl::StatusOr<Instruction*> Shuffle(LoweringContext& ctx, Instruction* x,
                                     const std::vector<int64_t>& split,
                                     const std::vector<int64_t>& perm,
                                     const std::vector<int64_t>& merged) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Reshape(x, split));
  TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Transpose(r, perm));
  return ctx.b().Reshape(r, merged);
}

template <bool kToSpace>
absl::Status LowerDepthSpace(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(int64_t b, tf::GetIntAttr(node, "block_size"));
  TFJIT_RETURN_IF_ERROR(tf::CheckNhwc(node));
  if (b < 2) return InvalidArgument("node %s: Block size should be > 1, but was: %d", node.DebugName(), b);
  const hlo::Shape& s = x->shape();
  if (s.rank() != 4) {
    return InvalidArgument("node %s: Input rank should be: 4 instead of: %d", node.DebugName(),
                           s.rank());
  }
  const int64_t n = s.dim(0), h = s.dim(1), w = s.dim(2), c = s.dim(3);
  Instruction* r = nullptr;
  if (kToSpace) {
    if (c % (b * b) != 0) {
      return InvalidArgument("node %s: Input depth dimension %d should be divisible by: %d",
                             node.DebugName(), c, b * b);
    }
    const int64_t oc = c / (b * b);
    TFJIT_ASSIGN_OR_RETURN(
        r, Shuffle(ctx, x, {n, h, w, b, b, oc}, {0, 1, 3, 2, 4, 5}, {n, h * b, w * b, oc}));
  } else {
    if (h % b != 0 || w % b != 0) {
      return InvalidArgument("node %s: Image width %d and height %d should be divisible by "
                             "block_size: %d", node.DebugName(), w, h, b);
    }
    TFJIT_ASSIGN_OR_RETURN(r, Shuffle(ctx, x, {n, h / b, b, w / b, b, c}, {0, 1, 3, 2, 4, 5},
                                      {n, h / b, w / b, b * b * c}));
  }
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- SpaceToBatchND / BatchToSpaceND ----

struct BlockArgs {
  std::vector<int64_t> block, pads;  // pads: lo, hi per block dim
  int64_t block_count = 1;
};

absl::StatusOr<BlockArgs> ReadBlockArgs(LoweringContext& ctx, const tf::Node& node,
                                        const hlo::Shape& s, const char* pad_name) {
  BlockArgs a;
  TFJIT_ASSIGN_OR_RETURN(a.block, ctx.ConstantInputAsInts(node, 1));
  TFJIT_ASSIGN_OR_RETURN(a.pads, ctx.ConstantInputAsInts(node, 2));
  const int64_t m = static_cast<int64_t>(a.block.size());
  if (static_cast<int64_t>(a.pads.size()) != 2 * m) {
    return InvalidArgument("node %s: %s should have shape [%d, 2], got %d values",
                           node.DebugName(), pad_name, m, a.pads.size());
  }
  if (s.rank() < 1 + m) {
    return InvalidArgument("node %s: input rank should be >= %d instead of %d",
                           node.DebugName(), 1 + m, s.rank());
  }
  for (int64_t b : a.block) {
    if (b < 1) {
      return InvalidArgument("node %s: All values in block_shape must be positive, got %s",
                             node.DebugName(), Dims(a.block));
    }
    a.block_count *= b;
  }
  for (int64_t p : a.pads) {
    if (p < 0) {
      return InvalidArgument("node %s: All values in %s must be non-negative, got %s",
                             node.DebugName(), pad_name, Dims(a.pads));
    }
  }
  return a;
}

// pad -> [B, P1/b1, b1, .., PM/bM, bM, R..] -> [b1..bM, B, P1/b1..PM/bM, R..] -> merge.
absl::Status LowerSpaceToBatchND(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const hlo::Shape s = x->shape();
  TFJIT_ASSIGN_OR_RETURN(BlockArgs a, ReadBlockArgs(ctx, node, s, "paddings"));
  const size_t m = a.block.size();
  const size_t rank = static_cast<size_t>(s.rank());
  std::vector<hlo::PadDim> padding(rank);
  std::vector<int64_t> split = {s.dim(0)}, out = {s.dim(0) * a.block_count};
  std::vector<int64_t> perm;
  for (size_t i = 0; i < m; ++i) {
    padding[i + 1] = {a.pads[2 * i], a.pads[2 * i + 1], 0};
    const int64_t p = s.dim(static_cast<int>(i + 1)) + a.pads[2 * i] + a.pads[2 * i + 1];
    if (p % a.block[i] != 0) {
      return InvalidArgument("node %s: padded_shape[%d]=%d is not divisible by "
                             "block_shape[%d]=%d", node.DebugName(), i, p, i, a.block[i]);
    }
    split.push_back(p / a.block[i]);
    split.push_back(a.block[i]);
    out.push_back(p / a.block[i]);
    perm.push_back(static_cast<int64_t>(2 + 2 * i));
  }
  perm.push_back(0);
  for (size_t i = 0; i < m; ++i) perm.push_back(static_cast<int64_t>(1 + 2 * i));
  for (size_t d = m + 1; d < rank; ++d) {
    split.push_back(s.dim(static_cast<int>(d)));
    out.push_back(s.dim(static_cast<int>(d)));
    perm.push_back(static_cast<int64_t>(split.size() - 1));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(s.element_type(), 0.0, {}));
  hlo::Attributes pad_attrs;
  pad_attrs.padding = padding;
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Add(Opcode::kPad, {x, zero}, pad_attrs));
  TFJIT_ASSIGN_OR_RETURN(r, Shuffle(ctx, r, split, perm, out));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// [b1..bM, B, S1..SM, R..] -> [B, S1, b1, .., SM, bM, R..] -> merge -> crop.
absl::Status LowerBatchToSpaceND(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const hlo::Shape s = x->shape();
  TFJIT_ASSIGN_OR_RETURN(BlockArgs a, ReadBlockArgs(ctx, node, s, "crops"));
  const size_t m = a.block.size();
  const size_t rank = static_cast<size_t>(s.rank());
  if (s.dim(0) % a.block_count != 0) {
    return InvalidArgument("node %s: Input batch dimension (%d) is not divisible by product of "
                           "block sizes (%d)", node.DebugName(), s.dim(0), a.block_count);
  }
  const int64_t batch = s.dim(0) / a.block_count;
  std::vector<int64_t> split = a.block;
  split.push_back(batch);
  std::vector<int64_t> perm = {static_cast<int64_t>(m)}, merged = {batch};
  std::vector<hlo::SliceDim> crop = {{0, batch, 1}};
  for (size_t i = 0; i < m; ++i) {
    const int64_t sd = s.dim(static_cast<int>(i + 1));
    split.push_back(sd);
    perm.push_back(static_cast<int64_t>(m + 1 + i));
    perm.push_back(static_cast<int64_t>(i));
    merged.push_back(sd * a.block[i]);
    const int64_t limit = sd * a.block[i] - a.pads[2 * i + 1];
    if (limit < a.pads[2 * i]) {
      return InvalidArgument("node %s: Cropped size must be non-negative: start: %d end: %d "
                             "size %d", node.DebugName(), a.pads[2 * i], a.pads[2 * i + 1],
                             sd * a.block[i]);
    }
    crop.push_back({a.pads[2 * i], limit, 1});
  }
  for (size_t d = m + 1; d < rank; ++d) {
    split.push_back(s.dim(static_cast<int>(d)));
    perm.push_back(static_cast<int64_t>(split.size() - 1));
    merged.push_back(s.dim(static_cast<int>(d)));
    crop.push_back({0, s.dim(static_cast<int>(d)), 1});
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, Shuffle(ctx, x, split, perm, merged));
  TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Slice(r, crop));
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- GatherNd ----

// As GatherV2 (slice_lowerings.cc EmitGather): HLO's gather clamps out-of-range indices where
// TF's kernel fails, so constant indices are checked here and others at run time
// (AddIndexCheck); inside loop/branch bodies indices must be constants.
absl::Status LowerGatherNd(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * params, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * indices, ctx.Input(node, 1));
  absl::StatusOr<Tensor> known = ctx.ConstantInput(node, 1);
  if (!known.ok() && !ctx.CanAddRuntimeChecks()) {
    return Unimplemented("node %s: GatherNd inside a loop or conditional body compiles only "
                         "with compile-time-constant indices (HLO gather clamps out-of-range "
                         "indices where TF's kernel fails)",
                         node.DebugName());
  }
  const hlo::Shape& ps = params->shape();
  const hlo::Shape& is = indices->shape();
  if (ps.rank() < 1 || is.rank() < 1) {
    return InvalidArgument("node %s: params and indices must be at least vectors, got %s and %s",
                           node.DebugName(), ps.ToString(), is.ToString());
  }
  const int64_t k = is.dim(is.rank() - 1);
  if (k > ps.rank()) {
    return InvalidArgument("node %s: index innermost dimension length must be <= params rank; "
                           "saw: %d vs. %d", node.DebugName(), k, ps.rank());
  }
  if (!known.ok()) {
    // The kernel's message: the flat index-vector number and the whole vector.
    std::vector<int64_t> limits(ps.dims().begin(), ps.dims().begin() + k);
    TFJIT_RETURN_IF_ERROR(ctx.AddIndexCheck(
        node, indices, limits,
        absl::StrCat("indices{pos} = {value} does not index into param shape ", Dims(ps.dims())),
        /*flat_position=*/true, {}, /*vector_value=*/true));
  }
  for (int64_t r = 0; known.ok() && k > 0 && r < known->num_elements() / k; ++r) {
    for (int64_t j = 0; j < k; ++j) {
      const int64_t v = ElementAsInt64(*known, r * k + j);
      if (v < 0 || v >= ps.dim(static_cast<int>(j))) {
        std::vector<int64_t> idx;
        for (int64_t q = 0; q < k; ++q) idx.push_back(ElementAsInt64(*known, r * k + q));
        return InvalidArgument("node %s: indices[%d] = [%s] does not index into param shape %s",
                               node.DebugName(), r, absl::StrJoin(idx, ", "), Dims(ps.dims()));
      }
    }
  }
  const int64_t batch_rank = is.rank() - 1;
  std::vector<int64_t> out_dims(is.dims().begin(), is.dims().end() - 1);
  out_dims.insert(out_dims.end(), ps.dims().begin() + k, ps.dims().end());
  int64_t count = 1;
  for (int64_t d : out_dims) count *= d;
  Instruction* r = nullptr;
  if (count == 0) {
    TFJIT_ASSIGN_OR_RETURN(r, ctx.Splat(ps.element_type(), 0.0, out_dims));
  } else if (k == 0) {
    // Every index vector is empty: each picks all of params.
    std::vector<int64_t> map;
    for (int64_t d = 0; d < ps.rank(); ++d) map.push_back(batch_rank + d);
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Broadcast(params, out_dims, map));
  } else {
    hlo::Attributes attrs;
    hlo::GatherDims& g = attrs.gather;
    g.index_vector_dim = batch_rank;
    g.slice_sizes = ps.dims();
    for (int64_t j = 0; j < k; ++j) {
      g.start_index_map.push_back(j);
      g.collapsed_slice_dims.push_back(j);
      g.slice_sizes[static_cast<size_t>(j)] = 1;
    }
    for (int64_t d = 0; d < ps.rank() - k; ++d) g.offset_dims.push_back(batch_rank + d);
    TFJIT_ASSIGN_OR_RETURN(r, ctx.b().Add(Opcode::kGather, {params, indices}, std::move(attrs)));
  }
  ctx.SetOutput(node, 0, r);
  return absl::OkStatus();
}

// ---- TopKV2 ----

// The custom-call tfjit.top_k (core/top_k.h, the fallback kernel's routine) on a compile-time
// k; TF's checks and messages. Indices come back s32 and are widened for index_type int64.
absl::Status LowerTopKV2(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction* x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Tensor k_t, ctx.ConstantInput(node, 1));
  if (k_t.rank() != 0) {
    return InvalidArgument("node %s: k must be scalar, got shape %s", node.DebugName(),
                           k_t.ShapeString());
  }
  const int64_t k = ElementAsInt64(k_t, 0);
  if (k < 0) return InvalidArgument("node %s: Need k >= 0, got %d", node.DebugName(), k);
  const hlo::Shape& in = x->shape();
  if (in.rank() < 1) {
    return InvalidArgument("node %s: input must be >= 1-D, got shape %s", node.DebugName(),
                           in.ToString());
  }
  const int64_t n = in.dims().back();
  if (n < k) {
    return InvalidArgument("node %s: input must have at least k columns. Had %d, needed %d",
                           node.DebugName(), n, k);
  }
  if (n > std::numeric_limits<int32_t>::max()) {
    return Unimplemented("node %s: top-k rows of %d columns are too long to compile (at most "
                         "2^31 - 1)", node.DebugName(), n);
  }
  TFJIT_ASSIGN_OR_RETURN(DType index_type, tf::GetTypeAttr(node, "index_type"));
  if (index_type != DType::kInt32 && index_type != DType::kInt64) {
    return InvalidArgument("node %s: index_type must be int32 or int64, got %s",
                           node.DebugName(), DTypeName(index_type));
  }
  std::vector<int64_t> out_dims = in.dims();
  out_dims.back() = k;
  hlo::Attributes attrs;
  attrs.custom_call_target = topk::kTopKTarget;
  const hlo::Shape result = hlo::Shape::Tuple(
      {hlo::Shape(in.element_type(), out_dims), hlo::Shape(DType::kInt32, out_dims)});
  TFJIT_ASSIGN_OR_RETURN(Instruction * top,
                         ctx.b().Add(Opcode::kCustomCall, {x}, std::move(attrs), {}, result));
  TFJIT_ASSIGN_OR_RETURN(Instruction * values, ctx.b().GetTupleElement(top, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * indices, ctx.b().GetTupleElement(top, 1));
  if (index_type == DType::kInt64) {
    TFJIT_ASSIGN_OR_RETURN(indices, ctx.b().Convert(indices, DType::kInt64));
  }
  ctx.SetOutput(node, 0, values);
  ctx.SetOutput(node, 1, indices);
  return absl::OkStatus();
}

// ---- Ops that stay in the runtime ----

absl::Status NeverLowered(LoweringContext&, const tf::Node& node) {
  return Unimplemented("node %s: %s runs only as a fallback kernel", node.DebugName(), node.op());
}

bool DataDependentShape(const tf::Node& node, std::string* why) {
  *why = absl::StrCat("op ", node.op(), " stays in the runtime: its output shape depends on "
                      "input values");
  return false;
}

}  // namespace

void AppendImageLowerings(std::vector<OpLowering>* table) {
  table->insert(table->end(), {
      {"MaxPool", LowerMaxPool},
      {"AvgPool", LowerAvgPool, true},
      {"ResizeBilinear", LowerResizeBilinear},
      {"DepthToSpace", LowerDepthSpace<true>},
      {"SpaceToDepth", LowerDepthSpace<false>},
      {"SpaceToBatchND", LowerSpaceToBatchND},
      {"BatchToSpaceND", LowerBatchToSpaceND},
      {"GatherNd", LowerGatherNd},
      {"NonMaxSuppressionV2", NeverLowered, false, DataDependentShape},
      {"NonMaxSuppressionV3", NeverLowered, false, DataDependentShape},
      {"NonMaxSuppressionV4", NeverLowered, false, DataDependentShape},
      {"NonMaxSuppressionV5", NeverLowered, false, DataDependentShape},
      {"SparseToDense", NeverLowered, false, DataDependentShape},
      {"Where", NeverLowered, false, DataDependentShape},
      {"TopKV2", LowerTopKV2},
  });
}

}  // namespace tfjit::tf2hlo
