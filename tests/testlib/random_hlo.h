// Random, valid HLO modules for differential testing (evaluator vs a backend), with an error
// bound per output derived from HLO.md's accuracy contract. Free of gtest so tools can link it.
//
// Every generated value carries a ValueBound: "exact" values must be bit-identical on every path
// (integers, pred, and floats computed only by the ops HLO.md requires to be bit-identical);
// values downstream of a reassociating reduction/dot or an approximated transcendental carry an
// absolute/relative error bound. The generator only builds a discontinuous op (compare, floor,
// float->int convert, divide, ...) on exact inputs, so a tiny permitted difference can never
// turn into a large one; a value whose bound cannot be established is marked invalid and is
// neither consumed nor compared.
#ifndef TFJIT_TESTS_TESTLIB_RANDOM_HLO_H_
#define TFJIT_TESTS_TESTLIB_RANDOM_HLO_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "compiler/hlo/module.h"

namespace tfjit::testlib {

struct ValueBound {
  bool valid = true;   // false: paths may legitimately disagree; never consumed or compared
  bool exact = true;   // bit-identical (floats: up to the sign of a zero when zsign)
  bool zsign = false;  // the sign of a float zero may differ (maximum/minimum of -0 and +0)
  double mag = 0;      // bound on |value| when the inputs are finite (inf: unknown)
  double abs_err = 0;  // |actual - expected| <= abs_err + rel_err * |expected|
  double rel_err = 0;
  std::vector<ValueBound> elements;  // tuple-shaped values
  std::string ToString() const;
};

struct RandomHloOptions {
  int min_instructions = 5;  // generation steps in the entry (each adds >= 1 instruction)
  int max_instructions = 40;
  bool control_flow = true;  // while loops and conditionals
};

struct RandomHloModule {
  std::unique_ptr<hlo::Module> module;
  // Inputs: RandomArgs(*module, args_seed, edge_values).
  uint64_t args_seed = 0;
  bool edge_values = false;
  // One per ROOT tuple element, or one for an array ROOT.
  std::vector<ValueBound> output_bounds;
};

// Deterministic in `seed`. The module has passed VerifyModule; an error means a generator bug.
absl::StatusOr<RandomHloModule> GenerateRandomHlo(uint64_t seed,
                                                  const RandomHloOptions& options = {});

}  // namespace tfjit::testlib

#endif  // TFJIT_TESTS_TESTLIB_RANDOM_HLO_H_
