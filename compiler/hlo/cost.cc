#include "compiler/hlo/cost.h"

#include "compiler/hlo/computation.h"
#include "compiler/hlo/instruction.h"
#include "core/dtype.h"

namespace tfjit::hlo {

int64_t MatmulFlops(const Module& module) {
  double flops = 0;  // double: a hostile module's product of dims may pass int64
  for (const Computation* computation : module.computations()) {
    for (const Instruction* instr : computation->instructions()) {
      if (!IsFloatingDType(instr->shape().element_type())) continue;
      const double out = static_cast<double>(instr->shape().num_elements());
      if (instr->opcode() == Opcode::kDot) {
        // Each output element sums over the lhs contracting dims.
        double k = 1;
        for (int64_t d : instr->attrs().dot.lhs_contracting) {
          k *= static_cast<double>(instr->operand(0)->shape().dims()[static_cast<size_t>(d)]);
        }
        flops += 2 * out * k;
      } else if (instr->opcode() == Opcode::kConvolution) {
        // Each output element sums over the kernel's spatial taps and input features (the
        // kernel's elements per output feature).
        const Shape& kernel = instr->operand(1)->shape();
        const int64_t out_features =
            kernel.dims()[static_cast<size_t>(instr->attrs().conv.kernel_output_feature)];
        if (out_features == 0) continue;
        flops += 2 * out * static_cast<double>(kernel.num_elements() / out_features);
      }
    }
  }
  return flops >= 9.2e18 ? INT64_MAX : static_cast<int64_t>(flops);
}

}  // namespace tfjit::hlo
