// LoweringContext: the state shared by the per-op lowering functions of one cluster.
#ifndef TFJIT_COMPILER_TF2HLO_LOWERING_CONTEXT_H_
#define TFJIT_COMPILER_TF2HLO_LOWERING_CONTEXT_H_

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "compiler/hlo/builder.h"
#include "compiler/hlo/module.h"
#include "frontend/graph.h"
#include "tfjit/tensor.h"

namespace tfjit::tf2hlo {

// A variable the cluster receives as a resource input: its value as the cluster sees it at
// this point of the lowering (reads see earlier writes, in dependency order).
struct ResourceState {
  std::string name;  // the variable's shared name, for messages
  std::string container;
  DType dtype = DType::kInvalid;
  int arg_index = -1;                 // the cluster input holding the handle
  hlo::Instruction* value = nullptr;  // current value; nullptr while uninitialized
  bool written = false;               // assigned inside the cluster
  // A TF1 reference variable (VariableInfo::ref): reading its cluster input as a value gives
  // the current value (LoweringContext::Value).
  bool ref = false;
};

// Options of one LowerCluster, shared by the contexts of nested function bodies.
struct LoweringOptions {
  // Beyond-TF fixes for known issues C, D and F (each logged with the node it changes).
  bool autofix = false;
  // TensorListSetItem nodes with resize_if_index_out_of_bounds whose writes a loop analysis
  // proved to fit their list ("function/node"), so they compile as fixed-size writes.
  absl::flat_hash_set<std::string> bounded_list_writes;
  // Lists created with an element shape unknown at compile time (TF2's TensorArray without
  // element_shape): their buffer gets its element dims from the first write (see
  // state_list_lowerings.cc); until then it is a placeholder with scalar elements.
  absl::flat_hash_set<const hlo::Instruction*> unshaped_lists;
  // Set while a loop body is lowered only to learn the shapes its list writes store
  // (probed_items, by "function/node"); writes then record instead of storing.
  bool probing = false;
  absl::flat_hash_map<std::string, hlo::Shape> probed_items;
  // Stateful random nodes of the cluster (StatefulRandomNodes, known issue E): `state` is the
  // u64[3] Philox-state parameter LowerCluster gives each; the node's lowering sets `next`,
  // the state after its draws, which the cluster returns for the runtime to install.
  struct RandomState {
    hlo::Instruction* state = nullptr;
    hlo::Instruction* next = nullptr;
  };
  absl::flat_hash_map<const tf::Node*, RandomState> random_states;
  // Values of the run-time checks (hlo::RuntimeCheck, recorded in the module in this order);
  // LowerCluster appends them to the ROOT tuple.
  std::vector<hlo::Instruction*> runtime_checks;
};

// Bounded dynamic sizes (dynamic_sizes.h). A size known only at run time is an affine
// expression in "atoms": the run-time sizes of this computation (a Where's row count, a
// NonMaxSuppression's selection count), each a non-negative s64[] value with a static bound.
struct SymExpr {
  int64_t constant = 0;
  std::vector<std::pair<int, int64_t>> terms;  // (atom, coefficient), by atom, no zero ones
  bool IsConstant() const { return terms.empty(); }
  bool operator==(const SymExpr&) const = default;
};
// A value whose dim `dim` is padded to its static size: only its first `size` entries along
// that dim are real (the rest are don't-care). At most one such dim per value.
struct DynamicDim {
  int dim = 0;
  SymExpr size;
};

class LoweringContext {
 public:
  LoweringContext(hlo::Module* module, hlo::Computation* entry, LoweringOptions* options = nullptr)
      : module_(module), builder_(entry), options_(options) {}

  // Never null: a context without options gets TF's behaviour (no auto-fixes).
  LoweringOptions* options() { return options_ != nullptr ? options_ : &default_options_; }
  bool autofix() { return options()->autofix; }

  // Autofix C/D: the capacity a list constructor (EmptyTensorList, TensorListReserve) needs
  // for the loop that fills it, when the loop's trip count is provable; nullopt otherwise
  // (always without autofix). Also approves the loop's growing writes (ListGrowthIsBounded).
  std::optional<int64_t> ListBound(const tf::Node& list_node);
  // Whether a growing TensorListSetItem was proven to stay inside its list's capacity.
  bool ListGrowthIsBounded(const tf::Node& set_item);
  // The value of a scalar tensor when known at compile time: from its lowered HLO value, or
  // (not yet lowered) from constant scalar arithmetic in the graph.
  std::optional<double> KnownScalar(const tf::Output& output) const;
  // Why the last ListBound succeeded, for the auto-fix log line.
  const std::string& last_list_bound_reason() const { return last_list_bound_reason_; }

  hlo::Module* module() { return module_; }
  hlo::Builder& b() { return builder_; }

  // Whether AddIndexCheck works here: in a LowerCluster, in its ENTRY computation and in the
  // bodies of its While and If (a body's checks are carried out of it: LoweredBody::checks).
  bool CanAddRuntimeChecks() const;
  // A check value s64[1 + k] of `check` computed in this context's computation (a body's
  // check carried out of its While or If): recorded for the cluster in ENTRY, else kept for
  // the enclosing body's caller (pending_checks).
  void AddCheckValue(hlo::RuntimeCheck check, hlo::Instruction* value);
  // The checks a body context collected (empty in ENTRY).
  struct PendingCheck {
    hlo::RuntimeCheck check;
    hlo::Instruction* value;
  };
  const std::vector<PendingCheck>& pending_checks() const { return pending_checks_; }

  // In a While/If body that carries a Philox state (known issue E): the state the body's next
  // stateful random op draws from; each draw replaces it with the advanced state. Null where
  // no state is carried (ENTRY: each random node has its own, LoweringOptions::random_states).
  hlo::Instruction* body_random_state() const { return body_random_state_; }
  void set_body_random_state(hlo::Instruction* state) { body_random_state_ = state; }
  // The state a stateful random op or a While/If drawing inside draws from: its own cluster
  // parameter in ENTRY, else the body's carried state (UNIMPLEMENTED when there is none).
  absl::StatusOr<hlo::Instruction*> RandomStateFor(const tf::Node& node);
  // Records the state after `node`'s draws (its cluster result, or the body's next state).
  void SetNextRandomState(const tf::Node& node, hlo::Instruction* next);
  // Run-time range check of `node`'s integer `indices`, read as rows of k = limits.size()
  // components: row r is bad when some component j is outside [0, limits[j]). The compiled
  // cluster returns the first bad row and its components (hlo::RuntimeCheck), and the runtime
  // fails with `message_template` ("{pos}" = the row, "{value}" = its components; see
  // hlo::RuntimeCheck for `flat_position`/`position_dims`/`vector_value`). A second call for the
  // same node, message and limits adds nothing: the complex lowerings run a node's real
  // lowering once per part, and its indices are the same in both.
  // `dim0_of`, when set, is the array whose dim 0 limits[0] is (a gather's params): the limit
  // is then read from its shape (get-dimension-size) instead of being a constant, so that the
  // module built at several batch sizes differs only in shapes and can be made symbolic.
  absl::Status AddIndexCheck(const tf::Node& node, hlo::Instruction* indices,
                             const std::vector<int64_t>& limits, std::string message_template,
                             bool flat_position, std::vector<int64_t> position_dims,
                             bool vector_value, hlo::Instruction* dim0_of = nullptr);

  // Run-time check that no element of the pred value `bad` is true, else the runtime fails with
  // `message` (an AddIndexCheck of bad as 0/1 against the limit 1; ENTRY computation only).
  absl::Status AddConditionCheck(const tf::Node& node, hlo::Instruction* bad, std::string message);

  // ---- Bounded dynamic sizes (dynamic_sizes.h) ----
  // A new atom: `value` (s64[] in this computation), at most `bound`.
  SymExpr NewSizeAtom(hlo::Instruction* value, int64_t bound);
  // The largest value `e` can take (atoms between 0 and their bounds).
  int64_t UpperBound(const SymExpr& e) const;
  // The bound of `value` when it is an atom's value.
  std::optional<int64_t> AtomBound(const hlo::Instruction* value) const;
  // `e` as an s64[] value in this computation.
  absl::StatusOr<hlo::Instruction*> SizeValue(const SymExpr& e);
  // Marks the value bound to `output` as padded in `dim` (a size that turns out constant makes
  // it static instead: the value is cut to it).
  void SetDynamic(const tf::Output& output, DynamicDim dim);
  const DynamicDim* DynamicOf(const tf::Output& output) const;
  // The padded dim of data input `i` of `node` (nullptr when none, or while overridden).
  const DynamicDim* DynamicInput(const tf::Node& node, int i) const;
  // Integer tensors whose elements are sizes known only at run time (Shape of a padded value,
  // and arithmetic on it): one expression per element, row-major.
  void SetSymbolic(const tf::Output& output, std::vector<SymExpr> elements) {
    symbolic_[{output.node, output.index}] = std::move(elements);
  }
  bool HasSymbolic(const tf::Output& output) const {
    return symbolic_.contains(std::make_pair(output.node, output.index));
  }
  // The elements of integer input `i` as expressions: recorded ones, or the constants of a
  // compile-time-constant input; nullopt otherwise.
  std::optional<std::vector<SymExpr>> SymbolicInput(const tf::Node& node, int i) const;
  // `value` evaluated at compile time when it depends only on constants (FAILED_PRECONDITION
  // otherwise).
  absl::StatusOr<Tensor> Evaluate(hlo::Instruction* value) const { return TryEvaluate(value); }
  // The values bound to `node`'s outputs, and rebinding them (a lowering run again on
  // stand-in inputs to learn where its output elements come from: dynamic_sizes.cc).
  std::vector<hlo::Instruction*> OutputsOf(const tf::Node& node) const;
  void RestoreOutputs(const tf::Node& node, std::vector<hlo::Instruction*> values);

  // Binds a TF tensor to an HLO value (cluster parameters, node outputs).
  void Bind(const tf::Output& output, hlo::Instruction* value);
  // Records the host value of a parameter whose value is known at compile time.
  void BindConstantValue(hlo::Instruction* parameter, Tensor value);
  absl::StatusOr<hlo::Instruction*> Value(const tf::Output& output) const;

  // The HLO value of data input `i` of `node` (the overriding value, while one is set).
  absl::StatusOr<hlo::Instruction*> Input(const tf::Node& node, int i) const;
  // Until cleared, Input(node, i) returns values[i] where it is not null. The complex
  // lowerings run a node's real lowering once per part this way: each input gets its own
  // part even when two inputs are one tensor, and no other node's value is rebound.
  void OverrideInputs(const tf::Node& node, std::vector<hlo::Instruction*> values) {
    override_node_ = &node;
    override_values_ = std::move(values);
  }
  void ClearInputOverride() {
    override_node_ = nullptr;
    override_values_.clear();
  }
  // Input `i` evaluated at compile time, or TF's compile-time-constant error (known issue F).
  absl::StatusOr<Tensor> ConstantInput(const tf::Node& node, int i) const;
  // ConstantInput as int64 values (any integer dtype).
  absl::StatusOr<std::vector<int64_t>> ConstantInputAsInts(const tf::Node& node, int i) const;
  void SetOutput(const tf::Node& node, int i, hlo::Instruction* value) {
    Bind(tf::Output{const_cast<tf::Node*>(&node), i}, value);
  }

  // Resource inputs: a handle tensor of the cluster bound to its variable's state.
  void BindResource(const tf::Output& handle, ResourceState state);
  // Makes `alias` (an Identity's output, a loop's handle output) name the same variable as
  // `of`; false when `of` is not a resource handle of this computation.
  bool AliasResource(const tf::Output& alias, const tf::Output& of);
  // The variable behind a handle tensor, or nullptr.
  ResourceState* ResourceOf(const tf::Output& handle);
  // The variable behind data input `i` of `node`; INVALID_ARGUMENT when that input is not a
  // resource input of the cluster.
  absl::StatusOr<ResourceState*> Resource(const tf::Node& node, int i);
  // Every resource bound, by cluster input index.
  std::vector<const ResourceState*> Resources() const;

  // Marks `value` as unknown at compile time even if it could be evaluated (TF does not look
  // through a variable written earlier in the cluster; known issue F).
  void MarkNotConstant(hlo::Instruction* value) { not_constant_.insert(value); }

  // Inputs 0 and 1 of a binary op broadcast to their common shape (TF's broadcasting);
  // INVALID_ARGUMENT naming both shapes when they are incompatible.
  absl::StatusOr<std::pair<hlo::Instruction*, hlo::Instruction*>> BroadcastBinaryInputs(
      const tf::Node& node);

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
  LoweringOptions* options_;
  LoweringOptions default_options_;
  std::string last_list_bound_reason_;
  absl::flat_hash_set<std::string> index_checks_;  // AddIndexCheck's (node, message, limits)
  std::vector<PendingCheck> pending_checks_;
  hlo::Instruction* body_random_state_ = nullptr;
  absl::flat_hash_map<const tf::Node*, std::vector<hlo::Instruction*>> values_;
  absl::flat_hash_map<const hlo::Instruction*, Tensor> known_parameters_;
  const tf::Node* override_node_ = nullptr;
  std::vector<hlo::Instruction*> override_values_;
  absl::flat_hash_map<std::pair<const tf::Node*, int>, std::shared_ptr<ResourceState>> resources_;
  absl::flat_hash_set<const hlo::Instruction*> not_constant_;
  struct Atom {
    hlo::Instruction* value;
    int64_t bound;
  };
  std::vector<Atom> atoms_;
  absl::flat_hash_map<std::pair<const tf::Node*, int>, DynamicDim> dynamic_;
  absl::flat_hash_map<std::pair<const tf::Node*, int>, std::vector<SymExpr>> symbolic_;
};

// TF's broadcast shape of two operand shapes, or INVALID_ARGUMENT naming both.
absl::StatusOr<std::vector<int64_t>> BroadcastDims(const std::vector<int64_t>& a,
                                                   const std::vector<int64_t>& b);

}  // namespace tfjit::tf2hlo

#endif  // TFJIT_COMPILER_TF2HLO_LOWERING_CONTEXT_H_
