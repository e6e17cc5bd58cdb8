// Tests for tf2hlo: lowered modules verify, evaluate to hand-computed values, carry the TF node
// in metadata, and report TF's compile-time-constant error.
#include "compiler/tf2hlo/lowering.h"

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/verifier.h"
#include "core/status.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"

namespace tfjit::tf2hlo {
namespace {

std::unique_ptr<tf::Graph> BuildGraph(const std::string& text) {
  tensorflow::GraphDef def;
  EXPECT_TRUE(google::protobuf::TextFormat::ParseFromString(text, &def));
  auto graph = tf::Graph::Build(def, "test.pbtxt");
  EXPECT_TRUE(graph.ok()) << graph.status();
  return graph.ok() ? std::move(*graph) : nullptr;
}

// A cluster of every non-Placeholder node, fed by the placeholders, exporting `outputs`.
ClusterSpec WholeGraph(const tf::Graph& g, const std::vector<std::string>& outputs) {
  ClusterSpec spec;
  spec.name = "test";
  for (const tf::Node* n : g.topological_order()) {
    if (n->op() == "Placeholder") {
      spec.inputs.push_back({const_cast<tf::Node*>(n), 0});
    } else {
      spec.nodes.push_back(n);
    }
  }
  for (const std::string& o : outputs) spec.outputs.push_back(*g.FindOutput(o));
  return spec;
}

constexpr char kDense[] = R"pb(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "w" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } dim { size: 2 } }
                float_val: 1 float_val: 2 float_val: 3 float_val: 4 } } } }
  node { name: "b" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                float_val: 10 float_val: -100 } } } }
  node { name: "dense/MatMul" op: "MatMul" input: "x" input: "w" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "dense/BiasAdd" op: "BiasAdd" input: "dense/MatMul" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "dense/Relu" op: "Relu" input: "dense/BiasAdd" attr { key: "T" value { type: DT_FLOAT } } }
)pb";

TEST(LoweringTest, DenseLayerEvaluatesToHandComputedValues) {
  auto g = BuildGraph(kDense);
  ClusterSpec spec = WholeGraph(*g, {"dense/Relu"});
  ArgInfo x{DType::kFloat32, {1, 2}, std::nullopt};
  auto module = LowerCluster(spec, {x});
  ASSERT_TRUE(module.ok()) << module.status();
  ASSERT_TRUE(hlo::VerifyModule(**module).ok());
  const std::string text = hlo::PrintModule(**module);
  EXPECT_TRUE(absl::StrContains(text, "tf_node=\"dense/MatMul\"")) << text;
  EXPECT_TRUE(absl::StrContains(text, " dot(")) << text;
  // x = [1, 1]: x*w = [4, 6]; + b = [14, -94]; relu = [14, 0].
  Tensor xv = Tensor::FromVector<float>(DType::kFloat32, {1, 2}, {1, 1});
  auto result = hlo::Evaluate(**module, {hlo::Literal::FromTensor(xv)});
  ASSERT_TRUE(result.ok()) << result.status();
  const Tensor& out = result->elements()[0].tensor();
  EXPECT_EQ(out.data<float>()[0], 14.0f);
  EXPECT_EQ(out.data<float>()[1], 0.0f);
}

constexpr char kReshapeFromInput[] = R"pb(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "shape" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
  node { name: "r" op: "Reshape" input: "x" input: "shape"
         attr { key: "T" value { type: DT_FLOAT } } attr { key: "Tshape" value { type: DT_INT32 } } }
)pb";

TEST(LoweringTest, ShapeInputFromClusterArgumentIsAConstantInput) {
  auto g = BuildGraph(kReshapeFromInput);
  ClusterSpec spec = WholeGraph(*g, {"r"});
  EXPECT_EQ(MustBeConstantInputs(spec), std::vector<int>({1}));
  // With the value known at launch, the reshape compiles for it.
  ArgInfo x{DType::kFloat32, {2, 3}, std::nullopt};
  ArgInfo shape{DType::kInt32, {2}, Tensor::FromVector<int32_t>(DType::kInt32, {2}, {3, -1})};
  auto module = LowerCluster(spec, {x, shape});
  ASSERT_TRUE(module.ok()) << module.status();
  EXPECT_EQ((*module)->entry()->root()->operand(0)->shape().ToString(), "f32[3,2]");
  // Without it, TF's known-issue F message, naming the node and input.
  shape.value.reset();
  auto failed = LowerCluster(spec, {x, shape});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(failed.status().message(),
                                "Input 1 to node `r` with op Reshape must be a compile-time "
                                "constant."))
      << failed.status();
  EXPECT_TRUE(absl::StrContains(failed.status().message(),
                                "XLA compilation requires that operator arguments that represent "
                                "shapes or dimensions be evaluated to concrete values"));
  EXPECT_EQ(NodeOfError(failed.status()).first, "r");
}

TEST(LoweringTest, BroadcastErrorNamesNode) {
  auto g = BuildGraph(R"pb(
    node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "b" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "add" op: "AddV2" input: "a" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
  )pb");
  ClusterSpec spec = WholeGraph(*g, {"add"});
  auto failed = LowerCluster(spec, {{DType::kFloat32, {2, 3}, {}}, {DType::kFloat32, {4}, {}}});
  ASSERT_FALSE(failed.ok());
  EXPECT_EQ(failed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(failed.status().message(), "Incompatible shapes: [2,3] vs. [4]"))
      << failed.status();
  EXPECT_TRUE(absl::StrContains(failed.status().message(), "'add' (AddV2)")) << failed.status();
}

TEST(LoweringTest, CanLowerExplainsRefusals) {
  auto g = BuildGraph(R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "e" op: "Exp" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "c" op: "CheckNumerics" input: "e" attr { key: "T" value { type: DT_FLOAT } }
           attr { key: "message" value { s: "m" } } }
  )pb");
  ASSERT_NE(g, nullptr);
  std::string why;
  EXPECT_FALSE(CanLower(*g->FindNode("c"), &why));
  EXPECT_TRUE(absl::StrContains(why, "CheckNumerics")) << why;
}

// ScatterNd over complex values runs the real lowering once per part; the range check of its
// fed indices is one check all the same, as for a real ScatterNd.
TEST(LoweringTest, FedScatterIndicesAreCheckedOnceForComplexValues) {
  for (const char* t : {"DT_FLOAT", "DT_COMPLEX64"}) {
    auto g = BuildGraph(absl::StrReplaceAll(R"pb(
      node { name: "i" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } } }
      node { name: "u" op: "Placeholder" attr { key: "dtype" value { type: TYPE } } }
      node { name: "shape" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
             attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } }
                    int_val: 4 } } } }
      node { name: "s" op: "ScatterNd" input: "i" input: "u" input: "shape"
             attr { key: "T" value { type: TYPE } } attr { key: "Tindices" value { type: DT_INT32 } } }
    )pb",
                                            {{"TYPE", t}}));
    ASSERT_NE(g, nullptr);
    ClusterSpec spec;
    spec.name = "test";
    spec.inputs = {*g->FindOutput("i"), *g->FindOutput("u")};
    spec.nodes = {g->FindNode("shape"), g->FindNode("s")};
    spec.outputs = {*g->FindOutput("s")};
    const DType values = std::string(t) == "DT_FLOAT" ? DType::kFloat32 : DType::kComplex64;
    auto module = LowerCluster(spec, {{DType::kInt32, {3, 1}, {}}, {values, {3}, {}}});
    ASSERT_TRUE(module.ok()) << t << ": " << module.status();
    ASSERT_EQ((*module)->runtime_checks().size(), 1u) << t;
    EXPECT_EQ((*module)->runtime_checks()[0].tf_node, "s");
  }
}

}  // namespace
}  // namespace tfjit::tf2hlo
