// The lowerings of ops that read values padded to a bound with a size known only at run time
// (dynamic_sizes.h): reductions, TopKV2, ConcatV2, Reshape, Slice, Range, Fill, Where and
// elementwise ops, each carrying the real size on or checking it as TF's kernel would; value
// ranges (XLA's value inference) for the bounds; and LowerNodeWithSizes, which every node's
// lowering goes through.
#include <algorithm>
#include <limits>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "compiler/hlo/builder.h"
#include "compiler/tf2hlo/dynamic_sizes.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/attr.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::Instruction;

// ---- Value ranges (XLA's value inference: bounds of integer values computed at run time) ----

struct Interval {
  int64_t lo, hi;
};

std::optional<Interval> Checked(__int128 lo, __int128 hi) {
  constexpr __int128 kMin = std::numeric_limits<int64_t>::min();
  constexpr __int128 kMax = std::numeric_limits<int64_t>::max();
  if (lo < kMin || hi > kMax || lo > hi) return std::nullopt;
  return Interval{static_cast<int64_t>(lo), static_cast<int64_t>(hi)};
}

// Bounds of every element of the integer (or pred) value `v`; nullopt when unknown.
using RangeCache = absl::flat_hash_map<const Instruction*, std::optional<Interval>>;
std::optional<Interval> ValueRangeUncached(const LoweringContext& ctx, const Instruction* v,
                                           RangeCache& cache, int depth);

// Memoized: a value shared by several users is bounded once.
std::optional<Interval> ValueRange(const LoweringContext& ctx, const Instruction* v,
                                   RangeCache& cache, int depth = 0) {
  if (auto it = cache.find(v); it != cache.end()) return it->second;
  std::optional<Interval> r = ValueRangeUncached(ctx, v, cache, depth);
  cache[v] = r;
  return r;
}

std::optional<Interval> ValueRangeUncached(const LoweringContext& ctx, const Instruction* v,
                                           RangeCache& cache, int depth) {
  if (depth > 48) return std::nullopt;
  if (std::optional<int64_t> bound = ctx.AtomBound(v)) return Interval{0, *bound};
  const DType t = v->shape().element_type();
  if (t == DType::kBool) return Interval{0, 1};
  if (!IsIntegerDType(t)) return std::nullopt;
  auto range = [&](int i) { return ValueRange(ctx, v->operand(i), cache, depth + 1); };
  switch (v->opcode()) {
    case hlo::Opcode::kConstant: {
      const Tensor& c = v->literal().tensor();
      if (c.num_elements() == 0) return std::nullopt;
      int64_t lo = ElementAsInt64(c, 0), hi = lo;
      for (int64_t k = 1; k < c.num_elements(); ++k) {
        lo = std::min(lo, ElementAsInt64(c, k));
        hi = std::max(hi, ElementAsInt64(c, k));
      }
      return Interval{lo, hi};
    }
    case hlo::Opcode::kIota: {
      const int64_t d = v->shape().dim(static_cast<int>(v->attrs().iota_dimension));
      return Interval{0, std::max<int64_t>(d - 1, 0)};
    }
    case hlo::Opcode::kConvert:
    case hlo::Opcode::kReshape:
    case hlo::Opcode::kBroadcast:
    case hlo::Opcode::kSlice:
    case hlo::Opcode::kTranspose:
    case hlo::Opcode::kReverse:
      return range(0);
    case hlo::Opcode::kConcatenate:
    case hlo::Opcode::kSelect:
    case hlo::Opcode::kMaximum:
    case hlo::Opcode::kMinimum: {
      const int first = v->opcode() == hlo::Opcode::kSelect ? 1 : 0;
      std::optional<Interval> r;
      bool unknown = false;
      for (int i = first; i < v->operand_count(); ++i) {
        std::optional<Interval> x = range(i);
        if (!x.has_value()) {
          unknown = true;
          if (v->opcode() == hlo::Opcode::kMinimum) continue;  // min <= the known one
          return std::nullopt;
        }
        if (!r.has_value()) {
          r = x;
        } else if (v->opcode() == hlo::Opcode::kMaximum) {
          r = Interval{std::max(r->lo, x->lo), std::max(r->hi, x->hi)};
        } else if (v->opcode() == hlo::Opcode::kMinimum) {
          r = Interval{std::min(r->lo, x->lo), std::min(r->hi, x->hi)};
        } else {
          r = Interval{std::min(r->lo, x->lo), std::max(r->hi, x->hi)};
        }
      }
      if (v->opcode() == hlo::Opcode::kMinimum && r.has_value() && unknown) {
        r->lo = std::numeric_limits<int64_t>::min();  // only the upper bound is known
      }
      return r;
    }
    case hlo::Opcode::kAdd:
    case hlo::Opcode::kSubtract:
    case hlo::Opcode::kMultiply: {
      std::optional<Interval> a = range(0), b = range(1);
      if (!a.has_value() || !b.has_value()) return std::nullopt;
      const __int128 al = a->lo, ah = a->hi, bl = b->lo, bh = b->hi;
      if (v->opcode() == hlo::Opcode::kAdd) return Checked(al + bl, ah + bh);
      if (v->opcode() == hlo::Opcode::kSubtract) return Checked(al - bh, ah - bl);
      const __int128 p[4] = {al * bl, al * bh, ah * bl, ah * bh};
      return Checked(*std::min_element(p, p + 4), *std::max_element(p, p + 4));
    }
    case hlo::Opcode::kNegate: {
      std::optional<Interval> a = range(0);
      if (!a.has_value()) return std::nullopt;
      return Checked(-static_cast<__int128>(a->hi), -static_cast<__int128>(a->lo));
    }
    case hlo::Opcode::kReduce: {
      // A sum of n values each in [lo, hi] (plus the init); max/min stay in the range.
      const hlo::Computation* f = v->to_apply();
      std::optional<Interval> x = range(0), init = range(1);
      if (f == nullptr || !x.has_value() || !init.has_value()) return std::nullopt;
      const hlo::Opcode op = f->root()->opcode();
      const int64_t out = std::max<int64_t>(v->shape().num_elements(), 1);
      const __int128 n = v->operand(0)->shape().num_elements() / out;
      if (op == hlo::Opcode::kAdd) return Checked(init->lo + n * x->lo, init->hi + n * x->hi);
      if (op == hlo::Opcode::kMaximum || op == hlo::Opcode::kMinimum) {
        return Interval{std::min(init->lo, x->lo), std::max(init->hi, x->hi)};
      }
      return std::nullopt;
    }
    default:
      return std::nullopt;
  }
}

// ---- Lowerings of ops reading padded values (LowerPaddedNode) ----

// Runs `node`'s own lowering with its inputs overridden (nullptr: unchanged).
absl::Status LowerWith(LoweringContext& ctx, const tf::Node& node,
                       std::vector<Instruction*> overrides) {
  const OpLowering* lowering = LoweringFor(node);
  if (lowering == nullptr) return Unimplemented("no HLO lowering for op %s", node.op());
  overrides.resize(static_cast<size_t>(node.num_inputs()), nullptr);
  ctx.OverrideInputs(node, std::move(overrides));
  absl::Status s = lowering->fn(ctx, node);
  ctx.ClearInputOverride();
  return s;
}

absl::StatusOr<Instruction*> Scalar64(LoweringContext& ctx, int64_t v) {
  return ctx.b().ScalarConstant<int64_t>(DType::kInt64, v);
}

// A run-time check that sizes `a` and `b` agree (TF's kernels fail on a mismatch).
absl::Status CheckSameSize(LoweringContext& ctx, const tf::Node& node, const SymExpr& a,
                           const SymExpr& b, const std::string& what) {
  if (a == b) return absl::OkStatus();
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.SizeValue(a));
  TFJIT_ASSIGN_OR_RETURN(Instruction * y, ctx.SizeValue(b));
  TFJIT_ASSIGN_OR_RETURN(Instruction * bad, ctx.b().Compare(hlo::ComparisonDirection::kNe, x, y));
  return ctx.AddConditionCheck(node, bad, absl::StrCat("Incompatible shapes: ", what));
}

// The smallest value `e` can take (atoms between 0 and their bounds).
int64_t LowerBound(const LoweringContext& ctx, const SymExpr& e) {
  return -ctx.UpperBound(Scaled(e, -1));
}

// A run-time check that lo <= e <= hi (parts that hold for every value of the atoms are left
// out), with TF's kernel error `message` otherwise.
absl::Status CheckBetween(LoweringContext& ctx, const tf::Node& node, const SymExpr& e,
                          const SymExpr& lo, const SymExpr& hi, const std::string& message) {
  Instruction* bad = nullptr;
  for (const auto& [a, b] : {std::pair<SymExpr, SymExpr>{lo, e}, {e, hi}}) {
    const SymExpr gap = Sum(b, Scaled(a, -1));  // must be >= 0
    if (LowerBound(ctx, gap) >= 0) continue;
    TFJIT_ASSIGN_OR_RETURN(Instruction * g, ctx.SizeValue(gap));
    TFJIT_ASSIGN_OR_RETURN(Instruction * zero, Scalar64(ctx, 0));
    TFJIT_ASSIGN_OR_RETURN(Instruction * neg,
                           ctx.b().Compare(hlo::ComparisonDirection::kLt, g, zero));
    if (bad == nullptr) {
      bad = neg;
    } else {
      TFJIT_ASSIGN_OR_RETURN(bad, ctx.b().Binary(hlo::Opcode::kOr, bad, neg));
    }
  }
  if (bad == nullptr) return absl::OkStatus();
  return ctx.AddConditionCheck(node, bad, message);
}

// `x` padded in `dim` made static with extent `n`, which TF's kernel requires the run-time size
// to be (checked at run time): cut or padded to n.
absl::StatusOr<Instruction*> MakeStatic(LoweringContext& ctx, const tf::Node& node, Instruction* x,
                                        const DynamicDim& d, int64_t n) {
  TFJIT_RETURN_IF_ERROR(CheckSameSize(ctx, node, d.size, Constant(n),
                                      absl::StrCat("a size known only at run time must be ", n)));
  const int64_t bound = x->shape().dim(d.dim);
  if (bound >= n) {
    std::vector<hlo::SliceDim> slice;
    for (int64_t e : x->shape().dims()) slice.push_back({0, e, 1});
    slice[static_cast<size_t>(d.dim)].limit = n;
    return ctx.b().Slice(x, slice);
  }
  hlo::Attributes attrs;
  attrs.padding.assign(static_cast<size_t>(x->shape().rank()), hlo::PadDim{0, 0, 0});
  attrs.padding[static_cast<size_t>(d.dim)].hi = n - bound;
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(x->shape().element_type(), 0.0, {}));
  return ctx.b().Add(hlo::Opcode::kPad, {x, zero}, attrs);
}

// The largest (or lowest) value of `t` as a scalar, exact for 64-bit and unsigned integers
// (a double would round INT64_MAX up past it): +-inf for floats.
absl::StatusOr<Instruction*> Extreme(LoweringContext& ctx, DType t, bool highest) {
  if (IsFloatingDType(t)) {
    return ctx.Splat(t,
                     highest ? std::numeric_limits<double>::infinity()
                             : -std::numeric_limits<double>::infinity(),
                     {});
  }
  if (t == DType::kBool) return ctx.Splat(t, highest ? 1.0 : 0.0, {});
  absl::StatusOr<Instruction*> out = Unimplemented("no extreme value of %s", DTypeName(t));
  DispatchNumeric(t, [&](auto tag) {
    using T = decltype(tag);
    if constexpr (std::is_integral_v<T>) {
      Tensor c(t, {});
      *c.data<T>() = highest ? std::numeric_limits<T>::max() : std::numeric_limits<T>::lowest();
      out = ctx.b().Constant(hlo::Literal::FromTensor(c));
    }
  });
  return out;
}

// Sum/Prod/Max/Min/Any/All: the padding becomes the reduction's identity first; the output
// stays padded when the padded dim is not reduced. Mean over it would divide by the bound.
absl::StatusOr<bool> LowerPaddedReduction(LoweringContext& ctx, const tf::Node& node,
                                          const DynamicDim& d) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> axes, ctx.ConstantInputAsInts(node, 1));
  const int rank = x->shape().rank();
  bool reduced = false;
  int before = 0;  // reduced dims before the padded one
  for (int64_t& a : axes) {
    if (a < 0) a += rank;
    reduced |= a == d.dim;
    before += a < d.dim ? 1 : 0;
  }
  const absl::string_view op = node.op();
  const DType t = x->shape().element_type();
  Instruction* fill = nullptr;
  if (op == "Max" || op == "Min") {
    TFJIT_ASSIGN_OR_RETURN(fill, Extreme(ctx, t, /*highest=*/op == "Min"));
  } else {
    TFJIT_ASSIGN_OR_RETURN(fill, ctx.Splat(t, op == "Prod" || op == "All" ? 1.0 : 0.0, {}));
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * masked, MaskBeyond(ctx, x, d.dim, d.size, fill));
  TFJIT_RETURN_IF_ERROR(LowerWith(ctx, node, {masked}));
  if (!reduced) {
    TFJIT_ASSIGN_OR_RETURN(bool keep, tf::GetBoolAttrOr(node, "keep_dims", false));
    ctx.SetDynamic({const_cast<tf::Node*>(&node), 0},
                   DynamicDim{keep ? d.dim : d.dim - before, d.size});
  }
  return true;
}

// TopKV2 along a padded last dim (padding sorted last as the lowest value; ties keep index
// order, so real entries equal to it still come first), or with k a run-time size: the
// top-bound(k) are computed and the outputs padded to k.
absl::StatusOr<bool> LowerPaddedTopK(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const int last = x->shape().rank() - 1;
  const DynamicDim* d = ctx.DynamicInput(node, 0);
  std::optional<std::vector<SymExpr>> k = ctx.SymbolicInput(node, 1);
  if (last < 0 || !k.has_value() || k->size() != 1) return false;  // the lowering's errors
  if (d != nullptr && d->dim != last) {
    TFJIT_RETURN_IF_ERROR(LowerWith(ctx, node, {}));
    for (int o = 0; o < 2; ++o) ctx.SetDynamic({const_cast<tf::Node*>(&node), o}, *d);
    return true;
  }
  const SymExpr& kk = (*k)[0];
  const int64_t n = x->shape().dim(last);
  const int64_t k_bound = std::min(ctx.UpperBound(kk), n);
  std::vector<Instruction*> overrides(2, nullptr);
  if (d != nullptr) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * lowest,
                           Extreme(ctx, x->shape().element_type(), /*highest=*/false));
    TFJIT_ASSIGN_OR_RETURN(overrides[0], MaskBeyond(ctx, x, last, d->size, lowest));
    // TF: "input must have at least k columns".
    if (!(kk == d->size)) {
      TFJIT_ASSIGN_OR_RETURN(Instruction * ks, ctx.SizeValue(kk));
      TFJIT_ASSIGN_OR_RETURN(Instruction * ns, ctx.SizeValue(d->size));
      TFJIT_ASSIGN_OR_RETURN(Instruction * bad,
                             ctx.b().Compare(hlo::ComparisonDirection::kGt, ks, ns));
      TFJIT_RETURN_IF_ERROR(ctx.AddConditionCheck(
          node, bad, "input must have at least k columns (its run-time size is smaller)"));
    }
  }
  if (!kk.IsConstant()) {
    TFJIT_RETURN_IF_ERROR(
        CheckBetween(ctx, node, kk, Constant(0), d != nullptr ? d->size : Constant(n),
                     "input must have at least k columns, and k >= 0 (k computed at run time)"));
    const DType kt = node.input_types()[1];
    TFJIT_ASSIGN_OR_RETURN(overrides[1], ctx.Splat(kt, static_cast<double>(k_bound), {}));
  }
  TFJIT_RETURN_IF_ERROR(LowerWith(ctx, node, overrides));
  if (!kk.IsConstant()) {
    for (int o = 0; o < 2; ++o) {
      ctx.SetDynamic({const_cast<tf::Node*>(&node), o}, DynamicDim{last, kk});
    }
  }
  return true;
}

// ConcatV2 along the padded dim of some inputs: each input is written at the sum of the sizes
// before it (a later one overwrites the padding of an earlier one), so the real rows end up
// packed; the output is padded to the sum of the bounds.
absl::StatusOr<bool> LowerPaddedConcat(LoweringContext& ctx, const tf::Node& node) {
  const int n = node.num_inputs() - 1;
  bool padded = false;
  for (int i = 0; i < n; ++i) padded |= ctx.DynamicInput(node, i) != nullptr;
  if (!padded) return false;
  TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> axis_v, ctx.ConstantInputAsInts(node, n));
  TFJIT_ASSIGN_OR_RETURN(Instruction * x0, ctx.Input(node, 0));
  const int rank = x0->shape().rank();
  if (axis_v.size() != 1 || rank == 0) return false;
  const int axis = static_cast<int>(axis_v[0] < 0 ? axis_v[0] + rank : axis_v[0]);
  bool along = false;
  for (int i = 0; i < n; ++i) {
    const DynamicDim* d = ctx.DynamicInput(node, i);
    along |= d != nullptr && d->dim == axis;
  }
  if (!along) return false;  // padded elsewhere: PropagateElementwise's rule
  std::vector<int64_t> dims = x0->shape().dims();
  dims[static_cast<size_t>(axis)] = 0;
  std::vector<Instruction*> xs;
  for (int i = 0; i < n; ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, i));
    const DynamicDim* d = ctx.DynamicInput(node, i);
    if (d != nullptr && d->dim != axis) {
      return Unimplemented("node %s: inputs padded in different dims", node.DebugName());
    }
    if (x->shape().rank() != rank) {
      return InvalidArgument("node %s: ConcatOp: input 0 is %s and input %d is %s",
                             node.DebugName(), x0->shape().ToString(), i, x->shape().ToString());
    }
    dims[static_cast<size_t>(axis)] += x->shape().dim(axis);
    xs.push_back(x);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * out, ctx.Splat(x0->shape().element_type(), 0.0, dims));
  SymExpr offset;
  for (int i = 0; i < n; ++i) {
    if (xs[static_cast<size_t>(i)]->shape().num_elements() == 0) continue;
    std::vector<Instruction*> operands = {out, xs[static_cast<size_t>(i)]};
    for (int e = 0; e < rank; ++e) {
      if (e == axis) {
        TFJIT_ASSIGN_OR_RETURN(Instruction * at, ctx.SizeValue(offset));
        operands.push_back(at);
      } else {
        TFJIT_ASSIGN_OR_RETURN(Instruction * zero, Scalar64(ctx, 0));
        operands.push_back(zero);
      }
    }
    TFJIT_ASSIGN_OR_RETURN(out, ctx.b().Add(hlo::Opcode::kDynamicUpdateSlice, operands));
    const DynamicDim* d = ctx.DynamicInput(node, i);
    offset = Sum(offset,
                 d != nullptr ? d->size : Constant(xs[static_cast<size_t>(i)]->shape().dim(axis)));
  }
  ctx.SetOutput(node, 0, out);
  ctx.SetDynamic({const_cast<tf::Node*>(&node), 0}, DynamicDim{axis, offset});
  return true;
}

// Reshape of a value padded in dim 0 to a shape whose leading entry is -1 or f * size (and
// whose other entries are constants that split the rest of a row evenly): the real rows stay
// the leading ones, f per input row.
absl::StatusOr<bool> LowerPaddedReshape(LoweringContext& ctx, const tf::Node& node,
                                        const DynamicDim& d) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  std::optional<std::vector<SymExpr>> shape = ctx.SymbolicInput(node, 1);
  auto refuse = [&](absl::string_view why) {
    return Unimplemented(
        "node %s: reshapes %s, padded in dim %d with a size known only at run "
        "time, %s",
        node.DebugName(), x->shape().ToString(), d.dim, why);
  };
  if (!shape.has_value() || shape->empty()) return refuse("to a shape not known when compiling");
  bool constant = true;
  int64_t total = 1;
  for (const SymExpr& e : *shape) {
    constant &= e.IsConstant() && e.constant >= 0;
    total *= e.IsConstant() ? e.constant : 1;
  }
  if (constant) {  // a static shape: TF's kernel needs the real element count to be its own
    int64_t others = 1;
    for (int i = 0; i < x->shape().rank(); ++i) others *= i == d.dim ? 1 : x->shape().dim(i);
    if (others == 0 || total % others != 0) {
      return InvalidArgument(
          "node %s: Input to reshape is a tensor with a size known only at run "
          "time that cannot give the requested shape with %d values",
          node.DebugName(), total);
    }
    TFJIT_ASSIGN_OR_RETURN(Instruction * fixed, MakeStatic(ctx, node, x, d, total / others));
    TFJIT_RETURN_IF_ERROR(LowerWith(ctx, node, {fixed}));
    return true;
  }
  if (d.dim != 0) return refuse("which must be the leading dim");
  int64_t row = 1;  // elements per input row
  for (int i = 1; i < x->shape().rank(); ++i) row *= x->shape().dim(i);
  int64_t rest = 1;
  std::vector<int64_t> dims = {0};
  for (size_t i = 1; i < shape->size(); ++i) {
    if (!(*shape)[i].IsConstant() || (*shape)[i].constant < 0) {
      return refuse("whose trailing dims are not constants");
    }
    rest *= (*shape)[i].constant;
    dims.push_back((*shape)[i].constant);
  }
  if (rest == 0 || row % rest != 0) return refuse("whose trailing dims do not split a row");
  const int64_t f = row / rest;
  const SymExpr size = Scaled(d.size, f);
  const SymExpr& lead = (*shape)[0];
  if (!(lead.IsConstant() && lead.constant == -1) && !(lead == size)) {
    return refuse("whose leading dim is not -1 or the run-time size times the row split");
  }
  dims[0] = x->shape().dim(0) * f;
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Reshape(x, dims));
  ctx.SetOutput(node, 0, r);
  ctx.SetDynamic({const_cast<tf::Node*>(&node), 0}, DynamicDim{0, size});
  return true;
}

// Slice with a padded input or sizes computed at run time. Per dim: a constant begin; a size
// that is a constant (the slice must fit the run-time size: checked), -1 (the rest: padded on),
// or computed at run time (padded, with that size as a new atom, or its expression).
absl::StatusOr<bool> LowerPaddedSlice(LoweringContext& ctx, const tf::Node& node) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
  const DynamicDim* d = ctx.DynamicInput(node, 0);
  std::optional<std::vector<SymExpr>> begin = ctx.SymbolicInput(node, 1);
  std::optional<std::vector<SymExpr>> size = ctx.SymbolicInput(node, 2);
  const int rank = x->shape().rank();
  if (d == nullptr && size.has_value() && begin.has_value()) {
    bool constant = true;
    for (const SymExpr& e : *size) constant &= e.IsConstant();
    for (const SymExpr& e : *begin) constant &= e.IsConstant();
    if (constant) return false;  // the plain lowering
  }
  if (!begin.has_value()) return ctx.ConstantInput(node, 1).status();
  TFJIT_ASSIGN_OR_RETURN(Instruction * size_v, ctx.Input(node, 2));
  if (begin->size() != static_cast<size_t>(rank) ||
      size_v->shape().num_elements() != static_cast<int64_t>(rank)) {
    return InvalidArgument(
        "node %s: Expected begin and size arguments to be 1-D tensors of "
        "size %d",
        node.DebugName(), rank);
  }
  std::vector<hlo::SliceDim> slice(static_cast<size_t>(rank));
  std::optional<DynamicDim> out;
  for (int e = 0; e < rank; ++e) {
    const SymExpr& b = (*begin)[static_cast<size_t>(e)];
    const int64_t bound = x->shape().dim(e);
    if (!b.IsConstant() || b.constant < 0 || b.constant > bound) {
      return Unimplemented("node %s: begin[%d] must be a constant in [0, %d]", node.DebugName(), e,
                           bound);
    }
    const SymExpr in_size = d != nullptr && d->dim == e ? d->size : Constant(bound);
    std::optional<SymExpr> n;
    if (size.has_value()) n = (*size)[static_cast<size_t>(e)];
    Instruction* element = nullptr;  // size[e] in HLO
    if (!n.has_value()) {
      // A Pack of scalars (tf.stack([rows, -1])): the entry's own value, which may fold when
      // the others do not.
      const tf::Node* pack = node.input(2).node;
      if (pack->op() == "Pack" && pack->num_inputs() == rank) {
        absl::StatusOr<Instruction*> v = ctx.Value(pack->input(e));
        if (v.ok() && (*v)->shape().rank() == 0) element = *v;
      }
      if (element == nullptr) {
        TFJIT_ASSIGN_OR_RETURN(element, ctx.b().Slice(size_v, {{e, e + 1, 1}}));
        TFJIT_ASSIGN_OR_RETURN(element, ctx.b().Reshape(element, {}));
      }
      if (absl::StatusOr<Tensor> known = ctx.Evaluate(element); known.ok()) {
        n = Constant(ElementAsInt64(*known, 0));
      }
    }
    if (n.has_value() && n->IsConstant() && n->constant >= 0) {
      if (n->constant + b.constant > bound) {
        return InvalidArgument("node %s: Expected size[%d] in [0, %d], but got %d",
                               node.DebugName(), e, bound - b.constant, n->constant);
      }
      if (!in_size.IsConstant()) {  // must fit the run-time size
        TFJIT_ASSIGN_OR_RETURN(Instruction * s, ctx.SizeValue(in_size));
        TFJIT_ASSIGN_OR_RETURN(Instruction * need, Scalar64(ctx, n->constant + b.constant));
        TFJIT_ASSIGN_OR_RETURN(Instruction * bad,
                               ctx.b().Compare(hlo::ComparisonDirection::kLt, s, need));
        TFJIT_RETURN_IF_ERROR(
            ctx.AddConditionCheck(node, bad,
                                  absl::StrCat("Expected size[", e, "] in [0, the run-time size - ",
                                               b.constant, "], but got ", n->constant)));
      }
      slice[static_cast<size_t>(e)] = {b.constant, b.constant + n->constant, 1};
      continue;
    }
    // -1, an expression, or a value computed at run time: the output dim is padded.
    slice[static_cast<size_t>(e)] = {b.constant, bound, 1};
    SymExpr out_size;
    if (n.has_value() && n->IsConstant()) {  // -1: the rest
      out_size = Sum(in_size, Constant(-b.constant));
      if (out_size.IsConstant()) continue;  // a static dim: {b, bound}
      TFJIT_RETURN_IF_ERROR(
          CheckBetween(ctx, node, out_size, Constant(0), in_size,
                       absl::StrCat("Expected begin[", e,
                                    "] in [0, the input's run-time size], but got ", b.constant)));
    } else if (n.has_value()) {
      out_size = *n;
      TFJIT_RETURN_IF_ERROR(
          CheckBetween(ctx, node, out_size, Constant(0), Sum(in_size, Constant(-b.constant)),
                       absl::StrCat("Expected size[", e, "] in [0, the input's size - ", b.constant,
                                    "] (computed at run time)")));
    } else {
      hlo::Builder& hb = ctx.b();
      TFJIT_ASSIGN_OR_RETURN(Instruction * v, hb.Convert(element, DType::kInt64));
      TFJIT_ASSIGN_OR_RETURN(Instruction * rest,
                             ctx.SizeValue(Sum(in_size, Constant(-b.constant))));
      TFJIT_ASSIGN_OR_RETURN(Instruction * minus1, Scalar64(ctx, -1));
      TFJIT_ASSIGN_OR_RETURN(Instruction * all,
                             hb.Compare(hlo::ComparisonDirection::kEq, v, minus1));
      TFJIT_ASSIGN_OR_RETURN(v, hb.Select(all, rest, v));
      // TF: 0 <= size and begin + size <= the input's size.
      TFJIT_ASSIGN_OR_RETURN(Instruction * zero, Scalar64(ctx, 0));
      TFJIT_ASSIGN_OR_RETURN(Instruction * neg, hb.Compare(hlo::ComparisonDirection::kLt, v, zero));
      TFJIT_ASSIGN_OR_RETURN(Instruction * over,
                             hb.Compare(hlo::ComparisonDirection::kGt, v, rest));
      TFJIT_ASSIGN_OR_RETURN(Instruction * bad, hb.Binary(hlo::Opcode::kOr, neg, over));
      TFJIT_RETURN_IF_ERROR(
          ctx.AddConditionCheck(node, bad,
                                absl::StrCat("Expected size[", e, "] in [0, the input's size - ",
                                             b.constant, "] (computed at run time)")));
      out_size = ctx.NewSizeAtom(v, bound - b.constant);
    }
    if (out.has_value()) {
      return Unimplemented(
          "node %s: more than one dim of the slice has a size known only at "
          "run time",
          node.DebugName());
    }
    out = DynamicDim{e, out_size};
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.b().Slice(x, slice));
  ctx.SetOutput(node, 0, r);
  if (out.has_value()) ctx.SetDynamic({const_cast<tf::Node*>(&node), 0}, *out);
  return true;
}

// Range(start, limit, delta) with integer constants start and delta > 0 and a limit computed at
// run time whose upper bound is known (value ranges): iota to the bound, padded to the size.
absl::StatusOr<bool> LowerPaddedRange(LoweringContext& ctx, const tf::Node& node) {
  std::optional<std::vector<SymExpr>> start = ctx.SymbolicInput(node, 0);
  std::optional<std::vector<SymExpr>> limit = ctx.SymbolicInput(node, 1);
  std::optional<std::vector<SymExpr>> delta = ctx.SymbolicInput(node, 2);
  if (limit.has_value() && limit->size() == 1 && (*limit)[0].IsConstant()) return false;
  const DType t = node.output_types()[0];
  if (!start.has_value() || !delta.has_value() || start->size() != 1 || delta->size() != 1 ||
      !(*start)[0].IsConstant() || !(*delta)[0].IsConstant() || (*delta)[0].constant <= 0 ||
      (t != DType::kInt32 && t != DType::kInt64)) {
    return false;  // the plain lowering: TF's compile-time-constant error
  }
  const int64_t s0 = (*start)[0].constant, step = (*delta)[0].constant;
  TFJIT_ASSIGN_OR_RETURN(Instruction * lim, ctx.Input(node, 1));
  RangeCache cache;
  std::optional<Interval> range = ValueRange(ctx, lim, cache);
  if (!range.has_value() || range->hi == std::numeric_limits<int64_t>::max()) return false;
  const int64_t bound = std::max<int64_t>(0, (range->hi - s0 + step - 1) / step);
  if (bound > (int64_t{1} << 31)) return false;
  hlo::Builder& b = ctx.b();
  SymExpr size;
  if (limit.has_value() && limit->size() == 1 && step == 1 && range->lo >= s0) {
    size = Sum((*limit)[0], Constant(-s0));  // an expression: keeps Pad's arithmetic exact
  } else {
    // max(0, ceil((limit - start) / delta)) at run time.
    TFJIT_ASSIGN_OR_RETURN(Instruction * l, b.Reshape(lim, {}));
    TFJIT_ASSIGN_OR_RETURN(l, b.Convert(l, DType::kInt64));
    TFJIT_ASSIGN_OR_RETURN(Instruction * c, Scalar64(ctx, step - 1 - s0));
    TFJIT_ASSIGN_OR_RETURN(l, b.Binary(hlo::Opcode::kAdd, l, c));
    TFJIT_ASSIGN_OR_RETURN(Instruction * zero, Scalar64(ctx, 0));
    TFJIT_ASSIGN_OR_RETURN(l, b.Binary(hlo::Opcode::kMaximum, l, zero));
    TFJIT_ASSIGN_OR_RETURN(Instruction * st, Scalar64(ctx, step));
    TFJIT_ASSIGN_OR_RETURN(l, b.Binary(hlo::Opcode::kDivide, l, st));
    size = ctx.NewSizeAtom(l, bound);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * iota, b.Iota(hlo::Shape(t, {bound}), 0));
  TFJIT_ASSIGN_OR_RETURN(Instruction * scale, ctx.Splat(t, static_cast<double>(step), {bound}));
  TFJIT_ASSIGN_OR_RETURN(iota, b.Binary(hlo::Opcode::kMultiply, iota, scale));
  TFJIT_ASSIGN_OR_RETURN(Instruction * first, ctx.Splat(t, static_cast<double>(s0), {bound}));
  TFJIT_ASSIGN_OR_RETURN(iota, b.Binary(hlo::Opcode::kAdd, iota, first));
  ctx.SetOutput(node, 0, iota);
  ctx.SetDynamic({const_cast<tf::Node*>(&node), 0}, DynamicDim{0, size});
  return true;
}

// Fill(dims, value) whose dims hold one size known only at run time: filled to its bound.
absl::StatusOr<bool> LowerPaddedFill(LoweringContext& ctx, const tf::Node& node) {
  std::optional<std::vector<SymExpr>> dims = ctx.SymbolicInput(node, 0);
  if (!dims.has_value()) return false;
  std::vector<int64_t> bounds;
  std::optional<DynamicDim> out;
  for (size_t i = 0; i < dims->size(); ++i) {
    const SymExpr& e = (*dims)[i];
    if (e.IsConstant()) {
      if (e.constant < 0) return false;  // the plain lowering's error
      bounds.push_back(e.constant);
      continue;
    }
    if (out.has_value()) {
      return Unimplemented("node %s: more than one dim is known only at run time",
                           node.DebugName());
    }
    out = DynamicDim{static_cast<int>(i), e};
    TFJIT_RETURN_IF_ERROR(CheckBetween(ctx, node, e, Constant(0), Constant(ctx.UpperBound(e)),
                                       "dims must be non-negative (computed at run time)"));
    bounds.push_back(ctx.UpperBound(e));
  }
  if (!out.has_value()) return false;
  TFJIT_ASSIGN_OR_RETURN(Instruction * value, ctx.Input(node, 1));
  if (value->shape().rank() != 0) {
    return InvalidArgument("node %s: value must be a scalar, got %s", node.DebugName(),
                           value->shape().ToString());
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * r, ctx.BroadcastTo(value, bounds));
  ctx.SetOutput(node, 0, r);
  ctx.SetDynamic({const_cast<tf::Node*>(&node), 0}, *out);
  return true;
}

bool IsElementwiseBinary(absl::string_view op);

// An elementwise op whose padded input meets a static input of another extent (not 1) in the
// same output dim: TF's kernel needs the run-time size to be that extent, so the padded input
// becomes static first (MakeStatic); the rest is PropagatePadded's after the plain lowering.
absl::StatusOr<bool> LowerPaddedElementwise(LoweringContext& ctx, const tf::Node& node) {
  const int n = node.num_inputs();
  int out_rank = 0;
  std::vector<Instruction*> xs;
  for (int i = 0; i < n; ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, i));
    out_rank = std::max(out_rank, x->shape().rank());
    xs.push_back(x);
  }
  auto offset = [&](int i) {
    if (node.op() == "Select" && i == 0 && xs[0]->shape().rank() == 1 && out_rank > 1) return 0;
    return out_rank - xs[static_cast<size_t>(i)]->shape().rank();
  };
  std::vector<Instruction*> overrides(static_cast<size_t>(n), nullptr);
  bool changed = false;
  for (int i = 0; i < n; ++i) {
    const DynamicDim* d = ctx.DynamicInput(node, i);
    if (d == nullptr) continue;
    const int od = d->dim + offset(i);
    const int64_t bound = xs[static_cast<size_t>(i)]->shape().dim(d->dim);
    for (int j = 0; j < n; ++j) {
      if (j == i || ctx.DynamicInput(node, j) != nullptr) continue;
      const int k = od - offset(j);
      if (k < 0 || k >= xs[static_cast<size_t>(j)]->shape().rank()) continue;
      const int64_t extent = xs[static_cast<size_t>(j)]->shape().dim(k);
      if (extent == 1 || extent == bound) continue;
      TFJIT_ASSIGN_OR_RETURN(overrides[static_cast<size_t>(i)],
                             MakeStatic(ctx, node, xs[static_cast<size_t>(i)], *d, extent));
      changed = true;
      break;
    }
  }
  if (!changed) return false;
  TFJIT_RETURN_IF_ERROR(LowerWith(ctx, node, overrides));
  // Inputs still padded (another one was made static): the output is padded as they are.
  for (int i = 0; i < n; ++i) {
    if (overrides[static_cast<size_t>(i)] != nullptr) continue;
    if (const DynamicDim* d = ctx.DynamicInput(node, i)) {
      ctx.SetDynamic({const_cast<tf::Node*>(&node), 0}, DynamicDim{d->dim + offset(i), d->size});
      break;
    }
  }
  return true;
}

bool IsElementwiseBinary(absl::string_view op) {
  static constexpr const char* kOps[] = {
      "Add",      "AddV2",      "Sub",          "Mul",    "RealDiv",   "Maximum",
      "Minimum",  "Greater",    "GreaterEqual", "Less",   "LessEqual", "Equal",
      "NotEqual", "LogicalAnd", "LogicalOr",    "Select", "SelectV2"};
  for (const char* o : kOps) {
    if (op == o) return true;
  }
  return false;
}

// Elementwise ops (binary, Select) and ConcatV2/Split/ExpandDims along another dim: the output
// is padded in the dim the padded inputs map to; their sizes, and a static input's extent
// there (other than 1, which broadcasts), must equal at run time.
absl::Status PropagatePadded(LoweringContext& ctx, const tf::Node& node) {
  const std::vector<Instruction*> outs = ctx.OutputsOf(node);
  if (outs.empty() || outs[0] == nullptr) return absl::OkStatus();
  const absl::string_view op = node.op();
  const int out_rank = outs[0]->shape().rank();
  if (op == "ExpandDims") {
    const DynamicDim* d = ctx.DynamicInput(node, 0);
    if (d == nullptr) return absl::OkStatus();
    TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> axis, ctx.ConstantInputAsInts(node, 1));
    const int64_t a = axis.empty() ? 0 : (axis[0] < 0 ? axis[0] + out_rank : axis[0]);
    ctx.SetDynamic({const_cast<tf::Node*>(&node), 0},
                   DynamicDim{d->dim >= a ? d->dim + 1 : d->dim, d->size});
    return absl::OkStatus();
  }
  if (op == "Split") {
    const DynamicDim* d = ctx.DynamicInput(node, 1);
    if (d == nullptr) return absl::OkStatus();
    TFJIT_ASSIGN_OR_RETURN(std::vector<int64_t> axis, ctx.ConstantInputAsInts(node, 0));
    const int64_t a = axis.empty() ? 0 : (axis[0] < 0 ? axis[0] + out_rank : axis[0]);
    if (a == d->dim) {
      return Unimplemented("node %s: splits dim %d, whose size is known only at run time",
                           node.DebugName(), a);
    }
    for (int o = 0; o < node.num_outputs(); ++o) {
      ctx.SetDynamic({const_cast<tf::Node*>(&node), o}, *d);
    }
    return absl::OkStatus();
  }
  const bool concat = op == "ConcatV2";
  if (!concat && !IsElementwiseBinary(op)) return absl::OkStatus();
  const int n = concat ? node.num_inputs() - 1 : node.num_inputs();
  std::optional<DynamicDim> result;
  std::vector<std::pair<Instruction*, int>> operands;  // value, its first output dim
  for (int i = 0; i < n; ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, i));
    int offset = out_rank - x->shape().rank();
    // Select (v1) with a vector condition picks whole rows: its dim 0 is the output's dim 0.
    if (op == "Select" && i == 0 && x->shape().rank() == 1 && out_rank > 1) offset = 0;
    operands.push_back({x, offset});
    const DynamicDim* d = ctx.DynamicInput(node, i);
    if (d == nullptr) continue;
    const DynamicDim mapped{d->dim + offset, d->size};
    if (!result.has_value()) {
      result = mapped;
    } else if (result->dim != mapped.dim) {
      return Unimplemented("node %s: its inputs are padded in different dims", node.DebugName());
    } else {
      TFJIT_RETURN_IF_ERROR(
          CheckSameSize(ctx, node, result->size, mapped.size,
                        absl::StrCat("the run-time sizes of dim ", mapped.dim, " differ")));
    }
  }
  if (!result.has_value()) return absl::OkStatus();
  for (int i = 0; i < n; ++i) {
    if (ctx.DynamicInput(node, i) != nullptr) continue;
    const auto [x, offset] = operands[static_cast<size_t>(i)];
    const int k = result->dim - offset;
    if (k < 0 || k >= x->shape().rank() || x->shape().dim(k) == 1) continue;
    TFJIT_RETURN_IF_ERROR(
        CheckSameSize(ctx, node, result->size, Constant(x->shape().dim(k)),
                      absl::StrCat("input ", i, " has ", x->shape().dim(k), " in dim ", k,
                                   " and another input a different run-time size")));
  }
  ctx.SetDynamic({const_cast<tf::Node*>(&node), 0}, *result);
  return absl::OkStatus();
}

// The padded lowering of `node`, or false where its plain lowering applies.
absl::StatusOr<bool> LowerPaddedNode(LoweringContext& ctx, const tf::Node& node) {
  const absl::string_view op = node.op();
  if (op == "Range") return LowerPaddedRange(ctx, node);
  if (op == "Slice") return LowerPaddedSlice(ctx, node);
  if (op == "Fill") return LowerPaddedFill(ctx, node);
  if (op == "TopKV2") return LowerPaddedTopK(ctx, node);
  const DynamicDim* d = node.num_inputs() > 0 ? ctx.DynamicInput(node, 0) : nullptr;
  if (op == "ConcatV2") return LowerPaddedConcat(ctx, node);
  if (IsElementwiseBinary(op)) return LowerPaddedElementwise(ctx, node);
  if (d == nullptr) return false;
  if (op == "Sum" || op == "Prod" || op == "Max" || op == "Min" || op == "Any" || op == "All") {
    return LowerPaddedReduction(ctx, node, *d);
  }
  if (op == "Reshape") return LowerPaddedReshape(ctx, node, *d);
  if (op == "Where") {  // the padding is false: only real elements are listed
    TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, 0));
    TFJIT_ASSIGN_OR_RETURN(Instruction * zero, ctx.Splat(x->shape().element_type(), 0.0, {}));
    TFJIT_ASSIGN_OR_RETURN(Instruction * masked, MaskBeyond(ctx, x, d->dim, d->size, zero));
    TFJIT_RETURN_IF_ERROR(LowerWith(ctx, node, {masked}));
    return true;
  }
  return false;
}

// The ops that make a padded value from a run-time size that is no expression (a count read
// from padded data), tried after their plain lowering fails.
bool SizesFromValues(absl::string_view op) {
  return op == "Range" || op == "Slice" || op == "Fill" || op == "TopKV2";
}

}  // namespace

absl::Status LowerNodeWithSizes(LoweringContext& ctx, const tf::Node& node,
                                const OpLowering& lowering) {
  bool sized = false;  // an input is padded or holds run-time sizes
  for (int i = 0; i < node.num_inputs() && !sized; ++i) {
    sized = ctx.DynamicInput(node, i) != nullptr || ctx.HasSymbolic(node.input(i));
  }
  bool padded = false;
  if (sized) {
    TFJIT_ASSIGN_OR_RETURN(padded, LowerPaddedNode(ctx, node));
  }
  if (!padded) {
    absl::Status plain = lowering.fn(ctx, node);
    if (!plain.ok() && !sized && SizesFromValues(node.op())) {
      TFJIT_ASSIGN_OR_RETURN(padded, LowerPaddedNode(ctx, node));
    }
    if (!padded) TFJIT_RETURN_IF_ERROR(plain);
  }
  TFJIT_RETURN_IF_ERROR(PropagateDynamicSizes(ctx, node, padded));
  if (!padded && ctx.DynamicOf({const_cast<tf::Node*>(&node), 0}) == nullptr) {
    return PropagatePadded(ctx, node);
  }
  return absl::OkStatus();
}

}  // namespace tfjit::tf2hlo
