// Running one OpCase: its one-op graph, its feeds, and one path (kernel, evaluator, CPU JIT)
// through the public Session; shared by the differential test and the dtype sweep.
#ifndef TFJIT_TESTS_TF_OP_CASE_RUNNER_H_
#define TFJIT_TESTS_TF_OP_CASE_RUNNER_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "tests/tf/op_cases.h"
#include "tfjit/session.h"

namespace tfjit::optest {

// The op's inputs in order: (true, i) for const i, (false, i) for placeholder i.
std::vector<std::pair<bool, int>> InputOrder(const OpCase& c);

// The case as a GraphDef in text form: placeholders p0.., consts k0.., the op named "op".
std::string GraphText(const OpCase& c);

struct PathResult {
  absl::Status status;
  Tensor output;
};

// The placeholders' feeds: the case's fixed values, or seeded random tensors.
std::vector<Tensor> Feeds(const OpCase& c);

// Loads the graph at `path` with `jit` on `backend` ("cpu", "interpreter") and fetches the
// case's output. XLA_FLAGS applies as in the CLI.
PathResult RunPath(const std::string& path, const OpCase& c, JitMode jit,
                   const std::string& backend);

// The per-element relative bound for a dtype (integers and bool: exact).
double Tolerance(DType t);

// Same dims and elements: integers exactly, floats within Tolerance plus `atol`; NaN matches NaN.
::testing::AssertionResult SameTensor(const Tensor& e, const Tensor& a, double atol = 0);

}  // namespace tfjit::optest

#endif  // TFJIT_TESTS_TF_OP_CASE_RUNNER_H_
