// Lowerings of the random_more ops to HLO (docs/DESIGN.md, "Op families"), with the semantics of
// TF's XLA kernels (tf2xla) and the bits of TF's CPU kernels.
//
// StatelessRandomUniformFullInt(V2), XlaRngBitGenerator and (Stateless)Multinomial lower in
// random_lowerings.cc, next to the Philox HLO, seed scramble and stateful-state plumbing they
// share with the older random ops. StatelessParameterizedTruncatedNormal is not lowered: TF's
// CPU kernel runs three rejection samplers whose accept/reject tests and values go through exp
// and log in the output type, and the CPU JIT's f32 exp is its own fast approximation
// (backends/llvm/elemental_math.cc), so compiled samples could not match the kernel's (TF's)
// bit for bit; the stream position also depends on every earlier batch's rejections. (tf2xla
// samples it with an inverse CDF instead, which is not TF's CPU stream either.) It runs as a
// kernel.
#include "compiler/tf2hlo/op_lowerings.h"

namespace tfjit::tf2hlo {

void AppendRandomMoreLowerings(std::vector<OpLowering>* table) { (void)table; }

}  // namespace tfjit::tf2hlo
