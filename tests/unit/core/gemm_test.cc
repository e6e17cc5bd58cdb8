// Tests for core/gemm: GemmF32, weights packed once (Pack, GemmF32Packed, GemmF32PackedSegments),
// DepthwiseRowF32 and
// the narrow convolution row (NarrowConvRowF32: scalar, AVX2 and AVX-512 paths, bit for bit
// against the FMA chain) with its planar layout (PlanarizeRow),
// both implementations (generic and AVX-512, the latter skipped with a message on CPUs without
// it; nothing is packed on the generic path), against naive double-precision
// references: register-block and k-block edges, column tails, leading dims larger than the
// width (nothing outside the output may be written), k = 0, padding, strides and dilations.
#include "core/gemm.h"

#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/testlib/random_floats.h"

namespace tfjit::gemm {
namespace {

constexpr float kSentinel = -12345.0f;

std::vector<float> Random(size_t n, uint32_t seed) { return tfjit::testing::RandomFloats(n, seed); }

class GemmTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (GetParam() == Isa::kAvx512 && !HostHasAvx512()) {
      GTEST_SKIP() << "this CPU has no AVX-512F/VL: the AVX-512 path cannot run here";
    }
    SetIsaForTesting(GetParam());
  }
  void TearDown() override { SetIsaForTesting(Isa::kAuto); }
  // Why the packed-weight tests cannot run on this path (empty when it packs weights).
  std::string NothingPacked() const {
    if (PackedBlockFloats(8, 8) != 0) return "";
    return std::string("this path (") + (GetParam() == Isa::kGeneric ? "generic" : "AVX-512") +
           ") reads weights where they are: nothing is packed";
  }
};

// c = a * b with lda = k + 3, ldb = n + 5, ldc = n + 7; checks every element against a double
// reference (bound: float rounding of k products) and that the padding columns are untouched.
// With `accumulate`, c starts as random values in the output columns and must end as c + a * b.
void CheckGemm(int64_t m, int64_t n, int64_t k, bool accumulate = false) {
  SCOPED_TRACE(::testing::Message()
               << "m=" << m << " n=" << n << " k=" << k << " accumulate=" << accumulate);
  const int64_t lda = k + 3, ldb = n + 5, ldc = n + 7;
  std::vector<float> a = Random(static_cast<size_t>(m * lda), 1);
  std::vector<float> b = Random(static_cast<size_t>(std::max<int64_t>(k, 1) * ldb), 2);
  std::vector<float> c(static_cast<size_t>(m * ldc), kSentinel);
  const std::vector<float> c0 = Random(c.size(), 3);
  if (accumulate) {
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j)
        c[static_cast<size_t>(i * ldc + j)] = c0[static_cast<size_t>(i * ldc + j)];
    }
  }
  GemmF32(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc, accumulate);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < ldc; ++j) {
      const float got = c[static_cast<size_t>(i * ldc + j)];
      if (j >= n) {
        ASSERT_EQ(got, kSentinel) << "wrote outside the output at row " << i << " col " << j;
        continue;
      }
      double ref = accumulate ? c0[static_cast<size_t>(i * ldc + j)] : 0.0, mag = std::abs(ref);
      for (int64_t p = 0; p < k; ++p) {
        const double x = a[static_cast<size_t>(i * lda + p)];
        const double y = b[static_cast<size_t>(p * ldb + j)];
        ref += x * y;
        mag += std::abs(x * y);
      }
      ASSERT_NEAR(got, ref, 1e-6 * (k + 1) * (mag + 1e-30) + 1e-30) << "row " << i << " col " << j;
    }
  }
}

TEST_P(GemmTest, AccumulateAddsToTheOutput) {
  for (int64_t m : {1, 5, 6, 13, 100}) {
    for (int64_t n : {1, 16, 17, 33}) {
      for (int64_t k : {0, 9, 257}) CheckGemm(m, n, k, /*accumulate=*/true);
    }
  }
}

TEST_P(GemmTest, MatchesReferenceAcrossBlockEdges) {
  // Rows around the register blocks (generated: 6 rows, 7 and 8 taking a 1- or 2-row tail;
  // AVX-512: 12, 13 and 14; then such blocks after others: 15, 20, 26, 27), columns around
  // the 16/32-wide panels, k around the 256-deep k block. Rows of `a` lie k + 3 apart, so
  // two panels or more (n = 33, 70) copy each k block of `a` first on the AVX-512 path.
  for (int64_t m : {1, 5, 6, 7, 8, 11, 12, 13, 14, 15, 20, 26, 27, 40, 100}) {
    for (int64_t n : {1, 15, 16, 17, 32, 33, 70}) {
      for (int64_t k : {1, 7, 256, 257}) CheckGemm(m, n, k);
    }
  }
}

TEST_P(GemmTest, LargerShapesAndEmptyK) {
  CheckGemm(97, 130, 600);  // several row blocks of 96, panels and k blocks
  CheckGemm(98, 40, 300);   // a 2-row tail kept with its 96-row block
  CheckGemm(99, 40, 30);    // a 3-row tail: a block of its own
  CheckGemm(200, 24, 27);   // a convolution stem: narrow n, odd k
  CheckGemm(9, 20, 0);      // k = 0: zeros
  CheckGemm(0, 5, 5);       // empty output: nothing written
}

TEST_P(GemmTest, KZeroWritesZeros) {
  std::vector<float> c(12, kSentinel);
  GemmF32(3, 4, 0, nullptr, 0, nullptr, 4, c.data(), 4);
  for (float x : c) EXPECT_EQ(x, 0.0f);
}

// ---- Weights packed once ----

// got against want in columns [j0, j0 + cols) of an m x n output (bit for bit when `exact`,
// else within a bound of k roundings), and unchanged from c0 outside them.
void ExpectBlock(const std::vector<float>& got, const std::vector<float>& want,
                 const std::vector<float>& c0, int64_t m, int64_t n, int64_t j0, int64_t cols,
                 bool exact, int64_t k) {
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      const size_t at = static_cast<size_t>(i * n + j);
      if (j < j0 || j >= j0 + cols) {
        ASSERT_EQ(got[at], c0[at]) << "wrote outside the block at row " << i << " col " << j;
      } else if (exact) {
        ASSERT_EQ(got[at], want[at]) << "row " << i << " col " << j;
      } else {
        ASSERT_NEAR(got[at], want[at], 1e-5 * (k + 1)) << "row " << i << " col " << j;
      }
    }
  }
}

// Pack then GemmF32Packed over column blocks [j0, j0 + cols) of a b[k, n] that is block 1 of
// two (the packing's stride), against GemmF32 on the unpacked b: bitwise where GemmF32 runs
// the same micro-kernel (m >= 6), within the reference bound otherwise; nothing written
// outside the block's columns.
void CheckPacked(int64_t m, int64_t n, int64_t k, int64_t j0, int64_t cols, bool accumulate) {
  SCOPED_TRACE(::testing::Message() << "m=" << m << " n=" << n << " k=" << k << " j0=" << j0
                                    << " cols=" << cols << " accumulate=" << accumulate);
  const Packing packing{2, k, n, k * n + 3};
  const std::vector<float> b = Random(static_cast<size_t>(packing.stride + k * n), 4);
  std::vector<float> packed(static_cast<size_t>(PackedFloats(packing)));
  ASSERT_GT(packed.size(), 0u);
  Pack(packing, b.data(), packed.data());
  const float* b1 = b.data() + packing.stride;  // block 1, leading dim n
  const int64_t lda = k + 1;
  const std::vector<float> a = Random(static_cast<size_t>(std::max<int64_t>(m * lda, 1)), 5);
  const std::vector<float> c0 = Random(static_cast<size_t>(m * n), 6);
  std::vector<float> want = c0, got = c0;
  GemmF32(m, cols, k, a.data(), lda, b1 + j0, n, want.data() + j0, n, accumulate);
  GemmF32Packed(m, cols, k, a.data(), lda, packed.data() + PackedBlockFloats(k, n), n, j0,
                got.data() + j0, n, accumulate);
  ExpectBlock(got, want, c0, m, n, j0, cols, /*exact=*/m >= 6, k);
}

TEST_P(GemmTest, PackedWeightsMatchUnpacked) {
  if (const std::string why = NothingPacked(); !why.empty()) GTEST_SKIP() << why;
  for (int64_t m : {1, 5, 6, 13, 100}) {
    for (int64_t n : {1, 16, 17, 32, 33, 100}) {
      for (int64_t k : {1, 9, 256, 257, 600}) {
        CheckPacked(m, n, k, 0, n, false);
        CheckPacked(m, n, k, 0, n, true);
      }
    }
  }
  // Column blocks of a wider matrix, as the patch GEMM splits them (j0 a multiple of 32).
  CheckPacked(40, 100, 300, 32, 64, false);
  CheckPacked(40, 100, 300, 64, 36, true);
  CheckPacked(7, 130, 20, 96, 34, false);
}

// GemmF32PackedSegments on `segs` runs of `run` floats per row (`seg_stride` apart, rows `lda`
// apart, overlapping as a convolution's do) against GemmF32Packed on the same rows copied
// contiguous: bit for bit (the same micro-kernel, one FMA chain in k order); nothing written
// outside the block's columns.
void CheckSegments(int64_t m, int64_t n, int64_t segs, int64_t run, int64_t lda, int64_t j0,
                   int64_t cols, bool accumulate) {
  SCOPED_TRACE(::testing::Message()
               << "m=" << m << " n=" << n << " segs=" << segs << " run=" << run << " lda=" << lda
               << " j0=" << j0 << " cols=" << cols << " accumulate=" << accumulate);
  const int64_t k = segs * run, seg_stride = m * lda + run + 5;
  const Packing packing{1, k, n, 0};
  const std::vector<float> b = Random(static_cast<size_t>(k * n), 7);
  std::vector<float> packed(static_cast<size_t>(PackedFloats(packing)));
  Pack(packing, b.data(), packed.data());
  const std::vector<float> a = Random(static_cast<size_t>(segs * seg_stride), 8);
  std::vector<float> rows(static_cast<size_t>(m * k));  // row i: its runs one after another
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t s = 0; s < segs; ++s) {
      for (int64_t t = 0; t < run; ++t) {
        rows[static_cast<size_t>(i * k + s * run + t)] =
            a[static_cast<size_t>(i * lda + s * seg_stride + t)];
      }
    }
  }
  const std::vector<float> c0 = Random(static_cast<size_t>(m * n), 9);
  std::vector<float> want = c0, got = c0;
  GemmF32Packed(m, cols, k, rows.data(), k, packed.data(), n, j0, want.data() + j0, n, accumulate);
  GemmF32PackedSegments(m, cols, segs, run, seg_stride, a.data(), lda, packed.data(), n, j0,
                        got.data() + j0, n, accumulate);
  ExpectBlock(got, want, c0, m, n, j0, cols, /*exact=*/true, k);
}

TEST_P(GemmTest, PackedSegmentsMatchContiguousRows) {
  if (const std::string why = NothingPacked(); !why.empty()) GTEST_SKIP() << why;
  for (int64_t m : {1, 6, 13, 14, 126}) {
    for (int64_t n : {1, 16, 17, 32, 64, 70}) {
      for (int64_t segs : {2, 3, 7}) {
        for (int64_t run : {1, 9, 15}) {
          CheckSegments(m, n, segs, run, 3, 0, n, false);  // a stem's rows: 3 floats apart
          CheckSegments(m, n, segs, run, run + 2, 0, n, true);
        }
      }
    }
  }
  CheckSegments(40, 100, 3, 9, 6, 32, 64, false);    // column blocks, as PatchGemm splits them
  CheckSegments(40, 100, 16, 16, 16, 64, 36, true);  // k = 256, one whole k block
}

// ---- Depthwise rows ----

struct DwCase {
  int64_t k_h, k_w, in_w, channels, stride, dilate, pad;
};

void CheckDepthwise(const DwCase& t, bool hole_row) {
  SCOPED_TRACE(::testing::Message() << "k=" << t.k_h << "x" << t.k_w << " in_w=" << t.in_w
                                    << " C=" << t.channels << " stride=" << t.stride << " dilate="
                                    << t.dilate << " pad=" << t.pad << " hole_row=" << hole_row);
  const int64_t span = (t.k_w - 1) * t.dilate + 1;
  const int64_t out_w = std::max<int64_t>(0, (t.in_w + 2 * t.pad - span) / t.stride + 1);
  std::vector<std::vector<float>> x;
  std::vector<const float*> rows;
  for (int64_t kh = 0; kh < t.k_h; ++kh) {
    x.push_back(Random(static_cast<size_t>(t.in_w * t.channels), 10 + kh));
    rows.push_back(hole_row && kh == 0 ? nullptr : x.back().data());
  }
  std::vector<float> f = Random(static_cast<size_t>(t.k_h * t.k_w * t.channels), 3);
  std::vector<float> out(static_cast<size_t>(out_w * t.channels + 16), kSentinel);
  DepthwiseRow r;
  r.rows = rows.data();
  r.filter = f.data();
  r.out = out.data();
  r.k_h = t.k_h;
  r.k_w = t.k_w;
  r.in_w = t.in_w;
  r.out_w = out_w;
  r.channels = t.channels;
  r.stride_w = t.stride;
  r.dilate_w = t.dilate;
  r.pad_left = t.pad;
  DepthwiseRowF32(r);
  for (int64_t ox = 0; ox < out_w; ++ox) {
    for (int64_t c = 0; c < t.channels; ++c) {
      double ref = 0, mag = 0;
      for (int64_t kh = 0; kh < t.k_h; ++kh) {
        if (rows[static_cast<size_t>(kh)] == nullptr) continue;
        for (int64_t kw = 0; kw < t.k_w; ++kw) {
          const int64_t ix = ox * t.stride + kw * t.dilate - t.pad;
          if (ix < 0 || ix >= t.in_w) continue;
          const double p =
              static_cast<double>(
                  x[static_cast<size_t>(kh)][static_cast<size_t>(ix * t.channels + c)]) *
              f[static_cast<size_t>((kh * t.k_w + kw) * t.channels + c)];
          ref += p;
          mag += std::abs(p);
        }
      }
      ASSERT_NEAR(out[static_cast<size_t>(ox * t.channels + c)], ref, 1e-6 * (mag + 1e-30) * 30)
          << "ox " << ox << " channel " << c;
    }
  }
  for (size_t i = static_cast<size_t>(out_w * t.channels); i < out.size(); ++i) {
    ASSERT_EQ(out[i], kSentinel) << "wrote past the output row";
  }
}

TEST_P(GemmTest, DepthwiseRowMatchesReference) {
  // Channels 1, 2, 4 and 8 at stride 1 take the flat path (16 / C pixels per vector; rows of
  // 300 pixels have groups of 8 vectors inside the row, which skip the edge checks).
  for (int64_t channels : {1, 2, 4, 8, 15, 16, 17, 40}) {
    for (int64_t in_w : {1, 3, 8, 9, 20, 41, 300}) {
      for (const DwCase base : {DwCase{3, 3, 0, 0, 1, 1, 1}, DwCase{3, 3, 0, 0, 2, 1, 1},
                                DwCase{5, 5, 0, 0, 1, 1, 2}, DwCase{3, 3, 0, 0, 1, 2, 2},
                                DwCase{1, 1, 0, 0, 1, 1, 0}, DwCase{3, 3, 0, 0, 2, 1, 0}}) {
        DwCase t = base;
        t.in_w = in_w;
        t.channels = channels;
        CheckDepthwise(t, /*hole_row=*/false);
        CheckDepthwise(t, /*hole_row=*/true);
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, GemmTest, ::testing::Values(Isa::kGeneric, Isa::kAvx512),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           return std::string(info.param == Isa::kGeneric ? "Generic" : "Avx512");
                         });

// ---- Narrow convolutions: output pixels in the lanes (NarrowConvRowF32, PlanarizeRow) ----

class NarrowConvTest : public ::testing::TestWithParam<Isa> {
 protected:
  void SetUp() override {
    if (GetParam() == Isa::kAvx512 && !HostHasAvx512()) {
      GTEST_SKIP() << "this CPU has no AVX-512F/VL: the AVX-512 path cannot run here";
    }
    SetIsaForTesting(GetParam());
    if (GetParam() != Isa::kGeneric && !NarrowConvAvailable()) {
      GTEST_SKIP() << "this CPU has no AVX2+FMA: only the scalar narrow path runs here";
    }
  }
  void TearDown() override { SetIsaForTesting(Isa::kAuto); }
};

// One row of k_h x k_w taps over in_c planar runs to out_c features, out_w pixels, kernel row
// `hole` (if any) null: every output must equal the FMA chain over (kh, kw, i) computed here
// in float, bit for bit (all three paths run that chain), and nothing past the row written.
void CheckNarrowRow(int64_t k_h, int64_t k_w, int64_t in_c, int64_t out_c, int64_t out_w,
                    int64_t hole) {
  SCOPED_TRACE(::testing::Message() << "k=" << k_h << "x" << k_w << " in_c=" << in_c << " out_c="
                                    << out_c << " out_w=" << out_w << " hole=" << hole);
  const int64_t block = NarrowPixelBlock();
  const int64_t pitch = (out_w + block - 1) / block * block + k_w - 1 + 3;
  std::vector<std::vector<float>> planar;
  std::vector<const float*> rows;
  for (int64_t kh = 0; kh < k_h; ++kh) {
    planar.push_back(Random(static_cast<size_t>(in_c * pitch), static_cast<uint32_t>(10 + kh)));
    rows.push_back(kh == hole ? nullptr : planar.back().data());
  }
  const std::vector<float> filter = Random(static_cast<size_t>(k_h * k_w * in_c * out_c), 7);
  std::vector<float> out(static_cast<size_t>(out_w * out_c + 40), kSentinel);
  NarrowConvRow r;
  r.rows = rows.data();
  r.filter = filter.data();
  r.out = out.data();
  r.k_h = k_h;
  r.k_w = k_w;
  r.in_c = in_c;
  r.out_c = out_c;
  r.out_w = out_w;
  r.pitch = pitch;
  NarrowConvRowF32(r);
  for (int64_t ox = 0; ox < out_w; ++ox) {
    for (int64_t o = 0; o < out_c; ++o) {
      float want = 0.0f;
      for (int64_t kh = 0; kh < k_h; ++kh) {
        if (kh == hole) continue;
        for (int64_t kw = 0; kw < k_w; ++kw) {
          for (int64_t i = 0; i < in_c; ++i) {
            const float x =
                planar[static_cast<size_t>(kh)][static_cast<size_t>(i * pitch + ox + kw)];
            const float w = filter[static_cast<size_t>(((kh * k_w + kw) * in_c + i) * out_c + o)];
            want = std::fma(x, w, want);
          }
        }
      }
      ASSERT_EQ(out[static_cast<size_t>(ox * out_c + o)], want)
          << "pixel " << ox << " feature " << o;
    }
  }
  for (size_t i = static_cast<size_t>(out_w * out_c); i < out.size(); ++i) {
    ASSERT_EQ(out[i], kSentinel) << "wrote past the output row";
  }
}

TEST_P(NarrowConvTest, RowMatchesTheFmaChain) {
  // Every feature count (1-8: the register blocks of 8, 4, 3, 2 and 1 pixel vectors), widths
  // around the vectors and blocks (1 to 200 pixels: partial last vectors, 2-vector and
  // single-vector tails), 1, 3, 8 and 9 input features, 3x3, 5x5, 2x2 and 1x7 kernels, a
  // kernel row in the padding.
  for (int64_t out_c = 1; out_c <= kMaxNarrowOutputs; ++out_c) {
    for (int64_t out_w : {1, 7, 8, 15, 16, 17, 31, 33, 64, 130, 200}) {
      CheckNarrowRow(3, 3, out_c == 1 ? 8 : 3, out_c, out_w, -1);
    }
    for (int64_t in_c : {1, 8, 9}) CheckNarrowRow(3, 3, in_c, out_c, 60, 0);
  }
  CheckNarrowRow(5, 5, 2, 4, 45, 4);
  CheckNarrowRow(2, 2, 5, 6, 19, -1);
  CheckNarrowRow(1, 7, 4, 1, 70, -1);
}

TEST_P(NarrowConvTest, PlanarizeRowTransposes) {
  for (int64_t in_c : {1, 2, 7, 8, 9, 16, 17, 24}) {
    for (int64_t in_w : {1, 7, 8, 9, 16, 23}) {
      SCOPED_TRACE(::testing::Message() << "in_c=" << in_c << " in_w=" << in_w);
      const int64_t pitch = in_w + 5;
      const std::vector<float> src = Random(static_cast<size_t>(in_w * in_c), 3);
      std::vector<float> dst(static_cast<size_t>(in_c * pitch), kSentinel);
      PlanarizeRow(src.data(), in_w, in_c, dst.data(), pitch);
      for (int64_t i = 0; i < in_c; ++i) {
        for (int64_t x = 0; x < pitch; ++x) {
          const float got = dst[static_cast<size_t>(i * pitch + x)];
          ASSERT_EQ(got, x < in_w ? src[static_cast<size_t>(x * in_c + i)] : kSentinel)
              << "feature " << i << " column " << x;
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, NarrowConvTest,
                         ::testing::Values(Isa::kGeneric, Isa::kGenerated, Isa::kAvx512),
                         [](const ::testing::TestParamInfo<Isa>& info) {
                           switch (info.param) {
                             case Isa::kGeneric:
                               return std::string("Scalar");
                             case Isa::kGenerated:
                               return std::string("Avx2");
                             default:
                               return std::string("Avx512");
                           }
                         });

}  // namespace
}  // namespace tfjit::gemm
