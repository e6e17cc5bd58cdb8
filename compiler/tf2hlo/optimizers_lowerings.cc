// Lowerings of the optimizers ops to HLO (docs/DESIGN.md, "Op families"), with the semantics of
// TF's XLA kernels (tf2xla): each ResourceApply* reads its variables' current values in the
// cluster, computes the update elementwise and installs the new values (written back by the
// executor after the launch, as for AssignVariableOp). The TF1 Apply* forms take Ref(T) inputs
// and stay in the runtime, as in TF.
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/tf2hlo/lowering.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/attr.h"
#include "frontend/op_catalog.h"

namespace tfjit::tf2hlo {
namespace {

using hlo::Instruction;
using hlo::Opcode;

// Elementwise expressions over the variable's shape. The first builder error is kept and
// later calls return nullptr, so an update reads as a formula; status() reports the error.
class Ew {
 public:
  Ew(LoweringContext& ctx, DType dtype, std::vector<int64_t> dims)
      : ctx_(ctx), dtype_(dtype), dims_(std::move(dims)) {}

  Instruction* Add(Instruction* a, Instruction* b) { return Bin(Opcode::kAdd, a, b); }
  Instruction* Sub(Instruction* a, Instruction* b) { return Bin(Opcode::kSubtract, a, b); }
  Instruction* Mul(Instruction* a, Instruction* b) { return Bin(Opcode::kMultiply, a, b); }
  Instruction* Div(Instruction* a, Instruction* b) { return Bin(Opcode::kDivide, a, b); }
  Instruction* Max(Instruction* a, Instruction* b) { return Bin(Opcode::kMaximum, a, b); }
  Instruction* Min(Instruction* a, Instruction* b) { return Bin(Opcode::kMinimum, a, b); }
  Instruction* Pow(Instruction* a, Instruction* b) { return Bin(Opcode::kPower, a, b); }
  Instruction* Sqrt(Instruction* x) { return Un(Opcode::kSqrt, x); }
  Instruction* Rsqrt(Instruction* x) { return Un(Opcode::kRsqrt, x); }
  Instruction* Abs(Instruction* x) { return Un(Opcode::kAbs, x); }
  Instruction* Sign(Instruction* x) { return Un(Opcode::kSign, x); }
  Instruction* Exp(Instruction* x) { return Un(Opcode::kExp, x); }
  Instruction* Neg(Instruction* x) { return Un(Opcode::kNegate, x); }
  Instruction* Square(Instruction* x) { return Mul(x, x); }
  // A constant of the variable's dtype and shape.
  Instruction* C(double v) { return Keep(ctx_.Splat(dtype_, v, dims_)); }
  // a > b ? t : f, elementwise.
  Instruction* SelectGt(Instruction* a, Instruction* b, Instruction* t, Instruction* f) {
    if (!status_.ok()) return nullptr;
    Instruction* pred = Keep(ctx_.b().Compare(hlo::ComparisonDirection::kGt, a, b));
    if (pred == nullptr) return nullptr;
    return Keep(ctx_.b().Select(pred, t, f));
  }
  // A scalar input broadcast to the variable's shape.
  Instruction* Splat(Instruction* scalar) {
    if (!status_.ok()) return nullptr;
    if (dims_.empty()) return scalar;
    return Keep(ctx_.b().Broadcast(scalar, dims_, {}));
  }
  const absl::Status& status() const { return status_; }

 private:
  Instruction* Keep(absl::StatusOr<Instruction*> r) {
    if (!status_.ok()) return nullptr;
    if (!r.ok()) {
      status_ = r.status();
      return nullptr;
    }
    return *r;
  }
  Instruction* Bin(Opcode op, Instruction* a, Instruction* b) {
    if (!status_.ok() || a == nullptr || b == nullptr) return nullptr;
    return Keep(ctx_.b().Binary(op, a, b));
  }
  Instruction* Un(Opcode op, Instruction* x) {
    if (!status_.ok() || x == nullptr) return nullptr;
    return Keep(ctx_.b().Unary(op, x));
  }

  LoweringContext& ctx_;
  DType dtype_;
  std::vector<int64_t> dims_;
  absl::Status status_;
};

// The operands of one ResourceApply* node: its variables' states and current values, then its
// other inputs by TF arg name (scalars already broadcast to the variable's shape).
struct Operands {
  std::vector<ResourceState*> vars;
  std::vector<Instruction*> w;   // current values, then the new values to install
  std::vector<Instruction*> in;  // the inputs after the variables, in TF's order
  bool nesterov = false;
  bool update_slots = true;
  bool linear_by_lr = false;
};

std::string ArgName(const tf::Node& node, int i) {
  const tf::OpDef* def = node.op_def();
  if (def != nullptr && i < static_cast<int>(def->inputs.size())) return def->inputs[i].name;
  return absl::StrCat("input ", i);
}

// Reads the variables and checks shapes with tf2xla's messages; `grad` is the gradient's
// input index. The scalar inputs come back broadcast (through `ew`).
absl::StatusOr<Operands> ReadOperands(LoweringContext& ctx, const tf::Node& node, int num_vars,
                                      int grad, DType dtype, Ew& ew) {
  Operands ops;
  for (int i = 0; i < num_vars; ++i) {
    TFJIT_ASSIGN_OR_RETURN(ResourceState * var, ctx.Resource(node, i));
    if (var->value == nullptr) return VariableNotFoundError(var->container, var->name);
    if (var->dtype != dtype) {
      return InvalidArgument(
          "node %s: Trying to read variable with wrong dtype. Expected %s got "
          "%s",
          node.DebugName(), DTypeName(var->dtype), DTypeName(dtype));
    }
    if (i > 0 && var->value->shape().dims() != ops.w[0]->shape().dims()) {
      return InvalidArgument(
          "node %s: var and %s do not have the same shape%s %s", node.DebugName(), ArgName(node, i),
          DimsString(ops.w[0]->shape().dims()), DimsString(var->value->shape().dims()));
    }
    ops.vars.push_back(var);
    ops.w.push_back(var->value);
  }
  for (int i = num_vars; i < node.num_inputs(); ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * x, ctx.Input(node, i));
    const std::vector<int64_t>& dims = x->shape().dims();
    if (i == grad) {
      if (dims != ops.w[0]->shape().dims()) {
        return InvalidArgument("node %s: var and %s do not have the same shape%s %s",
                               node.DebugName(), ArgName(node, i),
                               DimsString(ops.w[0]->shape().dims()), DimsString(dims));
      }
      ops.in.push_back(x);
    } else {
      if (!dims.empty()) {
        return InvalidArgument("node %s: %s is not a scalar: %s", node.DebugName(),
                               ArgName(node, i), DimsString(dims));
      }
      ops.in.push_back(ew.Splat(x));
    }
  }
  ops.nesterov = tf::GetBoolAttrOr(node, "use_nesterov", false).value_or(false);
  ops.update_slots = tf::GetBoolAttrOr(node, "update_slots", true).value_or(true);
  ops.linear_by_lr = tf::GetBoolAttrOr(node, "multiply_linear_by_lr", false).value_or(false);
  return ops;
}

// One optimizer's update: rewrites o.w (the variables' new values) from o.in.
using UpdateFn = void (*)(Ew& e, Operands& o);

Instruction* Proximal(Ew& e, Instruction* var, Instruction* lr, Instruction* l1, Instruction* l2,
                      Instruction* g) {
  Instruction* prox = e.Sub(var, e.Mul(g, lr));
  Instruction* denom = e.Add(e.C(1), e.Mul(lr, l2));
  Instruction* shrunk =
      e.Div(e.Mul(e.Sign(prox), e.Max(e.Sub(e.Abs(prox), e.Mul(lr, l1)), e.C(0))), denom);
  return e.SelectGt(l1, e.C(0), shrunk, e.Div(prox, denom));
}

void GradientDescent(Ew& e, Operands& o) { o.w[0] = e.Sub(o.w[0], e.Mul(o.in[0], o.in[1])); }

void ProximalGradientDescent(Ew& e, Operands& o) {
  o.w[0] = Proximal(e, o.w[0], o.in[0], o.in[1], o.in[2], o.in[3]);
}

void Momentum(Ew& e, Operands& o) {
  Instruction *lr = o.in[0], *g = o.in[1], *momentum = o.in[2];
  o.w[1] = e.Add(e.Mul(o.w[1], momentum), g);
  Instruction* step =
      o.nesterov ? e.Add(e.Mul(g, lr), e.Mul(e.Mul(o.w[1], momentum), lr)) : e.Mul(o.w[1], lr);
  o.w[0] = e.Sub(o.w[0], step);
}

void KerasMomentum(Ew& e, Operands& o) {
  Instruction *lr = o.in[0], *g = o.in[1], *momentum = o.in[2];
  o.w[1] = e.Sub(e.Mul(o.w[1], momentum), e.Mul(g, lr));
  o.w[0] = o.nesterov ? e.Sub(e.Add(o.w[0], e.Mul(o.w[1], momentum)), e.Mul(g, lr))
                      : e.Add(o.w[0], o.w[1]);
}

// Adam and AdamWithAmsgrad: alpha = lr * sqrt(1 - beta2^t) / (1 - beta1^t).
void AdamCommon(Ew& e, Operands& o, bool amsgrad) {
  Instruction *b1p = o.in[0], *b2p = o.in[1], *lr = o.in[2], *b1 = o.in[3], *b2 = o.in[4],
              *eps = o.in[5], *g = o.in[6];
  Instruction* alpha = e.Div(e.Mul(lr, e.Sqrt(e.Sub(e.C(1), b2p))), e.Sub(e.C(1), b1p));
  o.w[1] = e.Add(o.w[1], e.Mul(e.Sub(g, o.w[1]), e.Sub(e.C(1), b1)));
  o.w[2] = e.Add(o.w[2], e.Mul(e.Sub(e.Square(g), o.w[2]), e.Sub(e.C(1), b2)));
  Instruction* v = o.w[2];
  if (amsgrad) v = o.w[3] = e.Max(o.w[3], o.w[2]);
  Instruction* m =
      o.nesterov && !amsgrad ? e.Add(e.Mul(o.w[1], b1), e.Mul(e.Sub(e.C(1), b1), g)) : o.w[1];
  o.w[0] = e.Sub(o.w[0], e.Div(e.Mul(m, alpha), e.Add(e.Sqrt(v), eps)));
}
void Adam(Ew& e, Operands& o) { AdamCommon(e, o, /*amsgrad=*/false); }
void AdamWithAmsgrad(Ew& e, Operands& o) { AdamCommon(e, o, /*amsgrad=*/true); }

void AdaMax(Ew& e, Operands& o) {
  Instruction *b1p = o.in[0], *lr = o.in[1], *b1 = o.in[2], *b2 = o.in[3], *eps = o.in[4],
              *g = o.in[5];
  o.w[1] = e.Add(e.Mul(b1, o.w[1]), e.Mul(e.Sub(e.C(1), b1), g));
  o.w[2] = e.Max(e.Mul(b2, o.w[2]), e.Abs(g));
  o.w[0] = e.Sub(o.w[0], e.Mul(e.Div(lr, e.Sub(e.C(1), b1p)), e.Div(o.w[1], e.Add(o.w[2], eps))));
}

void Adagrad(Ew& e, Operands& o) {
  Instruction *lr = o.in[0], *g = o.in[1];
  if (o.update_slots) o.w[1] = e.Add(o.w[1], e.Square(g));
  o.w[0] = e.Sub(o.w[0], e.Mul(e.Mul(g, lr), e.Rsqrt(o.w[1])));
}

void AdagradV2(Ew& e, Operands& o) {
  Instruction *lr = o.in[0], *eps = o.in[1], *g = o.in[2];
  if (o.update_slots) o.w[1] = e.Add(o.w[1], e.Square(g));
  o.w[0] = e.Sub(o.w[0], e.Div(e.Mul(g, lr), e.Add(e.Sqrt(o.w[1]), eps)));
}

void ProximalAdagrad(Ew& e, Operands& o) {
  o.w[1] = e.Add(o.w[1], e.Square(o.in[3]));
  Instruction* lr = e.Mul(o.in[0], e.Rsqrt(o.w[1]));
  o.w[0] = Proximal(e, o.w[0], lr, o.in[1], o.in[2], o.in[3]);
}

void Adadelta(Ew& e, Operands& o) {
  Instruction *lr = o.in[0], *rho = o.in[1], *eps = o.in[2], *g = o.in[3];
  o.w[1] = e.Add(e.Mul(rho, o.w[1]), e.Mul(e.Sub(e.C(1), rho), e.Square(g)));
  Instruction* update = e.Mul(e.Mul(e.Sqrt(e.Add(o.w[2], eps)), e.Rsqrt(e.Add(o.w[1], eps))), g);
  o.w[2] = e.Add(e.Mul(rho, o.w[2]), e.Mul(e.Sub(e.C(1), rho), e.Square(update)));
  o.w[0] = e.Sub(o.w[0], e.Mul(update, lr));
}

// RMSProp (var, ms, mom) and CenteredRMSProp (var, mg, ms, mom).
void RmsPropCommon(Ew& e, Operands& o, bool centered) {
  Instruction *lr = o.in[0], *rho = o.in[1], *momentum = o.in[2], *eps = o.in[3], *g = o.in[4];
  const int ms = centered ? 2 : 1, mom = centered ? 3 : 2;
  o.w[ms] = e.Add(e.Mul(e.Square(g), e.Sub(e.C(1), rho)), e.Mul(o.w[ms], rho));
  Instruction* denom = e.Add(o.w[ms], eps);
  if (centered) {
    o.w[1] = e.Add(e.Mul(g, e.Sub(e.C(1), rho)), e.Mul(o.w[1], rho));
    denom = e.Add(e.Sub(o.w[ms], e.Square(o.w[1])), eps);
  }
  o.w[mom] = e.Add(e.Mul(o.w[mom], momentum), e.Mul(e.Mul(g, lr), e.Rsqrt(denom)));
  o.w[0] = e.Sub(o.w[0], o.w[mom]);
}
void RMSProp(Ew& e, Operands& o) { RmsPropCommon(e, o, /*centered=*/false); }
void CenteredRMSProp(Ew& e, Operands& o) { RmsPropCommon(e, o, /*centered=*/true); }

// Ftrl (grad, lr, l1, l2, lr_power) and FtrlV2 (..., l2_shrinkage, lr_power).
void FtrlCommon(Ew& e, Operands& o, bool shrinkage) {
  Instruction *g = o.in[0], *lr = o.in[1], *l1 = o.in[2], *l2 = o.in[3];
  Instruction* lr_power = o.in[shrinkage ? 5 : 4];
  Instruction* g_linear = g;
  if (shrinkage) g_linear = e.Add(g, e.Mul(e.Mul(e.C(2), o.in[4]), o.w[0]));
  Instruction* new_accum = e.Add(o.w[1], e.Square(g));
  Instruction* new_pow = e.Pow(new_accum, e.Neg(lr_power));
  Instruction* old_pow = e.Pow(o.w[1], e.Neg(lr_power));
  Instruction* quadratic;
  if (o.linear_by_lr) {
    o.w[2] = e.Sub(e.Add(o.w[2], e.Mul(g_linear, lr)), e.Mul(e.Sub(new_pow, old_pow), o.w[0]));
    l1 = e.Mul(l1, lr);
    quadratic = e.Add(new_pow, e.Mul(e.Mul(e.C(2), l2), lr));
  } else {
    o.w[2] = e.Sub(e.Add(o.w[2], g_linear), e.Mul(e.Div(e.Sub(new_pow, old_pow), lr), o.w[0]));
    quadratic = e.Add(e.Div(new_pow, lr), e.Mul(e.C(2), l2));
  }
  Instruction* clipped = e.Min(e.Max(o.w[2], e.Neg(l1)), l1);
  o.w[0] = e.Div(e.Sub(clipped, o.w[2]), quadratic);
  o.w[1] = new_accum;
}
void Ftrl(Ew& e, Operands& o) { FtrlCommon(e, o, /*shrinkage=*/false); }
void FtrlV2(Ew& e, Operands& o) { FtrlCommon(e, o, /*shrinkage=*/true); }

// AddSign: scale = alpha + decay; PowerSign: scale = exp(logbase * decay), where
// decay = sign_decay * sign(grad) * sign(m).
void SignCommon(Ew& e, Operands& o, bool power) {
  Instruction *lr = o.in[0], *base = o.in[1], *sign_decay = o.in[2], *beta = o.in[3], *g = o.in[4];
  o.w[1] = e.Add(e.Mul(o.w[1], beta), e.Mul(g, e.Sub(e.C(1), beta)));
  Instruction* decay = e.Mul(e.Mul(e.Sign(g), e.Sign(o.w[1])), sign_decay);
  Instruction* scale = power ? e.Exp(e.Mul(base, decay)) : e.Add(base, decay);
  o.w[0] = e.Sub(o.w[0], e.Mul(e.Mul(lr, scale), g));
}
void AddSign(Ew& e, Operands& o) { SignCommon(e, o, /*power=*/false); }
void PowerSign(Ew& e, Operands& o) { SignCommon(e, o, /*power=*/true); }

struct Optimizer {
  const char* op;
  int vars;
  int grad;  // input index of the gradient
  UpdateFn update;
};

constexpr Optimizer kOptimizers[] = {
    {"ResourceApplyAdaMax", 3, 8, AdaMax},
    {"ResourceApplyAdadelta", 3, 6, Adadelta},
    {"ResourceApplyAdagrad", 2, 3, Adagrad},
    {"ResourceApplyAdagradV2", 2, 4, AdagradV2},
    {"ResourceApplyAdam", 3, 9, Adam},
    {"ResourceApplyAdamWithAmsgrad", 4, 10, AdamWithAmsgrad},
    {"ResourceApplyAddSign", 2, 6, AddSign},
    {"ResourceApplyCenteredRMSProp", 4, 8, CenteredRMSProp},
    {"ResourceApplyFtrl", 3, 3, Ftrl},
    {"ResourceApplyFtrlV2", 3, 3, FtrlV2},
    {"ResourceApplyGradientDescent", 1, 2, GradientDescent},
    {"ResourceApplyKerasMomentum", 2, 3, KerasMomentum},
    {"ResourceApplyMomentum", 2, 3, Momentum},
    {"ResourceApplyPowerSign", 2, 6, PowerSign},
    {"ResourceApplyProximalAdagrad", 2, 5, ProximalAdagrad},
    {"ResourceApplyProximalGradientDescent", 1, 4, ProximalGradientDescent},
    {"ResourceApplyRMSProp", 3, 7, RMSProp},
};

const Optimizer* FindOptimizer(const std::string& op) {
  for (const Optimizer& o : kOptimizers) {
    if (op == o.op) return &o;
  }
  return nullptr;
}

absl::Status LowerResourceApply(LoweringContext& ctx, const tf::Node& node) {
  // The TF1 form (Apply*, reference-variable inputs, --autofix) updates as ResourceApply*.
  const bool ref = !absl::StartsWith(node.op(), "Resource");
  const Optimizer* opt = FindOptimizer(ref ? absl::StrCat("Resource", node.op()) : node.op());
  if (opt == nullptr) return Internal("node %s: no optimizer rule", node.DebugName());
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(node, "T"));
  TFJIT_ASSIGN_OR_RETURN(ResourceState * var, ctx.Resource(node, 0));
  if (var->value == nullptr) {
    if (ref) return FailedPrecondition("Attempting to use uninitialized value %s", var->name);
    return VariableNotFoundError(var->container, var->name);
  }
  Ew ew(ctx, dtype, var->value->shape().dims());
  TFJIT_ASSIGN_OR_RETURN(Operands ops, ReadOperands(ctx, node, opt->vars, opt->grad, dtype, ew));
  opt->update(ew, ops);
  TFJIT_RETURN_IF_ERROR(ew.status());
  for (int i = 0; i < opt->vars; ++i) {
    ops.vars[i]->value = ops.w[i];
    ops.vars[i]->written = true;
  }
  if (ref) ctx.AliasResource({const_cast<tf::Node*>(&node), 0}, node.input(0));  // var's reference
  return absl::OkStatus();
}

// tf2xla registers the updates for float types only (kFloatTypes).
bool FloatT(const tf::Node& node, std::string* why) {
  absl::StatusOr<DType> t = tf::GetTypeAttr(node, "T");
  if (t.ok() && IsFloatingDType(*t)) return true;
  *why = absl::StrCat("op ", node.op(), " is compiled for floating-point types only, not ",
                      t.ok() ? DTypeName(*t) : "its T");
  return false;
}

}  // namespace

void AppendOptimizersLowerings(std::vector<OpLowering>* table) {
  for (const Optimizer& o : kOptimizers) {
    OpLowering l{o.op, LowerResourceApply};
    l.can_lower = FloatT;
    l.takes_resource = true;
    table->push_back(l);
    // The TF1 reference form, "Apply*" (clustered only with --autofix).
    OpLowering r{o.op + std::strlen("Resource"), LowerResourceApply};
    r.can_lower = FloatT;
    table->push_back(r);
  }
}

int CompilableRefUpdateInputs(const std::string& op) {
  if (op == "Assign" || op == "AssignAdd" || op == "AssignSub") return 1;
  if (absl::StartsWith(op, "Apply")) {
    if (const Optimizer* o = FindOptimizer(absl::StrCat("Resource", op))) return o->vars;
  }
  return 0;
}

}  // namespace tfjit::tf2hlo
