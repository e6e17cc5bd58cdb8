// The vocabulary of the op table: attr-default constructors and the Op builder, which reads
// arg specs in (nearly) TF's REGISTER_OP syntax. Shared by op_catalog_ops.cc and the family
// files op_catalog_<family>.cc (docs/DESIGN.md, "Op families").
#ifndef TFJIT_FRONTEND_OP_CATALOG_BUILDER_H_
#define TFJIT_FRONTEND_OP_CATALOG_BUILDER_H_

#include <cstdint>
#include <initializer_list>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/strings/strip.h"
#include "frontend/op_catalog.h"

namespace tfjit::tf::catalog {

using tensorflow::AttrValue;

// Attr default values.
inline AttrValue B(bool v) {
  AttrValue a;
  a.set_b(v);
  return a;
}
inline AttrValue I(int64_t v) {
  AttrValue a;
  a.set_i(v);
  return a;
}
inline AttrValue F(float v) {
  AttrValue a;
  a.set_f(v);
  return a;
}
inline AttrValue S(const char* v) {
  AttrValue a;
  a.set_s(v);
  return a;
}
inline AttrValue T(tensorflow::DataType v) {
  AttrValue a;
  a.set_type(v);
  return a;
}
inline AttrValue IntList(std::initializer_list<int64_t> v) {
  AttrValue a;
  a.mutable_list();  // An empty list is present, not absent.
  for (int64_t x : v) a.mutable_list()->add_i(x);
  return a;
}
inline AttrValue EmptyList() {
  AttrValue a;
  a.mutable_list();
  return a;
}
inline AttrValue UnknownRankShape() {
  AttrValue a;
  a.mutable_shape()->set_unknown_rank(true);
  return a;
}

inline DType FixedType(absl::string_view name) {
  if (name == "float") return DType::kFloat32;
  if (name == "double") return DType::kFloat64;
  if (name == "int32") return DType::kInt32;
  if (name == "int64") return DType::kInt64;
  if (name == "uint32") return DType::kUInt32;
  if (name == "uint64") return DType::kUInt64;
  if (name == "bool") return DType::kBool;
  if (name == "half") return DType::kFloat16;
  if (name == "bfloat16") return DType::kBFloat16;
  if (name == "int8") return DType::kInt8;
  if (name == "int16") return DType::kInt16;
  if (name == "uint8") return DType::kUInt8;
  if (name == "uint16") return DType::kUInt16;
  if (name == "string") return DType::kString;
  if (name == "resource") return DType::kResource;
  if (name == "variant") return DType::kVariant;
  if (name == "complex64") return DType::kComplex64;
  if (name == "complex128") return DType::kComplex128;
  return DType::kInvalid;
}

// Parses an arg spec in (nearly) TF's REGISTER_OP syntax: "x: T" (type attr), "y: int32"
// (fixed type), "values: N * T" (N values of type T), "args: [Tin]" (list(type) attr).
inline ArgDef ParseArg(absl::string_view spec) {
  std::pair<absl::string_view, absl::string_view> parts =
      absl::StrSplit(spec, absl::MaxSplits(':', 1));
  ArgDef arg;
  arg.name = std::string(absl::StripAsciiWhitespace(parts.first));
  absl::string_view type = absl::StripAsciiWhitespace(parts.second);
  if (absl::ConsumePrefix(&type, "[") && absl::ConsumeSuffix(&type, "]")) {
    arg.type_list_attr = std::string(type);
    return arg;
  }
  std::pair<absl::string_view, absl::string_view> count =
      absl::StrSplit(type, absl::MaxSplits('*', 1));
  if (!count.second.empty()) {
    arg.number_attr = std::string(absl::StripAsciiWhitespace(count.first));
    type = absl::StripAsciiWhitespace(count.second);
  }
  arg.fixed_type = FixedType(type);
  if (arg.fixed_type == DType::kInvalid) arg.type_attr = std::string(type);
  return arg;
}

class Op {
 public:
  explicit Op(const char* name) { def_.name = name; }
  Op& In(absl::string_view spec) {
    def_.inputs.push_back(ParseArg(spec));
    return *this;
  }
  Op& Out(absl::string_view spec) {
    def_.outputs.push_back(ParseArg(spec));
    return *this;
  }
  Op& Attr(const char* name, AttrValue value) {
    def_.attr_defaults.push_back({name, std::move(value)});
    return *this;
  }
  Op& Const(std::initializer_list<int> args) {
    def_.compile_time_const_inputs.assign(args);
    def_.host_memory_inputs.assign(args);  // TF's GPU kernels read these on the host.
    return *this;
  }
  Op& HostOut(std::initializer_list<int> args) {
    def_.host_memory_outputs.assign(args);
    return *this;
  }
  Op& Stateful() {
    def_.is_stateful = true;
    return *this;
  }
  // The dtypes TF allows for type attr `attr` (see TypeConstraint).
  Op& Types(const char* attr, std::vector<DType> allowed) {
    def_.type_constraints.push_back({attr, std::move(allowed)});
    return *this;
  }
  OpDef Build() { return std::move(def_); }

 private:
  OpDef def_;
};

// The family files: each appends its ops to the table (op_catalog_<file>.cc).
void AddGradientsOps(std::vector<OpDef>* ops);       // op_catalog_gradients.cc
void AddOptimizersOps(std::vector<OpDef>* ops);      // op_catalog_optimizers.cc
void AddLinalgOps(std::vector<OpDef>* ops);          // op_catalog_linalg.cc
void AddScatterSegmentOps(std::vector<OpDef>* ops);  // op_catalog_scatter_segment.cc
void AddArrayMoreOps(std::vector<OpDef>* ops);       // op_catalog_array_more.cc
void AddSpecialOps(std::vector<OpDef>* ops);         // op_catalog_special.cc
void AddRandomMoreOps(std::vector<OpDef>* ops);      // op_catalog_random_more.cc
void AddImageMoreOps(std::vector<OpDef>* ops);       // op_catalog_image_more.cc
void AddNnMoreOps(std::vector<OpDef>* ops);          // op_catalog_nn_more.cc
void AddStateMoreOps(std::vector<OpDef>* ops);       // op_catalog_state_more.cc
void AddFftOps(std::vector<OpDef>* ops);             // op_catalog_fft.cc
void AddMathComplexOps(std::vector<OpDef>* ops);     // op_catalog_math_complex.cc
void AddXlaOps(std::vector<OpDef>* ops);             // op_catalog_xla.cc
void AddParsingOps(std::vector<OpDef>* ops);         // op_catalog_parsing.cc

// TF's common type sets (ops.pbtxt's allowed_values), for Op::Types.
inline std::vector<DType> FloatTypes() {
  return {DType::kFloat16, DType::kBFloat16, DType::kFloat32, DType::kFloat64};
}
inline std::vector<DType> IndexTypes() { return {DType::kInt32, DType::kInt64}; }
inline std::vector<DType> IntTypes() {
  return {DType::kInt8,  DType::kInt16,  DType::kInt32,  DType::kInt64,
          DType::kUInt8, DType::kUInt16, DType::kUInt32, DType::kUInt64};
}
// TF's complex types (compiled code holds them as real pairs: compiler/tf2hlo/complex_values.h).
inline std::vector<DType> ComplexTypes() { return {DType::kComplex64, DType::kComplex128}; }
// TF's realnumbertypes (numbertypes less complex).
inline std::vector<DType> RealTypes() {
  std::vector<DType> t = FloatTypes();
  for (DType d : IntTypes()) t.push_back(d);
  return t;
}
// TF's numbertypes less complex, plus bool: every dtype a plain data-movement op takes.
inline std::vector<DType> AllNumericTypes() {
  std::vector<DType> t = RealTypes();
  t.push_back(DType::kBool);
  return t;
}
// `types` and complex64/complex128.
inline std::vector<DType> WithComplex(std::vector<DType> types) {
  for (DType d : ComplexTypes()) types.push_back(d);
  return types;
}
// TF's numbertypes: the real types and complex.
inline std::vector<DType> NumberTypes() { return WithComplex(RealTypes()); }
// TF's POD types less the quantized ones: numbers, complex and bool (data movement, scatters).
inline std::vector<DType> PodTypes() { return WithComplex(AllNumericTypes()); }

}  // namespace tfjit::tf::catalog

#endif  // TFJIT_FRONTEND_OP_CATALOG_BUILDER_H_
