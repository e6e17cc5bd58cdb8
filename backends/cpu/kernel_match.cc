// Matching HLO instructions to the CPU backend's library calls and special kernels.
#include "backends/cpu/kernel_match.h"

namespace tfjit::cpu {

using hlo::Instruction;
using hlo::Opcode;

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
      root->operand(1)->opcode() != Opcode::kParameter ||
      root->operand(0) == root->operand(1)) {
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

}  // namespace tfjit::cpu
