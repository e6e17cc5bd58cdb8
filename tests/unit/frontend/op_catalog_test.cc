// Tests the op catalog: TF signatures, defaults, constant inputs, ResolveArgTypes and ranges.
#include "frontend/op_catalog.h"

#include <algorithm>
#include <set>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace tfjit::tf {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ParseTextProto;

std::vector<std::string> ArgNames(const std::vector<ArgDef>& args) {
  std::vector<std::string> names;
  for (const ArgDef& a : args) names.push_back(a.name);
  return names;
}

const tensorflow::AttrValue* Default(const OpDef& op, const std::string& name) {
  for (const AttrDefault& d : op.attr_defaults) {
    if (d.name == name) return &d.value;
  }
  return nullptr;
}

TEST(OpCatalogTest, CoreOpsHaveTfSignatures) {
  const OpDef* matmul = LookupOpDef("MatMul");
  ASSERT_NE(matmul, nullptr);
  EXPECT_THAT(ArgNames(matmul->inputs), ElementsAre("a", "b"));
  EXPECT_THAT(ArgNames(matmul->outputs), ElementsAre("product"));
  EXPECT_EQ(matmul->inputs[0].type_attr, "T");
  ASSERT_NE(Default(*matmul, "transpose_a"), nullptr);
  EXPECT_FALSE(Default(*matmul, "transpose_a")->b());

  const OpDef* sum = LookupOpDef("Sum");
  ASSERT_NE(sum, nullptr);
  EXPECT_THAT(ArgNames(sum->inputs), ElementsAre("input", "reduction_indices"));
  EXPECT_THAT(sum->compile_time_const_inputs, ElementsAre(1));
  EXPECT_EQ(Default(*sum, "Tidx")->type(), tensorflow::DT_INT32);
  EXPECT_FALSE(Default(*sum, "keep_dims")->b());

  EXPECT_EQ(Default(*LookupOpDef("BiasAdd"), "data_format")->s(), "NHWC");
  EXPECT_THAT(LookupOpDef("Reshape")->compile_time_const_inputs, ElementsAre(1));
  EXPECT_THAT(LookupOpDef("Transpose")->compile_time_const_inputs, ElementsAre(1));
  EXPECT_THAT(LookupOpDef("Shape")->host_memory_outputs, ElementsAre(0));
  EXPECT_EQ(Default(*LookupOpDef("Shape"), "out_type")->type(), tensorflow::DT_INT32);
  EXPECT_EQ(Default(*LookupOpDef("Pack"), "axis")->i(), 0);
  EXPECT_TRUE(Default(*LookupOpDef("Placeholder"), "shape")->shape().unknown_rank());
  EXPECT_FALSE(LookupOpDef("Placeholder")->is_stateful);
  EXPECT_TRUE(LookupOpDef("VarHandleOp")->is_stateful);
  EXPECT_EQ(LookupOpDef("FooBar"), nullptr);
  // An empty list default is present (not absent).
  EXPECT_TRUE(Default(*LookupOpDef("Squeeze"), "squeeze_dims")->has_list());
}

TEST(OpCatalogTest, KnownOpsIsSortedAndCoversTheCoreSet) {
  std::vector<std::string> ops = KnownOps();
  EXPECT_TRUE(std::is_sorted(ops.begin(), ops.end()));
  for (const char* name : {"Placeholder",
                           "PlaceholderWithDefault",
                           "Const",
                           "Identity",
                           "IdentityN",
                           "NoOp",
                           "Add",
                           "AddV2",
                           "Sub",
                           "Mul",
                           "RealDiv",
                           "Div",
                           "Maximum",
                           "Minimum",
                           "Neg",
                           "Abs",
                           "Exp",
                           "Log",
                           "Tanh",
                           "Sigmoid",
                           "Relu",
                           "Relu6",
                           "Sqrt",
                           "Rsqrt",
                           "Square",
                           "MatMul",
                           "BiasAdd",
                           "Sum",
                           "Mean",
                           "Max",
                           "Min",
                           "Prod",
                           "Reshape",
                           "Transpose",
                           "Cast",
                           "Softmax",
                           "ConcatV2",
                           "Shape",
                           "Pack",
                           "Squeeze",
                           "ExpandDims",
                           "StopGradient",
                           "Fill",
                           "ZerosLike",
                           "OnesLike",
                           "Less",
                           "Greater",
                           "Equal",
                           "Select",
                           "LogSoftmax",
                           "Pow",
                           "Floor",
                           "SquaredDifference"}) {
    EXPECT_TRUE(std::binary_search(ops.begin(), ops.end(), name)) << name;
  }
}

// Catalog consistency: arg names unique, indices in range, type attrs named.
TEST(OpCatalogTest, EveryEntryIsWellFormed) {
  for (const std::string& name : KnownOps()) {
    const OpDef& op = *LookupOpDef(name);
    std::set<std::string> seen;
    for (const auto* args : {&op.inputs, &op.outputs}) {
      for (const ArgDef& arg : *args) {
        EXPECT_FALSE(arg.name.empty()) << name;
        const bool typed = arg.fixed_type != DType::kInvalid || !arg.type_attr.empty() ||
                           !arg.type_list_attr.empty();
        EXPECT_TRUE(typed) << name << " arg " << arg.name;
      }
    }
    for (const ArgDef& arg : op.inputs) EXPECT_TRUE(seen.insert(arg.name).second) << name;
    for (int i : op.compile_time_const_inputs)
      EXPECT_LT(i, static_cast<int>(op.inputs.size())) << name;
    for (int i : op.host_memory_outputs) EXPECT_LT(i, static_cast<int>(op.outputs.size())) << name;
  }
}

TEST(ResolveArgTypesTest, ConcatV2UsesNumberAttr) {
  auto def = ParseTextProto<tensorflow::NodeDef>(R"pb(
    name: "concat" op: "ConcatV2"
    attr { key: "N" value { i: 3 } }
    attr { key: "T" value { type: DT_FLOAT } }
    attr { key: "Tidx" value { type: DT_INT64 } })pb");
  const OpDef& op = *LookupOpDef("ConcatV2");
  std::vector<DType> in, out;
  ASSERT_TRUE(ResolveArgTypes(op, def, &in, &out).ok());
  EXPECT_THAT(in, ElementsAre(DType::kFloat32, DType::kFloat32, DType::kFloat32, DType::kInt64));
  EXPECT_THAT(out, ElementsAre(DType::kFloat32));
  // The axis is arg 1 but flat input 3.
  EXPECT_THAT(*FlatInputIndices(op, def, op.compile_time_const_inputs), ElementsAre(3));
  std::vector<int> in_starts, out_starts;
  ASSERT_TRUE(ResolveArgStarts(op, def, &in_starts, &out_starts).ok());
  EXPECT_THAT(in_starts, ElementsAre(0, 3, 4));
  EXPECT_THAT(out_starts, ElementsAre(0, 1));
}

TEST(ResolveArgTypesTest, IdentityNUsesTypeList) {
  auto def = ParseTextProto<tensorflow::NodeDef>(R"pb(
    name: "idn" op: "IdentityN"
    attr { key: "T" value { list { type: [DT_FLOAT, DT_INT32, DT_BOOL] } } })pb");
  std::vector<DType> in, out;
  ASSERT_TRUE(ResolveArgTypes(*LookupOpDef("IdentityN"), def, &in, &out).ok());
  EXPECT_THAT(in, ElementsAre(DType::kFloat32, DType::kInt32, DType::kBool));
  EXPECT_EQ(in, out);
}

TEST(ResolveArgTypesTest, CastUsesSrcAndDst) {
  auto def = ParseTextProto<tensorflow::NodeDef>(R"pb(
    name: "c" op: "Cast"
    attr { key: "SrcT" value { type: DT_INT32 } }
    attr { key: "DstT" value { type: DT_HALF } })pb");
  std::vector<DType> in, out;
  ASSERT_TRUE(ResolveArgTypes(*LookupOpDef("Cast"), def, &in, &out).ok());
  EXPECT_THAT(in, ElementsAre(DType::kInt32));
  EXPECT_THAT(out, ElementsAre(DType::kFloat16));
}

TEST(ResolveArgTypesTest, FixedTypesAndRefTypes) {
  auto def = ParseTextProto<tensorflow::NodeDef>(R"pb(
    name: "l" op: "Less" attr { key: "T" value { type: DT_DOUBLE_REF } })pb");
  std::vector<DType> in, out;
  ASSERT_TRUE(ResolveArgTypes(*LookupOpDef("Less"), def, &in, &out).ok());
  EXPECT_THAT(in, ElementsAre(DType::kFloat64, DType::kFloat64));
  EXPECT_THAT(out, ElementsAre(DType::kBool));
}

TEST(ResolveArgTypesTest, ErrorsNameNodeAndAttr) {
  std::vector<DType> in, out;
  auto missing = ParseTextProto<tensorflow::NodeDef>(R"pb(name: "c" op: "ConcatV2"
      attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tidx" value { type: DT_INT32 } })pb");
  absl::Status s = ResolveArgTypes(*LookupOpDef("ConcatV2"), missing, &in, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'c' (ConcatV2): attr 'N' is missing"));

  auto negative = ParseTextProto<tensorflow::NodeDef>(R"pb(name: "p" op: "Pack"
      attr { key: "T" value { type: DT_FLOAT } } attr { key: "N" value { i: -2 } })pb");
  s = ResolveArgTypes(*LookupOpDef("Pack"), negative, &in, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("attr 'N' = -2"));

  auto quantized = ParseTextProto<tensorflow::NodeDef>(R"pb(name: "a" op: "Add"
      attr { key: "T" value { type: DT_QINT16 } })pb");
  s = ResolveArgTypes(*LookupOpDef("Add"), quantized, &in, &out);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("qint16"));
}

TEST(FlatOutputIndexTest, ResolvesNamedOutputArgs) {
  auto unpack = ParseTextProto<tensorflow::NodeDef>(R"pb(name: "u" op: "Unpack"
      attr { key: "T" value { type: DT_FLOAT } } attr { key: "num" value { i: 4 } })pb");
  EXPECT_EQ(*FlatOutputIndex(*LookupOpDef("Unpack"), unpack, "output", 2), 2);
  auto bn = ParseTextProto<tensorflow::NodeDef>(R"pb(name: "bn" op: "FusedBatchNormV3"
      attr { key: "T" value { type: DT_FLOAT } } attr { key: "U" value { type: DT_FLOAT } })pb");
  EXPECT_EQ(*FlatOutputIndex(*LookupOpDef("FusedBatchNormV3"), bn, "batch_variance", 0), 2);
  absl::Status s = FlatOutputIndex(*LookupOpDef("Unpack"), unpack, "output", 4).status();
  EXPECT_THAT(s.message(), HasSubstr("out of range"));
  s = FlatOutputIndex(*LookupOpDef("Unpack"), unpack, "z", 0).status();
  EXPECT_THAT(s.message(), HasSubstr("no output 'z' (its outputs: output)"));
}

}  // namespace
}  // namespace tfjit::tf
