#include "compiler/hlo/cost.h"

#include <algorithm>
#include <vector>

#include "absl/strings/str_join.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/instruction.h"
#include "core/dtype.h"

namespace tfjit::hlo {

namespace {

// 2 * multiply-adds of a floating-point dot or convolution; 0 for anything else.
double OwnFlops(const Instruction& instr) {
  if (!IsFloatingDType(instr.shape().element_type())) return 0;
  const double out = static_cast<double>(instr.shape().num_elements());
  if (instr.opcode() == Opcode::kDot) {
    // Each output element sums over the lhs contracting dims.
    double k = 1;
    for (int64_t d : instr.attrs().dot.lhs_contracting) {
      k *= static_cast<double>(instr.operand(0)->shape().dims()[static_cast<size_t>(d)]);
    }
    return 2 * out * k;
  }
  if (instr.opcode() == Opcode::kConvolution) {
    // Each output element sums over the kernel's spatial taps and input features (the
    // kernel's elements per output feature).
    const Shape& kernel = instr.operand(1)->shape();
    const int64_t out_features =
        kernel.dims()[static_cast<size_t>(instr.attrs().conv.kernel_output_feature)];
    if (out_features == 0) return 0;
    return 2 * out * static_cast<double>(kernel.num_elements() / out_features);
  }
  return 0;
}

int64_t Saturate(double v) { return v >= 9.2e18 ? INT64_MAX : static_cast<int64_t>(v); }

double ShapeBytes(const Shape& shape) {
  if (!shape.IsTuple()) return static_cast<double>(shape.byte_size());
  double bytes = 0;
  for (const Shape& s : shape.tuple_shapes()) bytes += ShapeBytes(s);
  return bytes;
}

}  // namespace

int64_t MatmulFlops(const Module& module) {
  double flops = 0;  // double: a hostile module's product of dims may pass int64
  for (const Computation* computation : module.computations()) {
    for (const Instruction* instr : computation->instructions()) flops += OwnFlops(*instr);
  }
  return Saturate(flops);
}

int64_t InstructionFlops(const Instruction& instr) {
  if (instr.opcode() != Opcode::kFusion) return Saturate(OwnFlops(instr));
  double flops = 0;
  for (const Instruction* i : instr.called_computations()[0]->instructions()) {
    flops += OwnFlops(*i);
  }
  return Saturate(flops);
}

int64_t InstructionBytes(const Instruction& instr) {
  double bytes = ShapeBytes(instr.shape());
  for (const Instruction* operand : instr.operands()) bytes += ShapeBytes(operand->shape());
  return Saturate(bytes);
}

std::string OpsSummary(const Instruction& instr) {
  if (instr.opcode() != Opcode::kFusion) return std::string(OpcodeName(instr.opcode()));
  constexpr size_t kMaxOps = 8;
  std::vector<absl::string_view> ops;
  bool more = false;
  for (const Instruction* i : instr.called_computations()[0]->instructions()) {
    switch (i->opcode()) {
      case Opcode::kParameter:
      case Opcode::kConstant:
      case Opcode::kTuple:
      case Opcode::kGetTupleElement:
        continue;
      default:
        break;
    }
    const absl::string_view name = OpcodeName(i->opcode());
    if (std::find(ops.begin(), ops.end(), name) != ops.end()) continue;
    if (ops.size() == kMaxOps) {
      more = true;
      break;
    }
    ops.push_back(name);
  }
  std::string summary = absl::StrJoin(ops, "+");
  if (more) summary += "+...";
  return summary;
}

}  // namespace tfjit::hlo
