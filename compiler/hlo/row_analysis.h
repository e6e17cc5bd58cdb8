// Whether a symbolic module keeps the rows of its batch apart (issue 25's buckets with padding).
//
// A cluster may run at a larger batch size than it was fed (a bucket: static code compiled
// once for a size a server allows) only when padding rows can never change the real rows'
// results: row i of every result along the batch must depend on row i of the batch inputs and
// on nothing batch-sized besides. A reduction over the batch (training-mode batch norm's mean),
// a reshape or transpose that moves rows into other dims, a concatenation or slice along the
// batch, a GEMM contracting over it, a gather whose indices pick rows: each mixes rows, and
// the analysis says which instruction does.
//
// It reads a symbolic module (compiler/hlo/symbolic.h): its parameters with dim 0 `?b` are the
// batch inputs, and no constant depends on the batch size (Symbolize refuses one; a constant
// batch size folded into a value would otherwise differ between the padded and real runs).
// Run-time checks (Module::runtime_checks) may combine rows: padding repeats real rows, and a
// check that holds for every real row holds for their copies.
#ifndef TFJIT_COMPILER_HLO_ROW_ANALYSIS_H_
#define TFJIT_COMPILER_HLO_ROW_ANALYSIS_H_

#include <string>
#include <vector>

#include "compiler/hlo/module.h"

namespace tfjit::hlo {

struct RowAnalysis {
  bool independent = false;
  // When not independent: the first instruction that mixes rows, and how, e.g. "%reduce.3
  // reduces over the batch (dim 0)".
  std::string reason;
  // Per result (the ROOT tuple's elements, or the root), whether its dim 0 is the batch: the
  // rows a padded run returns beyond the real ones are dropped from these. The run-time
  // checks' elements are false.
  std::vector<bool> batch_results;
};

// The analysis of `module`'s entry computation. A static module (no symbolic dim) has no
// batch to keep apart: not independent.
RowAnalysis AnalyzeRows(const Module& module);

}  // namespace tfjit::hlo

#endif  // TFJIT_COMPILER_HLO_ROW_ANALYSIS_H_
