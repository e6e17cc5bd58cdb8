// Deterministic random literals and arguments for tests, tfjit-opt and differential runs.
// Free of gtest so tools can link it.
#ifndef TFJIT_TESTS_TESTLIB_RANDOM_LITERAL_H_
#define TFJIT_TESTS_TESTLIB_RANDOM_LITERAL_H_

#include <cstdint>
#include <vector>

#include "compiler/hlo/literal.h"
#include "compiler/hlo/module.h"

namespace tfjit::testlib {

// Floats uniform in [-2, 2]; signed integers in [-10, 10]; unsigned in [0, 20]; pred fair.
// With `edge_values`, about one element in eight is instead an edge value: 0, -0, +-inf, NaN,
// the largest/smallest finite value or a denormal for floats; 0, -1, min, max for integers.
// The same (shape, seed, edge_values) gives the same literal on every platform.
hlo::Literal RandomLiteral(const hlo::Shape& shape, uint64_t seed, bool edge_values = false);

// One RandomLiteral per entry parameter (seeds derived from `seed` and the parameter number).
std::vector<hlo::Literal> RandomArgs(const hlo::Module& module, uint64_t seed,
                                     bool edge_values = false);

}  // namespace tfjit::testlib

#endif  // TFJIT_TESTS_TESTLIB_RANDOM_LITERAL_H_
