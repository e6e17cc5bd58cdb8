// Tests tf::Graph construction: edges, defaults, topological order and every validation error.
#include "frontend/graph.h"

#include "core/status.h"
#include "frontend/attr.h"
#include "frontend/graphdef_loader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace tfjit::tf {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using testing::ParseTextProto;

absl::StatusOr<std::unique_ptr<Graph>> BuildText(const std::string& text,
                                                 const std::string& source = "f.pbtxt") {
  return Graph::Build(ParseTextProto<tensorflow::GraphDef>(text), source);
}

std::vector<std::string> TopoNames(const Graph& g) {
  std::vector<std::string> names;
  for (const Node* n : g.topological_order()) names.push_back(n->name());
  return names;
}

constexpr char kFloatPlaceholder[] =
    R"pb(op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } })pb";

std::string Placeholder(const std::string& name, const std::string& dtype = "DT_FLOAT") {
  return "node { name: '" + name +
         "' op: 'Placeholder' attr { key: 'dtype' value { type: " + dtype + " } } }\n";
}

std::string Binary(const std::string& name, const std::string& op, const std::string& a,
                   const std::string& b, const std::string& type = "DT_FLOAT") {
  return "node { name: '" + name + "' op: '" + op + "' input: '" + a + "' input: '" + b +
         "' attr { key: 'T' value { type: " + type + " } } }\n";
}

TEST(ParseTensorNameTest, Forms) {
  TensorName t = *ParseTensorName("dense/MatMul");
  EXPECT_EQ(t.node, "dense/MatMul");
  EXPECT_EQ(t.index, 0);
  EXPECT_FALSE(t.is_control);
  t = *ParseTensorName("split:3");
  EXPECT_EQ(t.node, "split");
  EXPECT_EQ(t.index, 3);
  t = *ParseTensorName("^init");
  EXPECT_TRUE(t.is_control);
  EXPECT_EQ(t.node, "init");
  for (const char* bad : {"", "^", "x:", "x:a", "x:-1", ":0", "^x:1"}) {
    EXPECT_EQ(ParseTensorName(bad).status().code(), absl::StatusCode::kInvalidArgument) << bad;
  }
}

TEST(GraphTest, LoadsTfStyleGraph) {
  absl::StatusOr<std::unique_ptr<Graph>> graph =
      LoadGraphDefFile(testing::TestDataPath("dense_relu.pbtxt"));
  ASSERT_TRUE(graph.ok()) << graph.status();
  const Graph& g = **graph;
  EXPECT_EQ(g.num_nodes(), 7);
  EXPECT_EQ(g.versions().producer(), 1087);
  Node* relu = g.FindNode("dense/Relu");
  ASSERT_NE(relu, nullptr);
  EXPECT_EQ(relu->DebugName(), "'dense/Relu' (Relu)");
  ASSERT_EQ(relu->num_inputs(), 1);
  EXPECT_EQ(relu->input(0).node->name(), "dense/BiasAdd");
  ASSERT_EQ(relu->control_inputs().size(), 2u);
  EXPECT_EQ(relu->control_inputs()[0]->name(), "init");
  EXPECT_EQ(g.FindNode("init")->control_consumers()[0], relu);
  EXPECT_THAT(relu->output_types(), ElementsAre(DType::kFloat32));
  // '_' attrs are kept.
  EXPECT_TRUE(relu->def().attr().contains("_output_shapes"));
  EXPECT_EQ(g.FindNode("dense/kernel")->requested_device(), "/device:CPU:0");

  Node* matmul = g.FindNode("dense/MatMul");
  EXPECT_THAT(matmul->input_types(), ElementsAre(DType::kFloat32, DType::kFloat32));
  // Defaults filled from the catalog; given attrs kept.
  EXPECT_FALSE(*GetBoolAttr(*matmul, "transpose_b"));
  EXPECT_EQ(*GetStringAttr(*g.FindNode("dense/BiasAdd"), "data_format"), "NHWC");
  Node* kernel = g.FindNode("dense/kernel");
  ASSERT_EQ(kernel->data_consumers().size(), 1u);
  EXPECT_EQ(kernel->data_consumers()[0], std::make_pair(matmul, 1));

  Tensor w = *GetTensorAttr(*kernel, "value");
  EXPECT_EQ(w.data<float>()[2], 3.0f);
  Tensor b = *GetTensorAttr(*g.FindNode("dense/bias"), "value");
  EXPECT_EQ(b.data<float>()[1], 0.5f);

  EXPECT_THAT(TopoNames(g), ElementsAre("x", "dense/kernel", "dense/bias", "dense/MatMul",
                                        "dense/BiasAdd", "init", "dense/Relu"));
}

TEST(GraphTest, TopologicalOrderIsStableByIdAndRespectsEdges) {
  // Consumers listed before producers; control edge c -> a.
  auto graph = BuildText(Binary("sum", "Add", "a", "b") + Placeholder("b") +
                         "node { name: 'a' op: 'Identity' input: 'p' input: '^c' "
                         "attr { key: 'T' value { type: DT_FLOAT } } }" +
                         Placeholder("p") + "node { name: 'c' op: 'NoOp' }");
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_THAT(TopoNames(**graph), ElementsAre("b", "p", "c", "a", "sum"));
}

TEST(GraphTest, FindOutput) {
  auto graph = BuildText(
      Placeholder("x") +
      "node { name: 'u' op: 'Unpack' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } "
      "attr { key: 'num' value { i: 3 } } }");
  ASSERT_TRUE(graph.ok()) << graph.status();
  Output out = *(*graph)->FindOutput("u:2");
  EXPECT_EQ(out.node->name(), "u");
  EXPECT_EQ(out.index, 2);
  EXPECT_EQ((*graph)->FindOutput("missing").status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ((*graph)->FindOutput("u:3").status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ((*graph)->FindOutput("^u").status().code(), absl::StatusCode::kInvalidArgument);
}

TEST(GraphTest, ResolvesFlatConstInputsForLists) {
  auto graph =
      BuildText(Placeholder("a") + Placeholder("b") + Placeholder("axis", "DT_INT32") +
                "node { name: 'c' op: 'ConcatV2' input: 'a' input: 'b' input: 'axis' "
                "attr { key: 'N' value { i: 2 } } attr { key: 'T' value { type: DT_FLOAT } } }");
  ASSERT_TRUE(graph.ok()) << graph.status();
  Node* concat = (*graph)->FindNode("c");
  EXPECT_THAT(concat->compile_time_const_inputs(), ElementsAre(2));
  EXPECT_THAT(concat->input_types(), ElementsAre(DType::kFloat32, DType::kFloat32, DType::kInt32));
}

TEST(GraphErrorTest, DuplicateNodeName) {
  absl::Status s = BuildText(Placeholder("x") + Placeholder("x")).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("graph 'f.pbtxt': duplicate node name 'x'"));
}

TEST(GraphErrorTest, UnknownInputNode) {
  absl::Status s = BuildText(Placeholder("x") + Binary("y", "Add", "x", "nope:0")).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("graph 'f.pbtxt': node 'y' (Add): input 1 'nope:0' refers "
                                     "to an unknown node"));
  EXPECT_EQ(NodeOfError(s).first, "y");
}

TEST(GraphErrorTest, OutputIndexOutOfRange) {
  absl::Status s = BuildText(Placeholder("x") + Binary("y", "Add", "x", "x:1")).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'y' (Add): input 1 'x:1' refers to output 1, but "
                                     "'x' (Placeholder) has 1 output(s)"));
}

TEST(GraphErrorTest, ControlInputBeforeDataInput) {
  absl::Status s =
      BuildText(Placeholder("x") + "node { name: 'i' op: 'NoOp' }" + Binary("y", "Add", "^i", "x"))
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("data input 1 'x' comes after control input '^i'"));
}

TEST(GraphErrorTest, WrongInputCount) {
  absl::Status s =
      BuildText(
          Placeholder("x") +
          "node { name: 'y' op: 'Add' input: 'x' attr { key: 'T' value { type: DT_FLOAT } } }")
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'y' (Add): has 1 data input(s) but Add takes 2 (x, y)"));
}

TEST(GraphErrorTest, AllUnknownOpsInOneError) {
  absl::Status s = BuildText(
                       "node { name: 'a' op: 'FooBar' } node { name: 'b' op: 'FooBar' }"
                       "node { name: 'c' op: 'Baz' }",
                       "f.pb")
                       .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("graph 'f.pb': 2 unknown ops: 'FooBar' (nodes 'a', 'b'), "
                                     "'Baz' (node 'c'); 'tfjit ops' lists the"));
}

TEST(GraphErrorTest, InputTypeMismatchNamesBothNodes) {
  absl::Status s =
      BuildText(Placeholder("x") + Placeholder("c", "DT_INT32") + Binary("y", "Add", "x", "c"))
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'y' (Add): input 1 'c' is int32 (output 0 of 'c' "
                                     "(Placeholder)), but Add expects float32 for arg 'y'"));
}

TEST(GraphErrorTest, CycleNamesNodesOnIt) {
  absl::Status s =
      BuildText(Placeholder("x") + Binary("a", "Add", "x", "b") + Binary("b", "Mul", "a", "x"))
          .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("the graph has a cycle: "));
  EXPECT_THAT(s.message(), HasSubstr("'a' (Add)"));
  EXPECT_THAT(s.message(), HasSubstr("'b' (Mul)"));
  EXPECT_THAT(s.message(), HasSubstr("loops need functional While"));
}

TEST(GraphTest, Tf1LoopBackEdgeIsNotACycle) {
  const std::string t = " attr { key: 'T' value { type: DT_FLOAT } } }";
  absl::StatusOr<std::unique_ptr<Graph>> g = BuildText(
      Placeholder("x") +
      "node { name: 'enter' op: 'Enter' input: 'x' attr { key: 'frame_name' value { s: 'w' } }" +
      t +
      "node { name: 'merge' op: 'Merge' input: 'enter' input: 'next' "
      "attr { key: 'N' value { i: 2 } }" +
      t + "node { name: 'next' op: 'NextIteration' input: 'merge'" + t);
  ASSERT_TRUE(g.ok()) << g.status();
  // The order ignores the NextIteration -> Merge back edge: merge comes before next.
  std::vector<std::string> order;
  for (const Node* n : (*g)->topological_order()) order.push_back(n->name());
  EXPECT_EQ(order, (std::vector<std::string>{"x", "enter", "merge", "next"}));
}

TEST(GraphErrorTest, CycleThroughMergeWithoutNextIterationIsAnError) {
  const std::string t = " attr { key: 'T' value { type: DT_FLOAT } } }";
  absl::Status s = BuildText(Placeholder("x") +
                             "node { name: 'merge' op: 'Merge' input: 'x' input: 'id' "
                             "attr { key: 'N' value { i: 2 } }" +
                             t + "node { name: 'id' op: 'Identity' input: 'merge'" + t)
                       .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("'merge' (Merge)"));
  EXPECT_THAT(s.message(), HasSubstr("must close through a NextIteration -> Merge edge"));
}

TEST(GraphErrorTest, UnsupportedDtype) {
  absl::Status s = BuildText(Placeholder("z", "DT_QUINT16")).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
  EXPECT_THAT(s.message(), HasSubstr("node 'z' (Placeholder): attr 'dtype' is quint16"));
  s = BuildText(Placeholder("q", "DT_QINT8")).status();
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented);
}

TEST(GraphErrorTest, MissingTypeAttr) {
  absl::Status s = BuildText(std::string("node { name: 'p' ") + (kFloatPlaceholder + 0) +
                             "} node { name: 'r' op: 'Relu' input: 'p' }")
                       .status();
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(s.message(), HasSubstr("node 'r' (Relu): attr 'T' is missing"));
}

TEST(GraphErrorTest, EmptyNameAndOp) {
  EXPECT_EQ(BuildText("node { op: 'NoOp' }").status().code(), absl::StatusCode::kInvalidArgument);
  absl::Status s = BuildText("node { name: 'n' }").status();
  EXPECT_THAT(s.message(), HasSubstr("node 'n' has no op"));
}

}  // namespace
}  // namespace tfjit::tf
