// LoweringContext: the state shared by the per-op lowering functions of one cluster.
#ifndef TFJIT_COMPILER_TF2HLO_LOWERING_CONTEXT_H_
#define TFJIT_COMPILER_TF2HLO_LOWERING_CONTEXT_H_

#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "compiler/hlo/builder.h"
#include "compiler/hlo/module.h"
#include "frontend/graph.h"
#include "tfjit/tensor.h"

namespace tfjit::tf2hlo {

class LoweringContext {
 public:
  LoweringContext(hlo::Module* module, hlo::Computation* entry)
      : module_(module), builder_(entry) {}

  hlo::Module* module() { return module_; }
  hlo::Builder& b() { return builder_; }

  // Binds a TF tensor to an HLO value (cluster parameters, node outputs).
  void Bind(const tf::Output& output, hlo::Instruction* value);
  // Records the host value of a parameter whose value is known at compile time.
  void BindConstantValue(hlo::Instruction* parameter, Tensor value);
  absl::StatusOr<hlo::Instruction*> Value(const tf::Output& output) const;

  // The HLO value of data input `i` of `node`.
  absl::StatusOr<hlo::Instruction*> Input(const tf::Node& node, int i) const;
  // Input `i` evaluated at compile time, or TF's compile-time-constant error (known issue F).
  absl::StatusOr<Tensor> ConstantInput(const tf::Node& node, int i) const;
  // ConstantInput as int64 values (any integer dtype).
  absl::StatusOr<std::vector<int64_t>> ConstantInputAsInts(const tf::Node& node, int i) const;
  void SetOutput(const tf::Node& node, int i, hlo::Instruction* value) {
    Bind(tf::Output{const_cast<tf::Node*>(&node), i}, value);
  }

  // NumPy/TF broadcasting of `x` to `dims` (right-aligned); x unchanged when already there.
  absl::StatusOr<hlo::Instruction*> BroadcastTo(hlo::Instruction* x,
                                                const std::vector<int64_t>& dims);
  // A scalar constant of `dtype` holding `value` (converted), broadcast to `dims`.
  absl::StatusOr<hlo::Instruction*> Splat(DType dtype, double value,
                                          const std::vector<int64_t>& dims);

 private:
  // Evaluates `value` if it depends only on constants and parameters with known values.
  absl::StatusOr<Tensor> TryEvaluate(hlo::Instruction* value) const;

  hlo::Module* module_;
  hlo::Builder builder_;
  absl::flat_hash_map<const tf::Node*, std::vector<hlo::Instruction*>> values_;
  absl::flat_hash_map<const hlo::Instruction*, Tensor> known_parameters_;
};

// TF's broadcast shape of two operand shapes, or INVALID_ARGUMENT naming both.
absl::StatusOr<std::vector<int64_t>> BroadcastDims(const std::vector<int64_t>& a,
                                                   const std::vector<int64_t>& b);

}  // namespace tfjit::tf2hlo

#endif  // TFJIT_COMPILER_TF2HLO_LOWERING_CONTEXT_H_
