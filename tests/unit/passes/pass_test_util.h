// Helpers shared by the pass tests: opcode counts over a computation or module.
#ifndef TFJIT_TESTS_UNIT_PASSES_PASS_TEST_UTIL_H_
#define TFJIT_TESTS_UNIT_PASSES_PASS_TEST_UTIL_H_

#include "compiler/hlo/module.h"
#include "tests/testlib/hlo_test_util.h"

namespace tfjit::passes {

inline int CountOpcode(const hlo::Computation& c, hlo::Opcode opcode) {
  int n = 0;
  for (const hlo::Instruction* inst : c.instructions()) n += inst->opcode() == opcode;
  return n;
}

inline int CountOpcode(const hlo::Module& m, hlo::Opcode opcode) {
  int n = 0;
  for (const hlo::Computation* c : m.computations()) n += CountOpcode(*c, opcode);
  return n;
}

}  // namespace tfjit::passes

#endif  // TFJIT_TESTS_UNIT_PASSES_PASS_TEST_UTIL_H_
