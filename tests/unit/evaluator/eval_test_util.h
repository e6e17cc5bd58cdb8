// Small helpers shared by the evaluator tests: build literals, run a module, read values.
#ifndef TFJIT_TESTS_UNIT_EVALUATOR_EVAL_TEST_UTIL_H_
#define TFJIT_TESTS_UNIT_EVALUATOR_EVAL_TEST_UTIL_H_

#include <string>
#include <vector>

#include "compiler/evaluator/evaluator.h"
#include "core/dtype.h"
#include "core/status.h"
#include "gtest/gtest.h"
#include "tests/testlib/hlo_test_util.h"

namespace tfjit::hlo {

template <typename T>
Literal Lit(std::vector<int64_t> dims, const std::vector<T>& values) {
  return Literal::FromTensor(Tensor::FromVector<T>(DTypeOf<T>::value, std::move(dims), values));
}

template <typename T>
std::vector<T> Values(const Literal& literal) {
  const T* data = literal.data<T>();
  return std::vector<T>(data, data + literal.shape().num_elements());
}

// Parses (verified) and evaluates; a failed step records a gtest failure and returns the status.
inline absl::StatusOr<Literal> ParseAndRun(const std::string& text,
                                           const std::vector<Literal>& args) {
  std::unique_ptr<Module> module = testlib::ParseVerified(text);
  if (module == nullptr) return InvalidArgument("parse failed");
  return Evaluate(*module, args);
}

// A one-instruction entry: "ENTRY %main (params) -> shape { body }" around `body`.
inline std::string Entry(const std::string& signature, const std::string& body) {
  return "HloModule test\n\nENTRY %main " + signature + " {\n" + body + "\n}\n";
}

}  // namespace tfjit::hlo

#endif  // TFJIT_TESTS_UNIT_EVALUATOR_EVAL_TEST_UTIL_H_
