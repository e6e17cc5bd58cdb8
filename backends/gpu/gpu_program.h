// GpuProgram: what the GPU backend compiles an optimized HLO module into, before any device is
// involved: PTX for its kernels, the sequence of steps (kernel launches, cuBLAS GEMMs) in
// program order, and where every value lives (an entry parameter's copy, a constant, or a
// range of one device arena whose buffers share memory by liveness). GpuExecutable runs it.
#ifndef TFJIT_BACKENDS_GPU_GPU_PROGRAM_H_
#define TFJIT_BACKENDS_GPU_GPU_PROGRAM_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/gemm_match.h"
#include "backends/gpu/ptx_emitter.h"
#include "compiler/hlo/module.h"
#include "compiler/passes/buffer_assignment.h"

namespace tfjit::gpu {

// The arena's alignment: cuBLAS's and the widest vector loads'.
inline constexpr int64_t kGpuArenaAlignment = 256;

// Where a value's bytes are on the device.
struct GpuSlot {
  enum class Kind { kArena, kConstant };
  Kind kind = Kind::kArena;
  int64_t offset = 0;  // kArena: byte offset in the run's arena; kConstant: in the constants
  int64_t bytes = 0;
  const hlo::Instruction* constant = nullptr;  // kConstant: whose literal the slot holds
  // A symbolic program (GpuProgram::batch_representative): what offset and bytes gain per
  // batch row.
  int64_t offset_per_row = 0;
  int64_t bytes_per_row = 0;
};

// One step of a program. Control flow runs on the host: a while step runs its condition's
// steps, reads the predicate back, and runs its body's steps while it holds; a conditional
// step reads the branch index back and runs that branch's steps. Their state lives in slots
// that copy steps fill.
struct GpuStep {
  enum class Kind { kKernel, kGemm, kCopy, kWhile, kConditional, kHost };
  Kind kind = Kind::kKernel;
  const hlo::Instruction* inst = nullptr;
  int kernel = -1;           // kKernel: index into ptx.kernels
  bool patches = false;      // kKernel: the patch matrix of convolution `inst` (KernelSpec)
  bool in_place = false;     // kKernel: a dynamic-update-slice writing into operands[0]
  int64_t elements = 0;      // kKernel: the output's elements (the kernel's n)
  backends::GemmShape gemm;  // kGemm
  // kGemm: a float32 vector of gemm.n added to every output row (cuBLASLt's bias epilogue:
  // a dot or convolution whose only reader adds a bias along its last dim), or -1.
  int bias = -1;
  DType type = DType::kInvalid;
  int output = -1;  // slot written (kCopy: from operands[0]); kHost: results[0]
  // kHost: the instruction runs on the host (the evaluator: custom-calls such as top-k and
  // the normal-distribution fills, whose results must match the CPU's bit for bit, and
  // rng-bit-generator); its operands are copied back, its results (an array, or a tuple's
  // elements) copied to these slots.
  std::vector<int> results;
  std::vector<int> operands;  // slots read
  // kWhile: `nested[0]` computes the predicate into `predicate`, then `nested[1]` (the body)
  // updates the state. kConditional: `predicate` holds the pred (branch 0 for true) or s32
  // index (out of range: the last branch) choosing one of `nested`, which writes the result.
  std::vector<std::vector<GpuStep>> nested;
  int predicate = -1;
  // A symbolic program: what `elements` and the GEMM's batch, m, n and k gain per batch row.
  int64_t elements_per_row = 0;
  backends::GemmShape gemm_per_row{0, 0, 0, 0};
};

// The arguments of cublas{S,D}gemmStridedBatched for a row-major GEMM (alpha 1, beta 0).
// Row-major out[m, n] = op(lhs)[m, k] * op(rhs)[k, n] is column-major out^T = op(rhs)^T *
// op(lhs)^T: cuBLAS's A is the rhs (stride_a between batches), B the lhs, C the output.
struct CublasGemmArgs {
  int transa = 0, transb = 0;  // kCublasOpN (0) or kCublasOpT (1)
  int m = 0, n = 0, k = 0;     // cuBLAS's (column-major) sizes
  int lda = 0, ldb = 0, ldc = 0;
  long long stride_a = 0, stride_b = 0, stride_c = 0;
  int batch = 1;
};
CublasGemmArgs CublasArgsFor(const backends::GemmShape& g);

struct GpuProgram {
  std::string sm;  // the PTX target
  PtxModule ptx;
  std::vector<GpuStep> steps;
  std::vector<GpuSlot> slots;
  std::vector<int> parameter_slots;  // entry parameter i is copied into this slot
  std::vector<int> output_slots;     // root element k is copied out of this slot
  std::vector<hlo::Shape> output_shapes;
  int64_t arena_bytes = 0;  // parameters' copies and temporaries, shared by liveness
  int64_t arena_bytes_unshared = 0;
  int64_t constant_bytes = 0;  // the constants' device copy, uploaded once
  // The arena as the shared buffer assignment placed it (ArenaAssignment::ToString).
  std::string assignment;

  // A symbolic program (built from a module with a symbolic batch size, docs/HLO.md) holds
  // every size above at this batch size, with what each gains per batch row (the *_per_row
  // fields), and its kernels take the batch size; 0 for a static program.
  int64_t batch_representative = 0;
  int64_t arena_bytes_per_row = 0;

  // The program a symbolic one is at batch size `batch` (>= 1): sizes, offsets, GEMM
  // arguments and output shapes there, without the PTX text (its kernels are the same);
  // OUT_OF_RANGE when a GEMM there no longer fits cuBLAS's int arguments.
  absl::StatusOr<GpuProgram> AtBatch(int64_t batch) const;

  // One line per step, e.g. "gemm dot.3 <- [p0 s1] -> s2 (arena 0+4096)" (tests, logs).
  std::string Describe() const;
};

// The GPU's sharing rules for the shared buffer assignment (compiler/passes/
// buffer_assignment.h): a reshape is a kernel of its own and a scatter writes a fresh buffer;
// a dynamic-update-slice goes in place where its operand's old value is dead; the entry's
// parameters are the run's own copies in the arena, so they may be written.
passes::BufferPolicy GpuBufferPolicy();

// Builds the program of an optimized module (fusion done) for PTX target `sm`: dots cuBLAS
// can compute (float32/float64 batched GEMMs) are GEMM steps, every other non-plumbing entry
// instruction a kernel. UNIMPLEMENTED naming the instruction for what the GPU does not
// compile yet (control flow, tuples other than the root's).
//
// A symbolic module gives a symbolic program: built at its representative batch size and at
// the next, whose PTX must be the same text (else FAILED_PRECONDITION naming the kernel's
// instruction: its code depends on the batch size) and whose sizes give what each gains per
// batch row; the arena puts buffers whose size grows with the batch after the others, at
// offsets that grow with it too (ArenaAssignment::FinalizeSymbolic). A host step that reads
// or writes a batch-sized value is FAILED_PRECONDITION as well.
absl::StatusOr<GpuProgram> BuildGpuProgram(const hlo::Module& module, const std::string& sm);

}  // namespace tfjit::gpu

#endif  // TFJIT_BACKENDS_GPU_GPU_PROGRAM_H_
