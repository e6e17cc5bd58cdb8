// Elemental IR emission: for any elemental HLO instruction, a generator that emits the value of
// the element at an index, given generators for its operands. Fusion composes generators
// through the fused computation (as XLA's ElementalIrEmitter does); reduce and dot emit their
// inner loops inside the generator, so they work fused (kInput) and unfused alike.
#ifndef TFJIT_BACKENDS_LLVM_ELEMENTAL_EMITTER_H_
#define TFJIT_BACKENDS_LLVM_ELEMENTAL_EMITTER_H_

#include <functional>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "backends/llvm/ir_array.h"
#include "compiler/hlo/computation.h"

namespace tfjit::llvm_ir {

// Emits, at the builder's insertion point, the value (of ValueType) of one element. May create
// blocks; on return the builder is where the value is available.
using ElementGenerator = std::function<absl::StatusOr<llvm::Value*>(const IrIndex&)>;

// Not thread-safe; one per LLVM module under construction. Array constants become private
// globals of `module` (one per constant instruction).
class ElementalEmitter {
 public:
  ElementalEmitter(llvm::IRBuilder<>* b, llvm::Module* module) : b_(b), module_(module) {}

  // The batch size of a symbolic module (docs/HLO.md) as an i64 value of the function being
  // emitted (null for a static module): Dim() computes symbolic dims from it.
  void set_batch(llvm::Value* batch) { batch_ = batch; }
  llvm::Value* batch() const { return batch_; }
  // Dim `d` of `shape` as an i64: a constant, or k * batch + c for a symbolic dim 0.
  llvm::Value* Dim(const hlo::Shape& shape, int d);

  // Whether MakeGenerator handles `inst` (opcode and element types); the reason otherwise.
  static bool Supports(const hlo::Instruction& inst);

  // The generator of `inst`, whose operand values come from `operands` (one per operand).
  // Parameters have no generator of their own (callers supply them); UNIMPLEMENTED for
  // opcodes Supports() rejects.
  // `operands_invariant`: the operand generators read buffers that stay put while the kernel
  // runs (the kernel's arguments), so a fused computation's rank-0 values may be hoisted.
  absl::StatusOr<ElementGenerator> MakeGenerator(const hlo::Instruction& inst,
                                                 std::vector<ElementGenerator> operands,
                                                 bool operands_invariant = false);
  // The generator of `computation`'s root, with parameter i read from `params[i]`. Shared
  // subexpressions are emitted once per index within a basic block. An instruction in
  // `overrides` reads its value from that generator instead of computing it (an output
  // fusion's hero, which a library call has already written).
  using Overrides = absl::flat_hash_map<const hlo::Instruction*, ElementGenerator>;
  // `target`: the generator of that instruction of `computation` instead of the root's.
  // `params_invariant`: as MakeGenerator's `operands_invariant`, for `params`.
  absl::StatusOr<ElementGenerator> MakeComputationGenerator(
      const hlo::Computation& computation, std::vector<ElementGenerator> params,
      const Overrides* overrides = nullptr, const hlo::Instruction* target = nullptr,
      bool params_invariant = false);

  // Loop-invariant hoisting. While a hoist region is open, the rank-0 values of a computation
  // whose parameters are invariant (above) are emitted once, at the end of the region, instead
  // of once per element inside the kernel's loops: one element, whatever the index, computed
  // from buffers that do not change (a run-time RNG seed's Philox key schedule, a scale
  // computed from scalar operands). The region starts as `block`, an unterminated block of the
  // function being emitted that runs before its loops; it may grow into more blocks (a hoisted
  // reduce brings its loop). CloseHoistRegion returns the block it ends in, still
  // unterminated: the caller branches from it to the kernel's code. Values generated in
  // another function (a kernel emitted meanwhile) are not hoisted.
  void OpenHoistRegion(llvm::BasicBlock* block);
  llvm::BasicBlock* CloseHoistRegion();
  // Emits a computation of scalars (a reduce combiner) inline on `args`.
  absl::StatusOr<llvm::Value*> EmitScalarComputation(const hlo::Computation& computation,
                                                     const std::vector<llvm::Value*>& args);

  // Scatter (XLA's semantics, HLO.md): the extent of the update window along each operand
  // dim (1 for inserted dims). INVALID_ARGUMENT when the dims numbers do not fit.
  static absl::StatusOr<std::vector<int64_t>> ScatterWindow(const hlo::Instruction& scatter);
  // Applies update element `ui` of `scatter` to `out` (which already holds the operand):
  // its window's base from the index vector, skipped when the window leaves the operand,
  // else out[base + offset] = combiner(out[...], update[ui]). `ops`: the scatter's operands.
  absl::Status EmitScatterUpdate(const hlo::Instruction& scatter,
                                 const std::vector<ElementGenerator>& ops, const IrArray& out,
                                 const std::vector<int64_t>& window, const IrIndex& ui);

  // The global holding an array constant's elements (created on first use).
  llvm::GlobalVariable* ConstantGlobal(const hlo::Instruction& constant);

  // ---- Scalar math (elemental_math.cc); values are of ValueType(dtype). ----
  absl::StatusOr<llvm::Value*> EmitUnary(hlo::Opcode opcode, DType dtype, llvm::Value* x);
  absl::StatusOr<llvm::Value*> EmitBinary(hlo::Opcode opcode, DType dtype, llvm::Value* x,
                                          llvm::Value* y);
  llvm::Value* EmitCompare(hlo::ComparisonDirection direction, DType dtype, llvm::Value* x,
                           llvm::Value* y);
  llvm::Value* EmitConvert(llvm::Value* x, DType from, DType to);
  llvm::Value* EmitIsFinite(DType dtype, llvm::Value* x);
  // A scalar literal element as an LLVM constant of ValueType.
  llvm::Value* EmitLiteralElement(const hlo::Literal& literal, int64_t i);

  // ---- Index helpers (elemental_indexing.cc). ----
  // An integer index value of `dtype` widened to i64 (sign- or zero-extended).
  llvm::Value* IndexToInt64(llvm::Value* v, DType dtype);
  // The start indices of a dynamic-slice (first = 1) or dynamic-update-slice (first = 2):
  // scalar operands first.., each clamped to [0, operand dim - sizes' dim] as HLO.md says
  // (`sizes`: the slice's or the update's shape; either dim 0 may be symbolic).
  absl::StatusOr<std::vector<llvm::Value*>> EmitClampedStarts(
      const hlo::Instruction& inst, const std::vector<ElementGenerator>& ops, int first,
      const hlo::Shape& sizes);

 private:
  llvm::Value* batch_ = nullptr;
  using Generators = std::vector<ElementGenerator>;
  absl::StatusOr<ElementGenerator> MakeElementwise(const hlo::Instruction& inst, Generators ops);
  ElementGenerator MakeBroadcast(const hlo::Instruction& inst, Generators ops);
  ElementGenerator MakeReshape(const hlo::Instruction& inst, Generators ops);
  ElementGenerator MakeTranspose(const hlo::Instruction& inst, Generators ops);
  ElementGenerator MakeSlice(const hlo::Instruction& inst, Generators ops);
  ElementGenerator MakeReverse(const hlo::Instruction& inst, Generators ops);
  ElementGenerator MakeConcatenate(const hlo::Instruction& inst, Generators ops);
  ElementGenerator MakePad(const hlo::Instruction& inst, Generators ops);
  ElementGenerator MakeIota(const hlo::Instruction& inst);
  ElementGenerator MakeConstant(const hlo::Instruction& inst);
  ElementGenerator MakeReduce(const hlo::Instruction& inst, Generators ops);
  ElementGenerator MakeReduceWindow(const hlo::Instruction& inst,
                                    Generators ops);  // elemental_window.cc
  ElementGenerator MakeDot(const hlo::Instruction& inst, Generators ops);
  ElementGenerator MakeConvolution(const hlo::Instruction& inst,
                                   Generators ops);  // elemental_conv.cc
  // Data-dependent indexing (elemental_indexing.cc).
  ElementGenerator MakeDynamicSlice(const hlo::Instruction& inst, Generators ops);
  ElementGenerator MakeDynamicUpdateSlice(const hlo::Instruction& inst, Generators ops);
  ElementGenerator MakeGather(const hlo::Instruction& inst, Generators ops);
  static ElementGenerator Shared(ElementGenerator generator);
  ElementGenerator Cached(ElementGenerator generator);
  ElementGenerator Hoisted(ElementGenerator generator);

  // Float helpers (elemental_math.cc): f16/bf16 compute in f32.
  llvm::Value* ToComputeFloat(DType dtype, llvm::Value* x);
  llvm::Value* FromComputeFloat(DType dtype, llvm::Value* x);
  llvm::Value* CallLibm(const char* name, llvm::Value* x);
  llvm::Value* CallLibm2(const char* name, llvm::Value* x, llvm::Value* y);
  absl::StatusOr<llvm::Value*> EmitFloatUnary(hlo::Opcode opcode, llvm::Value* x);
  absl::StatusOr<llvm::Value*> EmitIntUnary(hlo::Opcode opcode, DType dtype, llvm::Value* x);
  absl::StatusOr<llvm::Value*> EmitFloatBinary(hlo::Opcode opcode, llvm::Value* x, llvm::Value* y);
  absl::StatusOr<llvm::Value*> EmitIntBinary(hlo::Opcode opcode, DType dtype, llvm::Value* x,
                                             llvm::Value* y);
  llvm::Value* EmitIntDivRem(bool divide, bool is_signed, llvm::Value* x, llvm::Value* y);
  llvm::Value* EmitIntPower(bool is_signed, llvm::Value* base, llvm::Value* exponent);
  llvm::Value* EmitIntShift(hlo::Opcode opcode, llvm::Value* x, llvm::Value* y);
  llvm::Value* EmitPredBinary(hlo::Opcode opcode, llvm::Value* x, llvm::Value* y);
  llvm::Value* EmitNanPropagatingMinMax(bool is_max, llvm::Value* x, llvm::Value* y);

  llvm::IRBuilder<>* b_;
  llvm::Module* module_;
  absl::flat_hash_map<const hlo::Instruction*, llvm::GlobalVariable*> constant_globals_;
  // The open hoist region's last block (null: none open), whether code is being emitted into
  // it, and a count of regions opened (hoisted values are remembered per region).
  llvm::BasicBlock* hoist_block_ = nullptr;
  bool in_hoist_region_ = false;
  int64_t hoist_region_ = 0;
};

}  // namespace tfjit::llvm_ir

#endif  // TFJIT_BACKENDS_LLVM_ELEMENTAL_EMITTER_H_
