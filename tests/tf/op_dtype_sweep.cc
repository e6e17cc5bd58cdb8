// The dtype sweep: every op runs with every dtype TF's registry (tf::TfRegistryTypes) or its
// catalog entry allows for each of its type attrs, not only the dtypes its hand-written cases use.
// For each op, one of its cases is retyped to each allowed dtype: the fallback kernel must accept
// it (a refusal is a missing dtype, not a data error), and where the op compiles, must-compile mode
// on the CPU backend must compile it and give the kernel's answer. tests/data/dtype_exceptions.tsv
// lists what is refused (by TF's kernels too, or by tfjit's) and what only runs on the kernel.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/op_catalog.h"
#include "frontend/proto/graph.pb.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tests/testlib/test_data.h"
#include "tests/tf/op_case_runner.h"
#include "tests/tf/op_cases.h"

namespace tfjit {
namespace {

using ::tfjit::testing::ReadTestDataTsv;

using namespace optest;  // NOLINT(build/namespaces): the cases' vocabulary
using ::tfjit::testing::WriteTempFile;

// The dtypes the sweep feeds: every numeric one, bool and complex (not string or quantized).
bool Sweepable(DType d) { return IsNumericOrComplexDType(d) || d == DType::kBool; }

// `t` converted element by element to `to` (complex: the real part; unsigned: shifted up by
// the least element when that is negative, which keeps sorted inputs sorted).
Tensor Retype(const Tensor& t, DType to) {
  auto value = [&](int64_t k) {
    return IsComplexDType(t.dtype()) ? ElementAsComplex(t, k).real() : ElementAsDouble(t, k);
  };
  double shift = 0;
  if (IsUnsignedIntegerDType(to)) {
    for (int64_t k = 0; k < t.num_elements(); ++k) shift = std::max(shift, -std::floor(value(k)));
  }
  Tensor out(to, t.dims());
  for (int64_t k = 0; k < t.num_elements(); ++k) {
    double v = value(k) + shift;
    if (IsIntegerDType(to) || to == DType::kBool) v = std::round(v);
    if (to == DType::kComplex64) {
      out.data<complex64>()[k] = complex64(static_cast<float>(v), 0);
    } else if (to == DType::kComplex128) {
      out.data<complex128>()[k] = complex128(v, 0);
    } else if (to == DType::kBool) {
      out.data<bool>()[k] = v != 0;
    } else {
      SetFromDouble(out, k, v);
    }
  }
  return out;
}

DType DTypeFromProto(int tf_enum) { return DTypeFromTfEnum(tf_enum).value_or(DType::kInvalid); }

// The value a case gives type attr `attr` (kInvalid when it sets none and TF has no default).
DType CaseType(const OpCase& c, const tf::OpDef& def, const std::string& attr) {
  if (attr == "T" && c.has_t && c.attrs.count("T") == 0) return c.dtype;
  auto it = c.attrs.find(attr);
  if (it != c.attrs.end()) return DTypeFromProto(it->second.type());
  for (const tf::AttrDefault& d : def.attr_defaults) {
    if (d.name == attr) return DTypeFromProto(d.value.type());
  }
  return DType::kInvalid;
}

// Which flat inputs of the case's op take their dtype from `attr`: resolved with the case's
// value and again with `to` (both allowed, so both resolve), the ones that change.
std::vector<bool> InputsOf(const OpCase& c, const tf::OpDef& def, const std::string& attr,
                           DType to) {
  tensorflow::GraphDef g;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(GraphText(c), &g));
  tensorflow::NodeDef node = g.node(0);
  for (const tf::AttrDefault& d : def.attr_defaults) node.mutable_attr()->insert({d.name, d.value});
  std::vector<DType> as_case, as_to, outputs;
  (*node.mutable_attr())[attr] = TypeAttr(CaseType(c, def, attr));
  const bool ok_case = tf::ResolveArgTypes(def, node, &as_case, &outputs).ok();
  (*node.mutable_attr())[attr] = TypeAttr(to);
  const bool ok_to = tf::ResolveArgTypes(def, node, &as_to, &outputs).ok();
  std::vector<bool> of_attr(static_cast<size_t>(node.input_size()), false);
  if (!ok_case || !ok_to) return of_attr;
  for (size_t i = 0; i < of_attr.size() && i < as_case.size(); ++i) {
    of_attr[i] = as_case[i] != as_to[i];
  }
  return of_attr;
}

// One case of the sweep: an op case with type attr `attr` set to `to`.
struct SweepCase {
  OpCase c;
  std::string attr;
};
void PrintTo(const SweepCase& s, std::ostream* os) { *os << s.c.name; }

// The case `c` with `attr` set to `to`: the placeholders, consts and fixed feeds of the inputs
// that the attr types follow it.
SweepCase RetypedCase(const OpCase& c, const tf::OpDef& def, const std::string& attr, DType to) {
  OpCase r = c;
  r.name = attr == "T" ? absl::StrCat(c.op, "_as_", DTypeName(to))
                       : absl::StrCat(c.op, "_", attr, "_as_", DTypeName(to));
  if (attr == "T" && c.has_t && c.attrs.count("T") == 0) {
    r.dtype = to;
  } else {
    r.attrs[attr] = TypeAttr(to);
  }
  r.reference = nullptr;  // written for the case's own dtypes
  const std::vector<bool> of_attr = InputsOf(c, def, attr, to);
  const DType in_type = c.input_dtype == DType::kInvalid ? c.dtype : c.input_dtype;
  r.input_dtypes.resize(c.inputs.size());
  r.input_dtype = DType::kInvalid;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    r.input_dtypes[i] = i < c.input_dtypes.size() ? c.input_dtypes[i] : in_type;
  }
  const std::vector<std::pair<bool, int>> order = InputOrder(c);
  for (size_t pos = 0; pos < order.size() && pos < of_attr.size(); ++pos) {
    if (!of_attr[pos]) continue;
    const auto [is_const, i] = order[pos];
    const size_t k = static_cast<size_t>(i);
    if (is_const) {
      r.consts[k] = Retype(r.consts[k], to);
    } else {
      r.input_dtypes[k] = to;
      if (k < r.feed_values.size()) r.feed_values[k] = Retype(r.feed_values[k], to);
    }
  }
  return {std::move(r), attr};
}

// A dtype in TF's spelling (ops.pbtxt: "half", "float", "double", ...); kInvalid for the ones
// the sweep does not feed (string, quantized, variant, resource).
DType FromTfName(absl::string_view n) {
  static const std::map<std::string, DType, std::less<>> names = {
      {"half", DType::kFloat16},
      {"bfloat16", DType::kBFloat16},
      {"float", DType::kFloat32},
      {"double", DType::kFloat64},
      {"int8", DType::kInt8},
      {"int16", DType::kInt16},
      {"int32", DType::kInt32},
      {"int64", DType::kInt64},
      {"uint8", DType::kUInt8},
      {"uint16", DType::kUInt16},
      {"uint32", DType::kUInt32},
      {"uint64", DType::kUInt64},
      {"bool", DType::kBool},
      {"complex64", DType::kComplex64},
      {"complex128", DType::kComplex128}};
  auto it = names.find(n);
  return it == names.end() ? DType::kInvalid : it->second;
}

// The dtypes TF's registry allows per (op, type attr) (tf::TfRegistryTypes; "*" is every
// sweepable dtype).
using AttrKey = std::pair<std::string, std::string>;
std::map<AttrKey, std::vector<DType>> TfTypes() {
  std::map<AttrKey, std::vector<DType>> types;
  for (const tf::RegistryTypes& row : tf::TfRegistryTypes()) {
    std::vector<DType>& list = types[{row.op, row.attr}];
    if (absl::string_view(row.allowed) == "*") {
      for (DType d :
           {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64, DType::kInt8,
            DType::kInt16, DType::kInt32, DType::kInt64, DType::kUInt8, DType::kUInt16,
            DType::kUInt32, DType::kUInt64, DType::kBool, DType::kComplex64, DType::kComplex128}) {
        list.push_back(d);
      }
      continue;
    }
    for (absl::string_view n : absl::StrSplit(row.allowed, ',')) {
      const DType d = FromTfName(n);
      if (d != DType::kInvalid) list.push_back(d);
    }
  }
  return types;
}

// An entry of tests/data/dtype_exceptions.tsv: "tf" and "tfjit" (the kernel refuses the dtype)
// or "kernel-only" (the kernel runs it, compiled code does not), and why.
struct Exception {
  std::string kind;
  std::string reason;
};

// (op or op:attr, dtype) -> its entry.
const std::map<std::pair<std::string, DType>, Exception>& Exceptions() {
  static const auto* exceptions = [] {
    auto* m = new std::map<std::pair<std::string, DType>, Exception>;
    for (const std::vector<std::string>& row : ReadTestDataTsv("dtype_exceptions.tsv")) {
      EXPECT_EQ(row.size(), 4u) << "dtype_exceptions.tsv: op, dtypes, kind, reason";
      if (row.size() != 4) continue;
      EXPECT_TRUE(row[2] == "tf" || row[2] == "tfjit" || row[2] == "kernel-only")
          << "dtype_exceptions.tsv kind: " << row[2];
      for (absl::string_view n : absl::StrSplit(row[1], ',')) {
        const DType d = FromTfName(n);
        EXPECT_NE(d, DType::kInvalid) << "dtype_exceptions.tsv: unknown dtype " << n;
        (*m)[{row[0], d}] = Exception{row[2], row[3]};
      }
    }
    return m;
  }();
  return *exceptions;
}

// For each op and each of its type attrs: the first case that sets the attr (a float value
// first), retyped to every other dtype the attr allows (the catalog's constraint, else TF's).
std::vector<SweepCase> SweepCases() {
  static const std::map<AttrKey, std::vector<DType>> tf_types = TfTypes();
  std::map<std::string, std::vector<const OpCase*>> by_op;
  static const std::vector<OpCase> all = AllCases();
  for (const OpCase& c : all) by_op[c.op].push_back(&c);
  std::vector<SweepCase> sweep;
  for (const auto& [op, cases] : by_op) {
    const tf::OpDef* def = tf::LookupOpDef(op);
    if (def == nullptr) continue;
    std::map<std::string, std::vector<DType>> allowed;
    for (auto it = tf_types.lower_bound({op, ""}); it != tf_types.end() && it->first.first == op;
         ++it) {
      allowed[it->first.second] = it->second;
    }
    // Both: a catalog constraint narrower than TF's registry would refuse TF's own graphs.
    for (const tf::TypeConstraint& tc : def->type_constraints) {
      std::vector<DType>& list = allowed[tc.attr];
      list.insert(list.end(), tc.allowed.begin(), tc.allowed.end());
    }
    for (const auto& [attr, types] : allowed) {
      const OpCase* base = nullptr;
      std::set<DType> covered;
      for (const OpCase* c : cases) {
        const DType t = CaseType(*c, *def, attr);
        if (t == DType::kInvalid) continue;
        covered.insert(t);
        if (base == nullptr ||
            (!IsFloatingDType(CaseType(*base, *def, attr)) && IsFloatingDType(t))) {
          base = c;
        }
      }
      if (base == nullptr) continue;
      for (DType d : types) {
        if (Sweepable(d) && covered.insert(d).second) {
          sweep.push_back(RetypedCase(*base, *def, attr, d));
        }
      }
    }
  }
  return sweep;
}

// A refusal of the dtype itself, as opposed to an error about the data (integer division by
// zero, an index out of range), which the retyped random feeds may well provoke.
// The refusals' message forms: a kernel's UnsupportedDType, the loader's type-attr check and its
// arg-type check, and a dtype tfjit cannot hold.
bool RefusesDtype(const absl::Status& s) {
  const absl::string_view m = s.message();
  return s.code() == absl::StatusCode::kUnimplemented || s.code() == absl::StatusCode::kInternal ||
         absl::StrContains(m, "kernel for dtype") ||
         absl::StrContains(m, "is not in the list of allowed values") ||
         absl::StrContains(m, "expects") || absl::StrContains(m, "a dtype tfjit does not support");
}

class OpDtypeSweepTest : public ::testing::TestWithParam<SweepCase> {};

TEST_P(OpDtypeSweepTest, KernelTakesTheDtypeAndCompiledCodeAgrees) {
  const OpCase& c = GetParam().c;
  const std::string& attr = GetParam().attr;
  const DType to = attr == "T" && c.has_t && c.attrs.count("T") == 0
                       ? c.dtype
                       : DTypeFromProto(c.attrs.at(attr).type());
  const std::string path = WriteTempFile(absl::StrCat("sweep_", c.name, ".pbtxt"), GraphText(c));
  PathResult kernel = RunPath(path, c, JitMode::kNone, "cpu");
  auto exception = Exceptions().find({attr == "T" ? c.op : absl::StrCat(c.op, ":", attr), to});
  const bool refused = exception != Exceptions().end() && exception->second.kind != "kernel-only";
  if (refused) {
    // Refused, naming the dtype, never a wrong answer.
    EXPECT_FALSE(kernel.status.ok())
        << "dtype_exceptions.tsv lists " << c.name << " (" << exception->second.reason
        << "), but the kernel runs it: remove the entry";
    EXPECT_TRUE(absl::StrContains(kernel.status.message(), DTypeName(to)))
        << StatusToString(kernel.status);
    std::filesystem::remove(path);
    return;
  }
  EXPECT_FALSE(!kernel.status.ok() && RefusesDtype(kernel.status))
      << "fallback kernel refuses " << attr << "=" << DTypeName(to) << ": "
      << StatusToString(kernel.status) << "\n"
      << GraphText(c);
  if (c.kernel_only) {
    std::filesystem::remove(path);
    return;
  }
  // The op compiles in the case's own dtype (the differential test checks that): in this one
  // too, in must-compile mode, unless the exceptions list it as kernel-only, which must-compile
  // mode must then refuse (and --jit auto runs on the kernel).
  const bool kernel_only_dtype = exception != Exceptions().end();
  PathResult compiled = RunPath(path, c, kernel_only_dtype ? JitMode::kAuto : JitMode::kAll, "cpu");
  EXPECT_EQ(kernel.status.ok(), compiled.status.ok())
      << "kernel: " << StatusToString(kernel.status) << "\ncompiled ("
      << (kernel_only_dtype ? "--jit auto" : "--jit all")
      << "): " << StatusToString(compiled.status) << "\n"
      << GraphText(c);
  if (kernel.status.ok() && compiled.status.ok()) {
    EXPECT_TRUE(SameTensor(kernel.output, compiled.output, c.atol)) << "kernel vs compiled\n"
                                                                    << GraphText(c);
  }
  if (kernel_only_dtype && kernel.status.ok()) {
    PathResult all = RunPath(path, c, JitMode::kAll, "cpu");
    EXPECT_FALSE(all.status.ok()) << "dtype_exceptions.tsv lists " << c.name << " as kernel-only ("
                                  << exception->second.reason
                                  << "), but it compiles: remove the entry";
  }
  std::filesystem::remove(path);
}

INSTANTIATE_TEST_SUITE_P(Dtypes, OpDtypeSweepTest, ::testing::ValuesIn(SweepCases()),
                         [](const ::testing::TestParamInfo<SweepCase>& info) {
                           std::string n = info.param.c.name;
                           for (char& ch : n) {
                             if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
                           }
                           return n;
                         });

}  // namespace
}  // namespace tfjit
