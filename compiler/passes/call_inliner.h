// CallInlinerPass: replaces every `call` of the entry computation by a copy of the called
// computation's instructions (nested calls too), so backends that emit one kernel per
// instruction never see one. The called computation stays until DCE removes it.
#ifndef TFJIT_COMPILER_PASSES_CALL_INLINER_H_
#define TFJIT_COMPILER_PASSES_CALL_INLINER_H_

#include "compiler/passes/pass.h"

namespace tfjit::passes {

class CallInlinerPass : public Pass {
 public:
  absl::string_view name() const override { return "call-inliner"; }
  absl::StatusOr<bool> Run(hlo::Module& module) override;
};

}  // namespace tfjit::passes

#endif  // TFJIT_COMPILER_PASSES_CALL_INLINER_H_
