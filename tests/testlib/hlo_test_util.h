// Test helpers for HLO: parse-and-verify, seeded inputs, ErrorSpec comparison of literals and
// the "a pass preserves semantics" check (Glow's checkNumericalEquivalence).
#ifndef TFJIT_TESTS_TESTLIB_HLO_TEST_UTIL_H_
#define TFJIT_TESTS_TESTLIB_HLO_TEST_UTIL_H_

#include <cstdint>
#include <memory>

#include "absl/strings/string_view.h"
#include "compiler/hlo/literal.h"
#include "compiler/hlo/module.h"
#include "compiler/passes/pass.h"
#include "gtest/gtest.h"
#include "tests/testlib/random_literal.h"

namespace tfjit::testlib {

// Parses and verifies `text`; on error records a gtest failure (with the status) and returns
// nullptr.
std::unique_ptr<hlo::Module> ParseVerified(absl::string_view text);

// Float tolerance: |expected - actual| <= abs + rel * |expected|.
struct ErrorSpec {
  double abs = 1e-5;
  double rel = 1e-5;
};

// Integers and pred must match exactly; floats within `spec`; NaN matches NaN, inf matches
// the same inf; tuples compare element by element. The failure message names the first
// mismatching element (multi-index) and both values.
::testing::AssertionResult LiteralsNear(const hlo::Literal& expected, const hlo::Literal& actual,
                                        ErrorSpec spec = {});

// Parses `hlo_text`, evaluates it on RandomArgs(seed), runs `pass`, verifies the result,
// evaluates again and compares within `spec`. Also checks that Run's "changed" result equals
// "the fingerprint changed". `changed` (optional) receives Run's result.
::testing::AssertionResult CheckPassPreservesSemantics(absl::string_view hlo_text,
                                                       passes::Pass& pass, uint64_t seed = 1,
                                                       ErrorSpec spec = {},
                                                       bool* changed = nullptr);

// CheckPassPreservesSemantics, then returns the rewritten module for structural checks
// (nullptr, with a recorded failure, when the check fails).
std::unique_ptr<hlo::Module> RunPassChecked(absl::string_view hlo_text, passes::Pass& pass,
                                            uint64_t seed = 1, ErrorSpec spec = {});

}  // namespace tfjit::testlib

#endif  // TFJIT_TESTS_TESTLIB_HLO_TEST_UTIL_H_
