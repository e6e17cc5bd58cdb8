// Matching HLO instructions to the CPU backend's library calls and special kernels.
#include "backends/cpu/kernel_match.h"

namespace tfjit::cpu {

using hlo::Instruction;
using hlo::Opcode;

// A convolution that maps onto the runtime's NHWC convolution (tfjit_cpu_conv2d_*): f32 or
// f64, 2-D, dim_labels b01f_01io->b01f (what tf2hlo emits for Conv2D, depthwise and
// transposed convolutions). Everything else keeps the elemental loop.
std::optional<conv::Conv2DParams> MatchConv2D(const Instruction& inst) {
  const DType type = inst.shape().element_type();
  if (type != DType::kFloat32 && type != DType::kFloat64) return std::nullopt;
  const hlo::Shape& lhs = inst.operand(0)->shape();
  const hlo::Shape& rhs = inst.operand(1)->shape();
  const hlo::Shape& out = inst.shape();
  if (lhs.element_type() != type || rhs.element_type() != type) return std::nullopt;
  if (lhs.rank() != 4 || rhs.rank() != 4 || out.rank() != 4) return std::nullopt;
  const hlo::ConvDims& cd = inst.attrs().conv;
  const std::vector<int64_t> spatial = {1, 2}, kernel_spatial = {0, 1};
  if (cd.input_batch != 0 || cd.input_feature != 3 || cd.input_spatial != spatial ||
      cd.kernel_input_feature != 2 || cd.kernel_output_feature != 3 ||
      cd.kernel_spatial != kernel_spatial || cd.output_batch != 0 || cd.output_feature != 3 ||
      cd.output_spatial != spatial) {
    return std::nullopt;
  }
  const std::vector<hlo::WindowDim>& window = inst.attrs().window;
  if (window.size() != 2) return std::nullopt;
  for (const hlo::WindowDim& w : window) {
    if (w.stride < 1 || w.lhs_dilate < 1 || w.rhs_dilate < 1) return std::nullopt;
  }
  conv::Conv2DParams p;
  p.groups = inst.attrs().feature_group_count;
  p.batch = lhs.dim(0);
  p.in_h = lhs.dim(1);
  p.in_w = lhs.dim(2);
  p.in_c = lhs.dim(3);
  p.k_h = rhs.dim(0);
  p.k_w = rhs.dim(1);
  p.out_c = out.dim(3);
  p.out_h = out.dim(1);
  p.out_w = out.dim(2);
  if (p.groups < 1 || p.in_c % p.groups != 0 || p.out_c % p.groups != 0 ||
      rhs.dim(2) != p.in_c / p.groups || rhs.dim(3) != p.out_c || out.dim(0) != p.batch ||
      window[0].size != p.k_h || window[1].size != p.k_w) {
    return std::nullopt;
  }
  p.stride_h = window[0].stride;
  p.stride_w = window[1].stride;
  p.pad_top = window[0].pad_lo;
  p.pad_left = window[1].pad_lo;
  p.lhs_dilate_h = window[0].lhs_dilate;
  p.lhs_dilate_w = window[1].lhs_dilate;
  p.rhs_dilate_h = window[0].rhs_dilate;
  p.rhs_dilate_w = window[1].rhs_dilate;
  return p;
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
