// Gradient ops (elementwise, BiasAddGrad, Conv2D's input and filter gradients, MaxPool's and
// AvgPool's) against central finite differences of their forward ops, in float64 (issue 22:
// checks that do not trust tfjit's formulas). For a forward op y = F(x) and an upstream
// gradient dy, the gradient op must give d<dy, F(x)>/dx, which is estimated here as
// (<dy, F(x + h e_i)> - <dy, F(x - h e_i)>) / 2h from F alone. Both the forward evaluations and
// the gradient run through the session, in --jit none (the kernels) and auto (compiled).
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

struct GradCase {
  std::string name;
  // The forward node "y" reading "x" (and constants it declares), and the gradient node "g"
  // reading "dy" and "x" or "y", as GraphDef text; $T is DT_DOUBLE.
  std::string forward, gradient;
  std::vector<int64_t> x_dims, y_dims;
  double lo = -2, hi = 2;  // x drawn in [lo, hi], away from the kinks in `kinks`
  std::vector<double> kinks;
};

void PrintTo(const GradCase& c, std::ostream* os) { *os << c.name; }

constexpr char kPlaceholders[] = R"pb(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_DOUBLE } } }
  node { name: "dy" op: "Placeholder" attr { key: "dtype" value { type: DT_DOUBLE } } }
)pb";

std::string Unary(const std::string& op) {
  return absl::StrCat(R"(node { name: "y" op: ")", op,
                      R"(" input: "x" attr { key: "T" value { type: DT_DOUBLE } } })");
}
// TF's elementwise gradient ops: (gradients, features) or (y, dy) argument orders.
std::string GradOf(const std::string& op, const std::string& a, const std::string& b) {
  return absl::StrCat(R"(node { name: "g" op: ")", op, R"(" input: ")", a, R"(" input: ")", b,
                      R"(" attr { key: "T" value { type: DT_DOUBLE } } })");
}

// A Const node of `dtype` ("DT_DOUBLE" or "DT_INT32") holding `values` in `dims`.
std::string ConstNode(const std::string& name, const std::string& dtype,
                      const std::vector<int64_t>& dims, const std::vector<double>& values) {
  std::string shape, vals;
  for (int64_t d : dims) absl::StrAppend(&shape, "dim { size: ", d, " } ");
  const bool is_int = dtype == "DT_INT32";
  for (double v : values) {
    absl::StrAppend(&vals, is_int ? "int_val: " : "double_val: ",
                    is_int ? absl::StrCat(static_cast<int>(v)) : absl::StrCat(v), " ");
  }
  return absl::StrCat("node { name: \"", name, "\" op: \"Const\" attr { key: \"dtype\" value { ",
                      "type: ", dtype, " } } attr { key: \"value\" value { tensor { dtype: ", dtype,
                      " tensor_shape { ", shape, "} ", vals, "} } } }\n");
}

std::vector<double> Seeded(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u(-1, 1);
  std::vector<double> v(n);
  for (double& x : v) x = u(rng);
  return v;
}

constexpr char kConvAttrs[] = R"(attr { key: "T" value { type: DT_DOUBLE } }
    attr { key: "strides" value { list { i: 1 i: 1 i: 1 i: 1 } } }
    attr { key: "padding" value { s: "SAME" } })";
constexpr char kPoolAttrs[] = R"(attr { key: "T" value { type: DT_DOUBLE } }
    attr { key: "ksize" value { list { i: 1 i: 2 i: 2 i: 1 } } }
    attr { key: "strides" value { list { i: 1 i: 2 i: 2 i: 1 } } }
    attr { key: "padding" value { s: "VALID" } })";

// The windowed gradients: Conv2D's input and filter gradients, MaxPool's and AvgPool's.
void AddWindowCases(std::vector<GradCase>* cases) {
  const std::string filter = ConstNode("w", "DT_DOUBLE", {3, 3, 2, 3}, Seeded(54, 3));
  const std::string image = ConstNode("img", "DT_DOUBLE", {1, 5, 5, 2}, Seeded(50, 4));
  cases->push_back(
      {"Conv2DBackpropInput",
       filter +
           absl::StrCat(R"(node { name: "y" op: "Conv2D" input: "x" input: "w" )", kConvAttrs, "}"),
       ConstNode("in_sizes", "DT_INT32", {4}, {1, 5, 5, 2}) +
           absl::StrCat(R"(node { name: "g" op: "Conv2DBackpropInput" input: "in_sizes" )",
                        R"(input: "w" input: "dy" )", kConvAttrs, "}"),
       {1, 5, 5, 2},
       {1, 5, 5, 3}});
  cases->push_back(
      {"Conv2DBackpropFilter",
       image + absl::StrCat(R"(node { name: "y" op: "Conv2D" input: "img" input: "x" )", kConvAttrs,
                            "}"),
       ConstNode("f_sizes", "DT_INT32", {4}, {3, 3, 2, 3}) +
           absl::StrCat(R"(node { name: "g" op: "Conv2DBackpropFilter" input: "img" )",
                        R"(input: "f_sizes" input: "dy" )", kConvAttrs, "}"),
       {3, 3, 2, 3},
       {1, 5, 5, 3}});
  cases->push_back(
      {"MaxPoolGrad",
       absl::StrCat(R"(node { name: "y" op: "MaxPool" input: "x" )", kPoolAttrs, "}"),
       absl::StrCat(R"(node { name: "g" op: "MaxPoolGrad" input: "x" input: "y" input: "dy" )",
                    kPoolAttrs, "}"),
       {1, 4, 4, 2},
       {1, 2, 2, 2}});
  cases->push_back(
      {"AvgPoolGrad",
       absl::StrCat(R"(node { name: "y" op: "AvgPool" input: "x" )", kPoolAttrs, "}"),
       ConstNode("x_shape", "DT_INT32", {4}, {1, 4, 4, 2}) +
           absl::StrCat(R"(node { name: "g" op: "AvgPoolGrad" input: "x_shape" input: "dy" )",
                        kPoolAttrs, "}"),
       {1, 4, 4, 2},
       {1, 2, 2, 2}});
}

std::vector<GradCase> Cases() {
  std::vector<GradCase> cases = {
      {"Relu", Unary("Relu"), GradOf("ReluGrad", "dy", "x"), {3, 4}, {3, 4}, -2, 2, {0}},
      {"Relu6", Unary("Relu6"), GradOf("Relu6Grad", "dy", "x"), {3, 4}, {3, 4}, -2, 8, {0, 6}},
      {"Elu", Unary("Elu"), GradOf("EluGrad", "dy", "y"), {3, 4}, {3, 4}, -2, 2, {0}},
      {"Selu", Unary("Selu"), GradOf("SeluGrad", "dy", "y"), {3, 4}, {3, 4}, -2, 2, {0}},
      {"Softplus", Unary("Softplus"), GradOf("SoftplusGrad", "dy", "x"), {3, 4}, {3, 4}},
      {"Softsign", Unary("Softsign"), GradOf("SoftsignGrad", "dy", "x"), {3, 4}, {3, 4}},
      {"Sigmoid", Unary("Sigmoid"), GradOf("SigmoidGrad", "y", "dy"), {3, 4}, {3, 4}},
      {"Tanh", Unary("Tanh"), GradOf("TanhGrad", "y", "dy"), {3, 4}, {3, 4}},
      {"Sqrt", Unary("Sqrt"), GradOf("SqrtGrad", "y", "dy"), {3, 4}, {3, 4}, 0.5, 3},
      {"Rsqrt", Unary("Rsqrt"), GradOf("RsqrtGrad", "y", "dy"), {3, 4}, {3, 4}, 0.5, 3},
      {"Reciprocal",
       Unary("Reciprocal"),
       GradOf("ReciprocalGrad", "y", "dy"),
       {3, 4},
       {3, 4},
       0.5,
       3},
  };
  // BiasAdd's bias gradient: y = x + b over the last dim, so d<dy, y>/db = sum of dy over rows.
  // Here the "x" of the check is the bias.
  cases.push_back({"BiasAddGrad",
                   R"(node { name: "v" op: "Const" attr { key: "dtype" value { type: DT_DOUBLE } }
               attr { key: "value" value { tensor { dtype: DT_DOUBLE
                 tensor_shape { dim { size: 3 } dim { size: 4 } }
                 double_val: 0.5 double_val: -1 double_val: 2 double_val: 0.25 double_val: 1
                 double_val: 3 double_val: -0.5 double_val: 1.5 double_val: -2 double_val: 0
                 double_val: 0.75 double_val: 1.25 } } } }
          node { name: "y" op: "BiasAdd" input: "v" input: "x"
                 attr { key: "T" value { type: DT_DOUBLE } } })",
                   R"(node { name: "g" op: "BiasAddGrad" input: "dy"
                 attr { key: "T" value { type: DT_DOUBLE } } })",
                   {4},
                   {3, 4}});
  AddWindowCases(&cases);
  return cases;
}

class GradientCheckTest : public ::testing::TestWithParam<std::tuple<GradCase, JitMode>> {};

double Dot(const Tensor& a, const std::vector<double>& b) {
  double s = 0;
  for (int64_t i = 0; i < a.num_elements(); ++i) s += a.data<double>()[i] * b[i];
  return s;
}

TEST_P(GradientCheckTest, MatchesCentralDifferences) {
  const GradCase& c = std::get<0>(GetParam());
  SessionOptions options;
  options.jit = std::get<1>(GetParam());
  const std::string path =
      testing::WriteTempFile(absl::StrCat("grad_", c.name, ".pbtxt"),
                             absl::StrCat(kPlaceholders, c.forward, "\n", c.gradient));
  auto session = Session::Load(path, options);
  ASSERT_TRUE(session.ok()) << session.status();
  std::mt19937 rng(17);
  std::uniform_real_distribution<double> u(c.lo, c.hi), ud(-1, 1);
  int64_t nx = 1, ny = 1;
  for (int64_t d : c.x_dims) nx *= d;
  for (int64_t d : c.y_dims) ny *= d;
  std::vector<double> x(static_cast<size_t>(nx)), dy(static_cast<size_t>(ny));
  for (double& v : x) {
    bool near_kink = true;
    while (near_kink) {  // keep h-steps from crossing a kink
      v = u(rng);
      near_kink = false;
      for (double k : c.kinks) near_kink |= std::abs(v - k) < 0.05;
    }
  }
  for (double& v : dy) v = ud(rng);
  const Tensor dy_t = Tensor::FromVector(DType::kFloat64, c.y_dims, dy);
  auto grad = (*session)->Run(
      {{"x", Tensor::FromVector(DType::kFloat64, c.x_dims, x)}, {"dy", dy_t}}, {"g"});
  ASSERT_TRUE(grad.ok()) << grad.status();
  ASSERT_EQ((*grad)[0].num_elements(), nx);
  const double h = 1e-6;
  for (int64_t i = 0; i < nx; ++i) {
    std::vector<double> xp = x, xm = x;
    xp[static_cast<size_t>(i)] += h;
    xm[static_cast<size_t>(i)] -= h;
    auto fp = (*session)->Run({{"x", Tensor::FromVector(DType::kFloat64, c.x_dims, xp)}}, {"y"});
    auto fm = (*session)->Run({{"x", Tensor::FromVector(DType::kFloat64, c.x_dims, xm)}}, {"y"});
    ASSERT_TRUE(fp.ok() && fm.ok());
    const double numeric = (Dot((*fp)[0], dy) - Dot((*fm)[0], dy)) / (2 * h);
    const double analytic = (*grad)[0].data<double>()[i];
    EXPECT_NEAR(analytic, numeric, 1e-6 * (1 + std::abs(numeric)))
        << c.name << " x[" << i << "] = " << x[i];
  }
}

INSTANTIATE_TEST_SUITE_P(Ops, GradientCheckTest,
                         ::testing::Combine(::testing::ValuesIn(Cases()),
                                            ::testing::Values(JitMode::kNone, JitMode::kAuto)),
                         [](const ::testing::TestParamInfo<GradientCheckTest::ParamType>& info) {
                           return absl::StrCat(std::get<0>(info.param).name, "_",
                                               JitModeName(std::get<1>(info.param)));
                         });

}  // namespace
}  // namespace tfjit
