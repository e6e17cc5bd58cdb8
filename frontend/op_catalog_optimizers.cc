// Catalog entries of the optimizers ops (docs/DESIGN.md, "Op families"): TF's arg names, type
// attrs, allowed dtypes and attr defaults (from TF's op registry), compile-time-constant and
// host-memory inputs, statefulness. Also the TF1 training graphs' state ops that have no other
// home yet (Variable, SaveV2, RestoreV2, MergeV2Checkpoints), filed under family "state".
#include <string>

#include "frontend/op_catalog_builder.h"

namespace tfjit::tf::catalog {
namespace {

// One dense optimizer: its name without the "Resource" prefix, the variables it updates (TF's
// Ref(T) inputs, resource handles in the Resource* form) and its other inputs in TF's order.
struct Optimizer {
  const char* name;
  std::vector<const char*> vars;
  std::vector<const char*> inputs;
  bool nesterov = false;      // has use_nesterov
  bool update_slots = false;  // has update_slots (Adagrad)
  bool linear_by_lr = false;  // has multiply_linear_by_lr (Ftrl)
  bool ref_form = true;       // TF also registers Apply<name> (the TF1 ref form)
};

std::vector<Optimizer> Optimizers() {
  Optimizer keras{"KerasMomentum", {"var", "accum"}, {"lr", "grad", "momentum"}};
  keras.nesterov = true;
  keras.ref_form = false;
  Optimizer momentum{"Momentum", {"var", "accum"}, {"lr", "grad", "momentum"}};
  momentum.nesterov = true;
  Optimizer adam{"Adam",
                 {"var", "m", "v"},
                 {"beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"}};
  adam.nesterov = true;
  Optimizer amsgrad{"AdamWithAmsgrad",
                    {"var", "m", "v", "vhat"},
                    {"beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"}};
  amsgrad.ref_form = false;
  Optimizer adagrad{"Adagrad", {"var", "accum"}, {"lr", "grad"}};
  adagrad.update_slots = true;
  Optimizer adagrad2{"AdagradV2", {"var", "accum"}, {"lr", "epsilon", "grad"}};
  adagrad2.update_slots = true;
  Optimizer ftrl{"Ftrl", {"var", "accum", "linear"}, {"grad", "lr", "l1", "l2", "lr_power"}};
  ftrl.linear_by_lr = true;
  Optimizer ftrl2{
      "FtrlV2", {"var", "accum", "linear"}, {"grad", "lr", "l1", "l2", "l2_shrinkage", "lr_power"}};
  ftrl2.linear_by_lr = true;
  return {
      {"GradientDescent", {"var"}, {"alpha", "delta"}},
      {"ProximalGradientDescent", {"var"}, {"alpha", "l1", "l2", "delta"}},
      momentum,
      keras,
      adam,
      amsgrad,
      {"AdaMax", {"var", "m", "v"}, {"beta1_power", "lr", "beta1", "beta2", "epsilon", "grad"}},
      adagrad,
      adagrad2,
      {"ProximalAdagrad", {"var", "accum"}, {"lr", "l1", "l2", "grad"}},
      {"Adadelta", {"var", "accum", "accum_update"}, {"lr", "rho", "epsilon", "grad"}},
      {"RMSProp", {"var", "ms", "mom"}, {"lr", "rho", "momentum", "epsilon", "grad"}},
      {"CenteredRMSProp", {"var", "mg", "ms", "mom"}, {"lr", "rho", "momentum", "epsilon", "grad"}},
      ftrl,
      ftrl2,
      {"AddSign", {"var", "m"}, {"lr", "alpha", "sign_decay", "beta", "grad"}},
      {"PowerSign", {"var", "m"}, {"lr", "logbase", "sign_decay", "beta", "grad"}},
  };
}

OpDef OptimizerDef(const Optimizer& o, bool resource) {
  const std::string name = std::string(resource ? "ResourceApply" : "Apply") + o.name;
  Op op(name.c_str());
  for (const char* v : o.vars) op.In(std::string(v) + (resource ? ": resource" : ": T"));
  for (const char* in : o.inputs) op.In(std::string(in) + ": T");
  if (!resource) op.Out("out: T");  // TF's Ref(T): the variable itself
  op.Types("T", RealTypes()).Attr("use_locking", B(false));
  if (o.nesterov) op.Attr("use_nesterov", B(false));
  if (o.update_slots) op.Attr("update_slots", B(true));
  if (o.linear_by_lr) op.Attr("multiply_linear_by_lr", B(false));
  return op.Stateful().Build();
}

// TF1's checkpoint ops and the pre-V2 reference variable: family "state".
void AddTrainingStateOps(std::vector<OpDef>* ops) {
  std::vector<OpDef> state;
  state.push_back(Op("Variable")
                      .Out("ref: dtype")
                      .Attr("container", S(""))
                      .Attr("shared_name", S(""))
                      .Stateful()
                      .Build());
  state.push_back(Op("SaveV2")
                      .In("prefix: string")
                      .In("tensor_names: string")
                      .In("shape_and_slices: string")
                      .In("tensors: [dtypes]")
                      .Stateful()
                      .Build());
  state.push_back(Op("RestoreV2")
                      .In("prefix: string")
                      .In("tensor_names: string")
                      .In("shape_and_slices: string")
                      .Out("tensors: [dtypes]")
                      .Stateful()
                      .Build());
  state.push_back(Op("MergeV2Checkpoints")
                      .In("checkpoint_prefixes: string")
                      .In("destination_prefix: string")
                      .Attr("delete_old_dirs", B(true))
                      .Attr("allow_missing_files", B(false))
                      .Stateful()
                      .Build());
  for (OpDef& op : state) {
    op.family = "state";
    ops->push_back(std::move(op));
  }
}

}  // namespace

void AddOptimizersOps(std::vector<OpDef>* ops) {
  for (const Optimizer& o : Optimizers()) {
    if (o.ref_form) ops->push_back(OptimizerDef(o, /*resource=*/false));
    ops->push_back(OptimizerDef(o, /*resource=*/true));
  }
  AddTrainingStateOps(ops);
}

}  // namespace tfjit::tf::catalog
