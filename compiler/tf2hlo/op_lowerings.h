// Registry of per-op lowering functions (one function per TF op, grouped by family).
#ifndef TFJIT_COMPILER_TF2HLO_OP_LOWERINGS_H_
#define TFJIT_COMPILER_TF2HLO_OP_LOWERINGS_H_

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "compiler/tf2hlo/lowering_context.h"

namespace tfjit::tf2hlo {

using LoweringFn = absl::Status (*)(LoweringContext& ctx, const tf::Node& node);

struct OpLowering {
  const char* op;
  LoweringFn fn;
  // Element types the lowering accepts for its "T"-like attr; empty = any numeric type.
  bool float_only = false;
  // Optional extra check of the node's attrs (CanLower); false leaves the node uncompiled,
  // with `*why` saying why.
  bool (*can_lower)(const tf::Node& node, std::string* why) = nullptr;
};

// nullptr when the op has no lowering.
const OpLowering* FindOpLowering(absl::string_view op);

// Families (each defined in its own file).
void AppendMathLowerings(std::vector<OpLowering>* table);   // math_lowerings.cc
void AppendArrayLowerings(std::vector<OpLowering>* table);  // array_lowerings.cc
void AppendNnLowerings(std::vector<OpLowering>* table);     // nn_lowerings.cc
void AppendRandomLowerings(std::vector<OpLowering>* table); // random_lowerings.cc

}  // namespace tfjit::tf2hlo

#endif  // TFJIT_COMPILER_TF2HLO_OP_LOWERINGS_H_
