// Helpers for backend tests: compile HLO text on the CPU backend, run it on seeded inputs and
// compare with the evaluator (XLA's RunAndCompare), printing the seed and module on failure.
#ifndef TFJIT_TESTS_UNIT_BACKENDS_BACKEND_TEST_UTIL_H_
#define TFJIT_TESTS_UNIT_BACKENDS_BACKEND_TEST_UTIL_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "backends/cpu/cpu_backend.h"
#include "compiler/hlo/literal.h"
#include "gtest/gtest.h"
#include "tests/testlib/hlo_test_util.h"
#include "tests/testlib/random_hlo.h"

namespace tfjit::testing_util {

// Parses, verifies and compiles `hlo` with a CPU backend of `options`.
absl::StatusOr<std::unique_ptr<backends::Executable>> CompileCpu(
    const std::string& hlo, const cpu::CpuBackendOptions& options = {});

// Runs `exe` on `args`; the result as one literal (a tuple literal for several outputs).
absl::StatusOr<hlo::Literal> RunOnLiterals(const backends::Executable& exe,
                                           const std::vector<hlo::Literal>& args,
                                           ThreadPool* pool = nullptr, bool tuple_root = false);

// Compiles `hlo` once, then for each seed runs it and the evaluator on
// RandomArgs(seed, edge_values) and compares within `spec` (integers and pred exactly).
::testing::AssertionResult RunAndCompare(const std::string& hlo, const std::vector<uint64_t>& seeds,
                                         testlib::ErrorSpec spec, bool edge_values = false,
                                         const cpu::CpuBackendOptions& options = {},
                                         ThreadPool* pool = nullptr);

// The same on any backend.
::testing::AssertionResult RunAndCompareOn(const backends::Backend& backend, const std::string& hlo,
                                           const std::vector<uint64_t>& seeds,
                                           testlib::ErrorSpec spec, bool edge_values = false,
                                           ThreadPool* pool = nullptr);

// The comparison tolerance of a random module's output (tests/testlib/random_hlo.h): exact,
// or twice the derived bound (the bound is already worst-case; the factor absorbs the f64
// arithmetic used to compute it).
testlib::ErrorSpec SpecOf(const testlib::ValueBound& bound);

// Compiles `text` on `backend`, runs it and the evaluator on RandomArgs(args_seed,
// edge_values) and compares output i within specs[i] (the last spec for further outputs).
::testing::AssertionResult CompareOutputs(const backends::Backend& backend, const std::string& text,
                                          uint64_t args_seed, bool edge_values,
                                          const std::vector<testlib::ErrorSpec>& specs);

// One spatial dim of a convolution window.
struct Win {
  int64_t size = 1, stride = 1, lo = 0, hi = 0, lhs = 1, rhs = 1;
};
inline Win W(int64_t size, int64_t stride = 1, int64_t lo = 0, int64_t hi = 0, int64_t lhs = 1,
             int64_t rhs = 1) {
  return Win{size, stride, lo, hi, lhs, rhs};
}

// An NHWC (b01f_01io->b01f) 2-D convolution module of `type`: input [n, h, w, c], filter
// [wh.size, ww.size, c / groups, out_c].
std::string Conv2DModule(const std::string& type, int64_t n, int64_t h, int64_t w, int64_t c,
                         const Win& wh, const Win& ww, int64_t out_c, int64_t groups = 1);

// TF's TensorScatterAdd / TensorScatterUpdate forms: rows of x f32[6,3] picked by an index
// vector i s32[5] and updated from u f32[5,3]; windows outside the operand skipped, repeated
// indices combined in update order. `combiner` is the body of %combine(a, b); the operand is
// a parameter (copied first) or a computed value (updated in place).
std::string ScatterModule(const std::string& combiner, bool computed_operand);

// "f32[2,3]" from a type name and dims.
std::string ShapeStr(const std::string& type, const std::vector<int64_t>& dims);

}  // namespace tfjit::testing_util

#endif  // TFJIT_TESTS_UNIT_BACKENDS_BACKEND_TEST_UTIL_H_
