// Accuracy of the CPU JIT's inline f32 exp/log/tanh/logistic (backends/llvm/fast_math.cc):
// a dense sample of the whole f32 range (every 256th bit pattern, low bits varied) against the
// exact value computed in double, the documented ulp bounds, exact special values, and the
// f16/bf16 paths (exhaustive, against the evaluator).
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "core/dtype.h"
#include "gtest/gtest.h"
#include "tests/unit/backends/backend_test_util.h"

namespace tfjit {
namespace {

constexpr int64_t kChunk = int64_t{1} << 20;
constexpr float kInf = std::numeric_limits<float>::infinity();
constexpr float kNan = std::numeric_limits<float>::quiet_NaN();
constexpr float kMinDenormal = std::numeric_limits<float>::denorm_min();
constexpr float kMinNormal = std::numeric_limits<float>::min();
constexpr float kMax = std::numeric_limits<float>::max();

float FromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

uint32_t ToBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}

struct MathFn {
  std::string op;
  double (*reference)(double);
  double bound_ulp;      // the bound documented in fast_math.cc, rounded up
  float (*libm)(float);  // the scalar libm formula the JIT used to call, for timing
};

double Logistic(double x) { return 1.0 / (1.0 + std::exp(-x)); }
double Exp(double x) { return std::exp(x); }
double Log(double x) { return std::log(x); }
double Tanh(double x) { return std::tanh(x); }
float LibmExp(float x) { return std::exp(x); }
float LibmLog(float x) { return std::log(x); }
float LibmTanh(float x) { return std::tanh(x); }
float LibmLogistic(float x) { return 1.0f / (1.0f + std::exp(-x)); }

std::string UnaryModule(const std::string& type, const std::string& op, int64_t n) {
  const std::string s = absl::StrCat(type, "[", n, "]");
  return absl::StrCat("HloModule m\n\nENTRY %main (a: ", s, ") -> ", s, " {\n  %a = ", s,
                      " parameter(0)\n  ROOT %r = ", s, " ", op, "(%a)\n}\n");
}

// Error of `got` against the exact `ref`, in ulps of f32 at ref's binade (denormal spacing
// below 2^-126). Infinite for a NaN/inf mismatch, 0 for matching infinities or NaNs.
double UlpError(float got, double ref) {
  if (std::isnan(ref) || std::isnan(got)) {
    return std::isnan(ref) && std::isnan(got) ? 0 : std::numeric_limits<double>::infinity();
  }
  const float rounded = static_cast<float>(ref);
  if (std::isinf(got) || std::isinf(rounded)) {
    return got == rounded ? 0 : std::numeric_limits<double>::infinity();
  }
  int exponent = 0;
  std::frexp(ref, &exponent);
  const double ulp = std::ldexp(1.0, std::max(exponent - 24, -149));
  return std::fabs(static_cast<double>(got) - ref) / ulp;
}

// Runs the compiled f32[chunk] module over `inputs` (any length), chunk by chunk.
std::vector<float> RunJit(const backends::Executable& exe, const std::vector<float>& inputs,
                          int64_t chunk = kChunk) {
  std::vector<float> out(inputs.size());
  Tensor arg(DType::kFloat32, {chunk});
  for (size_t start = 0; start < inputs.size(); start += chunk) {
    const size_t n = std::min<size_t>(chunk, inputs.size() - start);
    std::memcpy(arg.data<float>(), inputs.data() + start, n * sizeof(float));
    auto result = exe.Run({arg}, nullptr);
    EXPECT_TRUE(result.ok()) << result.status();
    if (!result.ok()) return {};
    std::memcpy(out.data() + start, (*result)[0].data<float>(), n * sizeof(float));
  }
  return out;
}

std::unique_ptr<backends::Executable> CompileF32(const std::string& op) {
  auto exe = testing_util::CompileCpu(UnaryModule("f32", op, kChunk));
  EXPECT_TRUE(exe.ok()) << exe.status();
  return exe.ok() ? std::move(*exe) : nullptr;
}

// Best of 5 runs of `exe` on one warm chunk, and of the libm loop on the same inputs, in ns per
// element (informational: printed, not asserted).
std::pair<double, double> TimeNsPerElement(const backends::Executable& exe, const MathFn& fn,
                                           const std::vector<float>& inputs) {
  Tensor arg(DType::kFloat32, {kChunk});
  for (int64_t i = 0; i < kChunk; ++i) arg.data<float>()[i] = inputs[i % inputs.size()];
  std::vector<float> out(kChunk);
  double jit = 1e30, libm = 1e30;
  for (int rep = 0; rep < 5; ++rep) {
    auto t0 = std::chrono::steady_clock::now();
    auto result = exe.Run({arg}, nullptr);
    auto t1 = std::chrono::steady_clock::now();
    const float* in = arg.data<float>();
    for (int64_t i = 0; i < kChunk; ++i) out[i] = fn.libm(in[i]);
    auto t2 = std::chrono::steady_clock::now();
    if (!result.ok()) break;
    jit = std::min(jit, std::chrono::duration<double>(t1 - t0).count());
    libm = std::min(libm, std::chrono::duration<double>(t2 - t1).count());
  }
  return {jit * 1e9 / kChunk, libm * 1e9 / kChunk};
}

class FastMathTest : public ::testing::TestWithParam<MathFn> {};

TEST_P(FastMathTest, DenseSampleWithinUlpBound) {
  const MathFn& fn = GetParam();
  auto exe = CompileF32(fn.op);
  ASSERT_NE(exe, nullptr);
  // Every 256th bit pattern (all signs and exponents), low byte varied so that low mantissa
  // bits are exercised too: 2^24 inputs.
  std::vector<float> inputs;
  inputs.reserve(size_t{1} << 24);
  for (uint32_t k = 0; k < (1u << 24); ++k) {
    const float x = FromBits((k << 8) | ((k * 167u) & 0xffu));
    if (!std::isnan(x)) inputs.push_back(x);
  }
  std::vector<float> got = RunJit(*exe, inputs);
  ASSERT_EQ(got.size(), inputs.size());
  double max_ulp = 0;
  float worst = 0;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const double err = UlpError(got[i], fn.reference(inputs[i]));
    if (err > max_ulp) {
      max_ulp = err;
      worst = inputs[i];
    }
  }
  // Timing on inputs of moderate size (|x| < 16), where libm takes its usual path.
  std::vector<float> moderate;
  for (float x : inputs) {
    if (std::fabs(x) < 16 && (fn.op != "log" || x > 0)) moderate.push_back(x);
  }
  const auto [jit_ns, libm_ns] = TimeNsPerElement(*exe, fn, moderate);
  std::printf(
      "[ fast-math ] %-8s max %.3f ulp (bound %.1f) at x=%a over %zu inputs; "
      "JIT %.2f ns/element, scalar libm loop %.2f ns/element\n",
      fn.op.c_str(), max_ulp, fn.bound_ulp, worst, inputs.size(), jit_ns, libm_ns);
  EXPECT_LE(max_ulp, fn.bound_ulp)
      << fn.op << " worst at x=" << worst << " got "
      << got[std::find(inputs.begin(), inputs.end(), worst) - inputs.begin()];
}

// Special and threshold inputs: within the bound, and NaN/inf/zero classes exactly as the
// exact result rounded to f32 (so the ulp check above cannot hide a wrong class).
TEST_P(FastMathTest, SpecialValuesWithinBound) {
  const MathFn& fn = GetParam();
  auto exe = CompileF32(fn.op);
  ASSERT_NE(exe, nullptr);
  std::vector<float> inputs = {
      0.0f,          -0.0f,      kInf,        -kInf,     kNan,       -kNan,     kMinDenormal,
      -kMinDenormal, kMinNormal, -kMinNormal, kMax,      -kMax,      1.0f,      -1.0f,
      88.72283f,     88.72284f,  88.7229f,    89.0f,     -87.33654f, -87.3366f, -103.9720f,
      -103.9721f,    -103.28f,   -104.0f,     -88.7229f, 9.0f,       9.1f,      -9.1f,
      0.625f,        -0.625f,    0.6249999f,  1e-20f,    -1e-20f,    1e-4f,     0.5f,
      2.0f,          0.7071068f, 1.4142135f};
  for (float x = 1e-30f; x < 20.0f; x *= 1.01f) {
    inputs.push_back(x);
    inputs.push_back(-x);
  }
  std::vector<float> got = RunJit(*exe, inputs);
  ASSERT_EQ(got.size(), inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    const double ref = fn.reference(inputs[i]);
    const float rounded = static_cast<float>(ref);
    EXPECT_LE(UlpError(got[i], ref), fn.bound_ulp) << fn.op << "(" << inputs[i] << ")";
    EXPECT_EQ(std::isnan(got[i]), std::isnan(rounded)) << fn.op << "(" << inputs[i] << ")";
    EXPECT_EQ(std::isinf(got[i]), std::isinf(rounded)) << fn.op << "(" << inputs[i] << ")";
    if (rounded == 0) {
      EXPECT_EQ(ToBits(got[i]), ToBits(rounded)) << fn.op << "(" << inputs[i] << ")";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(F32, FastMathTest,
                         ::testing::Values(MathFn{"exp", &Exp, 1.1, &LibmExp},
                                           MathFn{"log", &Log, 1.0, &LibmLog},
                                           MathFn{"tanh", &Tanh, 1.5, &LibmTanh},
                                           MathFn{"logistic", &Logistic, 1.5, &LibmLogistic}),
                         [](const ::testing::TestParamInfo<MathFn>& info) {
                           return info.param.op;
                         });

// Exact results HLO.md and the task require, bit for bit.
TEST(FastMathSpecialTest, ExactLimits) {
  struct Expect {
    std::string op;
    float x;
    float want;
  };
  const std::vector<Expect> cases = {
      {"exp", -kInf, 0.0f},
      {"exp", kInf, kInf},
      {"exp", 0.0f, 1.0f},
      {"exp", -0.0f, 1.0f},
      {"exp", -kMax, 0.0f},
      {"exp", kMax, kInf},
      {"tanh", kInf, 1.0f},
      {"tanh", -kInf, -1.0f},
      {"tanh", 0.0f, 0.0f},
      {"tanh", -0.0f, -0.0f},
      {"tanh", kMinDenormal, kMinDenormal},
      {"tanh", -kMinDenormal, -kMinDenormal},
      {"tanh", 20.0f, 1.0f},
      {"logistic", -kInf, 0.0f},
      {"logistic", kInf, 1.0f},
      {"logistic", 0.0f, 0.5f},
      {"logistic", -0.0f, 0.5f},
      {"logistic", 200.0f, 1.0f},
      {"log", 0.0f, -kInf},
      {"log", -0.0f, -kInf},
      {"log", kInf, kInf},
      {"log", 1.0f, 0.0f},
  };
  for (const Expect& c : cases) {
    auto exe = testing_util::CompileCpu(UnaryModule("f32", c.op, 1));
    ASSERT_TRUE(exe.ok()) << exe.status();
    std::vector<float> got = RunJit(**exe, {c.x}, 1);
    ASSERT_EQ(got.size(), 1u);
    EXPECT_EQ(ToBits(got[0]), ToBits(c.want)) << c.op << "(" << c.x << ") = " << got[0];
  }
  for (const char* op : {"exp", "tanh", "logistic", "log"}) {
    auto exe = testing_util::CompileCpu(UnaryModule("f32", op, 3));
    ASSERT_TRUE(exe.ok()) << exe.status();
    auto result = (*exe)->Run(
        {Tensor::FromVector<float>(DType::kFloat32, {3}, {kNan, -kNan, FromBits(0x7f800001)})},
        nullptr);
    ASSERT_TRUE(result.ok()) << result.status();
    for (int i = 0; i < 3; ++i) EXPECT_TRUE(std::isnan((*result)[0].data<float>()[i])) << op;
  }
  for (float x : {-1.0f, -kMinDenormal, -kInf}) {
    auto exe = testing_util::CompileCpu(UnaryModule("f32", "log", 1));
    ASSERT_TRUE(exe.ok()) << exe.status();
    EXPECT_TRUE(std::isnan(RunJit(**exe, {x}, 1)[0])) << "log(" << x << ")";
  }
}

// f16 and bf16 compute in f32 and round: every one of their 65536 bit patterns must be within
// one unit of the evaluator's result (which rounds the libm f32 value), NaN for NaN.
TEST(FastMathHalfTest, AllHalfAndBfloat16InputsMatchEvaluatorWithinOneUnit) {
  for (const char* type : {"f16", "bf16"}) {
    for (const char* op : {"exp", "log", "tanh", "logistic"}) {
      const std::string hlo = UnaryModule(type, op, 65536);
      auto module = hlo::ParseAndVerifyModule(hlo);
      ASSERT_TRUE(module.ok()) << module.status();
      std::unique_ptr<hlo::Module> reference = (*module)->Clone();
      auto exe = cpu::CreateCpuBackend({})->Compile(std::move(*module));
      ASSERT_TRUE(exe.ok()) << exe.status();
      const DType dtype = std::string(type) == "f16" ? DType::kFloat16 : DType::kBFloat16;
      Tensor arg(dtype, {65536});
      auto* bits = static_cast<uint16_t*>(arg.raw_data());
      for (uint32_t i = 0; i < 65536; ++i) bits[i] = static_cast<uint16_t>(i);
      auto expected = hlo::Evaluate(*reference, {hlo::Literal::FromTensor(arg)});
      ASSERT_TRUE(expected.ok()) << expected.status();
      auto actual = (*exe)->Run({arg}, nullptr);
      ASSERT_TRUE(actual.ok()) << actual.status();
      const auto* want = static_cast<const uint16_t*>(expected->tensor().raw_data());
      const auto* got = static_cast<const uint16_t*>((*actual)[0].raw_data());
      int mismatches = 0;
      for (uint32_t i = 0; i < 65536 && mismatches < 5; ++i) {
        const double w = ElementAsDouble(expected->tensor(), i);
        const double g = ElementAsDouble((*actual)[0], i);
        if (std::isnan(w) || std::isnan(g)) {
          if (std::isnan(w) != std::isnan(g)) ++mismatches;
          EXPECT_EQ(std::isnan(w), std::isnan(g)) << type << " " << op << " bits " << i;
          continue;
        }
        if (std::string(op) == "logistic" && ElementAsDouble(arg, i) < -88.0) {
          // The evaluator's f32 1/(1+exp(-x)) overflows to 0 here; the JIT keeps the tiny
          // (bf16-denormal) result.
          EXPECT_LT(g, 1e-37) << type << " bits " << i;
          EXPECT_GE(g, 0.0) << type << " bits " << i;
          continue;
        }
        // Sign-magnitude bits to a monotonic integer line: distance = units apart.
        auto line = [](uint16_t b) { return (b & 0x8000) ? -int32_t(b & 0x7fff) : int32_t(b); };
        const int32_t units = std::abs(line(want[i]) - line(got[i]));
        if (units > 1) ++mismatches;
        EXPECT_LE(units, 1) << type << " " << op << " bits " << i << ": " << w << " vs " << g;
      }
    }
  }
}

}  // namespace
}  // namespace tfjit
