// The CPU IR emitter's class (ir_emitter.cc: kernels, sequencing, the entry function;
// ir_emitter_calls.cc: library and custom calls). Private to backends/cpu; the interface is
// ir_emitter.h.
#ifndef TFJIT_BACKENDS_CPU_IR_EMITTER_INTERNAL_H_
#define TFJIT_BACKENDS_CPU_IR_EMITTER_INTERNAL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "backends/cpu/buffer_plan.h"
#include "backends/cpu/frame_plan.h"
#include "backends/cpu/ir_emitter.h"
#include "backends/cpu/kernel_match.h"
#include "backends/llvm/elemental_emitter.h"
#include "backends/llvm/loop_emitter.h"
#include "compiler/hlo/instruction.h"
#include "core/conv2d.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Module.h"

namespace tfjit::cpu {

using hlo::Instruction;
using llvm_ir::ElementGenerator;
using llvm_ir::IrArray;
using llvm_ir::IrIndex;

struct KernelInfo {
  llvm::Function* function = nullptr;
  int64_t extent = 1;
  // The extent at the run's batch size when it depends on it (k >= 1; a symbolic module).
  hlo::SymbolicExtent symbolic_extent;
  bool parallel = false;
  int64_t cost_per_unit = 1;
};

class CpuIrEmitter {
 public:
  CpuIrEmitter(BufferPlan& plan, const IrEmitterOptions& options, llvm::Module* module,
               bool symbolic)
      : plan_(plan),
        options_(options),
        module_(module),
        b_(module->getContext()),
        elemental_(&b_, module),
        symbolic_(symbolic) {}

  // Emits tfjit_entry for the module's entry computation and places its results.
  absl::Status EmitEntry(const hlo::Computation& entry);
  int num_kernels() const { return num_kernels_; }
  const std::vector<std::string>& kernel_names() const { return kernel_names_; }
  const std::vector<std::string>& profile_units() const { return profile_units_; }

 private:
  // ---- Kernels (module-level functions). ----
  llvm::Function* NewFunction(const std::string& name, llvm::FunctionType* type, bool internal);
  absl::StatusOr<KernelInfo> EmitKernel(const Instruction& inst,
                                        const std::vector<ValueLocation>& operand_loc,
                                        const std::vector<ValueLocation>& out_locs, bool in_place);
  // A multi-output reduce fusion (fusion.h): every output in one loop.
  absl::Status EmitMultiOutputBody(const Instruction& inst,
                                   const std::vector<ElementGenerator>& ops,
                                   const std::vector<IrArray>& outs, llvm::Value* begin,
                                   llvm::Value* end, KernelInfo& info);
  absl::Status EmitElementalBody(const Instruction& inst, const std::vector<ElementGenerator>& ops,
                                 const IrArray& out, llvm::Value* begin, llvm::Value* end,
                                 KernelInfo& info);
  // The loop writing out[index] = root(index) over [begin, end) of the first loop dim, the
  // leading `outer` dims of `dims` collapsed into it.
  absl::Status EmitRootLoop(const std::vector<int64_t>& dims, llvm_ir::LoopShape loop_shape,
                            size_t outer, const ElementGenerator& root, const IrArray& out,
                            llvm::Value* begin, llvm::Value* end);
  // Column reductions (ColumnReduction): `reduces` are `inst` itself or the reduces of its
  // fused computation (several for a multi-output fusion), written to `outs`.
  absl::Status EmitColumnReductionBody(const Instruction& inst,
                                       const std::vector<const Instruction*>& reduces,
                                       const std::vector<ElementGenerator>& ops,
                                       const std::vector<IrArray>& outs, KernelInfo& info);
  absl::Status EmitEpilogueBody(const Instruction& inst, const std::vector<ElementGenerator>& ops,
                                const IrArray& out, llvm::Value* begin, llvm::Value* end,
                                KernelInfo& info);
  absl::Status EmitInPlaceUpdateBody(const Instruction& inst,
                                     const std::vector<ElementGenerator>& ops, const IrArray& out,
                                     llvm::Value* begin, llvm::Value* end, KernelInfo& info);
  absl::Status EmitScatterBody(const Instruction& inst, const std::vector<ElementGenerator>& ops,
                               const IrArray& out, bool in_place, KernelInfo& info);
  // Library calls; `epilogue` (a kernel) and `buffers` (its buffer table) are null pointers
  // unless the call runs an output fusion's epilogue.
  // `packed` is the rhs packed once (PackedRhsSlot's slot) or a null pointer.
  void EmitGemmBody(const Instruction& inst, const GemmShape& g, llvm::Value* out, llvm::Value* lhs,
                    llvm::Value* rhs, llvm::Value* packed, llvm::Value* ctx, llvm::Value* epilogue,
                    llvm::Value* buffers);
  void EmitConvBody(const Instruction& inst, const conv::Conv2DParams& p, llvm::Value* out,
                    llvm::Value* lhs, llvm::Value* rhs, llvm::Value* packed, llvm::Value* ctx,
                    llvm::Value* epilogue, llvm::Value* buffers);
  // The slot of the packed form (gemm::Pack) of `rhs` when it is the constant float32 weights
  // of the dot or convolution `hero` and the runtime reads them packed; else -1.
  int PackedRhsSlot(const Instruction& hero, const ValueLocation& rhs);

  // ---- Sequencing (at the insertion point in tfjit_entry). ----
  absl::Status EmitFrame(const FramePlan& frame);
  absl::Status EmitInstruction(const Instruction& inst, const FramePlan& frame);
  // A kernel (loop nest, library call or custom call) between the profile hooks.
  absl::Status EmitProfiledUnit(const Instruction& inst, const FramePlan& frame);
  // Outside loops, after each kernel: the entry returns once the run must stop
  // (tfjit_cpu_checkpoint); the executable then discards the results.
  void EmitCheckpoint();
  absl::Status EmitKernelCall(const Instruction& inst, const FramePlan& frame);
  absl::Status EmitOutputFusion(const Instruction& inst, const FramePlan& frame);
  absl::Status EmitWhile(const Instruction& inst, const FramePlan& frame);
  absl::Status EmitConditional(const Instruction& inst, const FramePlan& frame);
  absl::Status EmitCall(const Instruction& inst, const FramePlan& frame);
  absl::Status EmitCustomCall(const Instruction& inst, const FramePlan& frame);
  absl::Status EmitTopK(const Instruction& inst, const FramePlan& frame);
  absl::Status EmitNms(const Instruction& inst, const FramePlan& frame);
  absl::Status EmitWhere(const Instruction& inst, const FramePlan& frame);
  absl::Status EmitScan(const ScanShape& scan, const Instruction& inst, const FramePlan& frame);
  absl::Status EmitLinalg(const Instruction& inst, const FramePlan& frame);
  // Plans and emits `computation` on `params`, then copies its result into `out`.
  absl::Status EmitCalledInto(const hlo::Computation& computation, std::vector<Leaves> params,
                              const Leaves& out);
  // dest[i] = src[i] for every leaf, correct when sources are other destinations (a body that
  // permutes its state): those go through scratch buffers first.
  void EmitStateUpdate(const Leaves& dest, const Leaves& src,
                       const std::vector<hlo::Shape>& shapes);
  void EmitCopy(const ValueLocation& to, const ValueLocation& from, int64_t bytes);
  llvm::Value* Pointer(const ValueLocation& loc);
  // Array constants larger than kMaxInlineConstantBytes are read through a constant slot of
  // the buffer table (BufferPlan::AddConstant) instead of a global of the LLVM module:
  // emitting megabytes of weights element by element was a large share of compile time, and
  // kernels that differ only in their constants get identical bodies.
  ValueLocation Resolve(const ValueLocation& loc);
  llvm::Value* LoadScalar(const ValueLocation& loc, DType dtype);
  // RunContext::batch of `ctx`, loaded with `b` (a symbolic module's batch size).
  llvm::Value* LoadBatch(llvm::IRBuilder<>& b, llvm::Value* ctx);
  // `value`, a size that is a multiple of `shape`'s dim 0 at the representative (value =
  // dim 0 * per row), at the run's batch size; a constant when the shape is static.
  llvm::Value* ScaledByDim0(const hlo::Shape& shape, int64_t value);
  // `e` at the batch size `batch` (k * batch + c), or `value` when e is static.
  llvm::Value* ExtentValue(const hlo::SymbolicExtent& e, int64_t value, llvm::Value* batch);
  void PlaceOutputs(const FramePlan& entry);

  BufferPlan& plan_;
  const IrEmitterOptions& options_;
  llvm::Module* module_;
  llvm::IRBuilder<> b_;
  llvm_ir::ElementalEmitter elemental_;
  llvm::Value* buffers_ = nullptr;      // tfjit_entry's buffer table
  llvm::Value* run_ctx_ = nullptr;      // tfjit_entry's RunContext
  const bool symbolic_;                 // the module has symbolic dims (docs/HLO.md)
  llvm::Value* entry_batch_ = nullptr;  // tfjit_entry's RunContext::batch (symbolic modules)
  llvm::FunctionCallee parallel_for_;
  llvm::FunctionCallee profile_begin_;
  llvm::FunctionCallee profile_end_;
  llvm::FunctionCallee checkpoint_;
  llvm::BasicBlock* stop_ = nullptr;  // tfjit_entry's early return (EmitCheckpoint)
  int64_t unchecked_elements_ = 0;    // touched by the kernels since the last checkpoint
  int num_kernels_ = 0;
  int loop_depth_ = 0;  // While loops around the instructions being emitted
  std::vector<std::string> kernel_names_;
  std::vector<std::string> profile_units_;
};

}  // namespace tfjit::cpu

#endif  // TFJIT_BACKENDS_CPU_IR_EMITTER_INTERNAL_H_
