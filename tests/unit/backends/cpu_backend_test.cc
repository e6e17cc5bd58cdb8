// Differential tests of the CPU backend: every supported opcode, over a table of dtypes and
// shapes (scalars, empty and size-1 dims, sizes that are not a multiple of the vector width),
// compiled by the JIT and compared with the evaluator on seeded random inputs.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "gtest/gtest.h"
#include "tests/unit/backends/backend_test_util.h"

namespace tfjit {
namespace {

using testing_util::RunAndCompare;
using testing_util::ShapeStr;
using testlib::ErrorSpec;

constexpr ErrorSpec kExact{0, 0};
constexpr ErrorSpec kTranscendental{1e-6, 1e-5};
constexpr ErrorSpec kReduction{1e-4, 1e-5};

struct Case {
  std::string name;
  std::string hlo;
  ErrorSpec spec;
  bool edge_values = false;
};

std::string Module(const std::string& signature, const std::string& result, const std::string& body,
                   const std::string& computations = "") {
  return absl::StrCat("HloModule m\n\n", computations, "ENTRY %main (", signature, ") -> ", result,
                      " {\n", body, "}\n");
}

std::string DimsName(const std::vector<int64_t>& dims) {
  return dims.empty() ? "scalar" : absl::StrJoin(dims, "x");
}

std::string Sanitize(std::string s) {
  for (char& c : s) {
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return s;
}

const std::vector<std::vector<int64_t>> kShapes = {{}, {0}, {1}, {7}, {17, 33}, {1023}, {3, 1, 5}};

std::string UnaryModule(const std::string& op, const std::string& type,
                        const std::vector<int64_t>& dims, const std::string& out_type = "") {
  const std::string s = ShapeStr(type, dims);
  const std::string r = ShapeStr(out_type.empty() ? type : out_type, dims);
  return Module("a: " + s, r,
                absl::StrCat("  %a = ", s, " parameter(0)\n  ROOT %r = ", r, " ", op, "(%a)\n"));
}

std::string BinaryModule(const std::string& op, const std::string& type,
                         const std::vector<int64_t>& dims, const std::string& out_type = "",
                         const std::string& attrs = "") {
  const std::string s = ShapeStr(type, dims);
  const std::string r = ShapeStr(out_type.empty() ? type : out_type, dims);
  return Module("a: " + s + ", b: " + s, r,
                absl::StrCat("  %a = ", s, " parameter(0)\n  %b = ", s, " parameter(1)\n",
                             "  ROOT %r = ", r, " ", op, "(%a, %b)", attrs, "\n"));
}

void AddElementwiseCases(std::vector<Case>& cases) {
  const std::vector<std::string> float_types = {"f32", "f64", "f16", "bf16"};
  for (const std::string& t : float_types) {
    for (const auto& dims : kShapes) {
      for (const char* op : {"add", "subtract", "multiply", "divide", "maximum", "minimum"}) {
        cases.push_back({absl::StrCat(op, "_", t, "_", DimsName(dims)), BinaryModule(op, t, dims),
                         kExact, true});
      }
      for (const char* op : {"power", "remainder", "atan2"}) {
        cases.push_back({absl::StrCat(op, "_", t, "_", DimsName(dims)), BinaryModule(op, t, dims),
                         kTranscendental, true});
      }
      for (const char* op : {"abs", "negate", "sqrt", "floor", "ceil", "sign", "round-nearest-even",
                             "round-nearest-afz"}) {
        cases.push_back({absl::StrCat(op, "_", t, "_", DimsName(dims)), UnaryModule(op, t, dims),
                         kExact, true});
      }
      for (const char* op : {"exp", "log", "tanh", "logistic", "rsqrt", "expm1", "log1p", "sine",
                             "cosine", "tan", "cbrt", "erf"}) {
        cases.push_back({absl::StrCat(op, "_", t, "_", DimsName(dims)), UnaryModule(op, t, dims),
                         kTranscendental, true});
      }
      cases.push_back({absl::StrCat("is_finite_", t, "_", DimsName(dims)),
                       UnaryModule("is-finite", t, dims, "pred"), kExact, true});
    }
  }
  for (std::string t : {"s32", "s64", "u8", "s8", "u32", "s16"}) {
    for (const auto& dims : kShapes) {
      for (const char* op :
           {"add", "subtract", "multiply", "divide", "remainder", "maximum", "minimum", "and", "or",
            "xor", "shift-left", "shift-right-logical", "shift-right-arithmetic", "power"}) {
        cases.push_back({absl::StrCat(op, "_", t, "_", DimsName(dims)), BinaryModule(op, t, dims),
                         kExact, true});
      }
      for (const char* op : {"abs", "negate", "sign", "not"}) {
        cases.push_back({absl::StrCat(op, "_", t, "_", DimsName(dims)), UnaryModule(op, t, dims),
                         kExact, true});
      }
    }
  }
  for (const auto& dims : kShapes) {
    for (const char* op : {"and", "or", "xor", "maximum", "minimum"}) {
      cases.push_back(
          {absl::StrCat(op, "_pred_", DimsName(dims)), BinaryModule(op, "pred", dims), kExact});
    }
    cases.push_back(
        {absl::StrCat("not_pred_", DimsName(dims)), UnaryModule("not", "pred", dims), kExact});
  }
}

void AddCompareSelectClampCases(std::vector<Case>& cases) {
  for (std::string t : {"f32", "f64", "f16", "bf16", "s32", "u8", "s64", "pred"}) {
    for (const char* dir : {"EQ", "NE", "LT", "LE", "GT", "GE"}) {
      for (const auto& dims : std::vector<std::vector<int64_t>>{{}, {17}, {3, 1, 5}}) {
        cases.push_back(
            {absl::StrCat("compare_", dir, "_", t, "_", DimsName(dims)),
             BinaryModule("compare", t, dims, "pred", absl::StrCat(", direction=", dir)), kExact,
             true});
      }
    }
    const std::string s = ShapeStr(t, {33});
    cases.push_back(
        {"select_" + t,
         Module("p: pred[33], a: " + s + ", b: " + s, s,
                absl::StrCat("  %p = pred[33] parameter(0)\n  %a = ", s, " parameter(1)\n  %b = ",
                             s, " parameter(2)\n  ROOT %r = ", s, " select(%p, %a, %b)\n")),
         kExact, true});
    cases.push_back(
        {"select_scalar_pred_" + t,
         Module("p: pred[], a: " + s + ", b: " + s, s,
                absl::StrCat("  %p = pred[] parameter(0)\n  %a = ", s, " parameter(1)\n  %b = ", s,
                             " parameter(2)\n  ROOT %r = ", s, " select(%p, %a, %b)\n")),
         kExact});
    if (t == "pred") continue;
    const std::string sc = ShapeStr(t, {});
    cases.push_back(
        {"clamp_scalar_bounds_" + t,
         Module("lo: " + sc + ", x: " + s + ", hi: " + sc, s,
                absl::StrCat("  %lo = ", sc, " parameter(0)\n  %x = ", s, " parameter(1)\n  %hi = ",
                             sc, " parameter(2)\n  ROOT %r = ", s, " clamp(%lo, %x, %hi)\n")),
         kExact, true});
    cases.push_back(
        {"clamp_array_bounds_" + t,
         Module("lo: " + s + ", x: " + s + ", hi: " + s, s,
                absl::StrCat("  %lo = ", s, " parameter(0)\n  %x = ", s, " parameter(1)\n  %hi = ",
                             s, " parameter(2)\n  ROOT %r = ", s, " clamp(%lo, %x, %hi)\n")),
         kExact, true});
  }
}

void AddConvertCases(std::vector<Case>& cases) {
  const std::vector<std::string> types = {"pred", "s8",  "s16", "s32",  "s64", "u8",
                                          "u32",  "u64", "f16", "bf16", "f32", "f64"};
  for (const std::string& from : types) {
    for (const std::string& to : types) {
      cases.push_back({absl::StrCat("convert_", from, "_to_", to),
                       UnaryModule("convert", from, {33}, to), kExact, true});
    }
  }
}

void AddDataMovementCases(std::vector<Case>& cases) {
  auto one = [&](const std::string& name, const std::string& in, const std::string& out,
                 const std::string& expr) {
    cases.push_back(
        {name,
         Module("x: " + in, out,
                absl::StrCat("  %x = ", in, " parameter(0)\n  ROOT %r = ", out, " ", expr, "\n")),
         kExact});
  };
  for (std::string t : {"f32", "s32", "pred", "f16"}) {
    one("broadcast_vec_" + t, t + "[3]", t + "[2,3,4]", "broadcast(%x), dimensions={1}");
    one("broadcast_scalar_" + t, t + "[]", t + "[7,17]", "broadcast(%x), dimensions={}");
    one("broadcast_size1_" + t, t + "[5]", t + "[1,5,1]", "broadcast(%x), dimensions={1}");
    one("reshape_" + t, t + "[2,3,4]", t + "[6,4]", "reshape(%x)");
    one("reshape_to_scalar_" + t, t + "[1,1]", t + "[]", "reshape(%x)");
    one("transpose3_" + t, t + "[2,3,4]", t + "[4,2,3]", "transpose(%x), dimensions={2,0,1}");
    one("transpose2_" + t, t + "[17,33]", t + "[33,17]", "transpose(%x), dimensions={1,0}");
    one("slice_" + t, t + "[10,17]", t + "[4,6]", "slice(%x), slice={[1:9:2], [0:17:3]}");
    one("reverse_" + t, t + "[3,4,5]", t + "[3,4,5]", "reverse(%x), dimensions={0,2}");
    one("empty_slice_" + t, t + "[4,3]", t + "[0,3]", "slice(%x), slice={[2:2:1], [0:3:1]}");
  }
  for (std::string t : {"f32", "s32", "u8", "f16", "s64"}) {
    cases.push_back({"iota_" + t,
                     Module("", t + "[4,5]",
                            absl::StrCat("  ROOT %r = ", t, "[4,5] iota(), iota_dimension=1\n")),
                     kExact});
  }
  cases.push_back({"concatenate",
                   Module("a: f32[2,3], b: f32[2,5], c: f32[2,0], d: f32[2,1]", "f32[2,9]",
                          "  %a = f32[2,3] parameter(0)\n  %b = f32[2,5] parameter(1)\n"
                          "  %c = f32[2,0] parameter(2)\n  %d = f32[2,1] parameter(3)\n"
                          "  ROOT %r = f32[2,9] concatenate(%a, %b, %c, %d), dimensions={1}\n"),
                   kExact});
  cases.push_back({"concatenate_dim0_pred",
                   Module("a: pred[3,2], b: pred[4,2]", "pred[7,2]",
                          "  %a = pred[3,2] parameter(0)\n  %b = pred[4,2] parameter(1)\n"
                          "  ROOT %r = pred[7,2] concatenate(%a, %b), dimensions={0}\n"),
                   kExact});
  cases.push_back({"pad_negative_interior",
                   Module("x: f32[3,4], v: f32[]", "f32[8,4]",
                          "  %x = f32[3,4] parameter(0)\n  %v = f32[] parameter(1)\n"
                          "  ROOT %r = f32[8,4] pad(%x, %v), padding=1_2_1x-1_1_0\n"),
                   kExact});
  cases.push_back({"pad_s32",
                   Module("x: s32[5], v: s32[]", "s32[9]",
                          "  %x = s32[5] parameter(0)\n  %v = s32[] parameter(1)\n"
                          "  ROOT %r = s32[9] pad(%x, %v), padding=2_2\n"),
                   kExact});
  cases.push_back(
      {"constant_array_add",
       Module(
           "x: f32[2,3]", "f32[2,3]",
           "  %x = f32[2,3] parameter(0)\n  %c = f32[2,3] constant({{1, 2.5, -3}, {4, 5, nan}})\n"
           "  ROOT %r = f32[2,3] add(%x, %c)\n"),
       kExact});
}

const char kAddF32[] =
    "%add (a: f32[], b: f32[]) -> f32[] {\n  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n"
    "  ROOT %s = f32[] add(%a, %b)\n}\n\n";
const char kMaxF32[] =
    "%max (p: f32[], q: f32[]) -> f32[] {\n  %p = f32[] parameter(0)\n  %q = f32[] parameter(1)\n"
    "  ROOT %mx = f32[] maximum(%p, %q)\n}\n\n";
const char kAddS32[] =
    "%add (a: s32[], b: s32[]) -> s32[] {\n  %a = s32[] parameter(0)\n  %b = s32[] parameter(1)\n"
    "  ROOT %s = s32[] add(%a, %b)\n}\n\n";
const char kOrPred[] =
    "%or (a: pred[], b: pred[]) -> pred[] {\n  %a = pred[] parameter(0)\n"
    "  %b = pred[] parameter(1)\n  ROOT %s = pred[] or(%a, %b)\n}\n\n";

void AddReduceCases(std::vector<Case>& cases) {
  const std::vector<int64_t> in = {7, 17, 5};
  const std::vector<std::vector<int64_t>> dim_sets = {{0}, {1}, {2}, {0, 2}, {0, 1, 2}};
  for (const auto& ds : dim_sets) {
    std::vector<int64_t> out;
    for (int64_t d = 0; d < 3; ++d) {
      if (std::find(ds.begin(), ds.end(), d) == ds.end()) out.push_back(in[d]);
    }
    const std::string dims_attr = absl::StrCat("dimensions={", absl::StrJoin(ds, ","), "}");
    struct Variant {
      const char* name;
      const char* type;
      const char* comp;
      const char* fn;
      const char* init;
      ErrorSpec spec;
    };
    for (const Variant& v : {Variant{"sum_f32", "f32", kAddF32, "%add", "0", kReduction},
                             Variant{"max_f32", "f32", kMaxF32, "%max", "-inf", kExact},
                             Variant{"sum_s32", "s32", kAddS32, "%add", "0", kExact},
                             Variant{"or_pred", "pred", kOrPred, "%or", "false", kExact}}) {
      const std::string s_in = ShapeStr(v.type, in), s_out = ShapeStr(v.type, out);
      cases.push_back(
          {absl::StrCat("reduce_", v.name, "_dims_", absl::StrJoin(ds, "_")),
           Module("x: " + s_in, s_out,
                  absl::StrCat("  %x = ", s_in, " parameter(0)\n  %init = ", v.type, "[] constant(",
                               v.init, ")\n  ROOT %r = ", s_out, " reduce(%x, %init), ", dims_attr,
                               ", to_apply=", v.fn, "\n"),
                  v.comp),
           v.spec, true});
    }
  }
  cases.push_back({"reduce_empty_input",
                   Module("x: f32[0,4], i: f32[]", "f32[4]",
                          "  %x = f32[0,4] parameter(0)\n  %i = f32[] parameter(1)\n"
                          "  ROOT %r = f32[4] reduce(%x, %i), dimensions={0}, to_apply=%add\n",
                          kAddF32),
                   kExact});
  cases.push_back({"reduce_fused_producers_1023",
                   Module("x: f32[3,1023]", "f32[3]",
                          "  %x = f32[3,1023] parameter(0)\n  %e = f32[3,1023] exp(%x)\n"
                          "  %two = f32[] constant(2)\n"
                          "  %tb = f32[3,1023] broadcast(%two), dimensions={}\n"
                          "  %m = f32[3,1023] multiply(%e, %tb)\n  %z = f32[] constant(0)\n"
                          "  ROOT %r = f32[3] reduce(%m, %z), dimensions={1}, to_apply=%add\n",
                          kAddF32),
                   kReduction});
}

std::string DotModule(const std::string& type, const std::vector<int64_t>& lhs,
                      const std::vector<int64_t>& rhs, const std::vector<int64_t>& out,
                      const std::string& attrs) {
  const std::string l = ShapeStr(type, lhs), r = ShapeStr(type, rhs), o = ShapeStr(type, out);
  return Module("a: " + l + ", b: " + r, o,
                absl::StrCat("  %a = ", l, " parameter(0)\n  %b = ", r, " parameter(1)\n",
                             "  ROOT %d = ", o, " dot(%a, %b), ", attrs, "\n"));
}

void AddDotCases(std::vector<Case>& cases) {
  const char* kMatmul = "lhs_contracting_dims={1}, rhs_contracting_dims={0}";
  for (std::string t : {"f32", "f64", "s32", "f16"}) {
    const ErrorSpec spec = (t == "s32") ? kExact : ErrorSpec{1e-3, 1e-3};
    for (const auto& mkn : std::vector<std::vector<int64_t>>{
             {1, 1, 1}, {7, 17, 33}, {33, 1, 5}, {64, 64, 64}, {3, 0, 4}}) {
      const int64_t m = mkn[0], k = mkn[1], n = mkn[2];
      cases.push_back({absl::StrCat("dot_", t, "_", m, "x", k, "x", n),
                       DotModule(t, {m, k}, {k, n}, {m, n}, kMatmul), spec});
    }
    cases.push_back({"dot_transposed_lhs_" + t,
                     DotModule(t, {17, 7}, {17, 9}, {7, 9},
                               "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
                     spec});
    cases.push_back({"dot_transposed_rhs_" + t,
                     DotModule(t, {7, 17}, {9, 17}, {7, 9},
                               "lhs_contracting_dims={1}, rhs_contracting_dims={1}"),
                     spec});
    cases.push_back({"dot_both_transposed_" + t,
                     DotModule(t, {17, 7}, {9, 17}, {7, 9},
                               "lhs_contracting_dims={0}, rhs_contracting_dims={1}"),
                     spec});
    cases.push_back({"dot_batch_" + t,
                     DotModule(t, {3, 7, 5}, {3, 5, 4}, {3, 7, 4},
                               "lhs_batch_dims={0}, rhs_batch_dims={0}, "
                               "lhs_contracting_dims={2}, rhs_contracting_dims={1}"),
                     spec});
    cases.push_back(
        {"dot_matvec_" + t,
         DotModule(t, {7, 5}, {5}, {7}, "lhs_contracting_dims={1}, rhs_contracting_dims={0}"),
         spec});
    cases.push_back(
        {"dot_vecmat_" + t,
         DotModule(t, {5}, {5, 6}, {6}, "lhs_contracting_dims={0}, rhs_contracting_dims={0}"),
         spec});
    cases.push_back({"dot_batch_not_leading_" + t,
                     DotModule(t, {4, 3, 5}, {5, 3}, {3, 4},
                               "lhs_batch_dims={1}, rhs_batch_dims={1}, "
                               "lhs_contracting_dims={2}, rhs_contracting_dims={0}"),
                     spec});
    // A rank-2 lhs against a rank-4 rhs contracted in the middle (separable resizes): out
    // [m, outer..., n...] as per-outer GEMMs with strided output rows.
    cases.push_back({"dot_rhs_outer_" + t,
                     DotModule(t, {6, 4}, {3, 2, 4, 5}, {6, 3, 2, 5},
                               "lhs_contracting_dims={1}, rhs_contracting_dims={2}"),
                     spec});
    cases.push_back({"dot_rhs_outer_transposed_lhs_" + t,
                     DotModule(t, {4, 6}, {1, 4, 3, 5}, {6, 1, 3, 5},
                               "lhs_contracting_dims={0}, rhs_contracting_dims={1}"),
                     spec});
    cases.push_back({"dot_rhs_outer_last_" + t,
                     DotModule(t, {6, 4}, {3, 2, 4}, {6, 3, 2},
                               "lhs_contracting_dims={1}, rhs_contracting_dims={2}"),
                     spec});
  }
}

void AddFusionCases(std::vector<Case>& cases) {
  for (const auto& dims : kShapes) {
    const std::string s = ShapeStr("f32", dims);
    cases.push_back(
        {"elementwise_chain_" + DimsName(dims),
         Module("x: " + s + ", y: " + s + ", c: f32[]", s,
                absl::StrCat("  %x = ", s, " parameter(0)\n  %y = ", s, " parameter(1)\n",
                             "  %c = f32[] parameter(2)\n  %cb = ", s,
                             " broadcast(%c), dimensions={}\n  %m = ", s, " multiply(%x, %y)\n",
                             "  %a = ", s, " add(%m, %cb)\n  %t = ", s, " tanh(%a)\n", "  %e = ", s,
                             " exp(%t)\n  %mx = ", s, " maximum(%e, %x)\n", "  %p = pred",
                             s.substr(3), " compare(%mx, %y), direction=GT\n", "  ROOT %r = ", s,
                             " select(%p, %mx, %m)\n")),
         kTranscendental, true});
  }
  cases.push_back({"softmax_rows",
                   Module("x: f32[5,33]", "f32[5,33]",
                          "  %x = f32[5,33] parameter(0)\n  %ninf = f32[] constant(-inf)\n"
                          "  %rmax = f32[5] reduce(%x, %ninf), dimensions={1}, to_apply=%max\n"
                          "  %mb = f32[5,33] broadcast(%rmax), dimensions={0}\n"
                          "  %d = f32[5,33] subtract(%x, %mb)\n  %e = f32[5,33] exp(%d)\n"
                          "  %z = f32[] constant(0)\n"
                          "  %sum = f32[5] reduce(%e, %z), dimensions={1}, to_apply=%add\n"
                          "  %sb = f32[5,33] broadcast(%sum), dimensions={0}\n"
                          "  ROOT %r = f32[5,33] divide(%e, %sb)\n",
                          absl::StrCat(kAddF32, kMaxF32)),
                   kReduction});
  cases.push_back({"tuple_root_with_parameter_and_constant",
                   Module("x: f32[4], y: s32[3]", "(f32[4], s32[3], f32[4], f32[2])",
                          "  %x = f32[4] parameter(0)\n  %y = s32[3] parameter(1)\n"
                          "  %n = f32[4] negate(%x)\n  %c = f32[2] constant({1.5, -2})\n"
                          "  ROOT %t = (f32[4], s32[3], f32[4], f32[2]) tuple(%n, %y, %n, %c)\n"),
                   kExact});
  cases.push_back({"get_dimension_size",
                   Module("x: f32[5,3]", "(s32[], s32[3])",
                          "  %x = f32[5,3] parameter(0)\n"
                          "  %n = s32[] get-dimension-size(%x), dimensions={0}\n"
                          "  %m = s32[] get-dimension-size(%x), dimensions={1}\n"
                          "  %mb = s32[3] broadcast(%m), dimensions={}\n"
                          "  %i = s32[3] iota(), iota_dimension=0\n"
                          "  %s = s32[3] add(%mb, %i)\n"
                          "  ROOT %t = (s32[], s32[3]) tuple(%n, %s)\n"),
                   kExact});
  cases.push_back({"root_is_parameter",
                   Module("x: f32[3]", "f32[3]", "  ROOT %x = f32[3] parameter(0)\n"), kExact});
  cases.push_back({"root_is_reshape_of_kernel",
                   Module("x: f32[2,3]", "f32[6]",
                          "  %x = f32[2,3] parameter(0)\n  %e = f32[2,3] exp(%x)\n"
                          "  ROOT %r = f32[6] reshape(%e)\n"),
                   kTranscendental});
  cases.push_back({"dot_then_bias_relu",
                   Module("a: f32[8,16], w: f32[16,4], b: f32[4]", "f32[8,4]",
                          "  %a = f32[8,16] parameter(0)\n  %w = f32[16,4] parameter(1)\n"
                          "  %b = f32[4] parameter(2)\n"
                          "  %d = f32[8,4] dot(%a, %w), lhs_contracting_dims={1}, "
                          "rhs_contracting_dims={0}\n"
                          "  %bb = f32[8,4] broadcast(%b), dimensions={1}\n"
                          "  %s = f32[8,4] add(%d, %bb)\n  %z = f32[] constant(0)\n"
                          "  %zb = f32[8,4] broadcast(%z), dimensions={}\n"
                          "  ROOT %r = f32[8,4] maximum(%s, %zb)\n"),
                   ErrorSpec{1e-4, 1e-4}});
}

std::vector<Case> AllCases() {
  std::vector<Case> cases;
  AddElementwiseCases(cases);
  AddCompareSelectClampCases(cases);
  AddConvertCases(cases);
  AddDataMovementCases(cases);
  AddReduceCases(cases);
  AddDotCases(cases);
  AddFusionCases(cases);
  return cases;
}

// Keeps gtest from hex-dumping the parameter: the name says which case failed.
void PrintTo(const Case& c, std::ostream* os) { *os << c.name; }

class CpuDifferentialTest : public ::testing::TestWithParam<Case> {};

TEST_P(CpuDifferentialTest, MatchesEvaluator) {
  const Case& c = GetParam();
  EXPECT_TRUE(RunAndCompare(c.hlo, {1, 2, 3}, c.spec, c.edge_values));
}

INSTANTIATE_TEST_SUITE_P(Ops, CpuDifferentialTest, ::testing::ValuesIn(AllCases()),
                         [](const ::testing::TestParamInfo<Case>& info) {
                           return Sanitize(info.param.name);
                         });

}  // namespace
}  // namespace tfjit
