// Lowerings of the image ops (NHWC): ResizeBilinear as gathers and lerps along W then H (TF's
// arithmetic), DepthToSpace/SpaceToDepth and SpaceToBatchND/BatchToSpaceND as
// pad/reshape/transpose/slice; the NonMaxSuppression forms as the custom-call
// tfjit.non_max_suppression, padded (their output size depends on input values unless
// pad_to_max_output_size is set, so they carry it as a row count). (Pooling lowers in
// nn_lowerings.cc, GatherNd and Where in array_lowerings.cc, TopKV2 with the other reductions in
// reduction_lowerings.cc, SparseToDense with the scatters in scatter_segment_lowerings.cc.)
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/dynamic_sizes.h"
#include "compiler/tf2hlo/lowering.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/nms.h"
#include "core/run_control.h"
#include "core/status.h"
#include "frontend/attr.h"
#include "frontend/conv_attrs.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::Instruction;
using hlo::Opcode;

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
    const float src =
        half_pixel ? (static_cast<float>(o) + 0.5f) * scale - 0.5f : static_cast<float>(o) * scale;
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
                           node.DebugName(), DimsString(size));
  }
  if (size[0] <= 0 || size[1] <= 0) {
    return InvalidArgument("node %s: output dimensions must be positive, got %s", node.DebugName(),
                           DimsString(size));
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
        bytes, absl::StrCat(what, " ", DimsString(dims), " of size ", DimsString(size)),
        node.DebugName()));
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
  if (b < 2)
    return InvalidArgument("node %s: Block size should be > 1, but was: %d", node.DebugName(), b);
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
      return InvalidArgument(
          "node %s: Image width %d and height %d should be divisible by "
          "block_size: %d",
          node.DebugName(), w, h, b);
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
    return InvalidArgument("node %s: %s should have shape [%d, 2], got %d values", node.DebugName(),
                           pad_name, m, a.pads.size());
  }
  if (s.rank() < 1 + m) {
    return InvalidArgument("node %s: input rank should be >= %d instead of %d", node.DebugName(),
                           1 + m, s.rank());
  }
  for (int64_t b : a.block) {
    if (b < 1) {
      return InvalidArgument("node %s: All values in block_shape must be positive, got %s",
                             node.DebugName(), DimsString(a.block));
    }
    a.block_count *= b;
  }
  for (int64_t p : a.pads) {
    if (p < 0) {
      return InvalidArgument("node %s: All values in %s must be non-negative, got %s",
                             node.DebugName(), pad_name, DimsString(a.pads));
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
      return InvalidArgument(
          "node %s: padded_shape[%d]=%d is not divisible by "
          "block_shape[%d]=%d",
          node.DebugName(), i, p, i, a.block[i]);
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
    return InvalidArgument(
        "node %s: Input batch dimension (%d) is not divisible by product of "
        "block sizes (%d)",
        node.DebugName(), s.dim(0), a.block_count);
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
      return InvalidArgument(
          "node %s: Cropped size must be non-negative: start: %d end: %d "
          "size %d",
          node.DebugName(), a.pads[2 * i], a.pads[2 * i + 1], sd * a.block[i]);
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

// ---- NonMaxSuppression, V2-V5 ----

// The NMS version of `node`'s op: 1 for NonMaxSuppression, else the V number.
int NmsVersion(const tf::Node& node) {
  const std::string& op = node.op();
  return op == "NonMaxSuppression" ? 1 : op.back() - '0';
}

bool NmsPads(const tf::Node& node) {
  if (NmsVersion(node) < 4) return false;
  absl::StatusOr<bool> pad = tf::GetBoolAttrOr(node, "pad_to_max_output_size", false);
  return pad.ok() && *pad;
}

// The range TF's NMS kernel requires of a scalar operand (NaN fails too).
struct NmsRange {
  double lo, hi;
  const char* text;
};

// Scalar input `input` of an NMS node as f32[], with the kernel's range check when `range` is
// set: at compile time when the value is constant, else at run time.
absl::StatusOr<Instruction*> NmsScalar(LoweringContext& ctx, const tf::Node& node, int input,
                                       const char* what, std::optional<NmsRange> range) {
  hlo::Builder& b = ctx.b();
  TFJIT_ASSIGN_OR_RETURN(Instruction * v, ctx.Input(node, input));
  if (v->shape().rank() != 0) {
    return InvalidArgument("node %s: %s must be 0-D, got %s", node.DebugName(), what,
                           v->shape().ToString());
  }
  if (v->shape().element_type() != DType::kFloat32) {
    TFJIT_ASSIGN_OR_RETURN(v, b.Convert(v, DType::kFloat32));
  }
  if (!range.has_value()) return v;
  if (absl::StatusOr<Tensor> known = ctx.ConstantInput(node, input); known.ok()) {
    const double x = ElementAsDouble(*known, 0);
    if (!(x >= range->lo && x <= range->hi)) {
      return InvalidArgument("node %s: %s %s, got %g", node.DebugName(), what, range->text, x);
    }
    return v;
  }
  if (!ctx.CanAddRuntimeChecks()) {
    return Unimplemented("node %s: %s compiles here only with a constant %s", node.DebugName(),
                         node.op(), what);
  }
  Instruction* lo = b.ScalarConstant<float>(DType::kFloat32, static_cast<float>(range->lo));
  Instruction* hi = b.ScalarConstant<float>(DType::kFloat32, static_cast<float>(range->hi));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ge, b.Compare(hlo::ComparisonDirection::kGe, v, lo));
  TFJIT_ASSIGN_OR_RETURN(Instruction * le, b.Compare(hlo::ComparisonDirection::kLe, v, hi));
  TFJIT_ASSIGN_OR_RETURN(Instruction * ok, b.Binary(Opcode::kAnd, ge, le));
  TFJIT_ASSIGN_OR_RETURN(Instruction * bad, b.Unary(Opcode::kNot, ok));
  TFJIT_RETURN_IF_ERROR(ctx.AddConditionCheck(node, bad, absl::StrCat(what, " ", range->text)));
  return v;
}

// The custom-call tfjit.non_max_suppression (core/nms.h, the kernel's selection) on float32
// boxes and scores; max_output_size a compile-time constant (as in tf2xla). With
// pad_to_max_output_size (V4, V5) the outputs have max_output_size rows as in TF; otherwise
// (as XLA does with a dynamic dimension) they are padded to min(max_output_size, n) rows and
// carry the selection's size as their row count, cut at the cluster's edge. The kernel's shape
// checks, and its range checks of iou_threshold and soft_nms_sigma (at compile time when
// constant, else at run time).
absl::Status LowerNms(LoweringContext& ctx, const tf::Node& node) {
  const int version = NmsVersion(node);
  const bool pad = NmsPads(node);
  TFJIT_ASSIGN_OR_RETURN(Instruction * boxes, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * scores, ctx.Input(node, 1));
  TFJIT_ASSIGN_OR_RETURN(Tensor max_t, ctx.ConstantInput(node, 2));
  auto err = [&](const std::string& m) {
    return InvalidArgument("node %s: %s", node.DebugName(), m);
  };
  if (max_t.rank() != 0) {
    return err(absl::StrCat("max_output_size must be 0-D, got shape ", max_t.ShapeString()));
  }
  const int64_t max_output = ElementAsInt64(max_t, 0);
  if (max_output < 0) {
    return err(absl::StrCat("max_output_size must be non-negative, got ", max_output));
  }
  if (max_output > std::numeric_limits<int32_t>::max()) {
    return err(absl::StrCat("max_output_size ", max_output,
                            " is more than the int32 indices "
                            "of the output can hold"));
  }
  const hlo::Shape& bs = boxes->shape();
  if (bs.rank() != 2 || bs.dims()[1] != 4) {
    return err(absl::StrCat("boxes must be 2-D with 4 columns, got ", bs.ToString()));
  }
  const int64_t n = bs.dims()[0];
  if (scores->shape().dims() != std::vector<int64_t>{n}) {
    return err(absl::StrCat("scores has incompatible shape: ", scores->shape().ToString(),
                            " for boxes ", bs.ToString()));
  }
  const DType scores_type = scores->shape().element_type();
  hlo::Builder& b = ctx.b();
  // iou_threshold (an attr in V1), score_threshold (from V3; V1 and V2 keep every box: the
  // lowest float, as TF's kernel), soft_nms_sigma (V5).
  std::vector<Instruction*> operands = {boxes, scores};
  if (version == 1) {
    TFJIT_ASSIGN_OR_RETURN(float iou, tf::GetFloatAttrOr(node, "iou_threshold", 0.5f));
    if (!(iou >= 0.0f && iou <= 1.0f)) {
      return err(absl::StrCat("iou_threshold must be in [0, 1], got ", iou));
    }
    operands.push_back(b.ScalarConstant<float>(DType::kFloat32, iou));
  } else {
    TFJIT_ASSIGN_OR_RETURN(Instruction * iou, NmsScalar(ctx, node, 3, "iou_threshold",
                                                        NmsRange{0.0, 1.0, "must be in [0, 1]"}));
    operands.push_back(iou);
  }
  if (version >= 3) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * threshold,
                           NmsScalar(ctx, node, 4, "score_threshold", std::nullopt));
    operands.push_back(threshold);
  } else {
    operands.push_back(
        b.ScalarConstant<float>(DType::kFloat32, std::numeric_limits<float>::lowest()));
  }
  if (version == 5) {
    TFJIT_ASSIGN_OR_RETURN(
        Instruction * sigma,
        NmsScalar(ctx, node, 5, "soft_nms_sigma",
                  NmsRange{0.0, std::numeric_limits<double>::infinity(), "must be non-negative"}));
    operands.push_back(sigma);
  }
  for (size_t i = 0; i < 2; ++i) {
    if (operands[i]->shape().element_type() != DType::kFloat32) {
      TFJIT_ASSIGN_OR_RETURN(operands[i], b.Convert(operands[i], DType::kFloat32));
    }
  }
  // Padded boxes or scores (a Where's rows gathered, dynamic_sizes.h): the padding rows get a
  // score of -inf, which no threshold keeps (the kernel keeps score > score_threshold).
  const DynamicDim* padded_boxes = ctx.DynamicInput(node, 0);
  const DynamicDim* padded_scores = ctx.DynamicInput(node, 1);
  if (padded_boxes != nullptr || padded_scores != nullptr) {
    // TF: "scores has incompatible shape" unless both hold the same number of boxes.
    const SymExpr nb = padded_boxes != nullptr ? padded_boxes->size : SymExpr{n, {}};
    const SymExpr ns = padded_scores != nullptr ? padded_scores->size : SymExpr{n, {}};
    if ((padded_boxes != nullptr && padded_boxes->dim != 0) ||
        (padded_scores != nullptr && padded_scores->dim != 0)) {
      return Unimplemented("node %s: boxes or scores padded in a dim other than 0",
                           node.DebugName());
    }
    if (!(nb == ns)) {
      TFJIT_ASSIGN_OR_RETURN(Instruction * a, ctx.SizeValue(nb));
      TFJIT_ASSIGN_OR_RETURN(Instruction * c, ctx.SizeValue(ns));
      TFJIT_ASSIGN_OR_RETURN(Instruction * bad, b.Compare(hlo::ComparisonDirection::kNe, a, c));
      TFJIT_RETURN_IF_ERROR(ctx.AddConditionCheck(
          node, bad, "scores has incompatible shape (its run-time size differs from boxes')"));
    }
  }
  for (int i = 0; i < 2; ++i) {
    if (const DynamicDim* d = ctx.DynamicInput(node, i)) {
      TFJIT_ASSIGN_OR_RETURN(
          operands[1], MaskBeyond(ctx, operands[1], 0, d->size,
                                  b.ScalarConstant<float>(
                                      DType::kFloat32, -std::numeric_limits<float>::infinity())));
    }
  }
  const int64_t rows = pad ? max_output : std::min(max_output, n);
  std::vector<hlo::Shape> parts = {hlo::Shape(DType::kInt32, {rows}),
                                   hlo::Shape(DType::kInt32, {})};
  if (version == 5) parts.push_back(hlo::Shape(DType::kFloat32, {rows}));
  hlo::Attributes attrs;
  attrs.custom_call_target = nms::kNmsTarget;
  TFJIT_ASSIGN_OR_RETURN(Instruction * call, b.Add(Opcode::kCustomCall, operands, std::move(attrs),
                                                   {}, hlo::Shape::Tuple(std::move(parts))));
  TFJIT_ASSIGN_OR_RETURN(Instruction * indices, b.GetTupleElement(call, 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * valid, b.GetTupleElement(call, 1));
  ctx.SetOutput(node, 0, indices);
  int next = 1;
  if (version == 5) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * selected, b.GetTupleElement(call, 2));
    if (scores_type != DType::kFloat32) {
      TFJIT_ASSIGN_OR_RETURN(selected, b.Convert(selected, scores_type));
    }
    ctx.SetOutput(node, next++, selected);
  }
  if (version >= 4) ctx.SetOutput(node, next, valid);
  if (!pad) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * count, b.Convert(valid, DType::kInt64));
    const SymExpr size = ctx.NewSizeAtom(count, rows);
    for (int out : RowCountedOutputs(node)) {
      ctx.SetDynamic({const_cast<tf::Node*>(&node), out}, DynamicDim{0, size});
    }
  }
  return absl::OkStatus();
}

}  // namespace

void AppendImageLowerings(std::vector<OpLowering>* table) {
  table->insert(table->end(), {
                                  {"ResizeBilinear", LowerResizeBilinear},
                                  {"DepthToSpace", LowerDepthSpace<true>},
                                  {"SpaceToDepth", LowerDepthSpace<false>},
                                  {"SpaceToBatchND", LowerSpaceToBatchND},
                                  {"BatchToSpaceND", LowerBatchToSpaceND},
                                  {"NonMaxSuppression", LowerNms},
                                  {"NonMaxSuppressionV2", LowerNms},
                                  {"NonMaxSuppressionV3", LowerNms},
                                  {"NonMaxSuppressionV4", LowerNms},
                                  {"NonMaxSuppressionV5", LowerNms},
                              });
}

}  // namespace tfjit::tf2hlo
