// Symbolic batch size (docs/HLO.md, "Symbolic batch size"): one module that serves every batch
// size, derived from static modules of one computation built at several batch sizes.
//
// The modules' builders (tf2hlo, the passes) never see a symbolic dim. A cluster is lowered
// and optimized at a few batch sizes (probes); Symbolize compares the results and, where they
// differ only in values affine in the batch size at the places a symbolic value may sit, gives
// the module with those values symbolic. Every other difference (another structure, a value
// that is not affine in the batch size, a symbolic dim other than dim 0) is a reason, said to
// the user, for compiling that cluster per shape instead.
#ifndef TFJIT_COMPILER_HLO_SYMBOLIC_H_
#define TFJIT_COMPILER_HLO_SYMBOLIC_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "compiler/hlo/instruction.h"
#include "compiler/hlo/module.h"

namespace tfjit::hlo {

// One static module and the batch size it was built at.
struct BatchProbe {
  int64_t batch = 0;
  const Module* module = nullptr;
};

// A copy of `probes[0]`'s module whose values that differ between the probes are symbolic:
// dim 0 of an array, the limit of a slice along dim 0 and the size of a dynamic-slice along
// dim 0 (both follow from the result's dim 0), and a gather's slice size along dim 0 when it
// is all of the operand's dim 0. Each must be k * b + c with one k >= 1 and c
// for every probe. At least three probes at distinct batch sizes (two points would take any
// function for a line). FAILED_PRECONDITION naming the first difference otherwise, e.g.
// "%reshape.3: dim 1 is 8 at batch 2 and 12 at batch 3 (only dim 0 may depend on the batch
// size)". The copy is held at probes[0]'s batch size (Module::batch_representative).
absl::StatusOr<std::unique_ptr<Module>> Symbolize(absl::Span<const BatchProbe> probes);

// `module` at batch size `batch` (>= 0): every symbolic dim, and the attributes that follow
// from one, take their value there; the result is static. A static module is copied.
std::unique_ptr<Module> Specialize(const Module& module, int64_t batch);

// `module` with its symbolic dims held at `batch` instead of its representative: the same
// module for every purpose but the values code may read without asking (Shape::dims()). The
// emitters' independence check compiles a module at two representatives and compares.
std::unique_ptr<Module> Rebase(const Module& module, int64_t batch);

// The limit along dim 0 of a slice whose result has the symbolic dim 0 `extent`: the smallest
// that gives it, start + (extent - 1) * stride + 1.
SymbolicExtent SymbolicSliceLimit(const SliceDim& slice, const SymbolicExtent& extent);

// Whether `gather` takes all of its operand's symbolic dim 0 (its slice size there follows from
// the operand's shape, and is written `?b`).
bool FullSymbolicGather(const Instruction& gather);

}  // namespace tfjit::hlo

#endif  // TFJIT_COMPILER_HLO_SYMBOLIC_H_
