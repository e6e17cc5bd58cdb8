// Single-threaded float32 GEMM and depthwise-convolution inner kernels with AVX-512 code paths,
// chosen at run time from the CPU's features (the rest of tfjit is built for x86-64-v3, AVX2),
// and drivers for GEMM micro-kernels and depthwise tiles the JIT generates for the host (any
// vector width).
//
// Both compute with the same float32 fused multiply-adds as Eigen's kernels, in the same
// order over k (so results match Eigen's to rounding). Callers split work across threads.
#ifndef TFJIT_CORE_GEMM_H_
#define TFJIT_CORE_GEMM_H_

#include <cstdint>

namespace tfjit::gemm {

// Which implementation the GEMMs and depthwise rows below use. kAuto: the hand-written AVX-512
// kernels when the CPU has AVX-512, else the installed generated kernels (below) when there
// are some, else Eigen and a scalar loop (kGeneric). kGenerated: the installed kernels
// (kGeneric, or the AVX-512 depthwise row, where there are none).
enum class Isa { kAuto, kGeneric, kAvx512, kGenerated };
// True when this CPU runs the AVX-512 paths (AVX512F and AVX512VL).
bool HostHasAvx512();
// For tests and benchmarks: forces an implementation (kAvx512 without the CPU support is
// treated as kGeneric). Not thread-safe against running kernels; call it up front.
void SetIsaForTesting(Isa isa);
// For benchmarks: the AVX-512 GEMM's register-block rows (6..12) and the fewest panels of b
// for which a k block of `a` is copied contiguous first; 0 restores a default. Call it up
// front, like SetIsaForTesting.
void SetBlockingForTesting(int64_t avx512_rows, int64_t pack_a_panels);

// A micro-kernel generated for the host by the JIT (backends/cpu/gemm_kernels.h):
//   c[rows, cols] (+)= a[rows, kc] * panel[kc, vectors * lanes]
// where the packed panel holds vectors * lanes floats per k step (zero past `cols`), columns
// past `cols` are not written, and accumulate != 0 adds to c. Each output is one chain of
// fused multiply-adds in k order, like the AVX-512 kernels', so the two agree bit for bit.
using MicroKernelFn = void (*)(int64_t kc, const float* a, int64_t lda, const float* panel,
                               float* c, int64_t ldc, int64_t cols, int64_t accumulate);
inline constexpr int kMaxMicroRows = 8;

struct DepthwiseRow;
// Depthwise tiles generated for the host: output pixels [ox0, ox0 + nox) of row `r`
// (DepthwiseRowF32's contract) for channels [c0, c_end), in blocks of `pixels` x `vectors`
// vector accumulators (the last channels masked). Each output is one FMA chain over the taps
// in (kh, kw) order, taps outside the row skipped, like the AVX-512 kernels' (same bits).
using DepthwiseTileFn = void (*)(const DepthwiseRow* r, int64_t ox0, int64_t nox, int64_t c0,
                                 int64_t c_end);
// The tile shapes (pixels x vectors) of a MicroKernelSet's depthwise kernels.
enum DepthwiseTile {
  kDepthwiseFull8x1,  // a multiple of 8 pixels, every tap inside the row: no checks
  kDepthwise8x1,      // up to 8 pixels, taps checked against the row
  kDepthwise4x2,      // up to 4 pixels (short runs: more independent chains per pixel)
  kDepthwise2x4,      // up to 2 pixels (row edges)
  kNumDepthwiseTiles
};

struct MicroKernelSet {
  int lanes = 0;         // floats per vector: 8 (AVX2) or 16 (AVX-512)
  const char* isa = "";  // "avx2+fma", "avx512"
  // [rows 1..kMaxMicroRows][vectors 1..2]: panels are 2 * lanes columns wide (the last one
  // `lanes` when it has no more columns than that).
  MicroKernelFn kernels[kMaxMicroRows + 1][3] = {};
  // Depthwise tiles (all or none): DepthwiseRowF32's path where the GEMM's is generated.
  DepthwiseTileFn depthwise[kNumDepthwiseTiles] = {};
};
// Makes `set` (which must outlive its use; null uninstalls) the generated kernels GemmF32 and
// the packed GEMM use. Thread-safe; not against packed weights made for another layout
// (install before compiling).
void InstallMicroKernels(const MicroKernelSet* set);
const MicroKernelSet* InstalledMicroKernels();

// c[m, n] = a[m, k] * b[k, n], all row-major with leading dims lda, ldb, ldc (c overwritten,
// never read; k == 0 writes zeros). With `accumulate`, c[m, n] += a * b instead.
void GemmF32(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda, const float* b,
             int64_t ldb, float* c, int64_t ldc, bool accumulate = false);

// Weights packed once (a constant filter or matrix, at compile time): `blocks` matrices
// b[k, n], row-major with leading dim n, `stride` floats apart in the source, each laid out in
// the panels GemmF32Packed reads (the AVX-512 path's or the generated kernels', every k
// block), one after another.
struct Packing {
  int64_t blocks = 0;  // 0: nothing packed
  int64_t k = 0, n = 0, stride = 0;
};
// Floats of one packed block [k, n]; 0 when this CPU's path does not pack (GemmF32 then reads
// b where it is).
int64_t PackedBlockFloats(int64_t k, int64_t n);
// Floats of the whole packed form (0: not packed).
inline int64_t PackedFloats(const Packing& p) {
  return p.blocks > 0 ? p.blocks * PackedBlockFloats(p.k, p.n) : 0;
}
// Writes the packed form of `src` (PackedFloats(p) floats) to `dst`.
void Pack(const Packing& p, const float* src, float* dst);
// c[m, n] (+)= a[m, k] * columns [j0, j0 + n) of a block b[k, n_total] packed by Pack
// (`packed` points at the block). j0 is a multiple of 32, and n reaches n_total or is a
// multiple of 32 (panels are 32 or, with 8-float vectors, 16 columns wide). Only for blocks
// PackedBlockFloats sized nonzero.
void GemmF32Packed(int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                   const float* packed, int64_t n_total, int64_t j0, float* c, int64_t ldc,
                   bool accumulate = false);

// GemmF32Packed with `a` given as `segs` runs of `run` floats per row, `seg_stride` floats
// apart: column s * run + t of row i is a[i * lda + s * seg_stride + t], and k = segs * run,
// at most kMaxSegmentedK (one k block). A convolution's kernel rows are the runs: each output
// row is one GEMM over its whole window, read where it lies (no patch copy). The AVX-512
// path computes each output as one FMA chain in k order; generated kernels add run by run.
inline constexpr int64_t kMaxSegmentedK = 256;
void GemmF32PackedSegments(int64_t m, int64_t n, int64_t segs, int64_t run, int64_t seg_stride,
                           const float* a, int64_t lda, const float* packed, int64_t n_total,
                           int64_t j0, float* c, int64_t ldc, bool accumulate = false);

// One output row of a depthwise convolution with channel multiplier 1:
//   out[ox, c] = sum over taps t of x_rows[t][ix(ox, t), c] * filter[t, c]
// for ox in [0, out_w), c in [0, channels). The caller resolves the rows: `rows[kh]` is the
// input row of kernel row kh, or null when it is padding. Column ix = ox * stride_w +
// kw * dilate_w - pad_left; out-of-range columns read zero. `filter` is [k_h, k_w, channels],
// and x rows are [in_w, channels].
// Generated tiles read the fields at their offsets (backends/cpu/gemm_kernels.cc checks them).
struct DepthwiseRow {
  const float* const* rows;
  const float* filter;
  float* out;
  int64_t k_h, k_w, in_w, out_w, channels, stride_w, dilate_w, pad_left;
};
void DepthwiseRowF32(const DepthwiseRow& r);

// One output row of a convolution with few output features, output pixels in the vector
// lanes (a 3x3 convolution to 1-8 features leaves most lanes of a features-in-lanes GEMM
// empty):
//   out[ox, o] = sum over kh, kw, i of rows[kh][i * pitch + ox + kw] * filter[kh, kw, i, o]
// for ox in [0, out_w), o in [0, out_c), out_c <= kMaxNarrowOutputs. The caller lays the input
// out planar and padded: `rows[kh]` is kernel row kh's input row as in_c runs of `pitch`
// floats (column ox + kw of the run, zero where the tap is padding), or null when the whole
// row is padding; pitch >= RoundUp(out_w, NarrowPixelBlock()) + k_w - 1. Each output is one
// FMA chain over (kh, kw, i) in that order. Stride 1 along the row; the caller resolves
// vertical stride and dilation by its choice of rows.
struct NarrowConvRow {
  const float* const* rows;
  const float* filter;
  float* out;
  int64_t k_h, k_w, in_c, out_c, out_w, pitch;
};
inline constexpr int64_t kMaxNarrowOutputs = 8;
// Whether NarrowConvRowF32 has a vector path here (AVX2+FMA or AVX-512, and the generic
// implementation not forced).
bool NarrowConvAvailable();
// Pixels of one vector of this path (pitch's rounding: the last vector reads past out_w).
int64_t NarrowPixelBlock();
// For tests and benchmarks: false makes NarrowConvAvailable() false (the convolutions take
// the row GEMM); call it up front, like SetIsaForTesting.
void SetNarrowConvForTesting(bool enabled);
void NarrowConvRowF32(const NarrowConvRow& r);
// dst[i * pitch + ix] = src[ix * in_c + i] for ix in [0, in_w), i in [0, in_c): an NHWC row in
// NarrowConvRow's planar layout (the caller writes the padding columns).
void PlanarizeRow(const float* src, int64_t in_w, int64_t in_c, float* dst, int64_t pitch);

}  // namespace tfjit::gemm

#endif  // TFJIT_CORE_GEMM_H_
