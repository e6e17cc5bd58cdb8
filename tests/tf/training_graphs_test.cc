// Training through the Session: the optimizer updates (Apply* on TF1 reference variables,
// ResourceApply* on resource variables) on small hand-made graphs against hand-written update
// formulas, the compiled ResourceApply* against its kernel, and TF-written training graphs
// (shared/data/training) trained with --jit none and auto, step by step against a closed-form
// simulation or each other.
#include <cmath>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/status.h"
#include "core/string_tensor.h"
#include "frontend/proto/graph.pb.h"
#include "frontend/tensor_bundle.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

using ::tfjit::testing::WriteTempFile;
using Scalars = std::map<std::string, double>;
// One element's variables (var first, then the slots in TF's order), updated in place.
using RefUpdate = std::function<void(std::vector<double>& w, double g, const Scalars& s)>;

double Sgn(double x) { return x > 0 ? 1 : (x < 0 ? -1 : 0); }

// One optimizer: TF's variable and input names, the scalar inputs' values, bool attrs, and an
// update written from the algorithm's definition (independent of the kernel's code).
struct OptCase {
  std::string name;                 // the op is "Apply" / "ResourceApply" + name
  std::vector<std::string> vars;    // TF's variable args, var first
  std::vector<std::string> inputs;  // TF's other args in order; "grad"/"delta" is fed
  Scalars scalars;
  std::map<std::string, bool> attrs;
  bool ref_form = true;  // TF also has Apply<name>
  RefUpdate update;
  std::string label;  // test label (name plus attrs)
};

// gtest prints a case by its label.
void PrintTo(const OptCase& c, std::ostream* os) { *os << c.label; }

void Adam(std::vector<double>& w, double g, const Scalars& s, bool nesterov, bool amsgrad) {
  const double b1 = s.at("beta1"), b2 = s.at("beta2");
  const double lr_t = s.at("lr") * std::sqrt(1 - s.at("beta2_power")) / (1 - s.at("beta1_power"));
  w[1] = b1 * w[1] + (1 - b1) * g;
  w[2] = b2 * w[2] + (1 - b2) * g * g;
  double v = w[2];
  if (amsgrad) v = w[3] = std::max(w[3], w[2]);
  const double m = nesterov ? b1 * w[1] + (1 - b1) * g : w[1];
  w[0] -= lr_t * m / (std::sqrt(v) + s.at("epsilon"));
}

// FOBOS: the proximal step of l1/l2 regularisation after a gradient step of size lr.
double Fobos(double var, double lr, double l1, double l2, double g) {
  const double x = var - lr * g;
  return Sgn(x) * std::max(std::abs(x) - lr * l1, 0.0) / (1 + lr * l2);
}

void Ftrl(std::vector<double>& w, double g, const Scalars& s, bool by_lr) {
  const double lr = s.at("lr"), l1 = s.at("l1"), l2 = s.at("l2"), p = -s.at("lr_power");
  const double shrink = s.count("l2_shrinkage") ? s.at("l2_shrinkage") : 0.0;
  const double gs = g + 2 * shrink * w[0];
  const double n1 = w[1] + g * g;
  const double sigma = std::pow(n1, p) - std::pow(w[1], p);
  if (by_lr) {
    w[2] += gs * lr - sigma * w[0];
    const double z = w[2];
    w[0] = std::abs(z) <= l1 * lr ? 0.0 : -(z - Sgn(z) * l1 * lr) / (std::pow(n1, p) + 2 * l2 * lr);
  } else {
    w[2] += gs - sigma / lr * w[0];
    const double z = w[2];
    w[0] = std::abs(z) <= l1 ? 0.0 : -(z - Sgn(z) * l1) / (std::pow(n1, p) / lr + 2 * l2);
  }
  w[1] = n1;
}

std::vector<OptCase> Cases() {
  std::vector<OptCase> c;
  auto add = [&](OptCase o) {
    o.label = o.name;
    for (const auto& [k, v] : o.attrs) {
      if (v) absl::StrAppend(&o.label, "_", k);
    }
    c.push_back(std::move(o));
  };
  add({"GradientDescent",
       {"var"},
       {"alpha", "delta"},
       {{"alpha", 0.3}},
       {},
       true,
       [](auto& w, double g, const Scalars& s) { w[0] -= s.at("alpha") * g; }});
  add({"ProximalGradientDescent",
       {"var"},
       {"alpha", "l1", "l2", "delta"},
       {{"alpha", 0.3}, {"l1", 0.05}, {"l2", 0.1}},
       {},
       true,
       [](auto& w, double g, const Scalars& s) {
         w[0] = Fobos(w[0], s.at("alpha"), s.at("l1"), s.at("l2"), g);
       }});
  for (bool nesterov : {false, true}) {
    add({"Momentum",
         {"var", "accum"},
         {"lr", "grad", "momentum"},
         {{"lr", 0.1}, {"momentum", 0.9}},
         {{"use_nesterov", nesterov}},
         true,
         [nesterov](auto& w, double g, const Scalars& s) {
           const double lr = s.at("lr"), mu = s.at("momentum");
           w[1] = mu * w[1] + g;
           w[0] -= nesterov ? lr * (g + mu * w[1]) : lr * w[1];
         }});
    add({"KerasMomentum",
         {"var", "accum"},
         {"lr", "grad", "momentum"},
         {{"lr", 0.1}, {"momentum", 0.9}},
         {{"use_nesterov", nesterov}},
         false,
         [nesterov](auto& w, double g, const Scalars& s) {
           const double lr = s.at("lr"), mu = s.at("momentum");
           w[1] = mu * w[1] - lr * g;
           w[0] += nesterov ? mu * w[1] - lr * g : w[1];
         }});
    add({"Adam",
         {"var", "m", "v"},
         {"beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"},
         {{"beta1_power", 0.81},
          {"beta2_power", 0.998},
          {"lr", 0.01},
          {"beta1", 0.9},
          {"beta2", 0.999},
          {"epsilon", 1e-7}},
         {{"use_nesterov", nesterov}},
         true,
         [nesterov](auto& w, double g, const Scalars& s) { Adam(w, g, s, nesterov, false); }});
  }
  add({"AdamWithAmsgrad",
       {"var", "m", "v", "vhat"},
       {"beta1_power", "beta2_power", "lr", "beta1", "beta2", "epsilon", "grad"},
       {{"beta1_power", 0.81},
        {"beta2_power", 0.998},
        {"lr", 0.01},
        {"beta1", 0.9},
        {"beta2", 0.999},
        {"epsilon", 1e-7}},
       {},
       false,
       [](auto& w, double g, const Scalars& s) { Adam(w, g, s, false, true); }});
  add({"AdaMax",
       {"var", "m", "v"},
       {"beta1_power", "lr", "beta1", "beta2", "epsilon", "grad"},
       {{"beta1_power", 0.81}, {"lr", 0.01}, {"beta1", 0.9}, {"beta2", 0.999}, {"epsilon", 1e-7}},
       {},
       true,
       [](auto& w, double g, const Scalars& s) {
         const double b1 = s.at("beta1");
         w[1] = b1 * w[1] + (1 - b1) * g;
         w[2] = std::max(s.at("beta2") * w[2], std::abs(g));
         w[0] -= s.at("lr") / (1 - s.at("beta1_power")) * w[1] / (w[2] + s.at("epsilon"));
       }});
  for (bool update_slots : {true, false}) {
    add({"Adagrad",
         {"var", "accum"},
         {"lr", "grad"},
         {{"lr", 0.1}},
         {{"update_slots", update_slots}},
         true,
         [update_slots](auto& w, double g, const Scalars& s) {
           if (update_slots) w[1] += g * g;
           w[0] -= s.at("lr") * g / std::sqrt(w[1]);
         }});
  }
  add({"AdagradV2",
       {"var", "accum"},
       {"lr", "epsilon", "grad"},
       {{"lr", 0.1}, {"epsilon", 0.01}},
       {},
       true,
       [](auto& w, double g, const Scalars& s) {
         w[1] += g * g;
         w[0] -= s.at("lr") * g / (std::sqrt(w[1]) + s.at("epsilon"));
       }});
  add({"ProximalAdagrad",
       {"var", "accum"},
       {"lr", "l1", "l2", "grad"},
       {{"lr", 0.1}, {"l1", 0.05}, {"l2", 0.1}},
       {},
       true,
       [](auto& w, double g, const Scalars& s) {
         w[1] += g * g;
         w[0] = Fobos(w[0], s.at("lr") / std::sqrt(w[1]), s.at("l1"), s.at("l2"), g);
       }});
  add({"Adadelta",
       {"var", "accum", "accum_update"},
       {"lr", "rho", "epsilon", "grad"},
       {{"lr", 1.0}, {"rho", 0.95}, {"epsilon", 1e-6}},
       {},
       true,
       [](auto& w, double g, const Scalars& s) {
         const double rho = s.at("rho"), eps = s.at("epsilon");
         w[1] = rho * w[1] + (1 - rho) * g * g;
         const double dx = std::sqrt(w[2] + eps) / std::sqrt(w[1] + eps) * g;
         w[2] = rho * w[2] + (1 - rho) * dx * dx;
         w[0] -= s.at("lr") * dx;
       }});
  add({"RMSProp",
       {"var", "ms", "mom"},
       {"lr", "rho", "momentum", "epsilon", "grad"},
       {{"lr", 0.01}, {"rho", 0.9}, {"momentum", 0.5}, {"epsilon", 1e-6}},
       {},
       true,
       [](auto& w, double g, const Scalars& s) {
         const double rho = s.at("rho");
         w[1] = rho * w[1] + (1 - rho) * g * g;
         w[2] = s.at("momentum") * w[2] + s.at("lr") * g / std::sqrt(w[1] + s.at("epsilon"));
         w[0] -= w[2];
       }});
  add({"CenteredRMSProp",
       {"var", "mg", "ms", "mom"},
       {"lr", "rho", "momentum", "epsilon", "grad"},
       {{"lr", 0.01}, {"rho", 0.9}, {"momentum", 0.5}, {"epsilon", 1e-6}},
       {},
       true,
       [](auto& w, double g, const Scalars& s) {
         const double rho = s.at("rho");
         w[2] = rho * w[2] + (1 - rho) * g * g;
         w[1] = rho * w[1] + (1 - rho) * g;
         const double var_g = w[2] - w[1] * w[1] + s.at("epsilon");
         w[3] = s.at("momentum") * w[3] + s.at("lr") * g / std::sqrt(var_g);
         w[0] -= w[3];
       }});
  for (bool by_lr : {false, true}) {
    add({"Ftrl",
         {"var", "accum", "linear"},
         {"grad", "lr", "l1", "l2", "lr_power"},
         {{"lr", 0.5}, {"l1", 0.01}, {"l2", 0.02}, {"lr_power", -0.5}},
         {{"multiply_linear_by_lr", by_lr}},
         true,
         [by_lr](auto& w, double g, const Scalars& s) { Ftrl(w, g, s, by_lr); }});
    add({"FtrlV2",
         {"var", "accum", "linear"},
         {"grad", "lr", "l1", "l2", "l2_shrinkage", "lr_power"},
         {{"lr", 0.5}, {"l1", 0.01}, {"l2", 0.02}, {"l2_shrinkage", 0.03}, {"lr_power", -0.25}},
         {{"multiply_linear_by_lr", by_lr}},
         true,
         [by_lr](auto& w, double g, const Scalars& s) { Ftrl(w, g, s, by_lr); }});
  }
  add({"AddSign",
       {"var", "m"},
       {"lr", "alpha", "sign_decay", "beta", "grad"},
       {{"lr", 0.1}, {"alpha", 1.0}, {"sign_decay", 0.5}, {"beta", 0.9}},
       {},
       true,
       [](auto& w, double g, const Scalars& s) {
         w[1] = s.at("beta") * w[1] + (1 - s.at("beta")) * g;
         w[0] -= s.at("lr") * (s.at("alpha") + s.at("sign_decay") * Sgn(g) * Sgn(w[1])) * g;
       }});
  add({"PowerSign",
       {"var", "m"},
       {"lr", "logbase", "sign_decay", "beta", "grad"},
       {{"lr", 0.1}, {"logbase", std::log(2.0)}, {"sign_decay", 0.5}, {"beta", 0.9}},
       {},
       true,
       [](auto& w, double g, const Scalars& s) {
         w[1] = s.at("beta") * w[1] + (1 - s.at("beta")) * g;
         w[0] -= s.at("lr") * std::pow(2.0, s.at("sign_decay") * Sgn(g) * Sgn(w[1])) * g;
       }});
  return c;
}

// Values of the hand-made graphs: 5 elements (a zero gradient among them), 3 steps.
constexpr int kElems = 5;
constexpr int kSteps = 3;
std::vector<double> InitialValue(int var_index) {
  if (var_index == 0) return {0.5, -1.25, 2.0, 0.1, -0.3};
  return {0.1, 0.2, 0.3, 0.25, 0.05};  // slots: positive accumulators
}
std::vector<double> Gradient(int step) {
  std::vector<double> g = {0.3, -0.7, 1.1, 0.0, -0.05};
  for (double& x : g) x *= 1.0 + 0.5 * step;
  return g;
}

std::string DTypeEnum(DType t) {
  switch (t) {
    case DType::kFloat64:
      return "DT_DOUBLE";
    case DType::kFloat16:
      return "DT_HALF";
    case DType::kBFloat16:
      return "DT_BFLOAT16";
    default:
      return "DT_FLOAT";
  }
}
bool Is16(DType t) { return t == DType::kFloat16 || t == DType::kBFloat16; }

std::string CastNode(const std::string& name, const std::string& input, DType from, DType to) {
  return absl::StrCat("node { name: \"", name, "\" op: \"Cast\" input: \"", input,
                      "\" attr { key: \"SrcT\" value { type: ", DTypeEnum(from),
                      " } } attr { key: "
                      "\"DstT\" value { type: ",
                      DTypeEnum(to), " } } }\n");
}

// A constant of dtype `t`; 16-bit ones are written in float and cast.
std::string ConstNode(const std::string& name, DType t, const std::vector<double>& v, bool scalar) {
  if (Is16(t)) {
    return ConstNode(name + "/f32", DType::kFloat32, v, scalar) +
           CastNode(name, name + "/f32", DType::kFloat32, t);
  }
  std::string vals;
  for (double x : v) {
    absl::StrAppend(&vals, t == DType::kFloat64 ? " double_val: " : " float_val: ",
                    absl::StrFormat("%.17g", x));
  }
  const std::string shape = scalar ? "" : absl::StrCat("dim { size: ", v.size(), " }");
  return absl::StrCat("node { name: \"", name,
                      "\" op: \"Const\" attr { key: \"dtype\" value { "
                      "type: ",
                      DTypeEnum(t),
                      " } } attr { key: \"value\" value { tensor { "
                      "dtype: ",
                      DTypeEnum(t), " tensor_shape { ", shape, " }", vals, " } } } }\n");
}

// 16-bit graphs are fed and read in float (casts around the optimizer).
DType FeedType(DType t) { return Is16(t) ? DType::kFloat32 : t; }
std::string FeedName(DType t) { return Is16(t) ? "grad/f32" : "grad"; }

// The one-optimizer graph: variables initialised by "init", "apply" updating them from the
// fed "grad" (of any shape unless `grad_shaped`), and "<var>/read" reading each.
std::string OptimizerGraph(const OptCase& c, DType t, bool resource, bool grad_shaped = true) {
  const std::string dt = absl::StrCat("attr { key: \"dtype\" value { type: ", DTypeEnum(t), " } }");
  const std::string shape =
      absl::StrCat("attr { key: \"shape\" value { shape { dim { size: ", kElems, " } } } }");
  const std::string feed_dt =
      absl::StrCat("attr { key: \"dtype\" value { type: ", DTypeEnum(FeedType(t)), " } }");
  std::string g = absl::StrCat("node { name: \"", FeedName(t), "\" op: \"Placeholder\" ", feed_dt,
                               " ", grad_shaped ? shape : "", " }\n");
  if (Is16(t)) absl::StrAppend(&g, CastNode("grad", FeedName(t), DType::kFloat32, t));
  std::string init = "node { name: \"init\" op: \"NoOp\"";
  for (size_t i = 0; i < c.vars.size(); ++i) {
    const std::string& v = c.vars[i];
    absl::StrAppend(&g, "node { name: \"", v, "\" op: \"", resource ? "VarHandleOp" : "VariableV2",
                    "\" ", dt, " ", shape, " attr { key: \"shared_name\" value { s: \"", v,
                    "\" } } }\n");
    absl::StrAppend(&g, ConstNode(v + "/init", t, InitialValue(static_cast<int>(i)), false));
    if (resource) {
      absl::StrAppend(&g, "node { name: \"", v, "/assign\" op: \"AssignVariableOp\" input: \"", v,
                      "\" input: \"", v, "/init\" ", dt, " }\n");
      const std::string read = Is16(t) ? v + "/read16" : v + "/read";
      absl::StrAppend(&g, "node { name: \"", read, "\" op: \"ReadVariableOp\" input: \"", v, "\" ",
                      dt, " }\n");
      if (Is16(t)) absl::StrAppend(&g, CastNode(v + "/read", read, t, DType::kFloat32));
    } else {
      absl::StrAppend(&g, "node { name: \"", v, "/assign\" op: \"Assign\" input: \"", v,
                      "\" input: \"", v, "/init\" attr { key: \"T\" value { type: ", DTypeEnum(t),
                      " } } }\n");
      absl::StrAppend(&g, "node { name: \"", v, "/read\" op: \"Identity\" input: \"", v,
                      "\" attr { key: \"T\" value { type: ", DTypeEnum(t), " } } }\n");
    }
    absl::StrAppend(&init, " input: \"^", v, "/assign\"");
  }
  absl::StrAppend(&g, init, " }\n");
  std::string apply = absl::StrCat("node { name: \"apply\" op: \"",
                                   resource ? "ResourceApply" : "Apply", c.name, "\"");
  for (const std::string& v : c.vars) absl::StrAppend(&apply, " input: \"", v, "\"");
  for (const std::string& in : c.inputs) {
    if (in == "grad" || in == "delta") {
      absl::StrAppend(&apply, " input: \"grad\"");
    } else {
      absl::StrAppend(&g, ConstNode(in, t, {c.scalars.at(in)}, true));
      absl::StrAppend(&apply, " input: \"", in, "\"");
    }
  }
  absl::StrAppend(&apply, " attr { key: \"T\" value { type: ", DTypeEnum(t), " } }");
  for (const auto& [k, v] : c.attrs) {
    absl::StrAppend(&apply, " attr { key: \"", k, "\" value { b: ", v ? "true" : "false", " } }");
  }
  return absl::StrCat(g, apply, " }\n");
}

Tensor Feed(DType t, const std::vector<double>& v) {
  if (t == DType::kFloat64) return Tensor::FromVector(t, {kElems}, v);
  return Tensor::FromVector(t, {kElems}, std::vector<float>(v.begin(), v.end()));
}
double At(const Tensor& t, int64_t i) {
  return t.dtype() == DType::kFloat64 ? t.data<double>()[i] : t.data<float>()[i];
}

// The expected variables after `steps` updates: expected[var][element].
std::vector<std::vector<double>> Expected(const OptCase& c, int steps) {
  std::vector<std::vector<double>> w(c.vars.size());
  for (size_t i = 0; i < w.size(); ++i) w[i] = InitialValue(static_cast<int>(i));
  for (int s = 0; s < steps; ++s) {
    const std::vector<double> g = Gradient(s);
    for (int e = 0; e < kElems; ++e) {
      std::vector<double> elem(w.size());
      for (size_t i = 0; i < w.size(); ++i) elem[i] = w[i][e];
      c.update(elem, g[e], c.scalars);
      for (size_t i = 0; i < w.size(); ++i) w[i][e] = elem[i];
    }
  }
  return w;
}

// Runs init then kSteps updates; returns every variable's value after each step.
std::vector<std::vector<Tensor>> Train(const OptCase& c, DType t, bool resource, JitMode mode,
                                       int* compiled) {
  const std::string path = WriteTempFile(
      absl::StrCat(c.label, resource ? "_resource_" : "_ref_", DTypeName(t), ".pbtxt"),
      OptimizerGraph(c, t, resource));
  SessionOptions options;
  options.jit = mode;
  auto session = Session::Load(path, options);
  EXPECT_TRUE(session.ok()) << StatusToString(session.status());
  if (!session.ok()) return {};
  EXPECT_TRUE((*session)->Run({}, {}, {"init"}).ok());
  std::vector<std::string> reads;
  for (const std::string& v : c.vars) reads.push_back(v + "/read");
  std::vector<std::vector<Tensor>> out;
  for (int s = 0; s < kSteps; ++s) {
    RunStats stats;
    absl::Status st =
        (*session)
            ->Run({{FeedName(t), Feed(FeedType(t), Gradient(s))}}, {}, {"apply"}, &stats)
            .status();
    EXPECT_TRUE(st.ok()) << StatusToString(st);
    *compiled += stats.nodes_compiled;
    auto values = (*session)->Run({}, reads);
    EXPECT_TRUE(values.ok()) << StatusToString(values.status());
    if (!st.ok() || !values.ok()) return {};
    out.push_back(*values);
  }
  return out;
}

void ExpectClose(const Tensor& got, const std::vector<double>& want, double tol,
                 const std::string& what) {
  ASSERT_EQ(got.num_elements(), static_cast<int64_t>(want.size())) << what;
  for (int64_t e = 0; e < got.num_elements(); ++e) {
    EXPECT_NEAR(At(got, e), want[e], tol * (1 + std::abs(want[e]))) << what << " element " << e;
  }
}

class OptimizerTest : public ::testing::TestWithParam<OptCase> {};

// The kernel (jit none) and the compiled update (jit all) of ResourceApply* against the
// formula, step by step; jit all must really compile the update.
void CheckResourceForm(const OptCase& c, DType t, double tol) {
  int compiled_none = 0, compiled_all = 0;
  auto kernel = Train(c, t, /*resource=*/true, JitMode::kNone, &compiled_none);
  auto jit = Train(c, t, /*resource=*/true, JitMode::kAll, &compiled_all);
  ASSERT_EQ(kernel.size(), static_cast<size_t>(kSteps)) << DTypeName(t);
  ASSERT_EQ(jit.size(), static_cast<size_t>(kSteps)) << DTypeName(t);
  EXPECT_GT(compiled_all, 0) << "jit all should compile ResourceApply" << c.name;
  for (int s = 0; s < kSteps; ++s) {
    const auto want = Expected(c, s + 1);
    for (size_t i = 0; i < c.vars.size(); ++i) {
      const std::string what = absl::StrCat(DTypeName(t), " step ", s + 1, " ", c.vars[i]);
      ExpectClose(kernel[s][i], want[i], tol, "kernel " + what);
      ExpectClose(jit[s][i], want[i], tol, "compiled " + what);
    }
  }
}

TEST_P(OptimizerTest, ResourceFormFloatAndDouble) {
  CheckResourceForm(GetParam(), DType::kFloat32, 2e-6);
  CheckResourceForm(GetParam(), DType::kFloat64, 1e-12);
}

// Half and bfloat16 (the kernel computes in float and rounds each stored value; the compiled
// update rounds per operation): within the 16-bit formats' precision of the formula.
TEST_P(OptimizerTest, ResourceFormSixteenBitFloats) {
  CheckResourceForm(GetParam(), DType::kFloat16, 1e-2);
  CheckResourceForm(GetParam(), DType::kBFloat16, 4e-2);
}

// Apply* on TF1 reference variables (kernel only, as in TF): jit none and auto agree with the
// formula.
TEST_P(OptimizerTest, RefFormMatchesFormula) {
  const OptCase& c = GetParam();
  if (!c.ref_form) return;  // TF registers only ResourceApply<name>
  for (JitMode mode : {JitMode::kNone, JitMode::kAuto}) {
    int compiled = 0;
    auto got = Train(c, DType::kFloat32, /*resource=*/false, mode, &compiled);
    ASSERT_EQ(got.size(), static_cast<size_t>(kSteps)) << JitModeName(mode);
    for (int s = 0; s < kSteps; ++s) {
      const auto want = Expected(c, s + 1);
      for (size_t i = 0; i < c.vars.size(); ++i) {
        ExpectClose(got[s][i], want[i], 2e-6,
                    absl::StrCat(JitModeName(mode), " step ", s + 1, " ", c.vars[i]));
      }
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Optimizers, OptimizerTest, ::testing::ValuesIn(Cases()),
                         [](const ::testing::TestParamInfo<OptCase>& info) {
                           return info.param.label;
                         });

// --- Errors -------------------------------------------------------------------------------

TEST(OptimizerErrorTest, UninitializedAndMisshapedInputsAreTfsErrors) {
  OptCase c = Cases()[0];  // GradientDescent
  for (bool resource : {false, true}) {
    const std::string path = WriteTempFile(absl::StrCat("gd_errors_", resource, ".pbtxt"),
                                           OptimizerGraph(c, DType::kFloat32, resource,
                                                          /*grad_shaped=*/false));
    SessionOptions options;
    options.jit = JitMode::kNone;
    auto session = Session::Load(path, options);
    ASSERT_TRUE(session.ok()) << StatusToString(session.status());
    const Tensor g = Feed(DType::kFloat32, Gradient(0));
    auto uninit = (*session)->Run({{"grad", g}}, {}, {"apply"});
    EXPECT_EQ(uninit.status().code(), absl::StatusCode::kFailedPrecondition) << uninit.status();
    ASSERT_TRUE((*session)->Run({}, {}, {"init"}).ok());
    const Tensor wrong = Tensor::FromVector(DType::kFloat32, {2}, std::vector<float>{1, 2});
    auto bad = (*session)->Run({{"grad", wrong}}, {}, {"apply"});
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument) << bad.status();
    EXPECT_NE(bad.status().message().find("var and delta do not have the same shape"),
              std::string::npos)
        << bad.status();
  }
}

// TF's CPU Ftrl checks its hyperparameters' values.
TEST(OptimizerErrorTest, FtrlRejectsNegativeLearningRateInTheKernel) {
  OptCase c;
  for (const OptCase& o : Cases()) {
    if (o.name == "Ftrl") c = o;
  }
  c.scalars["lr"] = -0.5;
  const std::string path = WriteTempFile("ftrl_negative_lr.pbtxt",
                                         OptimizerGraph(c, DType::kFloat32, /*resource=*/true));
  SessionOptions options;
  options.jit = JitMode::kNone;
  auto session = Session::Load(path, options);
  ASSERT_TRUE(session.ok()) << StatusToString(session.status());
  ASSERT_TRUE((*session)->Run({}, {}, {"init"}).ok());
  auto r = (*session)->Run({{"grad", Feed(DType::kFloat32, Gradient(0))}}, {}, {"apply"});
  EXPECT_EQ(r.status().code(), absl::StatusCode::kInvalidArgument) << r.status();
  EXPECT_NE(r.status().message().find("lr is not a positive scalar: []"), std::string::npos)
      << r.status();
}

// --- TF-written training graphs ----------------------------------------------------------

std::string DataPath(const std::string& name) {
  // The shared data sits beside the checkout (/work/shared next to /work/main).
  std::filesystem::path p =
      std::filesystem::path(TFJIT_SOURCE_DIR) / ".." / "shared" / "data" / "training" / name;
  return p.lexically_normal().string();
}

// The graph with fixed seeds on its stateful random ops (TF's seed/seed2 attrs), written as a
// binary GraphDef: two sessions then start from the same initial weights.
std::string Seeded(const std::string& path, const std::string& out_name) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    // CI and every checkout keep shared/ beside the project folder; without it there is no
    // TF-written graph to train, and that is a failure, not a skip.
    ADD_FAILURE() << "cannot read " << path << ": shared/data/training must sit beside the "
                  << "checkout (" << TFJIT_SOURCE_DIR << "/../shared)";
    return path;
  }
  std::stringstream buf;
  buf << in.rdbuf();
  tensorflow::GraphDef graph;
  if (!graph.ParseFromString(buf.str()) &&
      !google::protobuf::TextFormat::ParseFromString(buf.str(), &graph)) {
    ADD_FAILURE() << "cannot parse " << path;
    return path;
  }
  int k = 0;
  for (tensorflow::NodeDef& node : *graph.mutable_node()) {
    if (node.op() != "RandomUniform" && node.op() != "RandomStandardNormal" &&
        node.op() != "TruncatedNormal") {
      continue;
    }
    (*node.mutable_attr())["seed"].set_i(87654321);
    (*node.mutable_attr())["seed2"].set_i(++k);
  }
  return WriteTempFile(out_name, graph.SerializeAsString());
}

std::unique_ptr<Session> LoadOrSkipReason(const std::string& path, JitMode mode, std::string* skip,
                                          bool autofix = false) {
  SessionOptions options;
  options.jit = mode;
  options.autofix = autofix;
  auto session = Session::Load(path, options);
  if (!session.ok()) {
    if (session.status().code() == absl::StatusCode::kUnimplemented) {
      *skip = StatusToString(session.status());
    } else {
      ADD_FAILURE() << StatusToString(session.status());
    }
    return nullptr;
  }
  return std::move(*session);
}

// The modes the TF1 graphs train in: TF's (none, auto: the reference-variable updates stay in
// the runtime), and with --autofix, where they compile (auto and all: the whole step is one
// cluster).
struct TrainMode {
  JitMode jit;
  bool autofix;
  std::string Name() const { return absl::StrCat(JitModeName(jit), autofix ? "+autofix" : ""); }
};
const std::vector<TrainMode> kTf1Modes = {{JitMode::kNone, false},
                                          {JitMode::kAuto, false},
                                          {JitMode::kAuto, true},
                                          {JitMode::kAll, true}};

// With --autofix, the step `target` is one cluster holding every node but the variables, the
// placeholders and the NoOp `target` itself (explain lists what is left out).
void ExpectWholeStepCompiled(Session& session, const std::string& target, const TrainMode& m) {
  if (!m.autofix) return;
  auto report = session.Explain({"^" + target});
  ASSERT_TRUE(report.ok()) << StatusToString(report.status());
  EXPECT_NE(report->find(", 1 cluster(s)"), std::string::npos) << *report;
  const size_t at = report->find("not compiled:");
  ASSERT_NE(at, std::string::npos) << *report;
  const std::string left = report->substr(at);
  for (absl::string_view line : absl::StrSplit(left, '\n', absl::SkipEmpty())) {
    if (line == "not compiled:") continue;
    EXPECT_TRUE(absl::StrContains(line, "(VariableV2)") || absl::StrContains(line, "(Variable)") ||
                absl::StrContains(line, "(NoOp)") || absl::StrContains(line, "(Placeholder)") ||
                absl::StrContains(line, "(Const)"))
        << m.Name() << ": " << line;
  }
}

// Run errors that say an op is missing (no kernel or lowering yet) skip the graph; never in
// the --autofix modes (`strict`), whose UNIMPLEMENTED errors would be regressions.
bool MissingOp(const absl::Status& s, std::string* skip, bool strict = false) {
  if (strict || s.code() != absl::StatusCode::kUnimplemented) return false;
  *skip = StatusToString(s);
  return true;
}

std::vector<float> RegressionX() {
  std::vector<float> x(100);
  uint32_t state = 12345;
  for (float& v : x) {
    state = state * 1664525u + 1013904223u;
    v = static_cast<float>(state >> 8) / static_cast<float>(1u << 24);
  }
  return x;
}

// tf1_regression (and the checkpoint variant): GradientDescent(0.5) on mean((w*x + b - y)^2)
// with y = 0.1x + 0.3. Each step's w, b against a double-precision simulation from the same
// initial values, in jit none and auto, and the two modes against each other.
void TrainRegression(const std::string& model) {
  const std::string seeded = Seeded(
      DataPath(model), "seeded_" + std::filesystem::path(model).parent_path().string() + ".pb");
  const std::vector<float> xs = RegressionX();
  std::vector<float> ys;
  for (float x : xs) ys.push_back(0.1f * x + 0.3f);
  const Tensor x = Tensor::FromVector(DType::kFloat32, {100}, xs);
  const Tensor y = Tensor::FromVector(DType::kFloat32, {100}, ys);
  std::map<std::string, std::vector<float>> trace;
  for (const TrainMode& m : kTf1Modes) {
    const std::string mode = m.Name();
    SCOPED_TRACE(mode);
    std::string skip;
    auto session = LoadOrSkipReason(seeded, m.jit, &skip, m.autofix);
    if (session == nullptr && !skip.empty()) GTEST_SKIP() << model << ": " << skip;
    ASSERT_NE(session, nullptr);
    ExpectWholeStepCompiled(*session, "train", m);
    absl::Status st = session->Run({}, {}, {"init"}).status();
    if (MissingOp(st, &skip, m.autofix)) GTEST_SKIP() << model << ": " << skip;
    ASSERT_TRUE(st.ok()) << StatusToString(st);
    auto wb = session->Run({}, {"w", "b"});
    ASSERT_TRUE(wb.ok()) << StatusToString(wb.status());
    double w = (*wb)[0].data<float>()[0], b = (*wb)[1].data<float>()[0];
    for (int step = 0; step < 200; ++step) {
      RunStats stats;
      st = session->Run({{"x", x}, {"y", y}}, {}, {"train"}, &stats).status();
      if (m.autofix) {  // the whole step compiled, nothing fell back to kernels
        EXPECT_EQ(stats.clusters, 1);
        EXPECT_EQ(stats.fallbacks, 0);
      }
      if (MissingOp(st, &skip, m.autofix)) GTEST_SKIP() << model << ": " << skip;
      ASSERT_TRUE(st.ok()) << StatusToString(st);
      double gw = 0, gb = 0;
      for (size_t i = 0; i < xs.size(); ++i) {
        const double r = w * xs[i] + b - ys[i];
        gw += 2 * r * xs[i] / xs.size();
        gb += 2 * r / xs.size();
      }
      w -= 0.5 * gw;
      b -= 0.5 * gb;
      auto got = session->Run({{"x", x}, {"y", y}}, {"w", "b", "Mean"});
      ASSERT_TRUE(got.ok()) << StatusToString(got.status());
      EXPECT_NEAR((*got)[0].data<float>()[0], w, 1e-4) << "step " << step;
      EXPECT_NEAR((*got)[1].data<float>()[0], b, 1e-4) << "step " << step;
      trace[mode].push_back((*got)[2].data<float>()[0]);
    }
    EXPECT_NEAR(w, 0.1, 1e-3);
    EXPECT_NEAR(b, 0.3, 1e-3);
    EXPECT_LT(trace[mode].back(), 1e-6);
  }
  for (const TrainMode& m : kTf1Modes) {
    const std::vector<float>& ref = trace["none"];
    ASSERT_EQ(ref.size(), trace[m.Name()].size());
    for (size_t i = 0; i < ref.size(); ++i) {
      EXPECT_NEAR(ref[i], trace[m.Name()][i], 1e-5 * (1 + ref[i]))
          << m.Name() << ": loss at step " << i;
    }
  }
}

TEST(TrainingGraphTest, Tf1RegressionConvergesInEveryMode) {
  TrainRegression("tf1_regression/model.pb");
}

TEST(TrainingGraphTest, Tf1RegressionCheckpointGraphTrains) {
  TrainRegression("tf1_regression_checkpoint/model.pb");
}

// tf1_regression_checkpoint's Saver: SaveV2 writes w and b (the checkpoint path fed to
// save/Const, as tf.train.Saver.save feeds it), BundleReader reads them back, and a new
// session whose variables start elsewhere restores them through RestoreV2 + Assign
// (save/restore_all), with --jit none and auto (--jit all refuses TF1 reference variables with
// TF's "Detected unsupported operations", as XLA does).
TEST(TrainingGraphTest, Tf1CheckpointSavesAndRestores) {
  const std::string seeded =
      Seeded(DataPath("tf1_regression_checkpoint/model.pb"), "seeded_ckpt.pb");
  const std::vector<float> xs = RegressionX();
  std::vector<float> ys;
  for (float x : xs) ys.push_back(0.1f * x + 0.3f);
  const Tensor x = Tensor::FromVector(DType::kFloat32, {100}, xs);
  const Tensor y = Tensor::FromVector(DType::kFloat32, {100}, ys);
  const std::filesystem::path dir = std::filesystem::temp_directory_path() / "tfjit_ckpt_test";
  std::filesystem::create_directories(dir);
  for (JitMode mode : {JitMode::kNone, JitMode::kAuto}) {
    SCOPED_TRACE(JitModeName(mode));
    const std::string prefix = (dir / absl::StrCat("model_", JitModeName(mode))).string();
    const Tensor path = MakeStringTensor({}, {prefix});
    SessionOptions options;
    options.jit = mode;
    auto trainer = Session::Load(seeded, options);
    ASSERT_TRUE(trainer.ok()) << StatusToString(trainer.status());
    absl::Status st = (*trainer)->Run({}, {}, {"init"}).status();
    ASSERT_TRUE(st.ok()) << StatusToString(st);
    for (int step = 0; step < 5; ++step) {
      st = (*trainer)->Run({{"x", x}, {"y", y}}, {}, {"train"}).status();
      ASSERT_TRUE(st.ok()) << StatusToString(st);
    }
    auto trained = (*trainer)->Run({}, {"w", "b"});
    ASSERT_TRUE(trained.ok()) << StatusToString(trained.status());
    auto saved = (*trainer)->Run({{"save/Const", path}}, {"save/control_dependency"});
    ASSERT_TRUE(saved.ok()) << StatusToString(saved.status());
    // The checkpoint, read without the session: TF1 Saver keys are the variable names.
    auto bundle = tf::BundleReader::Open(prefix);
    ASSERT_TRUE(bundle.ok()) << StatusToString(bundle.status());
    EXPECT_EQ((*bundle)->ListKeys(), (std::vector<std::string>{"b", "w"}));
    for (const auto& [key, value] :
         {std::pair<std::string, const Tensor*>{"w", &(*trained)[0]}, {"b", &(*trained)[1]}}) {
      auto stored = (*bundle)->Lookup(key);
      ASSERT_TRUE(stored.ok()) << StatusToString(stored.status());
      EXPECT_EQ(stored->data<float>()[0], value->data<float>()[0]) << key;
    }
    // A fresh session: init draws other values (another seed), restore brings the trained ones.
    auto fresh = Session::Load(DataPath("tf1_regression_checkpoint/model.pb"), options);
    ASSERT_TRUE(fresh.ok()) << StatusToString(fresh.status());
    st = (*fresh)->Run({}, {}, {"init"}).status();
    ASSERT_TRUE(st.ok()) << StatusToString(st);
    auto restored = (*fresh)->Run({{"save/Const", path}}, {}, {"save/restore_all"});
    ASSERT_TRUE(restored.ok()) << StatusToString(restored.status());
    auto wb = (*fresh)->Run({}, {"w", "b"});
    ASSERT_TRUE(wb.ok()) << StatusToString(wb.status());
    EXPECT_EQ((*wb)[0].data<float>()[0], (*trained)[0].data<float>()[0]);
    EXPECT_EQ((*wb)[1].data<float>()[0], (*trained)[1].data<float>()[0]);
    // Restoring from a path with no checkpoint names it.
    const Tensor missing = MakeStringTensor({}, {(dir / "no_such_ckpt").string()});
    auto bad = (*fresh)->Run({{"save/Const", missing}}, {}, {"save/restore_all"});
    EXPECT_EQ(bad.status().code(), absl::StatusCode::kNotFound) << StatusToString(bad.status());
    EXPECT_NE(bad.status().message().find("no_such_ckpt.index"), std::string::npos);
  }
}

// tf2_regression_savedmodel: the `train` signature (GradientTape + Keras SGD(0.5), i.e.
// ResourceApplyGradientDescent in a tf.function) drives the loss to zero on exact data, and
// jit none and auto agree step by step.
TEST(TrainingGraphTest, Tf2SavedModelTrainSignature) {
  const std::vector<float> xs = RegressionX();
  std::vector<float> ys;
  for (float x : xs) ys.push_back(0.1f * x + 0.3f);
  const Tensor x = Tensor::FromVector(DType::kFloat32, {100}, xs);
  const Tensor y = Tensor::FromVector(DType::kFloat32, {100}, ys);
  std::map<JitMode, std::vector<float>> trace;
  for (JitMode mode : {JitMode::kNone, JitMode::kAuto}) {
    SCOPED_TRACE(JitModeName(mode));
    SessionOptions options;
    options.jit = mode;
    options.signature = "train";
    auto session = Session::Load(DataPath("tf2_regression_savedmodel"), options);
    if (!session.ok() && session.status().code() == absl::StatusCode::kUnimplemented) {
      GTEST_SKIP() << StatusToString(session.status());
    }
    ASSERT_TRUE(session.ok()) << StatusToString(session.status());
    int compiled = 0;
    RunStats stats;
    for (int step = 0; step < 200; ++step) {
      stats = RunStats();
      auto loss = (*session)->Run({{"x", x}, {"y", y}}, {"loss"}, &stats);
      std::string skip;
      if (!loss.ok() && MissingOp(loss.status(), &skip)) GTEST_SKIP() << skip;
      ASSERT_TRUE(loss.ok()) << StatusToString(loss.status());
      trace[mode].push_back((*loss)[0].data<float>()[0]);
      compiled += stats.nodes_compiled;
    }
    if (mode == JitMode::kAuto) {
      EXPECT_GT(compiled, 0) << "the train function should compile";
      // The tf.function's calls (forward, backward) are inlined as TF inlines them before
      // auto-clustering: forward, gradients and the SGD update are one cluster.
      EXPECT_EQ(stats.clusters, 1);
      EXPECT_EQ(stats.fallbacks, 0);
    }
    EXPECT_LT(trace[mode].back(), 1e-6);
    EXPECT_LT(trace[mode].back(), trace[mode].front());
  }
  for (size_t i = 0; i < trace[JitMode::kNone].size(); ++i) {
    EXPECT_NEAR(trace[JitMode::kNone][i], trace[JitMode::kAuto][i],
                1e-5 * (1 + trace[JitMode::kNone][i]))
        << "loss at step " << i;
  }
}

// tf1_train_iris: two dense layers, softmax cross-entropy and GradientDescent(0.001). On an
// iris-shaped problem (4 features, 3 well-separated classes) the loss falls at every step, and
// jit none and auto agree step by step from the same (seeded) initial weights.
// A sharded save as tf.train.Saver(sharded=True) does it: two SaveV2 into temporary prefixes,
// then MergeV2Checkpoints into the final one, which holds both tensors while the shards'
// files are gone.
constexpr char kShardedSaveGraph[] = R"pb(
  node { name: "a" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                                              float_val: 1.5 float_val: -2 } } } }
  node { name: "b" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 7 } } } }
  node { name: "p1" op: "Placeholder" attr { key: "dtype" value { type: DT_STRING } } }
  node { name: "p2" op: "Placeholder" attr { key: "dtype" value { type: DT_STRING } } }
  node { name: "prefixes" op: "Placeholder" attr { key: "dtype" value { type: DT_STRING } } }
  node { name: "dest" op: "Placeholder" attr { key: "dtype" value { type: DT_STRING } } }
  node { name: "names1" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
         attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 1 } }
                                              string_val: "a" } } } }
  node { name: "names2" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
         attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 1 } }
                                              string_val: "b" } } } }
  node { name: "slices" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
         attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 1 } }
                                              string_val: "" } } } }
  node { name: "save1" op: "SaveV2" input: "p1" input: "names1" input: "slices" input: "a"
         attr { key: "dtypes" value { list { type: DT_FLOAT } } } }
  node { name: "save2" op: "SaveV2" input: "p2" input: "names2" input: "slices" input: "b"
         attr { key: "dtypes" value { list { type: DT_INT32 } } } }
  node { name: "merge" op: "MergeV2Checkpoints" input: "prefixes" input: "dest"
         input: "^save1" input: "^save2" attr { key: "delete_old_dirs" value { b: true } } }
)pb";

TEST(TrainingGraphTest, ShardedSaveMergesIntoOneCheckpoint) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "tfjit_sharded_save";
  fs::remove_all(dir);
  fs::create_directories(dir / "tmp_shards");
  const std::string path = WriteTempFile("sharded_save.pbtxt", kShardedSaveGraph);
  auto session = Session::Load(path);
  ASSERT_TRUE(session.ok()) << StatusToString(session.status());
  const std::string s1 = (dir / "tmp_shards" / "part-00000-of-00002").string();
  const std::string s2 = (dir / "tmp_shards" / "part-00001-of-00002").string();
  const std::string dest = (dir / "model").string();
  auto run = (*session)->Run({{"p1", MakeStringTensor({}, {s1})},
                              {"p2", MakeStringTensor({}, {s2})},
                              {"prefixes", MakeStringTensor({2}, {s1, s2})},
                              {"dest", MakeStringTensor({}, {dest})}},
                             {}, {"merge"});
  ASSERT_TRUE(run.ok()) << StatusToString(run.status());
  auto merged = tf::BundleReader::Open(dest);
  ASSERT_TRUE(merged.ok()) << StatusToString(merged.status());
  EXPECT_EQ((*merged)->ListKeys(), (std::vector<std::string>{"a", "b"}));
  auto a = (*merged)->Lookup("a");
  auto b = (*merged)->Lookup("b");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->data<float>()[1], -2.0f);
  EXPECT_EQ(b->data<int32_t>()[0], 7);
  EXPECT_FALSE(fs::exists(s1 + ".index"));
  EXPECT_FALSE(fs::exists(dir / "tmp_shards"));  // delete_old_dirs: the empty folder goes too
}

// tf2_regression_savedmodel trained, then written back: SaveVariables keeps the original
// checkpoint's keys (w, b, the optimizer's iteration, the object graph) with w and b
// trained; the SavedModel copied with that checkpoint loads with the trained values (its `w`
// and `b` signatures), in both modes. A GraphDef has no SavedModel variables to save.
TEST(TrainingGraphTest, Tf2SavedModelVariablesAreWrittenBack) {
  namespace fs = std::filesystem;
  const std::vector<float> xs = RegressionX();
  std::vector<float> ys;
  for (float x : xs) ys.push_back(0.1f * x + 0.3f);
  const Tensor x = Tensor::FromVector(DType::kFloat32, {100}, xs);
  const Tensor y = Tensor::FromVector(DType::kFloat32, {100}, ys);
  const std::string original = DataPath("tf2_regression_savedmodel");
  for (JitMode mode : {JitMode::kNone, JitMode::kAuto}) {
    SCOPED_TRACE(JitModeName(mode));
    SessionOptions options;
    options.jit = mode;
    options.signature = "train";
    auto session = Session::Load(original, options);
    ASSERT_TRUE(session.ok()) << StatusToString(session.status());
    for (int step = 0; step < 100; ++step) {
      ASSERT_TRUE((*session)->Run({{"x", x}, {"y", y}}, {"loss"}).ok());
    }
    const fs::path copy =
        fs::temp_directory_path() / absl::StrCat("tfjit_trained_", JitModeName(mode));
    fs::remove_all(copy);
    fs::create_directories(copy / "variables");
    fs::copy_file(fs::path(original) / "saved_model.pb", copy / "saved_model.pb");
    const std::string prefix = (copy / "variables" / "variables").string();
    absl::Status saved = (*session)->SaveVariables(prefix);
    ASSERT_TRUE(saved.ok()) << StatusToString(saved);
    auto before = tf::BundleReader::Open(original + "/variables/variables");
    auto after = tf::BundleReader::Open(prefix);
    ASSERT_TRUE(before.ok() && after.ok());
    EXPECT_EQ((*after)->ListKeys(), (*before)->ListKeys());
    for (const char* sig : {"w", "b"}) {
      SessionOptions read_options;
      read_options.jit = mode;
      read_options.signature = sig;
      auto trained = Session::Load(copy.string(), read_options);
      ASSERT_TRUE(trained.ok()) << StatusToString(trained.status());
      auto value = (*trained)->Run({}, {"output"});
      ASSERT_TRUE(value.ok()) << StatusToString(value.status());
      EXPECT_NEAR(value->at(0).data<float>()[0], sig == std::string("w") ? 0.1f : 0.3f, 2e-3)
          << sig;
    }
  }
  auto graph = Session::Load(DataPath("tf1_regression/model.pb"));
  ASSERT_TRUE(graph.ok());
  EXPECT_EQ((*graph)->SaveVariables("/tmp/unused").code(), absl::StatusCode::kFailedPrecondition);
}

TEST(TrainingGraphTest, Tf1IrisLossFallsInEveryMode) {
  const std::string seeded = Seeded(DataPath("tf1_train_iris.pbtxt"), "seeded_iris.pb");
  std::vector<float> features, labels;
  uint32_t state = 777;
  for (int i = 0; i < 30; ++i) {
    const int cls = i % 3;
    for (int f = 0; f < 4; ++f) {
      state = state * 1664525u + 1013904223u;
      const float noise = static_cast<float>(state >> 8) / static_cast<float>(1u << 24) - 0.5f;
      features.push_back(static_cast<float>(cls) * (f % 2 == 0 ? 1.0f : -1.0f) + 0.3f * noise);
    }
    for (int k = 0; k < 3; ++k) labels.push_back(k == cls ? 1.0f : 0.0f);
  }
  const Tensor x = Tensor::FromVector(DType::kFloat32, {30, 4}, features);
  const Tensor y = Tensor::FromVector(DType::kFloat32, {30, 3}, labels);
  const std::string loss_name = "softmax_cross_entropy_loss/value";
  std::map<std::string, std::vector<float>> trace;
  for (const TrainMode& m : kTf1Modes) {
    const std::string mode = m.Name();
    SCOPED_TRACE(mode);
    std::string skip;
    auto session = LoadOrSkipReason(seeded, m.jit, &skip, m.autofix);
    if (session == nullptr && !skip.empty()) GTEST_SKIP() << skip;
    ASSERT_NE(session, nullptr);
    ExpectWholeStepCompiled(*session, "GradientDescent", m);
    absl::Status st = session->Run({}, {}, {"init"}).status();
    if (MissingOp(st, &skip, m.autofix)) GTEST_SKIP() << skip;
    ASSERT_TRUE(st.ok()) << StatusToString(st);
    for (int step = 0; step < 100; ++step) {
      auto loss = session->Run({{"Placeholder", x}, {"Placeholder_1", y}}, {loss_name});
      if (!loss.ok() && MissingOp(loss.status(), &skip, m.autofix)) GTEST_SKIP() << skip;
      ASSERT_TRUE(loss.ok()) << StatusToString(loss.status());
      trace[mode].push_back((*loss)[0].data<float>()[0]);
      RunStats stats;
      st = session->Run({{"Placeholder", x}, {"Placeholder_1", y}}, {}, {"GradientDescent"}, &stats)
               .status();
      if (m.autofix) {  // the whole step compiled, nothing fell back to kernels
        EXPECT_EQ(stats.clusters, 1);
        EXPECT_EQ(stats.fallbacks, 0);
      }
      if (MissingOp(st, &skip, m.autofix)) GTEST_SKIP() << skip;
      ASSERT_TRUE(st.ok()) << StatusToString(st);
    }
    // The graph's learning rate is 0.001: the loss falls slowly but at every step.
    for (size_t i = 1; i < trace[mode].size(); ++i) {
      EXPECT_LT(trace[mode][i], trace[mode][i - 1]) << "step " << i;
    }
    EXPECT_LT(trace[mode].back(), trace[mode].front() - 0.002);
  }
  for (const TrainMode& m : kTf1Modes) {
    const std::vector<float>& ref = trace["none"];
    ASSERT_EQ(ref.size(), trace[m.Name()].size());
    for (size_t i = 0; i < ref.size(); ++i) {
      EXPECT_NEAR(ref[i], trace[m.Name()][i], 1e-4 * (1 + ref[i]))
          << m.Name() << ": loss at step " << i;
    }
  }
}

}  // namespace
}  // namespace tfjit
