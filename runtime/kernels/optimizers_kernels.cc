// Fallback kernels of the optimizers ops (docs/DESIGN.md, "Op families"), with TF's CPU
// semantics, dtypes and error messages: the dense Apply* updates of TF1 reference variables and
// their ResourceApply* twins on resource variables. One elementwise update rule per optimizer
// serves both forms; 16-bit floats are computed in float and rounded once per stored value.
#include <algorithm>
#include <array>
#include <cmath>
#include <mutex>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "frontend/attr.h"
#include "frontend/op_catalog.h"
#include "runtime/kernels/kernel_util.h"
#include "runtime/resource_mgr.h"

namespace tfjit::runtime {
namespace {

// Attrs that change an update rule.
struct Flags {
  bool nesterov = false;
  bool update_slots = true;
  bool linear_by_lr = false;
};

template <typename C>
C Sign(C x) {
  return x > C(0) ? C(1) : (x < C(0) ? C(-1) : C(0));
}

// Each rule: the op's name without "Apply"/"ResourceApply", how many leading inputs are the
// variables it updates, its other inputs in TF's order (one of them the gradient, "grad" or
// "delta"; the rest are scalars), and Update(w, g, s, flags), which rewrites the variables'
// values w[] of one element from the gradient g and the scalars s[] (in input order).
struct GradientDescent {
  static constexpr const char* kName = "GradientDescent";
  static constexpr int kVars = 1;
  static constexpr std::array<const char*, 2> kInputs = {"alpha", "delta"};
  template <typename C>
  static void Update(C* w, C g, const C* s, const Flags&) {
    w[0] -= s[0] * g;
  }
};

// The proximal step shared by ProximalGradientDescent and ProximalAdagrad (FOBOS).
template <typename C>
C Proximal(C var, C lr, C l1, C l2, C g) {
  const C prox = var - lr * g;
  if (l1 > C(0)) return Sign(prox) * std::max(std::abs(prox) - lr * l1, C(0)) / (C(1) + lr * l2);
  return prox / (C(1) + lr * l2);
}

struct ProximalGradientDescent {
  static constexpr const char* kName = "ProximalGradientDescent";
  static constexpr int kVars = 1;
  static constexpr std::array<const char*, 4> kInputs = {"alpha", "l1", "l2", "delta"};
  template <typename C>
  static void Update(C* w, C g, const C* s, const Flags&) {
    w[0] = Proximal(w[0], s[0], s[1], s[2], g);
  }
};

struct Momentum {
  static constexpr const char* kName = "Momentum";
  static constexpr int kVars = 2;
  static constexpr std::array<const char*, 3> kInputs = {"lr", "grad", "momentum"};
  template <typename C>
  static void Update(C* w, C g, const C* s, const Flags& f) {
    const C lr = s[0], momentum = s[1];
    w[1] = w[1] * momentum + g;
    w[0] -= f.nesterov ? g * lr + w[1] * momentum * lr : w[1] * lr;
  }
};

struct KerasMomentum {
  static constexpr const char* kName = "KerasMomentum";
  static constexpr int kVars = 2;
  static constexpr std::array<const char*, 3> kInputs = {"lr", "grad", "momentum"};
  template <typename C>
  static void Update(C* w, C g, const C* s, const Flags& f) {
    const C lr = s[0], momentum = s[1];
    w[1] = w[1] * momentum - g * lr;
    w[0] += f.nesterov ? w[1] * momentum - g * lr : w[1];
  }
};

struct Adam {
  static constexpr const char* kName = "Adam";
  static constexpr int kVars = 3;
  static constexpr std::array<const char*, 7> kInputs = {
      "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"};
  template <typename C>
  static void Update(C* w, C g, const C* s, const Flags& f) {
    const C b1p = s[0], b2p = s[1], lr = s[2], b1 = s[3], b2 = s[4], eps = s[5];
    const C alpha = lr * std::sqrt(C(1) - b2p) / (C(1) - b1p);
    w[1] += (g - w[1]) * (C(1) - b1);
    w[2] += (g * g - w[2]) * (C(1) - b2);
    const C m = f.nesterov ? g * (C(1) - b1) + b1 * w[1] : w[1];
    w[0] -= m * alpha / (std::sqrt(w[2]) + eps);
  }
};

struct AdamWithAmsgrad {
  static constexpr const char* kName = "AdamWithAmsgrad";
  static constexpr int kVars = 4;
  static constexpr std::array<const char*, 7> kInputs = {
      "beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"};
  template <typename C>
  static void Update(C* w, C g, const C* s, const Flags&) {
    const C b1p = s[0], b2p = s[1], lr = s[2], b1 = s[3], b2 = s[4], eps = s[5];
    const C alpha = lr * std::sqrt(C(1) - b2p) / (C(1) - b1p);
    w[1] += (g - w[1]) * (C(1) - b1);
    w[2] += (g * g - w[2]) * (C(1) - b2);
    w[3] = std::max(w[3], w[2]);
    w[0] -= w[1] * alpha / (std::sqrt(w[3]) + eps);
  }
};

struct AdaMax {
  static constexpr const char* kName = "AdaMax";
  static constexpr int kVars = 3;
  static constexpr std::array<const char*, 6> kInputs = {"beta1_power", "lr",      "beta1",
                                                         "beta2",       "epsilon", "grad"};
  template <typename C>
  static void Update(C* w, C g, const C* s, const Flags&) {
    const C b1p = s[0], lr = s[1], b1 = s[2], b2 = s[3], eps = s[4];
    w[1] += (g - w[1]) * (C(1) - b1);
    w[2] = std::max(b2 * w[2], std::abs(g));
    w[0] -= lr / (C(1) - b1p) * (w[1] / (w[2] + eps));
  }
};

struct Adagrad {
  static constexpr const char* kName = "Adagrad";
  static constexpr int kVars = 2;
  static constexpr std::array<const char*, 2> kInputs = {"lr", "grad"};
  template <typename C>
  static void Update(C* w, C g, const C* s, const Flags& f) {
    if (f.update_slots) w[1] += g * g;
    w[0] -= s[0] * g / std::sqrt(w[1]);
  }
};

struct AdagradV2 {
  static constexpr const char* kName = "AdagradV2";
  static constexpr int kVars = 2;
  static constexpr std::array<const char*, 3> kInputs = {"lr", "epsilon", "grad"};
  template <typename C>
  static void Update(C* w, C g, const C* s, const Flags& f) {
    if (f.update_slots) w[1] += g * g;
    w[0] -= s[0] * g / (std::sqrt(w[1]) + s[1]);
  }
};

struct ProximalAdagrad {
  static constexpr const char* kName = "ProximalAdagrad";
  static constexpr int kVars = 2;
  static constexpr std::array<const char*, 4> kInputs = {"lr", "l1", "l2", "grad"};
  template <typename C>
  static void Update(C* w, C g, const C* s, const Flags&) {
    w[1] += g * g;
    w[0] = Proximal(w[0], s[0] / std::sqrt(w[1]), s[1], s[2], g);
  }
};

struct Adadelta {
  static constexpr const char* kName = "Adadelta";
  static constexpr int kVars = 3;
  static constexpr std::array<const char*, 4> kInputs = {"lr", "rho", "epsilon", "grad"};
  template <typename C>
  static void Update(C* w, C g, const C* s, const Flags&) {
    const C lr = s[0], rho = s[1], eps = s[2];
    w[1] = w[1] * rho + g * g * (C(1) - rho);
    const C update = std::sqrt(w[2] + eps) / std::sqrt(w[1] + eps) * g;
    w[0] -= update * lr;
    w[2] = w[2] * rho + update * update * (C(1) - rho);
  }
};

struct RMSProp {
  static constexpr const char* kName = "RMSProp";
  static constexpr int kVars = 3;  // var, ms, mom
  static constexpr std::array<const char*, 5> kInputs = {"lr", "rho", "momentum", "epsilon",
                                                         "grad"};
  template <typename C>
  static void Update(C* w, C g, const C* s, const Flags&) {
    const C lr = s[0], rho = s[1], momentum = s[2], eps = s[3];
    w[1] += (g * g - w[1]) * (C(1) - rho);
    w[2] = w[2] * momentum + lr * g / std::sqrt(w[1] + eps);
    w[0] -= w[2];
  }
};

struct CenteredRMSProp {
  static constexpr const char* kName = "CenteredRMSProp";
  static constexpr int kVars = 4;  // var, mg, ms, mom
  static constexpr std::array<const char*, 5> kInputs = {"lr", "rho", "momentum", "epsilon",
                                                         "grad"};
  template <typename C>
  static void Update(C* w, C g, const C* s, const Flags&) {
    const C lr = s[0], rho = s[1], momentum = s[2], eps = s[3];
    w[2] += (g * g - w[2]) * (C(1) - rho);
    w[1] += (g - w[1]) * (C(1) - rho);
    w[3] = w[3] * momentum + lr * g / std::sqrt(w[2] - w[1] * w[1] + eps);
    w[0] -= w[3];
  }
};

// FTRL-proximal; with l2_shrinkage (FtrlV2) the linear term sees grad + 2 * l2_shrinkage * var.
template <typename C>
void FtrlUpdate(C* w, C g, C lr, C l1, C l2, C shrinkage, C lr_power, const Flags& f) {
  const C g_linear = g + C(2) * shrinkage * w[0];
  const C new_accum = w[1] + g * g;
  const C new_pow = lr_power == C(-0.5) ? std::sqrt(new_accum) : std::pow(new_accum, -lr_power);
  const C old_pow = lr_power == C(-0.5) ? std::sqrt(w[1]) : std::pow(w[1], -lr_power);
  if (f.linear_by_lr) {
    w[2] += g_linear * lr - (new_pow - old_pow) * w[0];
    const C l1_lr = l1 * lr;
    const C quadratic = new_pow + C(2) * l2 * lr;
    w[0] = std::abs(w[2]) > l1_lr ? (l1_lr * Sign(w[2]) - w[2]) / quadratic : C(0);
  } else {
    w[2] += g_linear - (new_pow - old_pow) / lr * w[0];
    const C quadratic = new_pow / lr + C(2) * l2;
    w[0] = std::abs(w[2]) > l1 ? (l1 * Sign(w[2]) - w[2]) / quadratic : C(0);
  }
  w[1] = new_accum;
}

struct Ftrl {
  static constexpr const char* kName = "Ftrl";
  static constexpr int kVars = 3;
  static constexpr std::array<const char*, 5> kInputs = {"grad", "lr", "l1", "l2", "lr_power"};
  template <typename C>
  static void Update(C* w, C g, const C* s, const Flags& f) {
    FtrlUpdate(w, g, s[0], s[1], s[2], C(0), s[3], f);
  }
};

struct FtrlV2 {
  static constexpr const char* kName = "FtrlV2";
  static constexpr int kVars = 3;
  static constexpr std::array<const char*, 6> kInputs = {"grad", "lr",           "l1",
                                                         "l2",   "l2_shrinkage", "lr_power"};
  template <typename C>
  static void Update(C* w, C g, const C* s, const Flags& f) {
    FtrlUpdate(w, g, s[0], s[1], s[2], s[3], s[4], f);
  }
};

struct AddSign {
  static constexpr const char* kName = "AddSign";
  static constexpr int kVars = 2;
  static constexpr std::array<const char*, 5> kInputs = {"lr", "alpha", "sign_decay", "beta",
                                                         "grad"};
  template <typename C>
  static void Update(C* w, C g, const C* s, const Flags&) {
    const C lr = s[0], alpha = s[1], decay = s[2], beta = s[3];
    w[1] = w[1] * beta + g * (C(1) - beta);
    w[0] -= lr * (alpha + decay * Sign(g) * Sign(w[1])) * g;
  }
};

struct PowerSign {
  static constexpr const char* kName = "PowerSign";
  static constexpr int kVars = 2;
  static constexpr std::array<const char*, 5> kInputs = {"lr", "logbase", "sign_decay", "beta",
                                                         "grad"};
  template <typename C>
  static void Update(C* w, C g, const C* s, const Flags&) {
    const C lr = s[0], logbase = s[1], decay = s[2], beta = s[3];
    w[1] = w[1] * beta + g * (C(1) - beta);
    w[0] -= lr * std::exp(logbase * decay * Sign(g) * Sign(w[1])) * g;
  }
};

// The variables of one Apply* node, locked for its update.
struct Vars {
  std::vector<Var*> vars;
  std::vector<std::string> names;
  std::vector<const ResourceHandle*> handles;  // resource form only
};

// TF names the variable inputs of the shape messages by their arg names.
std::string ArgName(const KernelContext& ctx, int i) {
  const tf::OpDef* def = ctx.node().op_def();
  if (def != nullptr && i < static_cast<int>(def->inputs.size())) return def->inputs[i].name;
  return absl::StrCat("input ", i);
}

absl::StatusOr<Vars> GetVars(const KernelContext& ctx, int n, bool resource) {
  Vars v;
  for (int i = 0; i < n; ++i) {
    if (resource) {
      absl::StatusOr<const ResourceHandle*> h =
          GetResourceHandle(ctx.input(i), absl::StrCat("input ", i, " (", ArgName(ctx, i), ")"));
      if (!h.ok()) return NodeError(ctx, h.status().message());
      v.vars.push_back((*h)->var());
      v.names.push_back((*h)->name());
      v.handles.push_back(*h);
    } else {
      const VarRef* ref = ctx.input(i).object_as<VarRef>();
      if (ref == nullptr) {
        return KernelError(ctx,
                           "input %d (%s) must be a variable reference (a VariableV2 "
                           "output)",
                           i, ArgName(ctx, i));
      }
      v.vars.push_back(ref->var());
      v.names.push_back(ref->name());
    }
  }
  return v;
}

// Checks dtypes and shapes the way TF's CPU kernels do; `values` are the variables' values.
absl::Status CheckOperands(const KernelContext& ctx, const Vars& v,
                           const std::vector<Tensor>& values, int num_vars, int grad, DType dtype) {
  for (int i = 0; i < num_vars; ++i) {
    if (v.vars[i]->dtype() != dtype) {
      return NodeError(ctx, absl::StrCat("Variable and value dtypes don't match; respectively, ",
                                         DTypeName(v.vars[i]->dtype()), " and ", DTypeName(dtype)));
    }
    if (!values[i].valid()) {
      if (!v.handles.empty()) {
        return VariableNotFoundError(v.handles[i]->container(), v.handles[i]->name());
      }
      return FailedPrecondition("Attempting to use uninitialized value %s", v.names[i]);
    }
    if (i > 0 && values[i].dims() != values[0].dims()) {
      return NodeError(
          ctx, absl::StrCat("var and ", ArgName(ctx, i), " do not have the same shape",
                            DimsString(values[0].dims()), " ", DimsString(values[i].dims())));
    }
  }
  for (int i = num_vars; i < ctx.num_inputs(); ++i) {
    const Tensor& t = ctx.input(i);
    if (t.dtype() != dtype) {
      return KernelError(ctx, "input %d (%s) is %s, expected %s", i, ArgName(ctx, i),
                         DTypeName(t.dtype()), DTypeName(dtype));
    }
    if (i == grad) {
      if (t.dims() != values[0].dims()) {
        return NodeError(ctx,
                         absl::StrCat("var and ", ArgName(ctx, i), " do not have the same shape",
                                      DimsString(values[0].dims()), " ", DimsString(t.dims())));
      }
    } else if (t.rank() != 0) {
      return NodeError(ctx,
                       absl::StrCat(ArgName(ctx, i), " is not a scalar: ", DimsString(t.dims())));
    }
  }
  return absl::OkStatus();
}

template <typename Opt, typename T>
void Compute(const KernelContext& ctx, const std::vector<Tensor>& in, std::vector<Tensor>* out,
             int grad, const Flags& flags) {
  using C = ComputeType<T>;
  constexpr int kN = Opt::kVars;
  std::array<C, Opt::kInputs.size()> scalars{};
  int k = 0;
  for (int i = kN; i < ctx.num_inputs(); ++i) {
    if (i != grad) scalars[k++] = static_cast<C>(ctx.input(i).data<T>()[0]);
  }
  std::array<const T*, kN> src;
  std::array<T*, kN> dst;
  for (int j = 0; j < kN; ++j) {
    (*out)[j] = Tensor::Uninitialized(in[j].dtype(), in[j].dims());
    src[j] = in[j].data<T>();
    dst[j] = (*out)[j].template data<T>();
  }
  const T* g = ctx.input(grad).data<T>();
  ParallelFor(ctx, in[0].num_elements(), 40, [&](int64_t begin, int64_t end) {
    for (int64_t e = begin; e < end; ++e) {
      C w[kN];
      for (int j = 0; j < kN; ++j) w[j] = static_cast<C>(src[j][e]);
      Opt::template Update<C>(w, static_cast<C>(g[e]), scalars.data(), flags);
      for (int j = 0; j < kN; ++j) dst[j][e] = static_cast<T>(w[j]);
    }
  });
}

Flags ReadFlags(const tf::Node& node) {
  Flags f;
  f.nesterov = tf::GetBoolAttrOr(node, "use_nesterov", false).value_or(false);
  f.update_slots = tf::GetBoolAttrOr(node, "update_slots", true).value_or(true);
  f.linear_by_lr = tf::GetBoolAttrOr(node, "multiply_linear_by_lr", false).value_or(false);
  return f;
}

// TF's CPU Ftrl kernels also check the hyperparameters' values (its XLA kernel does not).
template <typename Opt>
absl::Status CheckFtrlScalars(const KernelContext& ctx, DType dtype, const Flags& flags) {
  if constexpr (std::is_same_v<Opt, Ftrl> || std::is_same_v<Opt, FtrlV2>) {
    auto value = [&](int i) {
      double v = 0;
      DispatchFloat(
          dtype, [&](auto tag) { v = static_cast<double>(ctx.input(i).data<decltype(tag)>()[0]); });
      return v;
    };
    const bool v2 = std::is_same_v<Opt, FtrlV2>;
    const double lr = value(4);
    if (!(lr > 0 || (flags.linear_by_lr && lr == 0))) {
      return KernelError(ctx, "lr is not a positive scalar: %s", DimsString(ctx.input(4).dims()));
    }
    if (!(value(5) >= 0)) {
      return KernelError(ctx, "l1 regularization strength is not a non-negative scalar: %s",
                         DimsString(ctx.input(5).dims()));
    }
    if (!(value(6) >= 0)) {
      return KernelError(ctx, "l2 regularization strength is not a non-negative scalar: %s",
                         DimsString(ctx.input(6).dims()));
    }
    if (v2 && !(value(7) >= 0)) {
      return KernelError(ctx,
                         "l2 shrinkage regularization strength is not a non-negative "
                         "scalar: %s",
                         DimsString(ctx.input(7).dims()));
    }
    const int power = v2 ? 8 : 7;
    if (!(value(power) <= 0)) {
      return KernelError(ctx, "lr_power is not a non-positive scalar: %s",
                         DimsString(ctx.input(power).dims()));
    }
  }
  return absl::OkStatus();
}

template <typename Opt>
int GradIndex() {
  for (int i = 0; i < static_cast<int>(Opt::kInputs.size()); ++i) {
    const std::string name = Opt::kInputs[i];
    if (name == "grad" || name == "delta") return Opt::kVars + i;
  }
  return -1;
}

// Apply<Opt> (resource = false: Ref(T) inputs, the variable as output) or
// ResourceApply<Opt>. The variables are read, updated and installed under their update locks
// (taken in address order), whatever use_locking says: a racing update would otherwise be lost.
template <typename Opt, bool kResource>
absl::Status ApplyKernel(KernelContext& ctx) {
  constexpr int kN = Opt::kVars;
  TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, kN + static_cast<int>(Opt::kInputs.size())));
  TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(ctx.node(), "T"));
  TFJIT_ASSIGN_OR_RETURN(Vars v, GetVars(ctx, kN, kResource));
  std::vector<std::mutex*> mus;
  for (Var* var : v.vars) mus.push_back(&var->update_mu());
  std::sort(mus.begin(), mus.end());
  mus.erase(std::unique(mus.begin(), mus.end()), mus.end());
  std::vector<std::unique_lock<std::mutex>> locks;
  for (std::mutex* mu : mus) locks.emplace_back(*mu);
  std::vector<Tensor> values;
  for (Var* var : v.vars) values.push_back(var->Get());
  const int grad = GradIndex<Opt>();
  TFJIT_RETURN_IF_ERROR(CheckOperands(ctx, v, values, kN, grad, dtype));
  std::vector<Tensor> updated(kN);
  const Flags flags = ReadFlags(ctx.node());
  if (IsFloatingDType(dtype)) TFJIT_RETURN_IF_ERROR(CheckFtrlScalars<Opt>(ctx, dtype, flags));
  const bool ok = DispatchFloat(
      dtype, [&](auto tag) { Compute<Opt, decltype(tag)>(ctx, values, &updated, grad, flags); });
  if (!ok) return UnsupportedDType(ctx, dtype, "half, bfloat16, float, double");
  for (int j = 0; j < kN; ++j) v.vars[j]->Set(updated[j]);
  if constexpr (!kResource) ctx.set_output(0, ctx.input(0));  // TF's out: the variable's ref
  return absl::OkStatus();
}

template <typename Opt>
void RegisterBoth(KernelRegistry& registry, bool ref_form = true) {
  if (ref_form) registry.Register(absl::StrCat("Apply", Opt::kName), ApplyKernel<Opt, false>);
  registry.Register(absl::StrCat("ResourceApply", Opt::kName), ApplyKernel<Opt, true>);
}

// The number of leading variable (Ref) inputs of each ref-form optimizer.
struct RefArity {
  const char* op;
  int vars;
};
constexpr RefArity kRefOptimizers[] = {
    {"ApplyGradientDescent", 1}, {"ApplyProximalGradientDescent", 1},
    {"ApplyMomentum", 2},        {"ApplyAdam", 3},
    {"ApplyAdaMax", 3},          {"ApplyAdagrad", 2},
    {"ApplyAdagradV2", 2},       {"ApplyProximalAdagrad", 2},
    {"ApplyAdadelta", 3},        {"ApplyRMSProp", 3},
    {"ApplyCenteredRMSProp", 4}, {"ApplyFtrl", 3},
    {"ApplyFtrlV2", 3},          {"ApplyAddSign", 2},
    {"ApplyPowerSign", 2},
};

}  // namespace

int OptimizerRefInputs(absl::string_view op) {
  for (const RefArity& r : kRefOptimizers) {
    if (op == r.op) return r.vars;
  }
  return 0;
}

void RegisterOptimizersKernels(KernelRegistry& registry) {
  RegisterBoth<GradientDescent>(registry);
  RegisterBoth<ProximalGradientDescent>(registry);
  RegisterBoth<Momentum>(registry);
  RegisterBoth<KerasMomentum>(registry, /*ref_form=*/false);
  RegisterBoth<Adam>(registry);
  RegisterBoth<AdamWithAmsgrad>(registry, /*ref_form=*/false);
  RegisterBoth<AdaMax>(registry);
  RegisterBoth<Adagrad>(registry);
  RegisterBoth<AdagradV2>(registry);
  RegisterBoth<ProximalAdagrad>(registry);
  RegisterBoth<Adadelta>(registry);
  RegisterBoth<RMSProp>(registry);
  RegisterBoth<CenteredRMSProp>(registry);
  RegisterBoth<Ftrl>(registry);
  RegisterBoth<FtrlV2>(registry);
  RegisterBoth<AddSign>(registry);
  RegisterBoth<PowerSign>(registry);
}

}  // namespace tfjit::runtime
