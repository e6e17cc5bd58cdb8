// Function bodies inside compiled clusters (While's cond/body, If's branches): instantiation
// from a node's func attr, compilability checks, and lowering into an HLO computation.
#ifndef TFJIT_COMPILER_TF2HLO_FUNCTION_LOWERING_H_
#define TFJIT_COMPILER_TF2HLO_FUNCTION_LOWERING_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "compiler/hlo/module.h"
#include "compiler/tf2hlo/lowering_context.h"
#include "frontend/function.h"
#include "frontend/graph.h"
#include "tfjit/tensor.h"

namespace tfjit::tf2hlo {

// While, StatelessWhile, If, StatelessIf.
bool IsFunctionalControlFlow(absl::string_view op);
bool IsFunctionalWhile(absl::string_view op);

// The function named by func attr `attr` of `node` (e.g. While's "body"), instantiated from
// the library of the node's graph with the attr's own attrs. INVALID_ARGUMENT when the attr
// is missing; NOT_FOUND when the library lacks the function.
absl::StatusOr<tf::FunctionBody> InstantiateFunctionAttr(const tf::Node& node,
                                                         absl::string_view attr);

// The body nodes its outputs and control outputs need (data and control edges), in
// topological order; the input Placeholders and NoOps are left out.
std::vector<const tf::Node*> NeededBodyNodes(const tf::FunctionBody& body);

// Per body input: whether it feeds, through the body's nodes, an input that must be a
// compile-time constant (shape-only uses through Shape/Size/Rank do not count; inputs of
// nested While/If count, conservatively).
std::vector<bool> BodyInputsNeedingConstants(const tf::FunctionBody& body);

// Per loop variable of a While body: whether the body returns its input unchanged
// (directly or through Identity nodes).
std::vector<bool> LoopInvariantVars(const tf::FunctionBody& body);

// Whether every node the function of `node`'s func attr `attr` needs can be lowered
// (recursively through nested While/If). On false, *why names the node and the function.
bool CanLowerFunctionAttr(const tf::Node& node, absl::string_view attr, std::string* why);

// Whether a While/If can compile whatever its inputs are: false when its `output_shapes` attr
// says some output's shape is not fixed (a loop variable that changes shape, branches that
// return different shapes), or when a loop variable that changes across iterations feeds an
// input that must be a compile-time constant (known issue F). Auto clustering leaves such
// nodes in the runtime; must-compile mode reports the exact error.
bool ControlFlowIsStaticallyCompilable(const tf::Node& node, std::string* why);

// A body lowered into its own computation: one tuple parameter; the root is left to the
// caller (a tuple for while bodies and branches, a pred[] for while conditions).
struct LoweredBody {
  hlo::Computation* computation = nullptr;
  hlo::Instruction* parameter = nullptr;
  std::vector<hlo::Instruction*> outputs;  // one per body output, in signature order
  // Per body input: for a variable (resource input), its value when the body ends (after the
  // body's assignments); nullptr for other inputs.
  std::vector<hlo::Instruction*> final_variables;
  // Run-time checks of the body (gathers with run-time indices, ...): values s64[1 + k] in
  // `computation`, position -1 when the check passed. The caller carries them out (a While in
  // its state, an If in its results) and adds them to its own context (AddCheckValue).
  std::vector<LoweringContext::PendingCheck> checks;
  // With random_state: the u64[3] Philox state the body receives (the parameter's element
  // after the body's inputs) and the state after its draws (the same value when it draws
  // none); the caller carries it.
  hlo::Instruction* random_in = nullptr;
  hlo::Instruction* random_out = nullptr;
};

// Lowers `body` into a new computation of `module` named after `name`. Input i of the body
// is element i of the tuple parameter of `param_shapes`, or the constant known_values[i] when
// that is set (a value known at compile time: a loop-invariant constant, a constant branch
// operand). Errors raised inside the body keep their first line and name the body node and
// the function on an appended line.
// `options` (may be null) are the enclosing cluster's.
// With random_state, the parameter has one more element, u64[3], after the body's inputs: the
// Philox state its stateful random ops (and While/If inside) draw from in turn.
absl::StatusOr<LoweredBody> LowerFunctionBody(
    hlo::Module* module, const tf::FunctionBody& body, const std::vector<hlo::Shape>& param_shapes,
    const std::vector<std::optional<Tensor>>& known_values, const std::string& name,
    LoweringOptions* options = nullptr, bool random_state = false);

// Lowers `body` inline into `computation` (after its existing instructions): input i is
// inputs[i], or the constant known_values[i] when set. Returns one value per body output.
// Used to unroll loops (the auto-fix of known issue F).
// The body's run-time checks, when `computation` is not ENTRY, go to *checks. When
// random_state is not null its stateful random ops draw from *random_state, which ends as the
// state after their draws.
absl::StatusOr<std::vector<hlo::Instruction*>> LowerFunctionBodyInline(
    hlo::Module* module, hlo::Computation* computation, const tf::FunctionBody& body,
    const std::vector<hlo::Instruction*>& inputs,
    const std::vector<std::optional<Tensor>>& known_values, LoweringOptions* options,
    std::vector<LoweringContext::PendingCheck>* checks, hlo::Instruction** random_state = nullptr);

}  // namespace tfjit::tf2hlo

#endif  // TFJIT_COMPILER_TF2HLO_FUNCTION_LOWERING_H_
