// Matching HLO instructions to the CPU backend's library calls and special kernels.
#include "backends/cpu/kernel_match.h"

#include <climits>
#include <cmath>
#include <vector>

#include "core/linalg.h"
#include "core/nms.h"
#include "core/random_fill.h"
#include "core/top_k.h"
#include "core/where.h"

namespace tfjit::cpu {

using hlo::Instruction;
using hlo::Opcode;

namespace {

// The custom-calls the runtime library implements, with the shapes it accepts (HLO.md).
bool IsRandomFill(const Instruction& inst) {
  return random::RandomDistributionOfTarget(inst.attrs().custom_call_target).has_value() &&
         inst.shape().IsArray() && random::IsRandomFillDType(inst.shape().element_type()) &&
         inst.operand_count() == 1 && inst.operand(0)->shape() == hlo::Shape(DType::kUInt64, {3});
}

// tfjit.top_k: T[..., n] -> (T[..., k], s32[..., k]) with k <= n < 2^31.
bool IsTopK(const Instruction& inst) {
  if (inst.attrs().custom_call_target != topk::kTopKTarget || inst.operand_count() != 1) {
    return false;
  }
  const hlo::Shape& in = inst.operand(0)->shape();
  const hlo::Shape& s = inst.shape();
  if (!in.IsArray() || in.rank() < 1 || !topk::IsTopKDType(in.element_type()) || !s.IsTuple() ||
      s.tuple_shapes().size() != 2 || !s.tuple_shape(0).IsArray()) {
    return false;
  }
  std::vector<int64_t> dims = in.dims();
  const int64_t n = dims.back();
  const int64_t k = s.tuple_shape(0).dims().empty() ? -1 : s.tuple_shape(0).dims().back();
  dims.back() = k;
  return k >= 0 && k <= n && n <= INT32_MAX &&
         s.tuple_shape(0) == hlo::Shape(in.element_type(), dims) &&
         s.tuple_shape(1) == hlo::Shape(DType::kInt32, dims);
}

// tfjit.non_max_suppression: boxes f32[n, 4], scores f32[n], two f32[] thresholds ->
// (s32[k], s32[]); with a fifth f32[] operand (soft-NMS sigma) -> (s32[k], s32[], f32[k]).
bool IsNms(const Instruction& inst) {
  const int64_t operands = inst.operand_count();
  if (inst.attrs().custom_call_target != nms::kNmsTarget || (operands != 4 && operands != 5)) {
    return false;
  }
  const hlo::Shape& boxes = inst.operand(0)->shape();
  const hlo::Shape& s = inst.shape();
  if (!boxes.IsArray() || boxes.element_type() != DType::kFloat32 || boxes.rank() != 2 ||
      boxes.dims()[1] != 4 || !s.IsTuple() ||
      static_cast<int64_t>(s.tuple_shapes().size()) != operands - 2) {
    return false;
  }
  for (int64_t i = 2; i < operands; ++i) {
    if (inst.operand(i)->shape() != hlo::Shape(DType::kFloat32, {})) return false;
  }
  const hlo::Shape& idx = s.tuple_shape(0);
  if (!idx.IsArray() || idx.element_type() != DType::kInt32 || idx.rank() != 1) return false;
  return inst.operand(1)->shape() == hlo::Shape(DType::kFloat32, {boxes.dims()[0]}) &&
         s.tuple_shape(1) == hlo::Shape(DType::kInt32, {}) &&
         (operands == 4 || s.tuple_shape(2) == hlo::Shape(DType::kFloat32, idx.dims()));
}

// tfjit.where: pred[d...] -> (s64[n, rank], s64[]), n the operand's element count.
bool IsWhere(const Instruction& inst) {
  if (inst.attrs().custom_call_target != where::kWhereTarget || inst.operand_count() != 1) {
    return false;
  }
  const hlo::Shape& in = inst.operand(0)->shape();
  const hlo::Shape& s = inst.shape();
  return in.IsArray() && in.element_type() == DType::kBool && s.IsTuple() &&
         s.tuple_shapes().size() == 2 &&
         s.tuple_shape(0) == hlo::Shape(DType::kInt64, {in.num_elements(), in.rank()}) &&
         s.tuple_shape(1) == hlo::Shape(DType::kInt64, {});
}

// tfjit.linalg.<op>.<flags> (core/linalg.h) on the shapes its routine takes.
bool IsLinalg(const Instruction& inst) {
  const std::optional<linalg::Call> call = linalg::CallOfTarget(inst.attrs().custom_call_target);
  if (!call.has_value() || inst.operand_count() < 1 || inst.operand_count() > 2 ||
      !inst.shape().IsTuple() || inst.shape().tuple_shapes().size() > 3) {
    return false;
  }
  std::vector<std::vector<int64_t>> ins;
  for (int64_t i = 0; i < inst.operand_count(); ++i) {
    if (!inst.operand(i)->shape().IsArray()) return false;
    ins.push_back(inst.operand(i)->shape().dims());
  }
  std::vector<std::pair<DType, std::vector<int64_t>>> outs;
  for (const hlo::Shape& t : inst.shape().tuple_shapes()) {
    if (!t.IsArray()) return false;
    outs.push_back({t.element_type(), t.dims()});
  }
  return linalg::MatchShapes(*call, inst.operand(0)->shape().element_type(), ins, outs).has_value();
}

}  // namespace

bool IsLibraryCustomCall(const Instruction& inst) {
  return IsRandomFill(inst) || IsTopK(inst) || IsLinalg(inst) || IsNms(inst) || IsWhere(inst);
}

// A dot or convolution whose elementwise consumers may run as an epilogue of its library call
// (CpuFusionPolicy): the call must report finished rows of the result as laid out, [rows,
// last dim], so a dot needs its output's last dim to be n.
bool IsEpilogueHero(const Instruction& inst) {
  if (inst.opcode() == Opcode::kConvolution) return MatchConv2D(inst).has_value();
  if (inst.opcode() != Opcode::kDot) return false;
  const std::optional<GemmShape> g = MatchGemm(inst);
  return g.has_value() && g->rhs_outer == 0 && inst.shape().rank() >= 2 &&
         inst.shape().dims().back() == g->n;
}

// A reduce, or an input fusion rooted at one, that keeps its operand's innermost dim and
// reduces at least 16 elements per output (a global average pool over NHWC, a column sum):
// the reduce itself, or null. The elemental loop would stride across memory for every output
// element; EmitColumnReductionBody walks the operand once in memory order instead.
const Instruction* ColumnReduction(const Instruction& inst) {
  const Instruction* r = &inst;
  if (inst.opcode() == Opcode::kFusion && inst.attrs().fusion_kind == "kInput") {
    r = inst.called_computations()[0]->root();
  }
  if (r->opcode() != Opcode::kReduce || r->operand_count() != 2 || !r->shape().IsArray()) {
    return nullptr;
  }
  const hlo::Shape& in = r->operand(0)->shape();
  if (in.rank() < 2) return nullptr;
  int64_t reduced = 1;
  for (int64_t d : r->dimensions()) {
    if (d == in.rank() - 1) return nullptr;
    reduced *= in.dim(static_cast<int>(d));
  }
  return reduced >= 16 ? r : nullptr;
}

std::optional<ScanShape> MatchScan(const Instruction& inst) {
  if (inst.opcode() != Opcode::kReduceWindow || inst.operand_count() != 2 ||
      !inst.shape().IsArray() || inst.operand(0)->shape() != inst.shape()) {
    return std::nullopt;
  }
  ScanShape s;
  s.type = inst.shape().element_type();
  if (s.type != DType::kFloat32 && s.type != DType::kFloat64 && s.type != DType::kInt32 &&
      s.type != DType::kInt64) {
    return std::nullopt;
  }
  const hlo::Computation& f = *inst.to_apply();
  const Instruction* root = f.root();
  if (f.instructions().size() != 3 || root->operand_count() != 2 ||
      (root->opcode() != Opcode::kAdd && root->opcode() != Opcode::kMultiply) ||
      root->operand(0)->opcode() != Opcode::kParameter ||
      root->operand(1)->opcode() != Opcode::kParameter || root->operand(0) == root->operand(1)) {
    return std::nullopt;
  }
  s.multiply = root->opcode() == Opcode::kMultiply;
  const Instruction* init = inst.operand(1);
  if (init->opcode() != Opcode::kConstant || !init->shape().IsScalar() ||
      ElementAsDouble(init->literal().tensor(), 0) != (s.multiply ? 1.0 : 0.0)) {
    return std::nullopt;
  }
  const std::vector<int64_t>& dims = inst.shape().dims();
  const std::vector<hlo::WindowDim>& window = inst.attrs().window;
  if (window.size() != dims.size()) return std::nullopt;
  int axis = -1;
  for (size_t d = 0; d < dims.size(); ++d) {
    const hlo::WindowDim& w = window[d];
    if (w.stride != 1 || w.lhs_dilate != 1 || w.rhs_dilate != 1 || w.pad_hi != 0) {
      return std::nullopt;
    }
    if (w.size == 1 && w.pad_lo == 0) continue;
    if (axis >= 0 || w.size != dims[d] || w.pad_lo != dims[d] - 1) return std::nullopt;
    axis = static_cast<int>(d);
  }
  if (axis < 0) return std::nullopt;
  for (int d = 0; d < static_cast<int>(dims.size()); ++d) {
    if (d < axis) s.outer *= dims[static_cast<size_t>(d)];
    if (d > axis) s.inner *= dims[static_cast<size_t>(d)];
  }
  s.n = dims[static_cast<size_t>(axis)];
  return s;
}

// The dot or convolution of an output fusion's computation, or null.
const Instruction* OutputFusionHero(const hlo::Computation& fused) {
  for (const Instruction* i : fused.instructions()) {
    if (IsEpilogueHero(*i)) return i;
  }
  return nullptr;
}

// A kOutput fusion as fusion.h describes it, with a hero the library computes: emitted as the
// library call plus an epilogue kernel. Any other fusion (kOutput ones written by hand
// included) is one elemental loop.
bool IsOutputFusion(const Instruction& inst) {
  if (inst.opcode() != Opcode::kFusion || inst.attrs().fusion_kind != "kOutput") return false;
  const Instruction* hero = OutputFusionHero(*inst.called_computations()[0]);
  if (hero == nullptr || !(hero->shape() == inst.shape())) return false;
  for (const Instruction* op : hero->operands()) {
    if (op->opcode() != Opcode::kParameter) return false;
  }
  return true;
}

gemm::Packing ConstantWeightPacking(const hlo::Instruction& hero, const hlo::Instruction& weights) {
  if (hero.shape().element_type() != DType::kFloat32 ||
      weights.shape().element_type() != DType::kFloat32) {
    return {};
  }
  if (hero.opcode() == hlo::Opcode::kDot) {
    const std::optional<GemmShape> g = MatchGemm(hero);
    if (!g.has_value() || g->rhs_outer > 0 || g->batch != 1 || g->transpose_lhs ||
        g->transpose_rhs || gemm::PackedBlockFloats(g->k, g->n) == 0) {
      return {};
    }
    return gemm::Packing{1, g->k, g->n, 0};
  }
  if (hero.opcode() != hlo::Opcode::kConvolution) return {};
  const std::optional<conv::Conv2DParams> p = MatchConv2D(hero);
  if (!p.has_value()) return {};
  const Tensor& filter = weights.literal().tensor();
  const float* w = filter.data<float>();
  for (int64_t i = 0; i < filter.num_elements(); ++i) {
    if (!std::isfinite(w[i])) return {};
  }
  return conv::FilterPackingOf(*p);
}

}  // namespace tfjit::cpu
