// The GEMM micro-kernels and depthwise tiles generated through LLVM
// (backends/cpu/gemm_kernels.h), for each ISA this host can run (AVX2+FMA code also runs on
// AVX-512 hosts, so both are checked there; an ISA the host lacks is skipped with the reason).
// References, independent of the generated code: double-precision sums (every shape), and,
// where the host has AVX-512, the hand-written AVX-512 kernels, which must give the same bits
// (same FMA chain per output).
#include "backends/cpu/gemm_kernels.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "core/gemm.h"
#include "gtest/gtest.h"
#include "tests/testlib/random_floats.h"

namespace tfjit::cpu {
namespace {

constexpr float kUntouched = -7777.0f;

std::vector<float> Random(size_t n, uint32_t seed) { return tfjit::testing::RandomFloats(n, seed); }

struct Problem {
  int64_t m, n, k, lda, ldb, ldc;
  std::vector<float> a, b, c0;
  Problem(int64_t m_, int64_t n_, int64_t k_)
      : m(m_),
        n(n_),
        k(k_),
        lda(k_ + 2),
        ldb(n_ + 3),
        ldc(n_ + 5),
        a(Random(static_cast<size_t>(m_ * lda), 11)),
        b(Random(static_cast<size_t>(k_ * ldb), 12)),
        c0(Random(static_cast<size_t>(m_ * ldc), 13)) {}
  // c (+)= a * b through gemm::GemmF32 on the path set now; columns past n keep kUntouched.
  std::vector<float> Run(bool accumulate) const {
    std::vector<float> c(static_cast<size_t>(m * ldc), kUntouched);
    for (int64_t i = 0; i < m && accumulate; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        const size_t at = static_cast<size_t>(i * ldc + j);
        c[at] = c0[at];
      }
    }
    gemm::GemmF32(m, n, k, a.data(), lda, b.data(), ldb, c.data(), ldc, accumulate);
    return c;
  }
};

// Every element within float rounding of k products of the double reference; nothing written
// past column n.
void ExpectNearReference(const Problem& p, const std::vector<float>& c, bool accumulate) {
  for (int64_t i = 0; i < p.m; ++i) {
    for (int64_t j = 0; j < p.ldc; ++j) {
      const float got = c[static_cast<size_t>(i * p.ldc + j)];
      if (j >= p.n) {
        ASSERT_EQ(got, kUntouched) << "wrote outside the output at " << i << "," << j;
        continue;
      }
      double ref = accumulate ? p.c0[static_cast<size_t>(i * p.ldc + j)] : 0.0;
      double mag = std::abs(ref);
      for (int64_t q = 0; q < p.k; ++q) {
        const double x = static_cast<double>(p.a[static_cast<size_t>(i * p.lda + q)]) *
                         p.b[static_cast<size_t>(q * p.ldb + j)];
        ref += x;
        mag += std::abs(x);
      }
      ASSERT_NEAR(got, ref, 1e-6 * static_cast<double>(p.k + 1) * mag + 1e-30)
          << "at " << i << "," << j;
    }
  }
}

class GeneratedGemmTest : public ::testing::TestWithParam<GemmIsa> {
 protected:
  void SetUp() override {
    if (!HostRuns(GetParam())) {
      GTEST_SKIP() << "this CPU cannot run code generated for " << GemmIsaName(GetParam());
    }
    absl::StatusOr<const gemm::MicroKernelSet*> set = GetGemmMicroKernels(GetParam());
    ASSERT_TRUE(set.ok()) << set.status();
    set_ = *set;
    previous_ = gemm::InstalledMicroKernels();
  }
  void TearDown() override {
    gemm::InstallMicroKernels(previous_);
    gemm::SetIsaForTesting(gemm::Isa::kAuto);
  }
  void UseGenerated() {
    gemm::InstallMicroKernels(set_);
    gemm::SetIsaForTesting(gemm::Isa::kGenerated);
  }
  const gemm::MicroKernelSet* set_ = nullptr;
  const gemm::MicroKernelSet* previous_ = nullptr;
};

TEST_P(GeneratedGemmTest, KernelSetHasTheIsasWidth) {
  EXPECT_EQ(set_->lanes, GetParam() == GemmIsa::kAvx2 ? 8 : 16);
  for (int rows = 1; rows <= gemm::kMaxMicroRows; ++rows) {
    for (int vectors = 1; vectors <= 2; ++vectors) {
      EXPECT_NE(set_->kernels[rows][vectors], nullptr) << rows << "x" << vectors;
    }
  }
  // What is generated: vectors of the ISA's width and LLVM's fma intrinsic on them.
  const std::string ir = GemmMicroKernelIr(GetParam(), 6, 2);
  const std::string vec = GetParam() == GemmIsa::kAvx2 ? "v8f32" : "v16f32";
  EXPECT_NE(ir.find("@llvm.fma." + vec), std::string::npos) << ir;
  EXPECT_NE(ir.find("@llvm.masked.store." + vec), std::string::npos) << ir;
}

// Register-block edges (rows 6..8 and the 1- or 2-row tails), column tails around one and two
// vectors, k around the 256 block, with and without accumulation.
TEST_P(GeneratedGemmTest, MatchesReferenceAndTheAvx512Kernels) {
  const bool compare_bits = gemm::HostHasAvx512();
  for (int64_t m : {6, 7, 8, 13, 14, 20, 98, 99}) {
    for (int64_t n : {1, 7, 8, 9, 15, 16, 17, 31, 33, 70}) {
      for (int64_t k : {1, 5, 256, 300}) {
        for (bool accumulate : {false, true}) {
          SCOPED_TRACE(::testing::Message()
                       << "m=" << m << " n=" << n << " k=" << k << " accumulate=" << accumulate);
          const Problem p(m, n, k);
          UseGenerated();
          const std::vector<float> got = p.Run(accumulate);
          ExpectNearReference(p, got, accumulate);
          if (compare_bits) {
            gemm::SetIsaForTesting(gemm::Isa::kAvx512);
            const std::vector<float> want = p.Run(accumulate);
            ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
                << "differs from the hand-written AVX-512 kernels";
          }
        }
      }
    }
  }
}

// Weights packed once for the generated kernels' panels (2 * lanes columns) give the bits of
// the unpacked call, also over column blocks at multiples of 32.
TEST_P(GeneratedGemmTest, PackedWeightsMatchUnpacked) {
  UseGenerated();
  ASSERT_EQ(gemm::PackedBlockFloats(10, 17),
            10 * ((17 + 2 * set_->lanes - 1) / (2 * set_->lanes)) * (2 * set_->lanes));
  struct Case {
    int64_t m, n, k, j0, cols;
  };
  const std::vector<Case> cases = {{6, 17, 9, 0, 17},      {13, 100, 300, 0, 100},
                                   {40, 100, 300, 32, 64}, {40, 100, 300, 64, 36},
                                   {7, 130, 20, 96, 34},   {99, 8, 600, 0, 8}};
  for (const Case& t : cases) {
    SCOPED_TRACE(::testing::Message() << "m=" << t.m << " n=" << t.n << " k=" << t.k
                                      << " j0=" << t.j0 << " cols=" << t.cols);
    const Problem p(t.m, t.n, t.k);
    // b compacted to leading dim n (Pack's layout), then packed.
    std::vector<float> b(static_cast<size_t>(t.k * t.n));
    for (int64_t q = 0; q < t.k; ++q) {
      for (int64_t j = 0; j < t.n; ++j) {
        b[static_cast<size_t>(q * t.n + j)] = p.b[static_cast<size_t>(q * p.ldb + j)];
      }
    }
    const gemm::Packing packing{1, t.k, t.n, 0};
    std::vector<float> packed(static_cast<size_t>(gemm::PackedFloats(packing)));
    gemm::Pack(packing, b.data(), packed.data());
    std::vector<float> got(static_cast<size_t>(t.m * t.cols)), want(got.size());
    gemm::GemmF32Packed(t.m, t.cols, t.k, p.a.data(), p.lda, packed.data(), t.n, t.j0, got.data(),
                        t.cols);
    gemm::GemmF32(t.m, t.cols, t.k, p.a.data(), p.lda, b.data() + t.j0, t.n, want.data(), t.cols);
    ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0);
  }
}

TEST_P(GeneratedGemmTest, DepthwiseTilesAreGenerated) {
  for (int tile = 0; tile < gemm::kNumDepthwiseTiles; ++tile) {
    EXPECT_NE(set_->depthwise[tile], nullptr) << tile;
  }
  const std::string ir = DepthwiseTileIr(GetParam(), gemm::kDepthwise4x2);
  const std::string vec = GetParam() == GemmIsa::kAvx2 ? "v8f32" : "v16f32";
  EXPECT_NE(ir.find("@llvm.fma." + vec), std::string::npos) << ir;
  EXPECT_NE(ir.find("@llvm.masked.load." + vec), std::string::npos) << ir;
}

// One depthwise output row through gemm::DepthwiseRowF32 on the path set now, in a buffer with
// kUntouched guards on both sides.
struct DepthwiseProblem {
  int64_t channels, k_h, k_w, in_w, out_w, stride, dilate, pad_left;
  std::vector<std::vector<float>> rows;  // empty: a kernel row in the padding
  std::vector<float> filter;
  DepthwiseProblem(int64_t c, int64_t kh, int64_t kw, int64_t iw, int64_t s, int64_t d, int64_t pad)
      : channels(c),
        k_h(kh),
        k_w(kw),
        in_w(iw),
        stride(s),
        dilate(d),
        pad_left(pad),
        filter(Random(static_cast<size_t>(kh * kw * c), 21)) {
    // SAME-like output width: every pixel whose first tap is at most the last input pixel.
    out_w = std::max<int64_t>(1, (iw + pad - 1) / s + 1);
    for (int64_t r = 0; r < kh; ++r) {
      // The middle kernel row of a 3-row kernel in the padding, as at an image's top.
      if (kh == 3 && r == 0 && c % 2 == 1) {
        rows.emplace_back();
        continue;
      }
      rows.push_back(Random(static_cast<size_t>(iw * c), static_cast<uint32_t>(30 + r)));
    }
  }
  std::vector<float> Run() const {
    std::vector<const float*> row_ptrs;
    for (const auto& row : rows) row_ptrs.push_back(row.empty() ? nullptr : row.data());
    const size_t guard = 40;
    std::vector<float> out(static_cast<size_t>(out_w * channels) + 2 * guard, kUntouched);
    gemm::DepthwiseRow r;
    r.rows = row_ptrs.data();
    r.filter = filter.data();
    r.out = out.data() + guard;
    r.k_h = k_h;
    r.k_w = k_w;
    r.in_w = in_w;
    r.out_w = out_w;
    r.channels = channels;
    r.stride_w = stride;
    r.dilate_w = dilate;
    r.pad_left = pad_left;
    gemm::DepthwiseRowF32(r);
    return out;
  }
  // Each output within float rounding of the double sum of its taps; the guards untouched.
  void ExpectNearReference(const std::vector<float>& out) const {
    const size_t guard = 40;
    for (size_t i = 0; i < guard; ++i) {
      ASSERT_EQ(out[i], kUntouched) << "wrote before the row";
      ASSERT_EQ(out[out.size() - 1 - i], kUntouched) << "wrote past the row";
    }
    for (int64_t ox = 0; ox < out_w; ++ox) {
      for (int64_t c = 0; c < channels; ++c) {
        double ref = 0, mag = 0;
        for (int64_t kh = 0; kh < k_h; ++kh) {
          if (rows[static_cast<size_t>(kh)].empty()) continue;
          for (int64_t kw = 0; kw < k_w; ++kw) {
            const int64_t ix = ox * stride + kw * dilate - pad_left;
            if (ix < 0 || ix >= in_w) continue;
            const std::vector<float>& row = rows[static_cast<size_t>(kh)];
            const double x = static_cast<double>(row[static_cast<size_t>(ix * channels + c)]) *
                             filter[static_cast<size_t>((kh * k_w + kw) * channels + c)];
            ref += x;
            mag += std::abs(x);
          }
        }
        const float got = out[guard + static_cast<size_t>(ox * channels + c)];
        ASSERT_NEAR(got, ref, 1e-6 * static_cast<double>(k_h * k_w + 1) * mag + 1e-30)
            << "at pixel " << ox << " channel " << c;
      }
    }
  }
};

// The generated depthwise tiles against a double reference and, where the host has AVX-512,
// the hand-written AVX-512 row bit for bit: channels around the vector widths and the 64-channel
// groups, widths with no interior pixel, interior runs not a multiple of 8, strides, dilation,
// no / one / two pixels of left padding, and kernel rows in the padding.
TEST_P(GeneratedGemmTest, DepthwiseMatchesReferenceAndTheAvx512Row) {
  const bool compare_bits = gemm::HostHasAvx512();
  for (int64_t c : {1, 3, 8, 13, 16, 24, 40, 64, 70, 96, 144}) {
    for (int64_t k : {1, 3, 5}) {
      for (int64_t in_w : {1, 2, 5, 13, 30}) {
        for (int64_t stride : {1, 2}) {
          for (int64_t dilate : {1, 2}) {
            for (int64_t pad : {0, 1, 2}) {
              if (k == 1 && (dilate != 1 || pad != 0)) continue;
              SCOPED_TRACE(::testing::Message()
                           << "c=" << c << " k=" << k << " in_w=" << in_w << " stride=" << stride
                           << " dilate=" << dilate << " pad=" << pad);
              const DepthwiseProblem p(c, k, k, in_w, stride, dilate, pad);
              UseGenerated();
              const std::vector<float> got = p.Run();
              p.ExpectNearReference(got);
              if (compare_bits) {
                gemm::SetIsaForTesting(gemm::Isa::kAvx512);
                const std::vector<float> want = p.Run();
                ASSERT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0)
                    << "differs from the hand-written AVX-512 row";
              }
            }
          }
        }
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Isas, GeneratedGemmTest,
                         ::testing::Values(GemmIsa::kAvx2, GemmIsa::kAvx512),
                         [](const ::testing::TestParamInfo<GemmIsa>& info) {
                           return std::string(info.param == GemmIsa::kAvx2 ? "avx2" : "avx512");
                         });

}  // namespace
}  // namespace tfjit::cpu
