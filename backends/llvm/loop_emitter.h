// Loop emission: counted loops and loop nests over HLO shapes. The innermost loop of a nest is
// a plain unit-stride counted loop over the last dimension (or over the flattened elements),
// the form LLVM's loop vectoriser handles.
#ifndef TFJIT_BACKENDS_LLVM_LOOP_EMITTER_H_
#define TFJIT_BACKENDS_LLVM_LOOP_EMITTER_H_

#include <cstdint>
#include <functional>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "backends/llvm/ir_array.h"

namespace tfjit::llvm_ir {

// for (i = start; i < end; ++i) body(i). On return the builder points after the loop.
// `start`/`end` are i64 values. `body` may create blocks. Loops of more than 8 iterations (or
// of unknown count) carry llvm.loop.unroll.disable, bounding code size and compile time.
absl::Status EmitForLoop(llvm::IRBuilder<>& b, absl::string_view name, llvm::Value* start,
                         llvm::Value* end, const std::function<absl::Status(llvm::Value*)>& body);

// How a kernel's iteration space is walked.
enum class LoopShape {
  kNested,  // one loop per dimension; index has multidim and linear forms
  kFlat,    // one loop over the flattened elements (for kernels that only index linearly)
};

// Loops over the elements of `dims` whose outermost coordinate lies in [begin, end) (the
// partition a thread runs): the outermost dimension for kNested, the linear index for kFlat.
// A rank-0 shape runs `body` once when begin < end. `body` receives an index into `dims`.
absl::Status EmitShapeLoop(llvm::IRBuilder<>& b, const std::vector<int64_t>& dims,
                           LoopShape loop_shape, llvm::Value* begin, llvm::Value* end,
                           const std::function<absl::Status(const IrIndex&)>& body);

// The extent EmitShapeLoop partitions: dims[0] for kNested (1 for scalars), the element count
// for kFlat.
int64_t PartitionExtent(const std::vector<int64_t>& dims, LoopShape loop_shape);

// An alloca in the function's entry block (so mem2reg promotes it), of `type`.
llvm::AllocaInst* EmitEntryAlloca(llvm::IRBuilder<>& b, llvm::Type* type, absl::string_view name);

}  // namespace tfjit::llvm_ir

#endif  // TFJIT_BACKENDS_LLVM_LOOP_EMITTER_H_
