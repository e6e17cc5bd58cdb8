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
::testing::AssertionResult RunAndCompare(const std::string& hlo,
                                         const std::vector<uint64_t>& seeds,
                                         testlib::ErrorSpec spec, bool edge_values = false,
                                         const cpu::CpuBackendOptions& options = {},
                                         ThreadPool* pool = nullptr);

// "f32[2,3]" from a type name and dims.
std::string ShapeStr(const std::string& type, const std::vector<int64_t>& dims);

}  // namespace tfjit::testing_util

#endif  // TFJIT_TESTS_UNIT_BACKENDS_BACKEND_TEST_UTIL_H_
