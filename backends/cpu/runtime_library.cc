// Implementations of the runtime ABI (runtime_abi.h): parallel-for over tfjit::ThreadPool,
// Eigen-backed batched GEMM, NHWC convolutions (core/conv2d.h, shared with the fallback
// kernels), the Philox fills of core/random_fill.h, the top-k of core/top_k.h, the non-max
// suppression of core/nms.h, Where's rows (core/where.h) and prefix scans.
#include "backends/cpu/runtime_abi.h"

#include <chrono>
#include <type_traits>

#include "core/conv2d.h"
#include "core/linalg.h"
#include "core/nms.h"
#include "core/random_fill.h"
#include "core/run_control.h"
#include "core/thread_pool.h"
#include "core/top_k.h"
#include "core/where.h"

namespace tfjit::cpu {
namespace {

// The fused epilogue of a dot or convolution (runtime_abi.h) on rows [r0, r0 + count).
struct Epilogue {
  KernelFn fn = nullptr;
  void** buffers = nullptr;
  RunContext* ctx = nullptr;
  void operator()(int64_t r0, int64_t count) const {
    if (fn != nullptr && count > 0) CallKernel(fn, buffers, ctx, r0, r0 + count);
  }
};

// `packed`: null, or (float, batch 1, neither operand transposed) rhs packed by gemm::Pack.
template <typename T>
void Matmul(RunContext* ctx, T* out, const T* lhs, const T* rhs, int64_t batch, int64_t m,
            int64_t n, int64_t k, bool transpose_lhs, bool transpose_rhs, const Epilogue& epilogue,
            const T* packed) {
  using Matrix = conv::RowMajorMatrix<T>;
  if (batch * m * n == 0) return;
  // Parallel units: (batch, block of output rows[, block of columns]), each one
  // single-threaded GEMM. Each unit
  // packs the whole rhs again (unless it was packed once), so rows are split only in as many
  // blocks as the threads need (two per thread) and never below 64 rows (12 when packed).
  // With the rhs packed once, a unit packs nothing: blocks may be smaller.
  const int64_t threads = ctx != nullptr && ctx->pool != nullptr ? ctx->pool->NumThreads() : 1;
  const int64_t min_rows = packed != nullptr ? 12 : 64;
  const int64_t row_block =
      std::min<int64_t>(m, std::max<int64_t>(min_rows, (m + 2 * threads - 1) / (2 * threads)));
  const int64_t blocks = (m + row_block - 1) / row_block;
  // Too few row blocks for the threads (a small batch: m = 64 rows is one block): the columns
  // split too, in chunks of at least 64 (a multiple of 16), each unit packing only its own
  // columns of the rhs. The epilogue, which works on whole rows, then runs once every chunk of
  // its rows is done. Not with the rhs packed once (its layout spans all columns).
  int64_t col_chunk = n;
  if (packed == nullptr && batch * blocks < threads && n >= 128) {
    const int64_t chunks =
        std::min<int64_t>(n / 64, (2 * threads + batch * blocks - 1) / (batch * blocks));
    col_chunk = std::min<int64_t>(n, ((n + chunks - 1) / chunks + 15) / 16 * 16);
  }
  const int64_t col_blocks = (n + col_chunk - 1) / col_chunk;
  const bool split_columns = col_blocks > 1;
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t u = begin; u < end; ++u) {
      const int64_t cb = u % col_blocks, rb = u / col_blocks;
      const int64_t b = rb / blocks, r0 = (rb % blocks) * row_block;
      const int64_t rows = std::min(row_block, m - r0);
      const int64_t c0 = cb * col_chunk, cols = std::min(col_chunk, n - c0);
      Eigen::Map<Matrix, 0, Eigen::OuterStride<>> o(out + b * m * n + r0 * n + c0, rows, cols,
                                                    Eigen::OuterStride<>(n));
      if (k == 0) {
        o.setZero();
        if (!split_columns) epilogue(b * m + r0, rows);
        continue;
      }
      // lhs rows r0.. : A[r0:, :] or, transposed, the columns r0.. of the stored [k, m].
      Eigen::Map<const Matrix> a(lhs + b * m * k, transpose_lhs ? k : m, transpose_lhs ? m : k);
      Eigen::Map<const Matrix> c(rhs + b * k * n, transpose_rhs ? n : k, transpose_rhs ? k : n);
      if constexpr (std::is_same_v<T, float>) {
        if (packed != nullptr) {
          gemm::GemmF32Packed(rows, n, k, lhs + b * m * k + r0 * k, k, packed, n, 0, o.data(), n);
          epilogue(b * m + r0, rows);
          continue;
        }
      }
      if (!transpose_lhs && !transpose_rhs) {
        conv::GemmRows<T>(rows, cols, k, lhs + b * m * k + r0 * k, k, rhs + b * k * n + c0, n,
                          o.data(), n);
      } else if (transpose_lhs && transpose_rhs) {
        o.noalias() = a.middleCols(r0, rows).transpose() * c.middleRows(c0, cols).transpose();
      } else if (transpose_lhs) {
        o.noalias() = a.middleCols(r0, rows).transpose() * c.middleCols(c0, cols);
      } else {
        o.noalias() = a.middleRows(r0, rows) * c.middleRows(c0, cols).transpose();
      }
      if (!split_columns) epilogue(b * m + r0, rows);
    }
  };
  const int64_t units = batch * blocks * col_blocks;
  if (ctx == nullptr || ctx->pool == nullptr || units == 1) {
    run(0, units);
  } else {
    ctx->pool->ParallelFor(units, row_block * col_chunk * k * 2 + 1, run);
  }
  if (split_columns) {
    auto finish = [&](int64_t begin, int64_t end) {
      for (int64_t u = begin; u < end; ++u) {
        const int64_t b = u / blocks, r0 = (u % blocks) * row_block;
        epilogue(b * m + r0, std::min(row_block, m - r0));
      }
    };
    if (ctx == nullptr || ctx->pool == nullptr || batch * blocks == 1) {
      finish(0, batch * blocks);
    } else {
      ctx->pool->ParallelFor(batch * blocks, row_block * n + 1, finish);
    }
  }
}

template <typename T>
void MatmulOuter(RunContext* ctx, T* out, const T* lhs, const T* rhs, int64_t outer, int64_t m,
                 int64_t n, int64_t k, bool transpose_lhs) {
  using Matrix = conv::RowMajorMatrix<T>;
  using Stride = Eigen::OuterStride<>;
  Eigen::Map<const Matrix> a(lhs, transpose_lhs ? k : m, transpose_lhs ? m : k);
  auto run = [&](int64_t begin, int64_t end) {
    for (int64_t o = begin; o < end; ++o) {
      Eigen::Map<Matrix, 0, Stride> y(out + o * n, m, n, Stride(outer * n));
      if (k == 0) {
        y.setZero();
        continue;
      }
      Eigen::Map<const Matrix> b(rhs + o * k * n, k, n);
      if (transpose_lhs) {
        y.noalias() = a.transpose() * b;
      } else {
        y.noalias() = a * b;
      }
    }
  };
  if (ctx == nullptr || ctx->pool == nullptr || outer == 1) {
    run(0, outer);
  } else {
    ctx->pool->ParallelFor(outer, m * n * k * 2 + 1, run);
  }
}

template <typename T>
void Conv2D(RunContext* ctx, T* out, const T* in, const T* filter, const T* packed,
            const conv::Conv2DParams& p, const Epilogue& epilogue) {
  ThreadPool* pool = ctx != nullptr ? ctx->pool : nullptr;
  const conv::ParallelForFn parallel_for = [pool](int64_t n, int64_t cost_per_unit,
                                                  const std::function<void(int64_t, int64_t)>& fn) {
    if (pool == nullptr || n <= 1) {
      if (n > 0) fn(0, n);
      return;
    }
    pool->ParallelFor(n, cost_per_unit, fn);
  };
  conv::Conv2D<T>(p, in, filter, out, parallel_for, epilogue, packed);
}

conv::Conv2DParams MakeConvParams(int64_t batch, int64_t in_h, int64_t in_w, int64_t in_c,
                                  int64_t k_h, int64_t k_w, int64_t out_c, int64_t out_h,
                                  int64_t out_w, int64_t stride_h, int64_t stride_w,
                                  int64_t pad_top, int64_t pad_left, int64_t lhs_dilate_h,
                                  int64_t lhs_dilate_w, int64_t rhs_dilate_h, int64_t rhs_dilate_w,
                                  int64_t groups) {
  conv::Conv2DParams p;
  p.batch = batch;
  p.in_h = in_h;
  p.in_w = in_w;
  p.in_c = in_c;
  p.k_h = k_h;
  p.k_w = k_w;
  p.out_c = out_c;
  p.out_h = out_h;
  p.out_w = out_w;
  p.stride_h = stride_h;
  p.stride_w = stride_w;
  p.pad_top = pad_top;
  p.pad_left = pad_left;
  p.lhs_dilate_h = lhs_dilate_h;
  p.lhs_dilate_w = lhs_dilate_w;
  p.rhs_dilate_h = rhs_dilate_h;
  p.rhs_dilate_w = rhs_dilate_w;
  p.groups = groups;
  return p;
}

}  // namespace

extern "C" {

void tfjit_cpu_parallel_for(RunContext* ctx, KernelFn kernel, void** buffers, int64_t n,
                            int64_t cost_per_unit) {
  if (n <= 0) return;
  if (ctx == nullptr || ctx->pool == nullptr || n == 1) {
    CallKernel(kernel, buffers, ctx, 0, n);
    return;
  }
  ctx->pool->ParallelFor(n, cost_per_unit, [&](int64_t begin, int64_t end) {
    CallKernel(kernel, buffers, ctx, begin, end);
  });
}

void tfjit_cpu_matmul_f32(RunContext* ctx, float* out, const float* lhs, const float* rhs,
                          const float* packed_rhs, int64_t batch, int64_t m, int64_t n, int64_t k,
                          int32_t transpose_lhs, int32_t transpose_rhs, KernelFn epilogue,
                          void** buffers) {
  Matmul<float>(ctx, out, lhs, rhs, batch, m, n, k, transpose_lhs != 0, transpose_rhs != 0,
                Epilogue{epilogue, buffers, ctx}, packed_rhs);
}

void tfjit_cpu_matmul_f64(RunContext* ctx, double* out, const double* lhs, const double* rhs,
                          const double* packed_rhs, int64_t batch, int64_t m, int64_t n, int64_t k,
                          int32_t transpose_lhs, int32_t transpose_rhs, KernelFn epilogue,
                          void** buffers) {
  Matmul<double>(ctx, out, lhs, rhs, batch, m, n, k, transpose_lhs != 0, transpose_rhs != 0,
                 Epilogue{epilogue, buffers, ctx}, packed_rhs);
}

void tfjit_cpu_matmul_outer_f32(RunContext* ctx, float* out, const float* lhs, const float* rhs,
                                int64_t outer, int64_t m, int64_t n, int64_t k,
                                int32_t transpose_lhs) {
  MatmulOuter<float>(ctx, out, lhs, rhs, outer, m, n, k, transpose_lhs != 0);
}

void tfjit_cpu_matmul_outer_f64(RunContext* ctx, double* out, const double* lhs, const double* rhs,
                                int64_t outer, int64_t m, int64_t n, int64_t k,
                                int32_t transpose_lhs) {
  MatmulOuter<double>(ctx, out, lhs, rhs, outer, m, n, k, transpose_lhs != 0);
}

void tfjit_cpu_conv2d_f32(RunContext* ctx, float* out, const float* in, const float* filter,
                          const float* packed_filter, int64_t batch, int64_t in_h, int64_t in_w,
                          int64_t in_c, int64_t k_h, int64_t k_w, int64_t out_c, int64_t out_h,
                          int64_t out_w, int64_t stride_h, int64_t stride_w, int64_t pad_top,
                          int64_t pad_left, int64_t lhs_dilate_h, int64_t lhs_dilate_w,
                          int64_t rhs_dilate_h, int64_t rhs_dilate_w, int64_t groups,
                          KernelFn epilogue, void** buffers) {
  Conv2D<float>(ctx, out, in, filter, packed_filter,
                MakeConvParams(batch, in_h, in_w, in_c, k_h, k_w, out_c, out_h, out_w, stride_h,
                               stride_w, pad_top, pad_left, lhs_dilate_h, lhs_dilate_w,
                               rhs_dilate_h, rhs_dilate_w, groups),
                Epilogue{epilogue, buffers, ctx});
}

void tfjit_cpu_conv2d_f64(RunContext* ctx, double* out, const double* in, const double* filter,
                          const double* packed_filter, int64_t batch, int64_t in_h, int64_t in_w,
                          int64_t in_c, int64_t k_h, int64_t k_w, int64_t out_c, int64_t out_h,
                          int64_t out_w, int64_t stride_h, int64_t stride_w, int64_t pad_top,
                          int64_t pad_left, int64_t lhs_dilate_h, int64_t lhs_dilate_w,
                          int64_t rhs_dilate_h, int64_t rhs_dilate_w, int64_t groups,
                          KernelFn epilogue, void** buffers) {
  Conv2D<double>(ctx, out, in, filter, packed_filter,
                 MakeConvParams(batch, in_h, in_w, in_c, k_h, k_w, out_c, out_h, out_w, stride_h,
                                stride_w, pad_top, pad_left, lhs_dilate_h, lhs_dilate_w,
                                rhs_dilate_h, rhs_dilate_w, groups),
                 Epilogue{epilogue, buffers, ctx});
}

void tfjit_cpu_philox_fill(RunContext* ctx, int32_t distribution, int32_t dtype,
                           const uint64_t* state, void* out, int64_t n) {
  if (n <= 0) return;
  const auto dist = static_cast<random::RandomDistribution>(distribution);
  const DType type = static_cast<DType>(dtype);
  const random::PhiloxState s = random::StateFromU64x3(state);
  if (ctx == nullptr || ctx->pool == nullptr || n < 1024) {
    random::FillRandom(dist, type, s, out, 0, n);
    return;
  }
  ctx->pool->ParallelFor(
      n, random::RandomFillCostPerElement(dist),
      [&](int64_t begin, int64_t end) { random::FillRandom(dist, type, s, out, begin, end); });
}

void tfjit_cpu_top_k(RunContext* ctx, int32_t dtype, const void* in, void* values, int32_t* indices,
                     int64_t rows, int64_t n, int64_t k) {
  if (rows <= 0 || k <= 0) return;
  const DType type = static_cast<DType>(dtype);
  if (ctx == nullptr || ctx->pool == nullptr || rows == 1) {
    topk::TopKRows(type, in, n, k, values, indices, 0, rows);
    return;
  }
  ctx->pool->ParallelFor(rows, topk::TopKCostPerRow(n, k), [&](int64_t begin, int64_t end) {
    topk::TopKRows(type, in, n, k, values, indices, begin, end);
  });
}

void tfjit_cpu_nms(const float* boxes, const float* scores, const float* iou_threshold,
                   const float* score_threshold, const float* sigma, int64_t n, int64_t max_output,
                   int32_t* indices, int32_t* valid, float* selected_scores) {
  nms::SelectPadded(boxes, scores, n, max_output, *iou_threshold, *score_threshold,
                    sigma != nullptr ? *sigma : 0.0f, indices, valid, selected_scores);
}

void tfjit_cpu_scan(RunContext* ctx, int32_t multiply, int32_t dtype, const void* in, void* out,
                    int64_t outer, int64_t n, int64_t inner) {
  auto scan = [&](auto tag, auto op) {
    using T = decltype(tag);
    const T* x = static_cast<const T*>(in);
    T* y = static_cast<T*>(out);
    const T identity = static_cast<T>(multiply != 0 ? 1 : 0);
    auto rows = [&](int64_t begin, int64_t end) {
      for (int64_t o = begin; o < end; ++o) {
        const T* xo = x + o * n * inner;
        T* yo = y + o * n * inner;
        if (inner == 1) {  // one line: the running value stays in a register
          T acc = identity;
          for (int64_t i = 0; i < n; ++i) yo[i] = acc = op(acc, xo[i]);
          continue;
        }
        for (int64_t j = 0; j < inner; ++j) yo[j] = op(identity, xo[j]);
        for (int64_t i = 1; i < n; ++i) {
          for (int64_t j = 0; j < inner; ++j) {
            yo[i * inner + j] = op(yo[(i - 1) * inner + j], xo[i * inner + j]);
          }
        }
      }
    };
    if (ctx == nullptr || ctx->pool == nullptr || outer == 1) {
      rows(0, outer);
    } else {
      ctx->pool->ParallelFor(outer, n * inner, rows);
    }
  };
  // Integers wrap as HLO's add and multiply do: computed unsigned.
  auto add = [](auto a, auto b) {
    using T = decltype(a);
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
    } else {
      return a + b;
    }
  };
  auto mul = [](auto a, auto b) {
    using T = decltype(a);
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
    } else {
      return a * b;
    }
  };
  auto run = [&](auto tag) {
    if (multiply != 0) {
      scan(tag, mul);
    } else {
      scan(tag, add);
    }
  };
  switch (static_cast<DType>(dtype)) {
    case DType::kFloat32:
      run(float{});
      break;
    case DType::kFloat64:
      run(double{});
      break;
    case DType::kInt32:
      run(int32_t{});
      break;
    case DType::kInt64:
      run(int64_t{});
      break;
    default:
      break;  // MatchScan accepts only these
  }
}

void tfjit_cpu_where(const bool* mask, const int64_t* dims, int32_t rank, int64_t* coords,
                     int64_t* count) {
  int64_t n = 1;
  for (int32_t d = 0; d < rank; ++d) n *= dims[d];
  *count = where::TrueCoordinates(mask, dims, rank, n, coords);
}

void tfjit_cpu_linalg(RunContext* ctx, int32_t kind, int32_t flags, int32_t dtype, int64_t batch,
                      int64_t m, int64_t n, int64_t k, const void* in0, const void* in1, void* out0,
                      void* out1, void* out2) {
  const linalg::Call call{static_cast<linalg::Kind>(kind), flags};
  const linalg::Problem p{batch, m, n, k};
  const DType type = static_cast<DType>(dtype);
  const void* ins[2] = {in0, in1};
  void* outs[3] = {out0, out1, out2};
  if (ctx == nullptr || ctx->pool == nullptr || batch <= 1) {
    linalg::Run(call, type, p, ins, outs, 0, batch);
    return;
  }
  ctx->pool->ParallelFor(batch, linalg::CostPerMatrix(call, p), [&](int64_t begin, int64_t end) {
    linalg::Run(call, type, p, ins, outs, begin, end);
  });
}

}  // extern "C"

int32_t tfjit_cpu_poll(RunContext* ctx) {
  if (ctx == nullptr || ctx->control == nullptr) return 0;
  if (ctx->stopped != 0) return 1;
  // A cheap loop body runs in nanoseconds: the clock is read every 256th iteration.
  if ((ctx->polls++ & 255u) != 0) return 0;
  if (ctx->control->ShouldStop()) ctx->stopped = 1;
  return ctx->stopped;
}

int32_t tfjit_cpu_checkpoint(RunContext* ctx) {
  if (ctx == nullptr) return 0;
  if (ctx->stopped != 0) return 1;
  RunCheckpointHook("between the kernels of a compiled module");
  if (ctx->control != nullptr && ctx->control->ShouldStop()) ctx->stopped = 1;
  return ctx->stopped;
}

namespace {
int64_t NowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}
}  // namespace

void tfjit_cpu_profile_begin(RunContext* ctx) {
  if (ctx->profile != nullptr) ctx->profile->start_ns = NowNs();
}

void tfjit_cpu_profile_end(RunContext* ctx, int32_t unit) {
  KernelCounters* counters = ctx->profile;
  if (counters == nullptr || unit < 0 || static_cast<size_t>(unit) >= counters->ns.size()) return;
  counters->ns[static_cast<size_t>(unit)] += NowNs() - counters->start_ns;
  counters->calls[static_cast<size_t>(unit)] += 1;
}

std::vector<std::pair<const char*, void*>> RuntimeSymbols() {
  return {
      {"tfjit_cpu_poll", reinterpret_cast<void*>(&tfjit_cpu_poll)},
      {"tfjit_cpu_checkpoint", reinterpret_cast<void*>(&tfjit_cpu_checkpoint)},
      {"tfjit_cpu_profile_begin", reinterpret_cast<void*>(&tfjit_cpu_profile_begin)},
      {"tfjit_cpu_profile_end", reinterpret_cast<void*>(&tfjit_cpu_profile_end)},
      {"tfjit_cpu_parallel_for", reinterpret_cast<void*>(&tfjit_cpu_parallel_for)},
      {"tfjit_cpu_matmul_f32", reinterpret_cast<void*>(&tfjit_cpu_matmul_f32)},
      {"tfjit_cpu_matmul_f64", reinterpret_cast<void*>(&tfjit_cpu_matmul_f64)},
      {"tfjit_cpu_matmul_outer_f32", reinterpret_cast<void*>(&tfjit_cpu_matmul_outer_f32)},
      {"tfjit_cpu_matmul_outer_f64", reinterpret_cast<void*>(&tfjit_cpu_matmul_outer_f64)},
      {"tfjit_cpu_conv2d_f32", reinterpret_cast<void*>(&tfjit_cpu_conv2d_f32)},
      {"tfjit_cpu_conv2d_f64", reinterpret_cast<void*>(&tfjit_cpu_conv2d_f64)},
      {"tfjit_cpu_philox_fill", reinterpret_cast<void*>(&tfjit_cpu_philox_fill)},
      {"tfjit_cpu_top_k", reinterpret_cast<void*>(&tfjit_cpu_top_k)},
      {"tfjit_cpu_linalg", reinterpret_cast<void*>(&tfjit_cpu_linalg)},
      {"tfjit_cpu_nms", reinterpret_cast<void*>(&tfjit_cpu_nms)},
      {"tfjit_cpu_where", reinterpret_cast<void*>(&tfjit_cpu_where)},
      {"tfjit_cpu_scan", reinterpret_cast<void*>(&tfjit_cpu_scan)},
  };
}

}  // namespace tfjit::cpu
