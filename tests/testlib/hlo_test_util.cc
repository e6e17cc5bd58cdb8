// Test helpers for HLO: parsing, literal comparison and semantic-preservation checks.
#include "tests/testlib/hlo_test_util.h"

#include <cmath>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/verifier.h"
#include "core/dtype.h"
#include "core/status.h"

namespace tfjit::testlib {
namespace {

std::string MultiIndex(const hlo::Shape& shape, int64_t linear) {
  std::vector<int64_t> index(shape.dims().size());
  for (int i = shape.rank() - 1; i >= 0; --i) {
    const int64_t d = shape.dims()[static_cast<size_t>(i)];
    index[static_cast<size_t>(i)] = d == 0 ? 0 : linear % d;
    linear = d == 0 ? 0 : linear / d;
  }
  return absl::StrCat("{", absl::StrJoin(index, ","), "}");
}

bool FloatsNear(double e, double a, const ErrorSpec& spec) {
  if (std::isnan(e) || std::isnan(a)) return std::isnan(e) && std::isnan(a);
  if (std::isinf(e) || std::isinf(a)) return e == a;
  return std::fabs(e - a) <= spec.abs + spec.rel * std::fabs(e);
}

::testing::AssertionResult ArraysNear(const hlo::Literal& expected, const hlo::Literal& actual,
                                      const ErrorSpec& spec, const std::string& where) {
  const Tensor& e = expected.tensor();
  const Tensor& a = actual.tensor();
  const bool is_float = IsFloatingDType(e.dtype());
  for (int64_t i = 0; i < e.num_elements(); ++i) {
    bool ok;
    std::string ev, av;
    if (is_float) {
      ok = FloatsNear(ElementAsDouble(e, i), ElementAsDouble(a, i), spec);
      // Every digit a float64 needs: values an ulp apart must print differently.
      ev = absl::StrFormat("%.17g", ElementAsDouble(e, i));
      av = absl::StrFormat("%.17g", ElementAsDouble(a, i));
    } else {
      // Bits, so u64 values above INT64_MAX compare exactly too.
      ok = ElementAsInt64(e, i) == ElementAsInt64(a, i);
      ev = absl::StrCat(ElementAsInt64(e, i));
      av = absl::StrCat(ElementAsInt64(a, i));
    }
    if (!ok) {
      return ::testing::AssertionFailure()
             << where << "first mismatch at index " << MultiIndex(expected.shape(), i) << " of "
             << expected.shape().ToString() << ": expected " << ev << ", actual " << av << " (abs "
             << spec.abs << ", rel " << spec.rel << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

::testing::AssertionResult Near(const hlo::Literal& expected, const hlo::Literal& actual,
                                const ErrorSpec& spec, const std::string& where) {
  if (expected.shape() != actual.shape()) {
    return ::testing::AssertionFailure()
           << where << "shapes differ: expected " << expected.shape().ToString() << ", actual "
           << actual.shape().ToString();
  }
  if (!expected.shape().IsTuple()) return ArraysNear(expected, actual, spec, where);
  for (size_t i = 0; i < expected.elements().size(); ++i) {
    ::testing::AssertionResult r = Near(expected.elements()[i], actual.elements()[i], spec,
                                        absl::StrCat(where, "tuple element ", i, ": "));
    if (!r) return r;
  }
  return ::testing::AssertionSuccess();
}

}  // namespace

std::unique_ptr<hlo::Module> RunPassCheckedImpl(absl::string_view hlo_text, passes::Pass& pass,
                                                uint64_t seed, ErrorSpec spec, bool* changed_out);

std::unique_ptr<hlo::Module> ParseVerified(absl::string_view text) {
  absl::StatusOr<std::unique_ptr<hlo::Module>> module = hlo::ParseAndVerifyModule(text);
  if (!module.ok()) {
    ADD_FAILURE() << "ParseVerified: " << StatusToString(module.status()) << "\n" << text;
    return nullptr;
  }
  return *std::move(module);
}

::testing::AssertionResult LiteralsNear(const hlo::Literal& expected, const hlo::Literal& actual,
                                        ErrorSpec spec) {
  return Near(expected, actual, spec, "");
}

::testing::AssertionResult CheckPassPreservesSemantics(absl::string_view hlo_text,
                                                       passes::Pass& pass, uint64_t seed,
                                                       ErrorSpec spec, bool* changed) {
  return RunPassCheckedImpl(hlo_text, pass, seed, spec, changed) != nullptr
             ? ::testing::AssertionSuccess()
             : ::testing::AssertionFailure() << "pass '" << pass.name() << "' check failed";
}

std::unique_ptr<hlo::Module> RunPassChecked(absl::string_view hlo_text, passes::Pass& pass,
                                            uint64_t seed, ErrorSpec spec) {
  return RunPassCheckedImpl(hlo_text, pass, seed, spec, nullptr);
}

std::unique_ptr<hlo::Module> RunPassCheckedImpl(absl::string_view hlo_text, passes::Pass& pass,
                                                uint64_t seed, ErrorSpec spec, bool* changed_out) {
  absl::StatusOr<std::unique_ptr<hlo::Module>> parsed = hlo::ParseAndVerifyModule(hlo_text);
  if (!parsed.ok()) {
    ADD_FAILURE() << "parse: " << StatusToString(parsed.status());
    return nullptr;
  }
  std::unique_ptr<hlo::Module> module = *std::move(parsed);
  const std::vector<hlo::Literal> args = RandomArgs(*module, seed);
  absl::StatusOr<hlo::Literal> before = hlo::Evaluate(*module, args);
  const std::string fingerprint = hlo::Fingerprint(*module);
  absl::StatusOr<bool> changed = pass.Run(*module);
  if (!changed.ok()) {
    ADD_FAILURE() << "pass '" << pass.name() << "': " << StatusToString(changed.status());
    return nullptr;
  }
  if (changed_out != nullptr) *changed_out = *changed;
  const std::string text_after = hlo::PrintModule(*module);
  absl::Status verified = hlo::VerifyModule(*module);
  if (!verified.ok()) {
    ADD_FAILURE() << "after pass '" << pass.name() << "': " << StatusToString(verified) << "\n"
                  << text_after;
    return nullptr;
  }
  if (*changed != (hlo::Fingerprint(*module) != fingerprint)) {
    ADD_FAILURE() << "pass '" << pass.name() << "' returned changed=" << *changed
                  << " but the fingerprint " << (*changed ? "did not change" : "changed") << "\n"
                  << text_after;
    return nullptr;
  }
  absl::StatusOr<hlo::Literal> after = hlo::Evaluate(*module, args);
  if (!before.ok() || !after.ok()) {
    // Both must fail the same way (e.g. an unimplemented opcode), or both succeed.
    if (before.ok() != after.ok() || before.status().code() != after.status().code()) {
      ADD_FAILURE() << "evaluation before: " << StatusToString(before.status())
                    << "; after: " << StatusToString(after.status());
      return nullptr;
    }
    return module;
  }
  ::testing::AssertionResult near = LiteralsNear(*before, *after, spec);
  if (!near) {
    ADD_FAILURE() << "pass '" << pass.name() << "' changed results (seed " << seed
                  << "): " << near.message() << "\n"
                  << text_after;
    return nullptr;
  }
  return module;
}

}  // namespace tfjit::testlib
