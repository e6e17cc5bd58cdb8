// The error-bound transfer functions of the random HLO generator (random_hlo.h): how an
// instruction's ValueBound follows from its operands' under HLO.md's accuracy contract.
#ifndef TFJIT_TESTS_TESTLIB_RANDOM_HLO_BOUNDS_H_
#define TFJIT_TESTS_TESTLIB_RANDOM_HLO_BOUNDS_H_

#include <vector>

#include "compiler/hlo/instruction.h"
#include "compiler/hlo/literal.h"
#include "tests/testlib/random_hlo.h"

namespace tfjit::testlib {

ValueBound InvalidBound();
// An exact value bounded by `mag`.
ValueBound ExactBound(double mag);
// The bound of a parameter filled by RandomLiteral(shape, _, edge_values).
ValueBound ParameterBound(const hlo::Shape& shape, bool edge_values);
// An exact bound with the literal's largest magnitude (inf when it holds inf or NaN).
ValueBound LiteralBound(const hlo::Literal& literal);
// The larger of two bounds of values that may take either's place (conditional results).
ValueBound JoinBounds(const ValueBound& a, const ValueBound& b);
// The bound of `inst` given its operands' bounds (array results, tuple and
// get-tuple-element; while and conditional are the generator's job). Invalid when the contract
// allows results far enough apart that the value cannot be compared, e.g. a compare of two
// approximate floats.
ValueBound TransferBound(const hlo::Instruction& inst,
                         const std::vector<const ValueBound*>& operands);

}  // namespace tfjit::testlib

#endif  // TFJIT_TESTS_TESTLIB_RANDOM_HLO_BOUNDS_H_
