// Differential cases of the special ops (docs/DESIGN.md, "Op families"): kernel vs evaluator
// vs CPU JIT, each against values computed with mpmath at 50 digits (tables below; inputs are
// dyadic so that every dtype feeds them exactly, plus float64-only extras that probe the
// tails and the branch points of each algorithm).
#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "tests/tf/op_cases.h"

namespace tfjit::optest {
namespace {

constexpr double kInf = std::numeric_limits<double>::infinity();
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// mpmath (mp.dps = 50): erfinv, -sqrt(2) erfinv(1 - 2p) (a log-space root far out), besseli
// times exp(-|x|), x log1p(y), gammainc regularized, betainc regularized, zeta(x, q),
// polygamma; TF's NaN/inf conventions outside the domains.
const std::vector<double> kErfinvIn = {0.0,   -0.9921875, -0.75, -0.125, 0.25, 0.5,
                                       0.875, 0.96875,    1.0,   -1.0,   1.5,  0.0078125};
const std::vector<double> kErfinvOut = {0.0,
                                        -1.8809517454731395,
                                        -0.8134198475976185,
                                        -0.11123545184094996,
                                        0.2253120550121781,
                                        0.4769362762044699,
                                        1.0847870400692832,
                                        1.523019401996956,
                                        kInf,
                                        -kInf,
                                        kNaN,
                                        0.006923758491549614};
const std::vector<double> kErfinvWideIn = {-0.999, 0.9999, 1e-06, -0.3, 0.99, 0.7};
const std::vector<double> kErfinvWideOut = {-2.3267537655135246, 2.75106390571208,
                                            8.8622692545299e-07, -0.2724627147267543,
                                            1.8213863677184494,  0.7328690779592167};
const std::vector<double> kNdtriIn = {0.0,   0.0078125, 0.03125, 0.25,   0.5,  0.625,
                                      0.875, 0.9921875, 1.0,     -0.125, 1.25, 0.375};
const std::vector<double> kNdtriOut = {-kInf,
                                       -2.4175590162365053,
                                       -1.8627318674216515,
                                       -0.6744897501960817,
                                       0.0,
                                       0.31863936396437514,
                                       1.150349380376008,
                                       2.4175590162365053,
                                       kInf,
                                       kNaN,
                                       kNaN,
                                       -0.31863936396437514};
const std::vector<double> kNdtriWideIn = {1e-300, 1e-20, 1e-05, 0.999, 0.999999, 0.3};
const std::vector<double> kNdtriWideOut = {-37.0470962993612,  -9.262340089798407,
                                           -4.264890793922825, 3.090232306167813,
                                           4.753424308817087,  -0.5244005127080408};
const std::vector<double> kI0eIn = {0.0,   0.5,  -0.5, 3.0,     -3.0, 10.0,
                                    -24.0, 26.0, 96.0, -1024.0, 7.25, 0.0078125};
const std::vector<double> kI0eOut = {1.0,
                                     0.6450352704491501,
                                     0.6450352704491501,
                                     0.2430003541618254,
                                     0.2430003541618254,
                                     0.1278333371634286,
                                     0.08186828833403062,
                                     0.07862365204001373,
                                     0.04077020682828018,
                                     0.012468468943396522,
                                     0.15095349002867584,
                                     0.9922330783622222};
const std::vector<double> kI1eIn = {0.0,   0.5,  -0.5, 3.0,     -3.0, 10.0,
                                    -24.0, 26.0, 96.0, -1024.0, 7.25, 0.0078125};
const std::vector<double> kI1eOut = {0.0,
                                     0.1564208031848717,
                                     -0.1564208031848717,
                                     0.19682671329730086,
                                     -0.19682671329730086,
                                     0.12126268138445552,
                                     -0.08014413927653474,
                                     0.07709652456966624,
                                     0.04055730316366521,
                                     -0.012462379335984191,
                                     0.14011851895630761,
                                     0.0038758808918031525};
const std::vector<double> kI0eWideIn = {25.0, 25.000001, 10000.0, -0.001, 30.0, 24.99};
const std::vector<double> kI0eWideOut = {0.0801967735474367,   0.08019677192677653,
                                         0.003989472674604732, 0.9990007495835156,
                                         0.0731459464822373,   0.08021298506517069};
const std::vector<double> kI1eWideIn = {25.0, 25.000001, 10000.0, -0.001, 30.0, 24.99};
const std::vector<double> kI1eWideOut = {0.07857611331929278,  0.07857611179690852,
                                         0.003989273195983662, -0.0004995003123542213,
                                         0.07191633059864755,  0.07859134158082241};
const std::vector<std::vector<double>> kXlog1pyIn = {
    {0.0, 0.0, 2.0, -1.5, 0.25, 4.0, -3.0, 1.0, 0.5, -0.75, 8.0, 1.5},
    {-1.0, 3.0, 0.5, 3.0, -0.5, 1024.0, -0.875, 0.0, 7.0, 0.0078125, -0.25, 1.5}};
const std::vector<double> kXlog1pyOut = {0.0,
                                         0.0,
                                         0.8109302162163288,
                                         -2.0794415416798357,
                                         -0.17328679513998632,
                                         27.729791566290036,
                                         6.238324625039508,
                                         0.0,
                                         1.0397207708399179,
                                         -0.005836605331541212,
                                         -2.301456579614247,
                                         1.3744360978112327};
const std::vector<std::vector<double>> kIgammaIn = {
    {0.5, 1.0, 3.0, 3.0, 10.0, 50.0, 0.125, 2.0, -1.0, 2.0, 7.5, 20.0},
    {0.25, 1.0, 2.5, 7.0, 12.0, 45.0, 5.0, 0.0, 2.0, kInf, 0.5, 60.0}};
const std::vector<double> kIgammaOut = {0.5204998778130465,
                                        0.6321205588285577,
                                        0.45618688411667047,
                                        0.9703638361194782,
                                        0.7576078383294876,
                                        0.24680203440017026,
                                        0.9998100559722013,
                                        0.0,
                                        kNaN,
                                        1.0,
                                        2.535644310823259e-07,
                                        0.9999999993648082};
const std::vector<std::vector<double>> kIgammacIn = {
    {0.5, 1.0, 3.0, 3.0, 10.0, 50.0, 0.125, 2.0, -1.0, 2.0, 7.5, 20.0},
    {0.25, 1.0, 2.5, 7.0, 12.0, 45.0, 5.0, 0.0, 2.0, kInf, 0.5, 60.0}};
const std::vector<double> kIgammacOut = {0.4795001221869535,
                                         0.36787944117144233,
                                         0.5438131158833295,
                                         0.029636163880521777,
                                         0.24239216167051233,
                                         0.7531979655998298,
                                         0.00018994402779873182,
                                         1.0,
                                         kNaN,
                                         0.0,
                                         0.9999997464355689,
                                         6.351918340378976e-10};
const std::vector<std::vector<double>> kBetaincIn = {
    {0.5, 2.0, 5.0, 10.0, 1.0, 0.25, 3.0, 3.0, 40.0, 2.0, 1.5, 8.0},
    {0.5, 3.0, 1.0, 20.0, 1.0, 4.0, 3.0, 3.0, 30.0, 2.0, 2.5, 0.5},
    {0.3125, 0.375, 0.875, 0.3125, 0.75, 0.015625, 0.0, 1.0, 0.625, 1.5, 0.984375, 0.25}};
const std::vector<double> kBetaincOut = {0.3776427064608769,
                                         0.481201171875,
                                         0.512908935546875,
                                         0.42098920121963357,
                                         0.75,
                                         0.5336106385273167,
                                         0.0,
                                         1.0,
                                         0.8168123412047261,
                                         kNaN,
                                         0.9999381780914335,
                                         3.399001676123507e-06};
const std::vector<std::vector<double>> kZetaIn = {
    {2.0, 3.0, 1.5, 4.0, 2.0, 6.0, 1.0, 0.5, 2.5, 3.0, 8.0, 2.0},
    {1.0, 0.5, 10.0, 2.5, -1.5, 0.125, 2.0, 1.0, -1.5, -2.0, 1.25, 100.0}};
const std::vector<double> kZetaOut = {1.6449340668482264,
                                      8.41439832211716,
                                      0.6486616319415704,
                                      0.03731764146954201,
                                      9.379246644989124,
                                      262144.5054966887,
                                      kInf,
                                      kNaN,
                                      kNaN,
                                      kInf,
                                      0.1693867090174162,
                                      0.010050166663333571};
const std::vector<std::vector<double>> kPolygammaIn = {
    {0.0, 1.0, 2.0, 3.0, 1.0, 0.0, 4.0, 0.0, 1.5, -1.0, 2.0, 0.0},
    {1.5, 1.0, 3.5, 0.25, -1.5, -0.5, 10.0, 0.0, 2.0, 2.0, 0.75, 30.0}};
const std::vector<double> kPolygammaOut = {0.03648997397857652,
                                           1.6449340668482264,
                                           -0.1082040516417274,
                                           1538.7821440091884,
                                           9.379246644989124,
                                           0.03648997397857652,
                                           -0.0007299311682352867,
                                           kNaN,
                                           kNaN,
                                           kNaN,
                                           -5.3026332163376395,
                                           3.384438132685525};

// Erfc, Lgamma and Digamma (kernels in special_kernels.cc, lowerings in
// special_lowerings.cc).
const std::vector<double> kErfcIn = {0.0,  0.5, -0.5, 1.5,  -1.25,     2.0,
                                     3.75, 5.0, 9.5,  -3.0, 0.0078125, 26.0};
const std::vector<double> kErfcOut = {1.0,
                                      0.4795001221869535,
                                      1.5204998778130465,
                                      0.033894853524689274,
                                      1.9229001282564582,
                                      0.004677734981047266,
                                      1.1372725656979665e-07,
                                      1.537459794428035e-12,
                                      3.7692144856548797e-41,
                                      1.9999779095030015,
                                      0.9911847171048208,
                                      5.663192408856143e-296};
const std::vector<double> kErfcWideIn = {7.25, 20.5, -0.3, 1.999, 2.001, 1e-10};
const std::vector<double> kErfcWideOut = {1.1466900814815012e-24, 8.450842369572458e-185,
                                          1.3286267594591274,     0.004698443348629487,
                                          0.00465710928147535,    0.999999999887162};
const std::vector<double> kLgammaIn = {0.5,  1.0,  2.0,   3.5,  0.0078125, -0.5,
                                       -2.5, 10.0, 100.5, 1.25, -3.0,      0.0};
const std::vector<double> kLgammaOut = {0.5723649429247001,
                                        0.0,
                                        0.0,
                                        1.2009736023470743,
                                        4.847570775881665,
                                        1.2655121234846454,
                                        -0.056243716497674054,
                                        12.801827480081469,
                                        361.4355404677776,
                                        -0.09827183642181316,
                                        kInf,
                                        kInf};
const std::vector<double> kLgammaWideIn = {1e-08, 1.0001, 100000.0, -7.3, 2.9999, 1e+300};
const std::vector<double> kLgammaWideOut = {18.42068073818021,  -5.771334222047127e-05,
                                            1051287.7089736569, -7.779101629826852,
                                            0.6930549041011312, 6.897755278982137e+302};
const std::vector<double> kDigammaIn = {0.5,  1.0,  2.0,   3.5,  0.0078125, -0.5,
                                        -2.5, 10.0, 100.5, 1.25, -3.0,      0.0};
const std::vector<double> kDigammaOut = {-1.9635100260214235,
                                         -0.5772156649015329,
                                         0.42278433509846713,
                                         1.103156640645243,
                                         -128.56443747297672,
                                         0.03648997397857652,
                                         1.103156640645243,
                                         2.251752589066721,
                                         4.605174352581845,
                                         -0.22745353337626542,
                                         kNaN,
                                         kNaN};
const std::vector<double> kDigammaWideIn = {1e-08,  1.4616321449683622, 100000.0, -7.3,
                                            2.9999, 1000000000000000.0};
const std::vector<double> kDigammaWideOut = {-100000000.57721564, -9.241265521729427e-17,
                                             11.512920464961896,  4.33730730551005,
                                             0.9227448409211934,  34.538776394910684};

Tensor Column(DType t, const std::vector<double>& v) {
  return Floats(t, {static_cast<int64_t>(v.size())}, v);
}

OpCase TableCase(const std::string& name, const std::string& op, DType t,
                 const std::vector<std::vector<double>>& in, const std::vector<double>& out) {
  OpCase c{absl::StrCat(op, "_", name, "_", DTypeName(t)), op, t, {}};
  for (const std::vector<double>& col : in) {
    c.inputs.push_back({static_cast<int64_t>(col.size())});
    c.feed_values.push_back(Column(t, col));
  }
  c.reference = [t, out](const std::vector<Tensor>&) { return Column(t, out); };
  return c;
}

}  // namespace

std::vector<OpCase> SpecialCases() {
  std::vector<OpCase> cases;
  const std::vector<DType> all = {DType::kFloat32, DType::kFloat64, DType::kFloat16,
                                  DType::kBFloat16};
  const std::vector<DType> wide = {DType::kFloat32, DType::kFloat64};
  struct Unary {
    const char* op;
    const std::vector<double>& in;
    const std::vector<double>& out;
    const std::vector<double>& wide_in;
    const std::vector<double>& wide_out;
  };
  const Unary unary[] = {{"Erfinv", kErfinvIn, kErfinvOut, kErfinvWideIn, kErfinvWideOut},
                         {"Ndtri", kNdtriIn, kNdtriOut, kNdtriWideIn, kNdtriWideOut},
                         {"BesselI0e", kI0eIn, kI0eOut, kI0eWideIn, kI0eWideOut},
                         {"BesselI1e", kI1eIn, kI1eOut, kI1eWideIn, kI1eWideOut},
                         {"Erfc", kErfcIn, kErfcOut, kErfcWideIn, kErfcWideOut},
                         {"Lgamma", kLgammaIn, kLgammaOut, kLgammaWideIn, kLgammaWideOut},
                         {"Digamma", kDigammaIn, kDigammaOut, kDigammaWideIn, kDigammaWideOut}};
  for (const Unary& u : unary) {
    for (DType t : all) cases.push_back(TableCase("table", u.op, t, {u.in}, u.out));
    cases.push_back(TableCase("tails", u.op, DType::kFloat64, {u.wide_in}, u.wide_out));
    OpCase r{absl::StrCat(u.op, "_random_f32"), u.op, DType::kFloat32, {{5, 7}}};
    cases.push_back(r);  // seeded values in [-1, 1): kernel vs evaluator vs JIT
  }
  for (DType t : all) cases.push_back(TableCase("table", "Xlog1py", t, kXlog1pyIn, kXlog1pyOut));
  OpCase bx{"Xlog1py_broadcast_f64", "Xlog1py", DType::kFloat64, {{3, 1}, {4}}};
  bx.reference = BinaryRef([](double x, double y) { return x == 0 ? 0 : x * std::log1p(y); });
  cases.push_back(bx);
  struct Binary {
    const char* op;
    const std::vector<std::vector<double>>& in;
    const std::vector<double>& out;
  };
  const Binary binary[] = {{"Igamma", kIgammaIn, kIgammaOut},
                           {"Igammac", kIgammacIn, kIgammacOut},
                           {"Betainc", kBetaincIn, kBetaincOut},
                           {"Zeta", kZetaIn, kZetaOut},
                           {"Polygamma", kPolygammaIn, kPolygammaOut}};
  for (const Binary& b : binary) {
    for (DType t : wide) cases.push_back(TableCase("table", b.op, t, b.in, b.out));
  }
  // Broadcasting: a scalar a against a matrix x; Betainc's scalars.
  OpCase ig{"Igamma_scalar_a_f64", "Igamma", DType::kFloat64, {{}, {2, 3}}};
  ig.feed_values = {Floats(DType::kFloat64, {}, {2.5}),
                    Floats(DType::kFloat64, {2, 3}, {0.5, 1, 2.5, 4, 8, 0.125})};
  cases.push_back(ig);
  OpCase bs{"Betainc_scalar_ab_f32", "Betainc", DType::kFloat32, {{}, {}, {2, 2}}};
  bs.feed_values = {Floats(DType::kFloat32, {}, {2}), Floats(DType::kFloat32, {}, {3}),
                    Floats(DType::kFloat32, {2, 2}, {0.375, 0.5, 0.125, 0.875})};
  bs.reference = [](const std::vector<Tensor>&) {
    // I_x(2, 3) = 1 - (1 - x)^3 (1 + 3x) for integer parameters.
    return Build(DType::kFloat32, {2, 2}, [](const Dims& i) {
      const double x =
          std::vector<double>{0.375, 0.5, 0.125, 0.875}[static_cast<size_t>(i[0] * 2 + i[1])];
      return 1 - std::pow(1 - x, 3) * (1 + 3 * x);
    });
  };
  cases.push_back(bs);
  return cases;
}

}  // namespace tfjit::optest
