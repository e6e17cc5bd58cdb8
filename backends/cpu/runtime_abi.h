// The C ABI between JIT-compiled CPU code and the tfjit runtime: every symbol emitted code may
// call, registered into the JIT as absolute symbols (runtime_library.cc implements them).
#ifndef TFJIT_BACKENDS_CPU_RUNTIME_ABI_H_
#define TFJIT_BACKENDS_CPU_RUNTIME_ABI_H_

#include <cstdint>
#include <utility>
#include <vector>

namespace tfjit {
class RunControl;
class ThreadPool;
}  // namespace tfjit

namespace tfjit::cpu {

// Per-kernel times of one profiled Run (CpuExecutable::RunProfiled): the entry function calls
// tfjit_cpu_profile_begin/end around each sequenced kernel, which add to these when present.
struct KernelCounters {
  explicit KernelCounters(size_t units) : ns(units, 0), calls(units, 0) {}
  int64_t start_ns = 0;     // of the kernel running now
  std::vector<int64_t> ns;  // per profiled unit (EmittedModule::profile_units)
  std::vector<int64_t> calls;
};

// Per-Run state handed to the entry function and on to every runtime call. Opaque to IR.
struct RunContext {
  ThreadPool* pool = nullptr;  // may be null: everything runs on the calling thread
  // The run's deadline and cancellation, polled by compiled While loops (tfjit_cpu_poll) and
  // between the kernels of the entry function (tfjit_cpu_checkpoint); null: never stop.
  // `stopped` is set once a poll said stop; the entry then returns (or finishes with every
  // loop exiting at once), and the executable discards its results.
  const RunControl* control = nullptr;
  int32_t stopped = 0;
  uint32_t polls = 0;
  KernelCounters* profile = nullptr;  // null: not profiled (the hooks return at once)
  // The batch size of a symbolic module's run (its symbolic dims' b: docs/HLO.md); compiled
  // code reads it for loop bounds and sizes. 0 for a static module.
  int64_t batch = 0;
};

// Kernel ABI: runs the partition [begin, end) of the kernel's outermost loop; `buffers` is the
// executable's buffer table (parameters, outputs, temporaries; see BufferPlan).
using KernelFn = void (*)(void** buffers, RunContext* ctx, int64_t begin, int64_t end);
// Entry ABI: runs the whole module.
using EntryFn = void (*)(void** buffers, RunContext* ctx);

// Every call from C++ into JIT-compiled code goes through these two. clang's UBSan for C++
// (-fsanitize=function, part of -fsanitize=undefined since clang 17) reads a type signature
// stored just before an indirect callee; JIT-compiled functions have none, and the read
// faults when the function begins a page (the clang fuzz build crashed so in compiled code).
#if defined(__clang__)
#define TFJIT_CALLS_JIT_CODE __attribute__((no_sanitize("function")))
#else
#define TFJIT_CALLS_JIT_CODE
#endif
TFJIT_CALLS_JIT_CODE inline void CallEntry(EntryFn entry, void** buffers, RunContext* ctx) {
  entry(buffers, ctx);
}
TFJIT_CALLS_JIT_CODE inline void CallKernel(KernelFn kernel, void** buffers, RunContext* ctx,
                                            int64_t begin, int64_t end) {
  kernel(buffers, ctx, begin, end);
}

extern "C" {

// Called at the head of every compiled While iteration: 1 when the run was cancelled or
// passed its deadline (the loop then exits), else 0. Reads the clock every 256th call only.
int32_t tfjit_cpu_poll(RunContext* ctx);

// Called by the entry function after each kernel it runs outside loops: 1 when the run was
// cancelled or passed its deadline (the entry then returns at once), else 0. Reads the clock
// every call (a kernel costs far more); runs the checkpoint test hook when one is set.
int32_t tfjit_cpu_checkpoint(RunContext* ctx);

// Around each kernel the entry function sequences (a loop nest, a library call with its
// epilogue, a custom call): with ctx->profile set, the kernel's time and call count go to its
// counters (`unit`, its index in EmittedModule::profile_units); otherwise they return at once.
void tfjit_cpu_profile_begin(RunContext* ctx);
void tfjit_cpu_profile_end(RunContext* ctx, int32_t unit);

// Splits [0, n) across ctx->pool (when present) in shards and runs kernel on each; runs inline
// when there is no pool. `cost_per_unit` is the estimated cycles per unit of n.
void tfjit_cpu_parallel_for(RunContext* ctx, KernelFn kernel, void** buffers, int64_t n,
                            int64_t cost_per_unit);

// Fused epilogues (kOutput fusions): the dot and convolution calls below take an `epilogue`
// kernel (KernelFn, on the buffer table `buffers`) or null. Once rows [r0, r1) of the result,
// viewed as [rows, last dim], are final, they call epilogue(buffers, ctx, r0, r1), which
// rewrites those rows in place while they are in cache; calls for disjoint rows may run
// concurrently.

// Packed weights: `packed_rhs` / `packed_filter` below are null, or (float32 only) the
// constant rhs or filter laid out once at compile time for the GEMM micro-kernel
// (gemm::Pack of conv::FilterPackingOf, or of the [k, n] rhs of a batch-1 dot with neither
// operand transposed); the kernels then read it instead of packing the weights each call.

// out[b] = op(lhs[b]) * op(rhs[b]) for b in [0, batch): row-major, op = transpose when the flag
// is set. lhs[b] is [m,k] ([k,m] when transposed), rhs[b] is [k,n] ([n,k] when transposed),
// out[b] is [m,n] (epilogue rows: b * m + row). tfjit's GEMM (core/gemm.h) or Eigen's
// contraction, on ctx->pool when present.
void tfjit_cpu_matmul_f32(RunContext* ctx, float* out, const float* lhs, const float* rhs,
                          const float* packed_rhs, int64_t batch, int64_t m, int64_t n, int64_t k,
                          int32_t transpose_lhs, int32_t transpose_rhs, KernelFn epilogue,
                          void** buffers);
void tfjit_cpu_matmul_f64(RunContext* ctx, double* out, const double* lhs, const double* rhs,
                          const double* packed_rhs, int64_t batch, int64_t m, int64_t n, int64_t k,
                          int32_t transpose_lhs, int32_t transpose_rhs, KernelFn epilogue,
                          void** buffers);

// out[m, outer, n] = op(lhs) * rhs[o] for each o in [0, outer): lhs is [m,k] ([k,m] when
// transposed), rhs is [outer, k, n]; row-major. The dots of separable resizes; the `outer`
// products run in parallel on ctx->pool when present.
void tfjit_cpu_matmul_outer_f32(RunContext* ctx, float* out, const float* lhs, const float* rhs,
                                int64_t outer, int64_t m, int64_t n, int64_t k,
                                int32_t transpose_lhs);
void tfjit_cpu_matmul_outer_f64(RunContext* ctx, double* out, const double* lhs, const double* rhs,
                                int64_t outer, int64_t m, int64_t n, int64_t k,
                                int32_t transpose_lhs);

// A 2-D convolution with HLO's dim_labels b01f_01io->b01f: in [batch, in_h, in_w, in_c],
// filter [k_h, k_w, in_c / groups, out_c], out [batch, out_h, out_w, out_c]. Output pixel o
// at tap k reads position o * stride + k * rhs_dilate - pad of the lhs-dilated input (pad_top,
// pad_left may be negative; the bottom/right padding is implied by out_h, out_w); see
// core/conv2d.h. Patch gathering + GEMM, or a direct loop when groups == in_c; on ctx->pool
// when present. Epilogue rows are output pixels (batch, y, x) in row-major order.
void tfjit_cpu_conv2d_f32(RunContext* ctx, float* out, const float* in, const float* filter,
                          const float* packed_filter, int64_t batch, int64_t in_h, int64_t in_w,
                          int64_t in_c, int64_t k_h, int64_t k_w, int64_t out_c, int64_t out_h,
                          int64_t out_w, int64_t stride_h, int64_t stride_w, int64_t pad_top,
                          int64_t pad_left, int64_t lhs_dilate_h, int64_t lhs_dilate_w,
                          int64_t rhs_dilate_h, int64_t rhs_dilate_w, int64_t groups,
                          KernelFn epilogue, void** buffers);
void tfjit_cpu_conv2d_f64(RunContext* ctx, double* out, const double* in, const double* filter,
                          const double* packed_filter, int64_t batch, int64_t in_h, int64_t in_w,
                          int64_t in_c, int64_t k_h, int64_t k_w, int64_t out_c, int64_t out_h,
                          int64_t out_w, int64_t stride_h, int64_t stride_w, int64_t pad_top,
                          int64_t pad_left, int64_t lhs_dilate_h, int64_t lhs_dilate_w,
                          int64_t rhs_dilate_h, int64_t rhs_dilate_w, int64_t groups,
                          KernelFn epilogue, void** buffers);

// Philox fills for the custom-calls of core/random_fill.h (HLO.md): out[0, n) of `dtype` (a
// tfjit::DType value) drawn from `distribution` (a random::RandomDistribution value) on the
// stream state[3] = [key, counter_lo, counter_hi]; split across ctx->pool when present (every
// element depends only on its index, so the split does not change the bits).
void tfjit_cpu_philox_fill(RunContext* ctx, int32_t distribution, int32_t dtype,
                           const uint64_t* state, void* out, int64_t n);

// The custom-call tfjit.top_k (core/top_k.h, HLO.md): for each of `rows` rows of the row-major
// in[rows, n] of `dtype` (a tfjit::DType value), the k best entries to values[rows, k] and their
// columns to indices[rows, k] (0 <= k <= n < 2^31); rows split across ctx->pool when present.
void tfjit_cpu_top_k(RunContext* ctx, int32_t dtype, const void* in, void* values, int32_t* indices,
                     int64_t rows, int64_t n, int64_t k);

// The custom-call tfjit.non_max_suppression (core/nms.h, HLO.md): the padded selection among
// boxes[n, 4] and scores[n] (float32) at *iou_threshold and *score_threshold (soft-NMS with
// *sigma when sigma is not null), into indices[max_output] (zeros after the selection), *valid
// and, when not null, selected_scores[max_output].
void tfjit_cpu_nms(const float* boxes, const float* scores, const float* iou_threshold,
                   const float* score_threshold, const float* sigma, int64_t n, int64_t max_output,
                   int32_t* indices, int32_t* valid, float* selected_scores);

// An inclusive prefix scan (kernel_match.h, MatchScan): in and out [outer, n, inner] of `dtype`
// (float32, float64, int32 or int64, a tfjit::DType value), out[o, i, j] = out[o, i-1, j] op
// in[o, i, j] in order from the op's identity (integers wrap), op = multiply or add; rows
// split across ctx->pool when present. `out` may be `in`.
void tfjit_cpu_scan(RunContext* ctx, int32_t multiply, int32_t dtype, const void* in, void* out,
                    int64_t outer, int64_t n, int64_t inner);

// The custom-call tfjit.where (core/where.h, HLO.md): the coordinates of the true elements of
// mask[dims[0], ..., dims[rank-1]] into coords[n, rank] (n the mask's element count; zero rows
// after them) and their number into *count.
void tfjit_cpu_where(const bool* mask, const int64_t* dims, int32_t rank, int64_t* coords,
                     int64_t* count);

// The custom-calls tfjit.linalg.<op>.<flags> (core/linalg.h, HLO.md): `kind` and `flags` of the
// linalg::Call, `dtype` a tfjit::DType value, the problem sizes, the operands (in1 null for
// one) and the results (unused ones null); the batch split across ctx->pool when present.
void tfjit_cpu_linalg(RunContext* ctx, int32_t kind, int32_t flags, int32_t dtype, int64_t batch,
                      int64_t m, int64_t n, int64_t k, const void* in0, const void* in1, void* out0,
                      void* out1, void* out2);

}  // extern "C"

// (name, address) of every runtime symbol, for registration into the JIT.
std::vector<std::pair<const char*, void*>> RuntimeSymbols();

}  // namespace tfjit::cpu

#endif  // TFJIT_BACKENDS_CPU_RUNTIME_ABI_H_
