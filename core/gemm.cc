// GEMM and depthwise kernels: a generic path (Eigen, scalar loops) and AVX-512 paths built with
// function-level target attributes, so the binary still runs on AVX2-only CPUs.
//
// AVX-512 GEMM: register blocks of MR rows x 16*NV columns (12 x 32: 24 of the 32 zmm
// registers accumulate; 13 or 14 rows for a block that takes a 1- or 2-row tail), the k loop
// broadcasting one `a` value per row and loading NV vectors of a `b` panel row; k is split
// into blocks of kKc so the packed `b` panels of a block stay in L1 while the row blocks pass
// over them. `b` is packed into 32-column panels per k block, by each call or once for
// constant weights (Pack, GemmF32Packed); column tails use masked loads and stores, so any n
// works. A k block of `a` whose rows lie apart is copied contiguous first when two or more
// panels reuse it: rows 4 KB apart (a 1024-wide matrix) otherwise fall in the same L1 sets as
// one another and the panel (1024^3: 90 -> 106 GFLOP/s, best of 12 interleaved, kernel_bench
// BM_GemmBlocking). 12 rows instead of 6 added up to 5% elsewhere there.
//
// Generated GEMM: the same blocking (GemmBlocked) with panels 2 * lanes wide, calling the
// micro-kernels the JIT emitted for the host (InstallMicroKernels; backends/cpu/gemm_kernels.h
// generates them for AVX2+FMA or AVX-512). Both paths compute each output as one FMA chain
// per k block in k order, so they agree bit for bit.
//
// Depthwise rows: the AVX-512 row (8-pixel blocks of one channel vector, short tiles with more
// vectors at edges, a flat path for fewer than 16 channels), or, where the GEMM's kernels are
// generated, the generated tiles in the same order (DepthwiseRowGenerated), or a scalar loop.
#include "core/gemm.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <vector>

#include "Eigen/Core"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define TFJIT_GEMM_X86 1
#include <immintrin.h>
#else
#define TFJIT_GEMM_X86 0
#endif

namespace tfjit::gemm {
namespace {

std::atomic<Isa> forced_isa{Isa::kAuto};
std::atomic<const MicroKernelSet*> installed_kernels{nullptr};

// The hand-written AVX-512 GEMM.
bool UseAvx512Gemm() {
  const Isa isa = forced_isa.load(std::memory_order_relaxed);
  return (isa == Isa::kAuto || isa == Isa::kAvx512) && HostHasAvx512();
}

// The hand-written AVX-512 depthwise row, where no generated one is in use (below).
bool UseAvx512Depthwise() {
  return forced_isa.load(std::memory_order_relaxed) != Isa::kGeneric && HostHasAvx512();
}

// The generated micro-kernels, or null.
const MicroKernelSet* GeneratedKernels() {
  const Isa isa = forced_isa.load(std::memory_order_relaxed);
  if (isa == Isa::kGenerated || (isa == Isa::kAuto && !HostHasAvx512())) {
    return installed_kernels.load(std::memory_order_acquire);
  }
  return nullptr;
}

// The generated kernels when they include depthwise tiles, or null.
const MicroKernelSet* GeneratedDepthwise() {
  const MicroKernelSet* set = GeneratedKernels();
  return set != nullptr && set->depthwise[kDepthwiseFull8x1] != nullptr ? set : nullptr;
}

using RowMajor = Eigen::Matrix<float, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;

void GemmGeneric(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                 int64_t ldb, float* c, int64_t ldc, bool accumulate) {
  using Stride = Eigen::OuterStride<>;
  Eigen::Map<RowMajor, 0, Stride> cm(c, m, n, Stride(ldc));
  if (k == 0) {
    if (!accumulate) cm.setZero();
    return;
  }
  Eigen::Map<const RowMajor, 0, Stride> am(a, m, k, Stride(lda));
  Eigen::Map<const RowMajor, 0, Stride> bm(b, k, n, Stride(ldb));
  if (accumulate) {
    cm.noalias() += am * bm;
  } else {
    cm.noalias() = am * bm;
  }
}

void DepthwiseRowGeneric(const DepthwiseRow& r) {
  const int64_t C = r.channels;
  std::fill_n(r.out, r.out_w * C, 0.0f);
  for (int64_t kh = 0; kh < r.k_h; ++kh) {
    const float* row = r.rows[kh];
    if (row == nullptr) continue;
    for (int64_t kw = 0; kw < r.k_w; ++kw) {
      const float* f = r.filter + (kh * r.k_w + kw) * C;
      for (int64_t ox = 0; ox < r.out_w; ++ox) {
        const int64_t ix = ox * r.stride_w + kw * r.dilate_w - r.pad_left;
        if (ix < 0 || ix >= r.in_w) continue;
        const float* px = row + ix * C;
        float* acc = r.out + ox * C;
        for (int64_t c = 0; c < C; ++c) acc[c] += px[c] * f[c];
      }
    }
  }
}

#if TFJIT_GEMM_X86
#define TFJIT_AVX512 __attribute__((target("avx512f,avx512vl,avx2,fma")))

// Bits for the first `cols` of 16 lanes (cols may be <= 0 or >= 16).
TFJIT_AVX512 inline __mmask16 LaneMask(int64_t cols) {
  if (cols >= 16) return 0xFFFF;
  if (cols <= 0) return 0;
  return static_cast<__mmask16>((1u << cols) - 1);
}

// c[MR, cols] (+)= a[MR, kc] * panel[kc, 16*NV], where the packed panel holds 16*NV floats per
// k step (zero past `cols`); columns past `cols` are not written. With `segs` > 1, `a` is
// segs runs of kc floats per row, `seg_stride` apart (GemmF32PackedSegments), and the panel
// segs * kc rows.
template <int MR, int NV, bool kSegmented>
TFJIT_AVX512 void MicroKernel(int64_t kc, const float* a, int64_t lda, const float* panel, float* c,
                              int64_t ldc, int64_t cols, bool accumulate, int64_t segs = 1,
                              int64_t seg_stride = 0) {
  // The loops over r and v must unroll, or GCC keeps the accumulators in memory.
  __m512 acc[MR][NV];
#pragma GCC unroll 16
  for (int r = 0; r < MR; ++r) {
#pragma GCC unroll 2
    for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_setzero_ps();
  }
  // One run unless segmented (segs > 1); the plain GEMM keeps its single loop over k.
  for (int64_t s = 0; s < segs; ++s, a += seg_stride, panel += kc * 16 * NV) {
    for (int64_t kk = 0; kk < kc; ++kk) {
      __m512 bv[NV];
#pragma GCC unroll 2
      for (int v = 0; v < NV; ++v) bv[v] = _mm512_loadu_ps(panel + kk * 16 * NV + 16 * v);
#pragma GCC unroll 16
      for (int r = 0; r < MR; ++r) {
        const __m512 av = _mm512_set1_ps(a[r * lda + kk]);
#pragma GCC unroll 2
        for (int v = 0; v < NV; ++v) acc[r][v] = _mm512_fmadd_ps(av, bv[v], acc[r][v]);
      }
    }
    if constexpr (!kSegmented) break;
  }
#pragma GCC unroll 2
  for (int v = 0; v < NV; ++v) {
    const __mmask16 mask = LaneMask(cols - 16 * v);
#pragma GCC unroll 16
    for (int r = 0; r < MR; ++r) {
      float* dst = c + r * ldc + 16 * v;
      __m512 out = acc[r][v];
      if (accumulate) out = _mm512_add_ps(out, _mm512_maskz_loadu_ps(mask, dst));
      _mm512_mask_storeu_ps(dst, mask, out);
    }
  }
}

template <int NV, bool kSegmented>
TFJIT_AVX512 void RowBlock(int64_t rows, int64_t kc, const float* a, int64_t lda,
                           const float* panel, float* c, int64_t ldc, int64_t cols, bool accumulate,
                           int64_t segs = 1, int64_t seg_stride = 0) {
  switch (rows) {
    case 1:
      return MicroKernel<1, NV, kSegmented>(kc, a, lda, panel, c, ldc, cols, accumulate, segs,
                                            seg_stride);
    case 2:
      return MicroKernel<2, NV, kSegmented>(kc, a, lda, panel, c, ldc, cols, accumulate, segs,
                                            seg_stride);
    case 3:
      return MicroKernel<3, NV, kSegmented>(kc, a, lda, panel, c, ldc, cols, accumulate, segs,
                                            seg_stride);
    case 4:
      return MicroKernel<4, NV, kSegmented>(kc, a, lda, panel, c, ldc, cols, accumulate, segs,
                                            seg_stride);
    case 5:
      return MicroKernel<5, NV, kSegmented>(kc, a, lda, panel, c, ldc, cols, accumulate, segs,
                                            seg_stride);
    case 6:
      return MicroKernel<6, NV, kSegmented>(kc, a, lda, panel, c, ldc, cols, accumulate, segs,
                                            seg_stride);
    case 7:
      return MicroKernel<7, NV, kSegmented>(kc, a, lda, panel, c, ldc, cols, accumulate, segs,
                                            seg_stride);
    case 8:
      return MicroKernel<8, NV, kSegmented>(kc, a, lda, panel, c, ldc, cols, accumulate, segs,
                                            seg_stride);
    case 9:
      return MicroKernel<9, NV, kSegmented>(kc, a, lda, panel, c, ldc, cols, accumulate, segs,
                                            seg_stride);
    case 10:
      return MicroKernel<10, NV, kSegmented>(kc, a, lda, panel, c, ldc, cols, accumulate, segs,
                                             seg_stride);
    case 11:
      return MicroKernel<11, NV, kSegmented>(kc, a, lda, panel, c, ldc, cols, accumulate, segs,
                                             seg_stride);
    case 12:
      return MicroKernel<12, NV, kSegmented>(kc, a, lda, panel, c, ldc, cols, accumulate, segs,
                                             seg_stride);
    case 13:
      return MicroKernel<13, NV, kSegmented>(kc, a, lda, panel, c, ldc, cols, accumulate, segs,
                                             seg_stride);
    default:
      return MicroKernel<14, NV, kSegmented>(kc, a, lda, panel, c, ldc, cols, accumulate, segs,
                                             seg_stride);
  }
}

// Copies b[kc, cols] (leading dim ldb) into a panel of kc rows of `width` floats, zero-padded.
TFJIT_AVX512 void PackPanel(int64_t kc, const float* b, int64_t ldb, int64_t cols, int64_t width,
                            float* panel) {
  for (int64_t v = 0; v < width; v += 16) {
    const __mmask16 mask = LaneMask(cols - v);
    for (int64_t kk = 0; kk < kc; ++kk) {
      _mm512_storeu_ps(panel + kk * width + v, _mm512_maskz_loadu_ps(mask, b + kk * ldb + v));
    }
  }
}

// MR rows (1..8) x 16 * vectors columns of the AVX-512 kernels.
TFJIT_AVX512 void Avx512RowBlock(int64_t rows, int vectors, int64_t kc, const float* a, int64_t lda,
                                 const float* panel, float* c, int64_t ldc, int64_t cols,
                                 bool accumulate, int64_t segs = 1, int64_t seg_stride = 0) {
  if (segs > 1) {
    if (vectors == 2) {
      return RowBlock<2, true>(rows, kc, a, lda, panel, c, ldc, cols, accumulate, segs, seg_stride);
    }
    return RowBlock<1, true>(rows, kc, a, lda, panel, c, ldc, cols, accumulate, segs, seg_stride);
  }
  if (vectors == 2) return RowBlock<2, false>(rows, kc, a, lda, panel, c, ldc, cols, accumulate);
  RowBlock<1, false>(rows, kc, a, lda, panel, c, ldc, cols, accumulate);
}
#endif  // TFJIT_GEMM_X86

#if TFJIT_GEMM_X86
// ---- Narrow convolutions: output pixels in the vector lanes (core/gemm_narrow.inc) ----

#define TFJIT_AVX2 __attribute__((target("avx2,fma")))

struct Avx2Vec {
  using T = __m256;
  static constexpr int kLanes = 8, kRegisters = 16;
  TFJIT_AVX2 static T Zero() { return _mm256_setzero_ps(); }
  TFJIT_AVX2 static T Load(const float* p) { return _mm256_loadu_ps(p); }
  TFJIT_AVX2 static T Splat(float x) { return _mm256_set1_ps(x); }
  TFJIT_AVX2 static T Fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  TFJIT_AVX2 static void Store(float* p, T v) { _mm256_storeu_ps(p, v); }
};

struct Avx512Vec {
  using T = __m512;
  static constexpr int kLanes = 16, kRegisters = 32;
  TFJIT_AVX512 static T Zero() { return _mm512_setzero_ps(); }
  TFJIT_AVX512 static T Load(const float* p) { return _mm512_loadu_ps(p); }
  TFJIT_AVX512 static T Splat(float x) { return _mm512_set1_ps(x); }
  TFJIT_AVX512 static T Fma(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  TFJIT_AVX512 static void Store(float* p, T v) { _mm512_storeu_ps(p, v); }
};

#define TFJIT_NARROW_TARGET TFJIT_AVX2
#define TFJIT_NARROW_VEC Avx2Vec
#define TFJIT_NARROW_ROW NarrowConvRowAvx2
#define TFJIT_NARROW_NS narrow_avx2
#include "core/gemm_narrow.inc"
#undef TFJIT_NARROW_TARGET
#undef TFJIT_NARROW_VEC
#undef TFJIT_NARROW_ROW
#undef TFJIT_NARROW_NS

#define TFJIT_NARROW_TARGET TFJIT_AVX512
#define TFJIT_NARROW_VEC Avx512Vec
#define TFJIT_NARROW_ROW NarrowConvRowAvx512
#define TFJIT_NARROW_NS narrow_avx512
#include "core/gemm_narrow.inc"
#undef TFJIT_NARROW_TARGET
#undef TFJIT_NARROW_VEC
#undef TFJIT_NARROW_ROW
#undef TFJIT_NARROW_NS

// Columns [0, in_w) of an NHWC row to planar runs of `pitch` (PlanarizeRow), 8 pixels x 8
// features at a time through an in-register transpose; the rest one value at a time.
TFJIT_AVX2 void PlanarizeRowAvx2(const float* src, int64_t in_w, int64_t in_c, float* dst,
                                 int64_t pitch) {
  const int64_t groups = in_c / 8;
  int64_t ix = 0;
  for (; groups > 0 && ix + 8 <= in_w; ix += 8) {
    for (int64_t g = 0; g < groups; ++g) {
      const float* s = src + ix * in_c + g * 8;
      __m256 r[8], t[8], u[8];
      for (int j = 0; j < 8; ++j) r[j] = _mm256_loadu_ps(s + j * in_c);
      for (int j = 0; j < 8; j += 2) {
        t[j] = _mm256_unpacklo_ps(r[j], r[j + 1]);
        t[j + 1] = _mm256_unpackhi_ps(r[j], r[j + 1]);
      }
      for (int j = 0; j < 8; j += 4) {
        u[j] = _mm256_shuffle_ps(t[j], t[j + 2], 0x44);
        u[j + 1] = _mm256_shuffle_ps(t[j], t[j + 2], 0xEE);
        u[j + 2] = _mm256_shuffle_ps(t[j + 1], t[j + 3], 0x44);
        u[j + 3] = _mm256_shuffle_ps(t[j + 1], t[j + 3], 0xEE);
      }
      float* d = dst + g * 8 * pitch + ix;
      for (int i = 0; i < 4; ++i) {
        _mm256_storeu_ps(d + i * pitch, _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
        _mm256_storeu_ps(d + (i + 4) * pitch, _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
      }
    }
    for (int64_t i = groups * 8; i < in_c; ++i) {
      for (int64_t j = ix; j < ix + 8; ++j) dst[i * pitch + j] = src[j * in_c + i];
    }
  }
  for (; ix < in_w; ++ix) {
    for (int64_t i = 0; i < in_c; ++i) dst[i * pitch + ix] = src[ix * in_c + i];
  }
}

bool HostHasAvx2Fma() {
  static const bool has = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
  return has;
}
#endif  // TFJIT_GEMM_X86

constexpr int64_t kMr = 6;    // rows of a generated register block (AVX2 has 16 registers)
constexpr int64_t kKc = 256;  // k block: a 32 KB panel (AVX-512), reused by the row blocks from L1
static_assert(kMaxSegmentedK == kKc, "a segmented GEMM is one k block");
constexpr int64_t kMc = 96;  // rows whose k block of `a` (96 KB) stays in L2 across panels

// The same panel copy in portable code (the generated kernels' packing).
void PackPanelPortable(int64_t kc, const float* b, int64_t ldb, int64_t cols, int64_t width,
                       float* panel) {
  const int64_t copied = std::min(cols, width);
  for (int64_t kk = 0; kk < kc; ++kk) {
    std::copy_n(b + kk * ldb, copied, panel + kk * width);
    std::fill(panel + kk * width + copied, panel + (kk + 1) * width, 0.0f);
  }
}

// Packs b[k, n] (leading dim ldb) into panels nr = 2 * lanes columns wide, k block after k
// block: block k0 holds `panels` panels of kc rows, panel p at (k0 * panels + p * kc) * nr
// floats, kc rows of nr floats (`lanes` for a last panel of at most `lanes` columns), zero
// past the columns. `pack` copies one panel (PackPanel's signature).
template <typename PackFn>
void PackAllPanels(int64_t lanes, int64_t k, int64_t n, const float* b, int64_t ldb, float* packed,
                   PackFn pack) {
  const int64_t nr = 2 * lanes, panels = (n + nr - 1) / nr;
  for (int64_t k0 = 0; k0 < k; k0 += kKc) {
    const int64_t kc = std::min(kKc, k - k0);
    for (int64_t p = 0; p < panels; ++p) {
      const int64_t j = p * nr, cols = std::min(nr, n - j);
      pack(kc, b + k0 * ldb + j, ldb, cols, cols > lanes ? nr : lanes,
           packed + (k0 * panels + p * kc) * nr);
    }
  }
}

// SetBlockingForTesting's settings (0: the defaults below).
std::atomic<int64_t> tuned_rows{0}, tuned_pack_a{0};
std::atomic<bool> narrow_disabled{false};  // SetNarrowConvForTesting
// The fewest panels of b for which a k block of `a` is copied contiguous (file comment).
int64_t PackAPanels() {
  const int64_t v = tuned_pack_a.load(std::memory_order_relaxed);
  return v > 0 ? v : 2;
}

// c (+)= a * b for columns [j0, j0 + n) of b[k, n_total] through register blocks of `mr`
// rows (up to mr + 2 for a tail) by panels of nr = 2 * lanes columns: b is read from
// `prepacked` (PackAllPanels of the whole b) when given, else packed here one k block at a
// time with `pack`. `row_block(rows, vectors, kc, a, lda, panel, c, ldc, cols, accumulate)`
// runs one register block.
template <typename PackFn, typename RowBlockFn>
void GemmBlocked(int64_t lanes, int64_t mr, int64_t m, int64_t n, int64_t k, const float* a,
                 int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                 bool accumulate_all, const float* prepacked, int64_t n_total, int64_t j0,
                 PackFn pack, RowBlockFn row_block) {
  // The k block of b, packed panel after panel (reused by every row of a).
  thread_local std::vector<float> packed;
  thread_local std::vector<float> a_copy;
  const int64_t nr = 2 * lanes;
  const int64_t panels = (n + nr - 1) / nr;
  const int64_t all_panels = (n_total + nr - 1) / nr;
  if (prepacked == nullptr) packed.resize(static_cast<size_t>(std::min(kKc, k) * panels * nr));
  for (int64_t k0 = 0; k0 < k; k0 += kKc) {
    const int64_t kc = std::min(kKc, k - k0);
    const bool accumulate = accumulate_all || k0 > 0;
    const float* block = nullptr;
    if (prepacked != nullptr) {
      block = prepacked + (k0 * all_panels + (j0 / nr) * kc) * nr;
    } else {
      for (int64_t p = 0; p < panels; ++p) {
        const int64_t j = p * nr, cols = std::min(nr, n - j);
        pack(kc, b + k0 * ldb + j, ldb, cols, cols > lanes ? nr : lanes,
             packed.data() + p * kc * nr);
      }
      block = packed.data();
    }
    for (int64_t i0 = 0, i_end = 0; i0 < m; i0 = i_end) {
      i_end = m - i0 <= kMc + 2 ? m : i0 + kMc;  // a 1- or 2-row tail stays with its block
      const float* a_block = a + i0 * lda + k0;
      int64_t a_ld = lda;
      if (panels >= PackAPanels() && lda > kc) {
        a_copy.resize(static_cast<size_t>((i_end - i0) * kc));
        for (int64_t i = i0; i < i_end; ++i) {
          std::copy_n(a + i * lda + k0, kc, a_copy.data() + (i - i0) * kc);
        }
        a_block = a_copy.data();
        a_ld = kc;
      }
      for (int64_t p = 0; p < panels; ++p) {
        const int64_t j = p * nr, cols = std::min(nr, n - j);
        const float* panel = block + p * kc * nr;
        for (int64_t i = i0, rows = 0; i < i_end; i += rows) {
          // A tail of 1 or 2 rows joins the block before it (AVX-512: 13 or 14 rows, 26 or
          // 28 accumulators): alone it would wait on the FMA latency with 1-4 chains.
          rows = i_end - i <= mr + 2 ? i_end - i : mr;
          row_block(rows, cols > lanes ? 2 : 1, kc, a_block + (i - i0) * a_ld, a_ld, panel,
                    c + i * ldc + j, ldc, cols, accumulate);
        }
      }
    }
  }
}

#if TFJIT_GEMM_X86
// Rows of an AVX-512 register block (MicroKernel instances run up to 14).
int64_t Avx512Rows() {
  const int64_t v = tuned_rows.load(std::memory_order_relaxed);
  return v > 0 ? std::clamp<int64_t>(v, 6, 12) : 12;
}
void GemmAvx512(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
                int64_t ldb, float* c, int64_t ldc, bool accumulate_all,
                const float* prepacked = nullptr, int64_t n_total = 0, int64_t j0 = 0) {
  GemmBlocked(16, Avx512Rows(), m, n, k, a, lda, b, ldb, c, ldc, accumulate_all, prepacked, n_total,
              j0, PackPanel,
              [](int64_t rows, int vectors, int64_t kc, const float* ap, int64_t lda_,
                 const float* panel, float* cp, int64_t ldc_, int64_t cols, bool acc) {
                Avx512RowBlock(rows, vectors, kc, ap, lda_, panel, cp, ldc_, cols, acc);
              });
}
#endif  // TFJIT_GEMM_X86

void GemmGenerated(const MicroKernelSet& set, int64_t m, int64_t n, int64_t k, const float* a,
                   int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc,
                   bool accumulate_all, const float* prepacked = nullptr, int64_t n_total = 0,
                   int64_t j0 = 0) {
  GemmBlocked(set.lanes, kMr, m, n, k, a, lda, b, ldb, c, ldc, accumulate_all, prepacked, n_total,
              j0, PackPanelPortable,
              [&set](int64_t rows, int vectors, int64_t kc, const float* ap, int64_t lda_,
                     const float* panel, float* cp, int64_t ldc_, int64_t cols, bool acc) {
                set.kernels[rows][vectors](kc, ap, lda_, panel, cp, ldc_, cols, acc ? 1 : 0);
              });
}

// Output pixels whose taps all fall inside the row: [lo, hi).
void InteriorPixels(const DepthwiseRow& r, int64_t* lo, int64_t* hi) {
  const int64_t span = (r.k_w - 1) * r.dilate_w;
  *lo = std::clamp<int64_t>((r.pad_left + r.stride_w - 1) / r.stride_w, 0, r.out_w);
  const int64_t last = r.in_w - 1 - span + r.pad_left;  // the last interior ox * stride
  *hi = last < 0 ? *lo : std::clamp(last / r.stride_w + 1, *lo, r.out_w);
}

// The depthwise row through generated tiles (MicroKernelSet::depthwise), in the AVX-512
// row's order: groups of 64 channels, so what a block of pixels reads stays in L1 while the
// group's channel vectors pass over it; the interior's 8-pixel blocks in one call, short tiles
// with more channel vectors per pixel for the rest of the interior and the edges.
void DepthwiseRowGenerated(const MicroKernelSet& set, const DepthwiseRow& r) {
  const int64_t C = r.channels;
  int64_t lo = 0, hi = 0;
  InteriorPixels(r, &lo, &hi);
  const int64_t full = (hi - lo) / 8 * 8;
  constexpr int64_t kGroup = 64;
  for (int64_t g0 = 0; g0 < C; g0 += kGroup) {
    const int64_t g_end = std::min(C, g0 + kGroup);
    // Pixels [ox0, ox0 + nox), nox <= 8, through a checked tile.
    auto tail = [&](int64_t ox0, int64_t nox) {
      const DepthwiseTile tile =
          nox <= 2 ? kDepthwise2x4 : (nox <= 4 ? kDepthwise4x2 : kDepthwise8x1);
      set.depthwise[tile](&r, ox0, nox, g0, g_end);
    };
    for (int64_t ox = 0; ox < lo; ox += 2) tail(ox, std::min<int64_t>(2, lo - ox));
    if (full > 0) set.depthwise[kDepthwiseFull8x1](&r, lo, full, g0, g_end);
    if (lo + full < hi) tail(lo + full, hi - lo - full);
    for (int64_t ox = hi; ox < r.out_w; ox += 2) tail(ox, std::min<int64_t>(2, r.out_w - ox));
  }
}

#if TFJIT_GEMM_X86
// kOx output pixels x 16 channels per register block of the depthwise row.
constexpr int kOx = 8;

// Output pixels [ox0, ox0 + nox), nox <= kOx, for the channels of c0 under `mask`. With
// `interior`, every tap of these pixels is inside the row (no checks in the loop).
template <bool kInterior>
TFJIT_AVX512 inline void DepthwiseBlock(const DepthwiseRow& r, int64_t ox0, int64_t nox, int64_t c0,
                                        __mmask16 mask) {
  const int64_t C = r.channels;
  __m512 acc[kOx];
#pragma GCC unroll 8
  for (int j = 0; j < kOx; ++j) acc[j] = _mm512_setzero_ps();
  for (int64_t kh = 0; kh < r.k_h; ++kh) {
    const float* row = r.rows[kh];
    if (row == nullptr) continue;
    for (int64_t kw = 0; kw < r.k_w; ++kw) {
      const __m512 f = _mm512_maskz_loadu_ps(mask, r.filter + (kh * r.k_w + kw) * C + c0);
      const int64_t ix0 = ox0 * r.stride_w + kw * r.dilate_w - r.pad_left;
      const float* px = row + ix0 * C + c0;
      const int64_t step = r.stride_w * C;
#pragma GCC unroll 8
      for (int j = 0; j < kOx; ++j, px += step) {
        if (j >= nox) break;
        if (!kInterior) {
          const int64_t ix = ix0 + j * r.stride_w;
          if (ix < 0 || ix >= r.in_w) continue;
        }
        acc[j] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask, px), f, acc[j]);
      }
    }
  }
#pragma GCC unroll 8
  for (int j = 0; j < kOx; ++j) {
    if (j < nox) _mm512_mask_storeu_ps(r.out + (ox0 + j) * C + c0, mask, acc[j]);
  }
}

// A short block (1-4 pixels, as at row edges and in short rows): P pixels x V channel vectors
// of accumulators, so there are still several independent FMA chains (a lone pixel with one
// vector waited on the FMA latency for every tap). Channels [c0, c0 + 16 * nvec), masked
// past r.channels.
template <bool kInterior, int P, int V>
TFJIT_AVX512 inline void DepthwiseTile(const DepthwiseRow& r, int64_t ox0, int64_t nox, int64_t c0,
                                       int64_t nvec) {
  const int64_t C = r.channels;
  __mmask16 mask[V];
  __m512 acc[P][V];
#pragma GCC unroll 4
  for (int v = 0; v < V; ++v) {
    mask[v] = v < nvec ? LaneMask(C - c0 - 16 * v) : 0;
#pragma GCC unroll 4
    for (int j = 0; j < P; ++j) acc[j][v] = _mm512_setzero_ps();
  }
  for (int64_t kh = 0; kh < r.k_h; ++kh) {
    const float* row = r.rows[kh];
    if (row == nullptr) continue;
    for (int64_t kw = 0; kw < r.k_w; ++kw) {
      const float* fp = r.filter + (kh * r.k_w + kw) * C + c0;
      __m512 f[V];
#pragma GCC unroll 4
      for (int v = 0; v < V; ++v) f[v] = _mm512_maskz_loadu_ps(mask[v], fp + 16 * v);
      const int64_t ix0 = ox0 * r.stride_w + kw * r.dilate_w - r.pad_left;
#pragma GCC unroll 4
      for (int j = 0; j < P; ++j) {
        if (j >= nox) break;
        const int64_t ix = ix0 + j * r.stride_w;
        if (!kInterior && (ix < 0 || ix >= r.in_w)) continue;
        const float* px = row + ix * C + c0;
#pragma GCC unroll 4
        for (int v = 0; v < V; ++v) {
          acc[j][v] = _mm512_fmadd_ps(_mm512_maskz_loadu_ps(mask[v], px + 16 * v), f[v], acc[j][v]);
        }
      }
    }
  }
#pragma GCC unroll 4
  for (int j = 0; j < P; ++j) {
    if (j >= nox) break;
#pragma GCC unroll 4
    for (int v = 0; v < V; ++v) {
      _mm512_mask_storeu_ps(r.out + (ox0 + j) * C + c0 + 16 * v, mask[v], acc[j][v]);
    }
  }
}

// Bits [lo, hi) of 16 lanes (empty when hi <= lo).
TFJIT_AVX512 inline __mmask16 LaneRange(int64_t lo, int64_t hi) {
  lo = std::max<int64_t>(lo, 0);
  hi = std::min<int64_t>(hi, 16);
  if (hi <= lo) return 0;
  return static_cast<__mmask16>(LaneMask(hi) & ~LaneMask(lo));
}

// Fewer than 16 channels dividing 16, stride 1: output pixel ox reads input pixel ox + shift
// for tap shift, so the whole row is one flat array of out_w * C floats whose element f
// reads element f + shift * C of the input row, and every vector holds 16 / C pixels (the
// per-pixel path would mask off 16 - C lanes). Lane l has channel l % C, so each tap's
// filter is replicated across the 16 lanes. kFlatBlocks vectors accumulate at a time.
constexpr int64_t kFlatBlocks = 8;

TFJIT_AVX512 void DepthwiseRowFlatAvx512(const DepthwiseRow& r) {
  const int64_t C = r.channels, total = r.out_w * C, taps = r.k_h * r.k_w;
  // Each tap's C filter values repeated across the 16 lanes (C is 1, 2, 4 or 8): a masked
  // load and a lane permute per tap. (Per lane with `l % C`, this setup cost more than a
  // 128-pixel row's FMAs.)
  thread_local std::vector<float> replicated;
  replicated.resize(static_cast<size_t>(taps * 16));
  alignas(64) int32_t lanes[16];
  for (int l = 0; l < 16; ++l) lanes[l] = static_cast<int32_t>(l & (C - 1));
  const __m512i lane_of = _mm512_load_si512(lanes);
  const __mmask16 first_c = LaneMask(C);
  for (int64_t t = 0; t < taps; ++t) {
    const __m512 f = _mm512_maskz_loadu_ps(first_c, r.filter + t * C);
    _mm512_storeu_ps(replicated.data() + t * 16, _mm512_maskz_permutexvar_ps(0xFFFF, lane_of, f));
  }
  for (int64_t f0 = 0; f0 < total; f0 += 16 * kFlatBlocks) {
    const int64_t nb = std::min<int64_t>(kFlatBlocks, (total - f0 + 15) / 16);
    __m512 acc[kFlatBlocks];
#pragma GCC unroll 8
    for (int b = 0; b < kFlatBlocks; ++b) acc[b] = _mm512_setzero_ps();
    for (int64_t kh = 0; kh < r.k_h; ++kh) {
      const float* row = r.rows[kh];
      if (row == nullptr) continue;
      for (int64_t kw = 0; kw < r.k_w; ++kw) {
        const __m512 fv = _mm512_loadu_ps(replicated.data() + (kh * r.k_w + kw) * 16);
        const int64_t shift = kw * r.dilate_w - r.pad_left;  // input pixel - output pixel
        // Output elements whose input pixel is inside the row: [begin, end).
        const int64_t begin = std::max<int64_t>(0, -shift * C);
        const int64_t end = std::min(total, (r.in_w - shift) * C);
        if (nb == kFlatBlocks && f0 >= begin && f0 + 16 * kFlatBlocks <= end) {
          // The whole group inside the row (all but the row's first and last groups): no
          // checks, so the accumulators stay in registers.
          const float* src = row + f0 + shift * C;
#pragma GCC unroll 8
          for (int b = 0; b < kFlatBlocks; ++b) {
            acc[b] = _mm512_fmadd_ps(_mm512_loadu_ps(src + 16 * b), fv, acc[b]);
          }
          continue;
        }
#pragma GCC unroll 8
        for (int b = 0; b < kFlatBlocks; ++b) {
          if (b >= nb) break;
          const int64_t f = f0 + 16 * b;
          if (f >= begin && f + 16 <= end) {
            acc[b] = _mm512_fmadd_ps(_mm512_loadu_ps(row + f + shift * C), fv, acc[b]);
          } else {
            // An edge: lanes [lo, hi) are inside; expand-load reads exactly those floats.
            const int64_t lo = std::max<int64_t>(begin - f, 0);
            const int64_t hi = std::min<int64_t>(end - f, 16);
            if (hi <= lo) continue;
            const __m512 x =
                _mm512_maskz_expandloadu_ps(LaneRange(lo, hi), row + f + lo + shift * C);
            acc[b] = _mm512_fmadd_ps(x, fv, acc[b]);
          }
        }
      }
    }
#pragma GCC unroll 8
    for (int b = 0; b < kFlatBlocks; ++b) {
      if (b >= nb) break;
      const int64_t f = f0 + 16 * b;
      _mm512_mask_storeu_ps(r.out + f, LaneMask(total - f), acc[b]);
    }
  }
}

TFJIT_AVX512 void DepthwiseRowAvx512(const DepthwiseRow& r) {
  const int64_t C = r.channels;
  if (C < 16 && 16 % C == 0 && r.stride_w == 1) return DepthwiseRowFlatAvx512(r);
  // Pixels whose taps all fall inside the row: [lo, hi). Edge pixels go one at a time.
  int64_t lo = 0, hi = 0;
  InteriorPixels(r, &lo, &hi);
  // Groups of kGroup channels outside, then pixel blocks, then the group's channel blocks:
  // what a pixel block reads (k_h rows of about kOx * stride + k_w pixels of the group) and
  // the group's filter stay in L1 while the group's channel blocks pass over them.
  constexpr int64_t kGroup = 64;
  for (int64_t g0 = 0; g0 < C; g0 += kGroup) {
    const int64_t g_end = std::min(C, g0 + kGroup);
    auto channels = [&](int64_t ox0, int64_t nox, bool interior) TFJIT_AVX512 {
      if (nox <= 4) {
        // Short blocks: more channel vectors at once (see DepthwiseTile).
        const int64_t v = nox <= 2 ? 4 : 2;
        for (int64_t c0 = g0; c0 < g_end; c0 += 16 * v) {
          const int64_t nvec = std::min<int64_t>(v, (g_end - c0 + 15) / 16);
          if (nox <= 2) {
            if (interior) {
              DepthwiseTile<true, 2, 4>(r, ox0, nox, c0, nvec);
            } else {
              DepthwiseTile<false, 2, 4>(r, ox0, nox, c0, nvec);
            }
          } else if (interior) {
            DepthwiseTile<true, 4, 2>(r, ox0, nox, c0, nvec);
          } else {
            DepthwiseTile<false, 4, 2>(r, ox0, nox, c0, nvec);
          }
        }
        return;
      }
      for (int64_t c0 = g0; c0 < g_end; c0 += 16) {
        const __mmask16 mask = LaneMask(C - c0);
        if (interior) {
          DepthwiseBlock<true>(r, ox0, nox, c0, mask);
        } else {
          DepthwiseBlock<false>(r, ox0, nox, c0, mask);
        }
      }
    };
    for (int64_t ox = 0; ox < lo; ++ox) channels(ox, 1, false);
    for (int64_t ox0 = lo; ox0 < hi; ox0 += kOx) {
      channels(ox0, std::min<int64_t>(kOx, hi - ox0), true);
    }
    for (int64_t ox = hi; ox < r.out_w; ++ox) channels(ox, 1, false);
  }
}
#endif  // TFJIT_GEMM_X86

}  // namespace

bool HostHasAvx512() {
#if TFJIT_GEMM_X86
  static const bool has = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl");
  return has;
#else
  return false;
#endif
}

void SetIsaForTesting(Isa isa) { forced_isa.store(isa, std::memory_order_relaxed); }

void SetNarrowConvForTesting(bool enabled) {
  narrow_disabled.store(!enabled, std::memory_order_relaxed);
}

void SetBlockingForTesting(int64_t avx512_rows, int64_t pack_a_panels) {
  tuned_rows.store(avx512_rows, std::memory_order_relaxed);
  tuned_pack_a.store(pack_a_panels, std::memory_order_relaxed);
}

void InstallMicroKernels(const MicroKernelSet* set) {
  installed_kernels.store(set, std::memory_order_release);
}

const MicroKernelSet* InstalledMicroKernels() {
  return installed_kernels.load(std::memory_order_acquire);
}

void GemmF32(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
             int64_t ldb, float* c, int64_t ldc, bool accumulate) {
  if (m <= 0 || n <= 0) return;
  // Fewer rows than a register block: b is read about once either way (memory-bound), and
  // packing it would double that.
  if (m >= kMr && k > 0) {
#if TFJIT_GEMM_X86
    if (UseAvx512Gemm()) return GemmAvx512(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
#endif
    if (const MicroKernelSet* set = GeneratedKernels()) {
      return GemmGenerated(*set, m, n, k, a, lda, b, ldb, c, ldc, accumulate);
    }
  }
  GemmGeneric(m, n, k, a, lda, b, ldb, c, ldc, accumulate);
}

// Columns of a packed panel on the path in use (0: nothing is packed).
int64_t PanelWidth() {
#if TFJIT_GEMM_X86
  if (UseAvx512Gemm()) return 32;
#endif
  if (const MicroKernelSet* set = GeneratedKernels()) return 2 * set->lanes;
  return 0;
}

int64_t PackedBlockFloats(int64_t k, int64_t n) {
  const int64_t nr = PanelWidth();
  if (nr == 0 || k <= 0 || n <= 0) return 0;
  return k * ((n + nr - 1) / nr) * nr;
}

void Pack(const Packing& p, const float* src, float* dst) {
  const int64_t block = PackedBlockFloats(p.k, p.n);
  if (block == 0) return;
  for (int64_t i = 0; i < p.blocks; ++i) {
#if TFJIT_GEMM_X86
    if (UseAvx512Gemm()) {
      PackAllPanels(16, p.k, p.n, src + i * p.stride, p.n, dst + i * block, PackPanel);
      continue;
    }
#endif
    PackAllPanels(GeneratedKernels()->lanes, p.k, p.n, src + i * p.stride, p.n, dst + i * block,
                  PackPanelPortable);
  }
}

void GemmF32Packed(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                   const float* packed, int64_t n_total, int64_t j0, float* c, int64_t ldc,
                   bool accumulate) {
  if (m <= 0 || n <= 0) return;
  if (k == 0) {
    if (!accumulate) {
      for (int64_t i = 0; i < m; ++i) std::fill_n(c + i * ldc, n, 0.0f);
    }
    return;
  }
  // Packed blocks exist only where one of the two runs (PackedBlockFloats).
#if TFJIT_GEMM_X86
  if (UseAvx512Gemm()) {
    return GemmAvx512(m, n, k, a, lda, nullptr, 0, c, ldc, accumulate, packed, n_total, j0);
  }
#endif
  if (const MicroKernelSet* set = GeneratedKernels()) {
    GemmGenerated(*set, m, n, k, a, lda, nullptr, 0, c, ldc, accumulate, packed, n_total, j0);
  }
}

void GemmF32PackedSegments(int64_t m, int64_t n, int64_t segs, int64_t run, int64_t seg_stride,
                           const float* a, int64_t lda, const float* packed, int64_t n_total,
                           int64_t j0, float* c, int64_t ldc, bool accumulate) {
  if (m <= 0 || n <= 0) return;
  const int64_t k = segs * run;
  if (k == 0) {
    if (!accumulate) {
      for (int64_t i = 0; i < m; ++i) std::fill_n(c + i * ldc, n, 0.0f);
    }
    return;
  }
  // GemmBlocked's loops for one k block (k <= kMaxSegmentedK = kKc) of a prepacked b, the
  // rows of `a` read in place. row_block(rows, vectors, a, panel, c, cols).
  auto blocked = [&](int64_t lanes, int64_t mr, const auto& row_block) {
    const int64_t nr = 2 * lanes, panels = (n + nr - 1) / nr;
    const float* block = packed + (j0 / nr) * k * nr;
    for (int64_t i0 = 0, i_end = 0; i0 < m; i0 = i_end) {
      i_end = m - i0 <= kMc + 2 ? m : i0 + kMc;
      for (int64_t p = 0; p < panels; ++p) {
        const int64_t j = p * nr, cols = std::min(nr, n - j);
        for (int64_t i = i0, rows = 0; i < i_end; i += rows) {
          rows = i_end - i <= mr + 2 ? i_end - i : mr;
          row_block(rows, cols > lanes ? 2 : 1, a + i * lda, block + p * k * nr, c + i * ldc + j,
                    cols);
        }
      }
    }
  };
#if TFJIT_GEMM_X86
  if (UseAvx512Gemm()) {
    blocked(16, Avx512Rows(),
            [&](int64_t rows, int vectors, const float* ap, const float* panel, float* cp,
                int64_t cols) {
              Avx512RowBlock(rows, vectors, run, ap, lda, panel, cp, ldc, cols, accumulate, segs,
                             seg_stride);
            });
    return;
  }
#endif
  if (const MicroKernelSet* set = GeneratedKernels()) {
    // The generated kernels take one run at a time, adding each to the sum so far.
    blocked(set->lanes, kMr,
            [&](int64_t rows, int vectors, const float* ap, const float* panel, float* cp,
                int64_t cols) {
              const int64_t width = vectors * set->lanes;  // the panel's floats per k step
              for (int64_t s = 0; s < segs; ++s) {
                set->kernels[rows][vectors](run, ap + s * seg_stride, lda, panel + s * run * width,
                                            cp, ldc, cols, accumulate || s > 0 ? 1 : 0);
              }
            });
  }
}

bool NarrowConvAvailable() {
#if TFJIT_GEMM_X86
  return forced_isa.load(std::memory_order_relaxed) != Isa::kGeneric &&
         !narrow_disabled.load(std::memory_order_relaxed) && HostHasAvx2Fma();
#else
  return false;
#endif
}

int64_t NarrowPixelBlock() { return UseAvx512Gemm() ? 16 : 8; }

void PlanarizeRow(const float* src, int64_t in_w, int64_t in_c, float* dst, int64_t pitch) {
  if (in_c == 1) {
    std::copy_n(src, in_w, dst);
    return;
  }
#if TFJIT_GEMM_X86
  if (HostHasAvx2Fma()) return PlanarizeRowAvx2(src, in_w, in_c, dst, pitch);
#endif
  for (int64_t ix = 0; ix < in_w; ++ix) {
    for (int64_t i = 0; i < in_c; ++i) dst[i * pitch + ix] = src[ix * in_c + i];
  }
}

void NarrowConvRowF32(const NarrowConvRow& r) {
  if (r.out_w <= 0 || r.out_c <= 0) return;
#if TFJIT_GEMM_X86
  if (NarrowConvAvailable()) {
    if (UseAvx512Gemm()) return NarrowConvRowAvx512(r);
    return NarrowConvRowAvx2(r);
  }
#endif
  // Without a vector path: the same chains, one output at a time.
  for (int64_t ox = 0; ox < r.out_w; ++ox) {
    for (int64_t o = 0; o < r.out_c; ++o) {
      float sum = 0.0f;
      for (int64_t kh = 0; kh < r.k_h; ++kh) {
        if (r.rows[kh] == nullptr) continue;
        for (int64_t kw = 0; kw < r.k_w; ++kw) {
          const float* f = r.filter + (kh * r.k_w + kw) * r.in_c * r.out_c + o;
          for (int64_t i = 0; i < r.in_c; ++i) {
            sum = std::fma(r.rows[kh][i * r.pitch + ox + kw], f[i * r.out_c], sum);
          }
        }
      }
      r.out[ox * r.out_c + o] = sum;
    }
  }
}

void DepthwiseRowF32(const DepthwiseRow& r) {
  if (r.out_w <= 0 || r.channels <= 0) return;
  if (const MicroKernelSet* set = GeneratedDepthwise()) return DepthwiseRowGenerated(*set, r);
#if TFJIT_GEMM_X86
  if (UseAvx512Depthwise()) return DepthwiseRowAvx512(r);
#endif
  DepthwiseRowGeneric(r);
}

}  // namespace tfjit::gemm
