// TransposeSinkingPass (transpose_sinking.h): one sweep visits instructions in post-order and
// moves the transpose of each operand below every instruction that can take it.
#include "compiler/passes/transpose_sinking.h"

#include <optional>
#include <vector>

#include "compiler/hlo/builder.h"
#include "compiler/hlo/computation.h"
#include "core/status.h"

namespace tfjit::passes {
namespace {

using hlo::Instruction;
using hlo::Opcode;
using Permutation = std::vector<int64_t>;

bool IsIdentity(const Permutation& p) {
  for (size_t i = 0; i < p.size(); ++i) {
    if (p[i] != static_cast<int64_t>(i)) return false;
  }
  return true;
}

Permutation Inverse(const Permutation& p) {
  Permutation inverse(p.size());
  for (size_t i = 0; i < p.size(); ++i)
    inverse[static_cast<size_t>(p[i])] = static_cast<int64_t>(i);
  return inverse;
}

// The dims of `dims` (a transpose's result) before transpose `p`: result dim i is operand dim
// p[i].
std::vector<int64_t> Untransposed(const std::vector<int64_t>& dims, const Permutation& p) {
  std::vector<int64_t> out(dims.size());
  for (size_t i = 0; i < dims.size(); ++i) out[static_cast<size_t>(p[i])] = dims[i];
  return out;
}

bool IsSinkableOpcode(Opcode op) {
  return hlo::IsElementwise(op) || op == Opcode::kPad || op == Opcode::kConcatenate;
}

// How an operand of a sinkable instruction is read before transpose p.
enum class Route {
  kNone,         // it cannot be
  kScalar,       // as it is (a scalar: pad's value, clamp's bounds)
  kUntranspose,  // transpose(b, p): b
  kConstant,     // transpose(constant, inverse of p), folded later
  kBroadcast,    // broadcast(y) with its dims mapped through p
};

// The dims a broadcast maps its operand to before transpose p: dims'[j] = p[dims[j]].
std::vector<int64_t> BroadcastDimsBefore(const Instruction& broadcast, const Permutation& p) {
  std::vector<int64_t> dims;
  for (int64_t d : broadcast.dimensions()) dims.push_back(p[static_cast<size_t>(d)]);
  return dims;
}

Route RouteOf(const Instruction& x, const Permutation& p) {
  if (!x.shape().IsArray()) return Route::kNone;
  if (x.shape().rank() == 0) return Route::kScalar;
  if (x.shape().rank() != static_cast<int>(p.size())) return Route::kNone;
  if (x.opcode() == Opcode::kTranspose && x.dimensions() == p) return Route::kUntranspose;
  if (x.opcode() == Opcode::kConstant) return Route::kConstant;
  if (x.opcode() == Opcode::kBroadcast) {
    const std::vector<int64_t> dims = BroadcastDimsBefore(x, p);
    for (size_t j = 1; j < dims.size(); ++j) {
      if (dims[j] <= dims[j - 1]) return Route::kNone;
    }
    return Route::kBroadcast;
  }
  return Route::kNone;
}

// The permutation of the first operand of `inst` that is a non-identity transpose of a
// computed value (a constant's transpose is folded, not moved).
std::optional<Permutation> OperandPermutation(const Instruction& inst) {
  for (const Instruction* x : inst.operands()) {
    if (x->opcode() == Opcode::kTranspose && !IsIdentity(x->dimensions()) &&
        x->operand(0)->opcode() != Opcode::kConstant) {
      return x->dimensions();
    }
  }
  return std::nullopt;
}

// Whether `inst` can be computed before transpose p: every operand routed, one of them a
// transpose by p. With depth > 0, an operand may also be an instruction that can be (its
// rewrite makes it a transpose by p): users of a value are rewritten one after another.
bool CanSink(const Instruction& inst, const Permutation& p, int depth = 0) {
  if (!IsSinkableOpcode(inst.opcode()) || !inst.shape().IsArray() ||
      inst.shape().rank() != static_cast<int>(p.size())) {
    return false;
  }
  bool transposed = false;
  for (const Instruction* x : inst.operands()) {
    const Route route = RouteOf(*x, p);
    if (route == Route::kNone) {
      if (depth == 0 || !CanSink(*x, p, depth - 1)) return false;
      transposed = true;
    }
    transposed |= route == Route::kUntranspose;
  }
  return transposed;
}

// Whether sinking leaves no transpose computed twice: every user of each operand transpose
// can take the same rewrite (now, or once its other operands have), or is a transpose (which
// composes with it).
bool Profitable(const Instruction& inst, const Permutation& p) {
  constexpr int kDepth = 4;  // a LeakyRelu's select waits on its compare and multiply
  for (const Instruction* x : inst.operands()) {
    if (RouteOf(*x, p) != Route::kUntranspose) continue;
    if (x->IsRoot()) return false;
    for (const Instruction* user : x->users()) {
      if (user->opcode() != Opcode::kTranspose && !CanSink(*user, p, kDepth)) return false;
    }
  }
  return true;
}

// Replaces `inst` by transpose(inst', p).
absl::Status Sink(hlo::Computation& c, Instruction* inst, const Permutation& p) {
  hlo::Builder builder(&c);
  builder.set_metadata(inst->metadata());
  const Permutation inverse = Inverse(p);
  std::vector<Instruction*> operands;
  for (Instruction* x : inst->operands()) {
    switch (RouteOf(*x, p)) {
      case Route::kScalar:
        operands.push_back(x);
        break;
      case Route::kUntranspose:
        operands.push_back(x->operand(0));
        break;
      case Route::kConstant: {
        TFJIT_ASSIGN_OR_RETURN(Instruction * t, builder.Transpose(x, inverse));
        operands.push_back(t);
        break;
      }
      case Route::kBroadcast: {
        TFJIT_ASSIGN_OR_RETURN(Instruction * b,
                               builder.Broadcast(x->operand(0), Untransposed(x->shape().dims(), p),
                                                 BroadcastDimsBefore(*x, p)));
        operands.push_back(b);
        break;
      }
      case Route::kNone:
        return Internal("transpose sinking: operand '%s' of '%s' has no route", x->name(),
                        inst->name());
    }
  }
  hlo::Attributes attrs = inst->attrs();
  if (inst->opcode() == Opcode::kPad) {
    for (size_t i = 0; i < p.size(); ++i) {
      attrs.padding[static_cast<size_t>(p[i])] = inst->attrs().padding[i];
    }
  } else if (inst->opcode() == Opcode::kConcatenate) {
    attrs.dimensions = {p[static_cast<size_t>(inst->dimensions()[0])]};
  }
  const hlo::Shape shape(inst->shape().element_type(), Untransposed(inst->shape().dims(), p));
  TFJIT_ASSIGN_OR_RETURN(Instruction * before,
                         builder.Add(inst->opcode(), operands, std::move(attrs), {}, shape));
  TFJIT_ASSIGN_OR_RETURN(Instruction * after, builder.Transpose(before, p));
  return c.ReplaceAllUsesWith(inst, after);
}

absl::StatusOr<bool> SinkOnce(hlo::Computation& c) {
  bool changed = false;
  for (Instruction* inst : c.MakePostOrder()) {
    if (inst->user_count() == 0 && !inst->IsRoot()) continue;  // dead, or replaced already
    if (!IsSinkableOpcode(inst->opcode())) continue;
    const std::optional<Permutation> p = OperandPermutation(*inst);
    if (!p.has_value() || !CanSink(*inst, *p) || !Profitable(*inst, *p)) continue;
    TFJIT_RETURN_IF_ERROR(Sink(c, inst, *p));
    changed = true;
  }
  return changed;
}

}  // namespace

absl::StatusOr<bool> TransposeSinkingPass::Run(hlo::Module& module) {
  // Each rewrite moves a transpose one instruction further from the parameters, so the
  // sweeps end; the bound only guards against a rule that would undo another.
  constexpr int kMaxSweeps = 64;
  return SweepToFixedPoint(module, kMaxSweeps, SinkOnce);
}

}  // namespace tfjit::passes
