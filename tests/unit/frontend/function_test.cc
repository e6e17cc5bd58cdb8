// Tests for frontend/function.{h,cc}: FunctionDef instantiation (arg placeholders, out_arg
// resolution, attr placeholders, rets, control rets, errors) and call nodes in Graph::Build.
#include "frontend/function.h"

#include "absl/strings/match.h"
#include "frontend/attr.h"
#include "gtest/gtest.h"
#include "test_util.h"

namespace tfjit::tf {
namespace {

using testing::ParseTextProto;

// f(x: float [2], y: float) -> z = x * y + x, must-compile.
constexpr char kLibrary[] = R"pb(
  function {
    signature {
      name: "f"
      input_arg { name: "x" type: DT_FLOAT }
      input_arg { name: "y" type: DT_FLOAT }
      output_arg { name: "z" type: DT_FLOAT }
    }
    node_def { name: "mul" op: "Mul" input: "x" input: "y"
               attr { key: "T" value { type: DT_FLOAT } } }
    node_def { name: "add" op: "AddV2" input: "mul:z:0" input: "x" input: "^y"
               attr { key: "T" value { type: DT_FLOAT } } }
    ret { key: "z" value: "add:z:0" }
    attr { key: "_XlaMustCompile" value { b: true } }
    arg_attr { key: 0 value { attr { key: "_output_shapes"
                                     value { list { shape { dim { size: 2 } } } } } } }
  }
  function {
    signature {
      name: "multi"
      input_arg { name: "v" type: DT_FLOAT }
      input_arg { name: "k" type: DT_INT32 }
      output_arg { name: "third" type: DT_FLOAT }
      output_arg { name: "second_of_n" type: DT_INT32 }
      output_arg { name: "idx" type: DT_INT32 }
    }
    node_def { name: "unpack" op: "Unpack" input: "v" attr { key: "T" value { type: DT_FLOAT } }
               attr { key: "num" value { i: 3 } } }
    node_def { name: "idn" op: "IdentityN" input: "unpack:output:0" input: "k"
               attr { key: "T" value { list { type: DT_FLOAT type: DT_INT32 } } } }
    node_def { name: "topk" op: "TopKV2" input: "v" input: "k"
               attr { key: "T" value { type: DT_FLOAT } } }
    ret { key: "third" value: "unpack:output:2" }
    ret { key: "second_of_n" value: "idn:output:1" }
    ret { key: "idx" value: "topk:indices:0" }
  }
  function {
    signature {
      name: "templated"
      input_arg { name: "a" type_attr: "T" }
      output_arg { name: "b" type_attr: "Tout" }
      attr { name: "T" type: "type" }
      attr { name: "Tout" type: "type" default_value { type: DT_INT32 } }
      control_output: "side_effect"
    }
    node_def { name: "cast" op: "Cast" input: "a" attr { key: "SrcT" value { placeholder: "T" } }
               attr { key: "DstT" value { placeholder: "Tout" } } }
    node_def { name: "noop" op: "NoOp" input: "^a" }
    ret { key: "b" value: "cast:y:0" }
    control_ret { key: "side_effect" value: "noop" }
    attr { key: "_XlaMustCompile" value { b: false } }
  }
)pb";

tensorflow::FunctionDefLibrary Library() {
  return ParseTextProto<tensorflow::FunctionDefLibrary>(kLibrary);
}

absl::StatusOr<FunctionBody> Instantiate(absl::string_view name, const AttrMap& attrs = {}) {
  return InstantiateFunction(Library(), tensorflow::VersionDef(), name, attrs);
}

TEST(FunctionTest, ArgsBecomePlaceholdersAndRefsResolve) {
  absl::StatusOr<FunctionBody> body = Instantiate("f");
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_EQ(body->graph->source(), "f");
  EXPECT_EQ(body->inputs, (std::vector<std::string>{"x:0", "y:0"}));
  EXPECT_EQ(body->outputs, (std::vector<std::string>{"add:0"}));
  EXPECT_TRUE(body->must_compile);
  EXPECT_TRUE(body->control_sink.empty());
  const Node* x = body->graph->FindNode("x");
  ASSERT_NE(x, nullptr);
  EXPECT_EQ(x->op(), "Placeholder");
  EXPECT_EQ(x->output_types(), std::vector<DType>{DType::kFloat32});
  absl::StatusOr<PartialShape> xs = GetShapeAttr(*x, "shape");
  ASSERT_TRUE(xs.ok());
  EXPECT_EQ(xs->dims, std::vector<int64_t>{2});
  absl::StatusOr<PartialShape> ys = GetShapeAttr(*body->graph->FindNode("y"), "shape");
  ASSERT_TRUE(ys.ok());
  EXPECT_TRUE(ys->unknown_rank);
  const Node* add = body->graph->FindNode("add");
  ASSERT_NE(add, nullptr);
  EXPECT_EQ(add->input(0).node->name(), "mul");
  EXPECT_EQ(add->input(1).node->name(), "x");
  ASSERT_EQ(add->control_inputs().size(), 1u);
  EXPECT_EQ(add->control_inputs()[0]->name(), "y");
}

TEST(FunctionTest, MultiOutputOpsResolveToFlatIndices) {
  absl::StatusOr<FunctionBody> body = Instantiate("multi");
  ASSERT_TRUE(body.ok()) << body.status();
  // unpack:output:2 -> 2; idn:output:1 -> 1; topk:indices:0 -> 1 (after "values").
  EXPECT_EQ(body->outputs, (std::vector<std::string>{"unpack:2", "idn:1", "topk:1"}));
  const Node* idn = body->graph->FindNode("idn");
  EXPECT_EQ(idn->input(0).node->name(), "unpack");
  EXPECT_EQ(idn->input(0).index, 0);
  EXPECT_EQ(idn->output_types(), (std::vector<DType>{DType::kFloat32, DType::kInt32}));
  EXPECT_FALSE(body->must_compile);
}

TEST(FunctionTest, AttrPlaceholdersAndDefaultsAndControlOutputs) {
  AttrMap attrs;
  attrs["T"].set_type(tensorflow::DT_FLOAT);
  absl::StatusOr<FunctionBody> body = Instantiate("templated", attrs);
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_EQ(body->graph->FindNode("a")->output_types(), std::vector<DType>{DType::kFloat32});
  // Tout comes from the signature default (int32).
  EXPECT_EQ(body->graph->FindNode("cast")->output_types(), std::vector<DType>{DType::kInt32});
  EXPECT_EQ(body->control_outputs, std::vector<std::string>{"noop"});
  ASSERT_FALSE(body->control_sink.empty());
  absl::StatusOr<Output> sink = body->graph->FindOutput(body->control_sink);
  ASSERT_TRUE(sink.ok()) << sink.status();
  ASSERT_EQ(sink->node->control_inputs().size(), 1u);
  EXPECT_EQ(sink->node->control_inputs()[0]->name(), "noop");
  // An explicit call attr overrides the default.
  attrs["Tout"].set_type(tensorflow::DT_INT64);
  body = Instantiate("templated", attrs);
  ASSERT_TRUE(body.ok()) << body.status();
  EXPECT_EQ(body->graph->FindNode("cast")->output_types(), std::vector<DType>{DType::kInt64});
}

TEST(FunctionTest, MissingAttrNamesFunctionArgAndAttr) {
  absl::StatusOr<FunctionBody> body = Instantiate("templated");
  ASSERT_EQ(body.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(body.status().message(), "function 'templated'"));
  EXPECT_TRUE(absl::StrContains(body.status().message(), "input arg 'a' needs attr 'T'"))
      << body.status();
}

TEST(FunctionTest, UnboundAttrPlaceholderNamesNodeAndAttr) {
  tensorflow::FunctionDefLibrary lib = Library();
  // Make T have a value for the arg but leave the body's DstT placeholder unbound.
  lib.mutable_function(2)->mutable_node_def(0)->mutable_attr()->at("DstT").set_placeholder("U");
  AttrMap attrs;
  attrs["T"].set_type(tensorflow::DT_FLOAT);
  auto body = InstantiateFunction(lib, {}, "templated", attrs);
  ASSERT_EQ(body.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(body.status().message(),
                                "node 'cast' attr 'DstT' takes the value of function attr 'U'"))
      << body.status();
}

TEST(FunctionTest, MissingFunctionIsNotFound) {
  auto body = Instantiate("nope");
  EXPECT_EQ(body.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(body.status().message(), "'nope'")) << body.status();
}

TEST(FunctionTest, BadReferencesNameFunctionNodeAndRef) {
  tensorflow::FunctionDefLibrary lib = Library();
  lib.mutable_function(0)->mutable_node_def(1)->set_input(0, "mull:z:0");
  auto body = InstantiateFunction(lib, {}, "f", {});
  ASSERT_EQ(body.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(body.status().message(),
                                "function 'f': node 'add' input 0 'mull:z:0' refers to 'mull'"))
      << body.status();

  lib = Library();
  lib.mutable_function(0)->mutable_node_def(1)->set_input(0, "mul:w:0");
  body = InstantiateFunction(lib, {}, "f", {});
  ASSERT_EQ(body.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(body.status().message(), "has no output 'w'")) << body.status();
  EXPECT_TRUE(absl::StrContains(body.status().message(), "function 'f'")) << body.status();

  lib = Library();
  (*lib.mutable_function(1)->mutable_ret())["third"] = "unpack:output:3";
  body = InstantiateFunction(lib, {}, "multi", {});
  ASSERT_EQ(body.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(body.status().message(), "ret 'third'")) << body.status();
  EXPECT_TRUE(absl::StrContains(body.status().message(), "out of range")) << body.status();

  lib = Library();
  lib.mutable_function(0)->mutable_ret()->erase("z");
  body = InstantiateFunction(lib, {}, "f", {});
  ASSERT_EQ(body.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(body.status().message(), "output arg 'z' has no entry in 'ret'"))
      << body.status();
}

TEST(FunctionTest, InstanceKeyDependsOnAttrs) {
  AttrMap a, b;
  a["T"].set_type(tensorflow::DT_FLOAT);
  b["T"].set_type(tensorflow::DT_INT32);
  EXPECT_NE(FunctionInstanceKey("f", a), FunctionInstanceKey("f", b));
  EXPECT_EQ(FunctionInstanceKey("f", a), FunctionInstanceKey("f", a));
  EXPECT_NE(FunctionInstanceKey("f", a), FunctionInstanceKey("g", a));
}

// Graph::Build with call nodes.
tensorflow::GraphDef CallGraph(const std::string& nodes) {
  auto def = ParseTextProto<tensorflow::GraphDef>(nodes);
  *def.mutable_library() = Library();
  return def;
}

constexpr char kInputs[] = R"pb(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "y" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
)pb";

TEST(FunctionGraphTest, PartitionedCallResolvesFunctionAndTout) {
  auto def = CallGraph(std::string(kInputs) + R"pb(
    node { name: "call" op: "StatefulPartitionedCall" input: "x" input: "y"
           attr { key: "f" value { func { name: "f" } } }
           attr { key: "Tin" value { list { type: DT_FLOAT type: DT_FLOAT } } }
           attr { key: "Tout" value { list { type: DT_FLOAT } } } }
  )pb");
  auto graph = Graph::Build(def, "g");
  ASSERT_TRUE(graph.ok()) << graph.status();
  const Node* call = (*graph)->FindNode("call");
  ASSERT_NE(call->called_function(), nullptr);
  EXPECT_EQ(call->called_function()->signature().name(), "f");
  EXPECT_EQ(call->output_types(), std::vector<DType>{DType::kFloat32});
  EXPECT_EQ(CallMustCompileAttr(*call), std::optional<bool>(true));
  EXPECT_EQ((*graph)->FindNode("x")->called_function(), nullptr);
}

TEST(FunctionGraphTest, DirectCallTakesTypesFromSignature) {
  auto def = CallGraph(std::string(kInputs) + R"pb(
    node { name: "k" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 2 } } } }
    node { name: "direct" op: "multi" input: "x" input: "k" }
    node { name: "tmpl" op: "templated" input: "direct:1" attr { key: "T" value { type: DT_INT32 } }
           attr { key: "Tout" value { type: DT_FLOAT } } }
  )pb");
  auto graph = Graph::Build(def, "g");
  ASSERT_TRUE(graph.ok()) << graph.status();
  const Node* direct = (*graph)->FindNode("direct");
  EXPECT_EQ(direct->output_types(),
            (std::vector<DType>{DType::kFloat32, DType::kInt32, DType::kInt32}));
  ASSERT_NE(direct->called_function(), nullptr);
  const Node* tmpl = (*graph)->FindNode("tmpl");
  EXPECT_EQ(tmpl->output_types(), std::vector<DType>{DType::kFloat32});
  absl::StatusOr<FunctionCall> call = GetFunctionCall(*tmpl);
  ASSERT_TRUE(call.ok()) << call.status();
  EXPECT_EQ(call->attrs.at("T").type(), tensorflow::DT_INT32);
  EXPECT_EQ(CallMustCompileAttr(*tmpl), std::optional<bool>(false));
}

TEST(FunctionGraphTest, MissingFunctionIsNotFoundNamingNodeAndFunction) {
  auto def = CallGraph(std::string(kInputs) + R"pb(
    node { name: "call" op: "PartitionedCall" input: "x"
           attr { key: "f" value { func { name: "__inference_missing_7" } } }
           attr { key: "Tin" value { list { type: DT_FLOAT } } }
           attr { key: "Tout" value { list { type: DT_FLOAT } } } }
  )pb");
  auto graph = Graph::Build(def, "g");
  ASSERT_EQ(graph.status().code(), absl::StatusCode::kNotFound) << graph.status();
  EXPECT_TRUE(absl::StrContains(graph.status().message(), "'call' (PartitionedCall)"));
  EXPECT_TRUE(absl::StrContains(graph.status().message(), "'__inference_missing_7'"));
}

TEST(FunctionGraphTest, ToutCountMustMatchFunction) {
  auto def = CallGraph(std::string(kInputs) + R"pb(
    node { name: "call" op: "PartitionedCall" input: "x" input: "y"
           attr { key: "f" value { func { name: "f" } } }
           attr { key: "Tin" value { list { type: DT_FLOAT type: DT_FLOAT } } }
           attr { key: "Tout" value { list { type: DT_FLOAT type: DT_FLOAT } } } }
  )pb");
  auto graph = Graph::Build(def, "g");
  ASSERT_EQ(graph.status().code(), absl::StatusCode::kInvalidArgument) << graph.status();
  EXPECT_TRUE(absl::StrContains(graph.status().message(), "Tout lists 2 type(s)"))
      << graph.status();
}

// InlineCalls: a call becomes the callee's nodes under "<call>/", its args Identity nodes of
// the call's inputs (with the call's control inputs), and the call node itself an Identity or
// IdentityN of the callee's outputs, so "call:k" still names output k. A function marked
// `_XlaMustCompile: false` stays a call.
TEST(FunctionInliningTest, CallsBecomeTheCalleesNodes) {
  auto def = CallGraph(std::string(kInputs) + R"pb(
    node { name: "k" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 2 } } } }
    node { name: "call_multi" op: "PartitionedCall" input: "x" input: "k"
           attr { key: "f" value { func { name: "multi" } } }
           attr { key: "Tin" value { list { type: DT_FLOAT type: DT_INT32 } } }
           attr { key: "Tout" value { list { type: DT_FLOAT type: DT_INT32 type: DT_INT32 } } } }
    node { name: "call_f" op: "StatefulPartitionedCall" input: "x" input: "y" input: "^k"
           attr { key: "f" value { func { name: "f" } } }
           attr { key: "Tin" value { list { type: DT_FLOAT type: DT_FLOAT } } }
           attr { key: "Tout" value { list { type: DT_FLOAT } } } }
    node { name: "call_t" op: "templated" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
  )pb");
  ASSERT_TRUE(InlineCalls(def.library(), def.versions(), {}, &def).ok());
  auto graph = Graph::Build(def, "g");
  ASSERT_TRUE(graph.ok()) << graph.status();
  auto inputs = [&](const std::string& name) {
    const Node* n = (*graph)->FindNode(name);
    std::vector<std::string> in;
    if (n == nullptr) return in;
    for (const std::string& i : n->def().input()) in.push_back(i);
    return in;
  };
  const Node* multi = (*graph)->FindNode("call_multi");
  ASSERT_NE(multi, nullptr);
  EXPECT_EQ(multi->op(), "IdentityN");
  EXPECT_EQ(
      inputs("call_multi"),
      (std::vector<std::string>{"call_multi/unpack:2", "call_multi/idn:1", "call_multi/topk:1"}));
  EXPECT_EQ(multi->output_types(),
            (std::vector<DType>{DType::kFloat32, DType::kInt32, DType::kInt32}));
  EXPECT_EQ((*graph)->FindNode("call_multi/v")->op(), "Identity");
  EXPECT_EQ(inputs("call_multi/v"), std::vector<std::string>{"x"});
  EXPECT_EQ((*graph)->FindNode("call_f")->op(), "Identity");
  EXPECT_EQ(inputs("call_f"), std::vector<std::string>{"call_f/add:0"});
  EXPECT_EQ(inputs("call_f/x"), (std::vector<std::string>{"x", "^k"}));
  EXPECT_EQ(inputs("call_f/add"),
            (std::vector<std::string>{"call_f/mul:0", "call_f/x:0", "^call_f/y"}));
  EXPECT_EQ((*graph)->FindNode("call_t")->op(), "templated") << "_XlaMustCompile: false";
  EXPECT_EQ((*graph)->FindNode("call_t/cast"), nullptr);
}

// A function that calls itself is inlined once; the inner call stays a call (the runtime
// reports the recursion when it runs).
TEST(FunctionInliningTest, RecursionStopsAtTheRepeatedFunction) {
  auto def = ParseTextProto<tensorflow::GraphDef>(R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "c" op: "PartitionedCall" input: "x"
           attr { key: "f" value { func { name: "rec" } } }
           attr { key: "Tin" value { list { type: DT_FLOAT } } }
           attr { key: "Tout" value { list { type: DT_FLOAT } } } }
    library { function {
      signature { name: "rec" input_arg { name: "a" type: DT_FLOAT }
                  output_arg { name: "b" type: DT_FLOAT } }
      node_def { name: "again" op: "PartitionedCall" input: "a"
                 attr { key: "f" value { func { name: "rec" } } }
                 attr { key: "Tin" value { list { type: DT_FLOAT } } }
                 attr { key: "Tout" value { list { type: DT_FLOAT } } } }
      ret { key: "b" value: "again:output:0" } } }
  )pb");
  ASSERT_TRUE(InlineCalls(def.library(), def.versions(), {}, &def).ok());
  auto graph = Graph::Build(def, "g");
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ((*graph)->FindNode("c")->op(), "Identity");
  ASSERT_NE((*graph)->FindNode("c/again"), nullptr);
  EXPECT_EQ((*graph)->FindNode("c/again")->op(), "PartitionedCall");
  EXPECT_EQ((*graph)->FindNode("c/again/again"), nullptr);
}

}  // namespace
}  // namespace tfjit::tf
