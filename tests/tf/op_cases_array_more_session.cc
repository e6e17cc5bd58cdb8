// The array_more ops a differential case cannot show (docs/DESIGN.md, "Op families"): Assert's
// message and pass-through, the kernels' refusals of bad inputs with TF's messages, and
// ControlTrigger run as a target, each through a Session in every jit mode that applies.
#include <map>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "frontend/proto/graph.pb.h"
#include "frontend/tensor_proto.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tests/tf/op_cases.h"
#include "tfjit/session.h"

namespace tfjit::optest {
namespace {

// Runs a graph given as text with `feeds`; returns the status of fetching `fetch`.
absl::Status RunGraph(const std::string& name, const std::string& text, JitMode jit,
                      const std::vector<std::pair<std::string, Tensor>>& feeds,
                      const std::string& fetch, std::vector<std::string> targets = {}) {
  const std::string path = tfjit::testing::WriteTempFile(name, text);
  SessionOptions options;
  options.jit = jit;
  auto session = Session::Load(path, options);
  if (!session.ok()) return session.status();
  if (!targets.empty()) return (*session)->Run(feeds, {}, targets).status();
  return (*session)->Run(feeds, {fetch}).status();
}

// cond -> Assert(cond, [x]) with a control edge to Identity(x).
const char kAssertGraph[] = R"pb(
  node { name: "cond" op: "Placeholder" attr { key: "dtype" value { type: DT_BOOL } } }
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
  node {
    name: "check" op: "Assert" input: "cond" input: "x"
    attr { key: "T" value { list { type: DT_FLOAT } } }
    attr { key: "summarize" value { i: 2 } }
  }
  node {
    name: "y" op: "Identity" input: "x" input: "^check"
    attr { key: "T" value { type: DT_FLOAT } }
  }
)pb";

TEST(ArrayMoreOps, AssertFailsWithTheDataAndPassesWhenTrue) {
  const Tensor x = Floats(DType::kFloat32, {3}, {1.5, 2, -3});
  for (JitMode jit : {JitMode::kNone, JitMode::kAuto}) {
    absl::Status s = RunGraph(
        "assert_false.pbtxt", kAssertGraph, jit,
        {{"cond", Build(DType::kBool, {}, [](const Dims&) { return 0.0; })}, {"x", x}}, "y");
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
    EXPECT_TRUE(absl::StrContains(s.message(), "assertion failed: [1.5 2...]")) << s;
    s = RunGraph("assert_true.pbtxt", kAssertGraph, jit,
                 {{"cond", Build(DType::kBool, {}, [](const Dims&) { return 1.0; })}, {"x", x}},
                 "y");
    EXPECT_TRUE(s.ok()) << s;
  }
}

// A one-op graph: placeholders p0.. (fed `feeds`), then Const inputs k0.. (`consts`).
std::string OneOpGraph(const std::string& op, const std::vector<Tensor>& feeds,
                       const std::vector<Tensor>& consts,
                       const std::map<std::string, tensorflow::AttrValue>& attrs) {
  tensorflow::GraphDef g;
  tensorflow::NodeDef* node = g.add_node();
  node->set_name("op");
  node->set_op(op);
  for (size_t i = 0; i < feeds.size(); ++i) {
    tensorflow::NodeDef* p = g.add_node();
    p->set_name(absl::StrCat("p", i));
    p->set_op("Placeholder");
    (*p->mutable_attr())["dtype"] = TypeAttr(feeds[i].dtype());
    node->add_input(p->name());
  }
  for (size_t i = 0; i < consts.size(); ++i) {
    tensorflow::NodeDef* k = g.add_node();
    k->set_name(absl::StrCat("k", i));
    k->set_op("Const");
    (*k->mutable_attr())["dtype"] = TypeAttr(consts[i].dtype());
    *(*k->mutable_attr())["value"].mutable_tensor() = tf::TensorToProto(consts[i]);
    node->add_input(k->name());
  }
  for (const auto& [name, value] : attrs) (*node->mutable_attr())[name] = value;
  std::string text;
  google::protobuf::TextFormat::PrintToString(g, &text);
  return text;
}

// The kernel (jit none) and the compiled path (jit all) both reject the node with
// INVALID_ARGUMENT containing `message`.
void ExpectRejected(const std::string& op, const std::vector<Tensor>& feeds,
                    const std::vector<Tensor>& consts,
                    const std::map<std::string, tensorflow::AttrValue>& attrs,
                    const std::string& message, bool compiled = true) {
  std::vector<std::pair<std::string, Tensor>> named;
  for (size_t i = 0; i < feeds.size(); ++i) named.push_back({absl::StrCat("p", i), feeds[i]});
  const std::string text = OneOpGraph(op, feeds, consts, attrs);
  for (JitMode jit : {JitMode::kNone, JitMode::kAll}) {
    if (jit == JitMode::kAll && !compiled) continue;
    absl::Status s = RunGraph(absl::StrCat("reject_", op, ".pbtxt"), text, jit, named, "op");
    EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << op << ": " << s;
    EXPECT_TRUE(absl::StrContains(s.message(), message)) << op << ": " << s;
  }
}

TEST(ArrayMoreOps, BadInputsFailWithTfsMessages) {
  const Tensor x = Floats(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  std::map<std::string, tensorflow::AttrValue> t = {{"T", TypeAttr(DType::kFloat32)}};
  ExpectRejected("Reverse", {x}, {Bools({true})}, t, "'dims' must have the same number of values");
  auto roll = t;
  roll["Tshift"] = TypeAttr(DType::kInt32);
  roll["Taxis"] = TypeAttr(DType::kInt32);
  ExpectRejected("Roll", {x}, {Ints({1}), Ints({2})}, roll, "axis 2 is out of range");
  ExpectRejected("Roll", {x}, {Ints({1, 1}), Ints({0})}, roll,
                 "shift and axis must have the same size");
  ExpectRejected("InvertPermutation", {Ints({0, 2, 2})}, {}, {{"T", TypeAttr(DType::kInt32)}},
                 "2 is duplicated in the input.", /*compiled=*/false);
  ExpectRejected("InvertPermutation", {Ints({0, 3, 1})}, {}, {{"T", TypeAttr(DType::kInt32)}},
                 "3 is not between 0 and 3", /*compiled=*/false);
  auto lin = t;
  lin["Tidx"] = TypeAttr(DType::kInt32);
  ExpectRejected("LinSpace", {Floats(DType::kFloat32, {}, {0}), Floats(DType::kFloat32, {}, {1})},
                 {Ints({0}, true)}, lin, "Requires num > 0: 0");
  auto cast = t;
  cast["type"] = TypeAttr(DType::kFloat64);
  ExpectRejected("Bitcast", {x}, {}, cast, "Cannot bitcast from float32 to float64: shape [2,3]");
  ExpectRejected("BroadcastArgs", {}, {Ints({2, 3}), Ints({4})}, {{"T", TypeAttr(DType::kInt32)}},
                 "Incompatible shapes: [2,3] vs. [4]");
  auto bucket = t;
  bucket["boundaries"] = FloatListAttr({1.f, 0.f});
  ExpectRejected("Bucketize", {x}, {}, bucket, "Expected sorted boundaries");
  ExpectRejected("ApproximateEqual", {x, Floats(DType::kFloat32, {3}, {1, 2, 3})}, {}, t,
                 "x and y must be of the same shape");
  auto fq = std::map<std::string, tensorflow::AttrValue>{{"min", FloatAttr(1.f)},
                                                         {"max", FloatAttr(-1.f)}};
  ExpectRejected("FakeQuantWithMinMaxArgs", {x}, {}, fq, "min has to be smaller than max");
  auto space = t;
  space["block_size"] = IntAttr(1);
  space["Tpaddings"] = TypeAttr(DType::kInt32);
  ExpectRejected("SpaceToBatch", {Floats(DType::kFloat32, {1, 2, 2, 1}, {1, 2, 3, 4})},
                 {Tensor::FromVector<int32_t>(DType::kInt32, {2, 2}, {0, 0, 0, 0})}, space,
                 "Block size should be > 1: 1");
  ExpectRejected("UniqueWithCounts", {x}, {}, {{"T", TypeAttr(DType::kFloat32)}},
                 "unique expects a 1D vector.", /*compiled=*/false);
  auto hist = std::map<std::string, tensorflow::AttrValue>{{"T", TypeAttr(DType::kFloat32)}};
  ExpectRejected("HistogramFixedWidth", {x},
                 {Floats(DType::kFloat32, {2}, {1, 0}), Ints({3}, true)}, hist,
                 "value_range should satisfy value_range[0] < value_range[1]",
                 /*compiled=*/false);
}

TEST(ArrayMoreOps, ControlTriggerRunsAsATarget) {
  const char graph[] = R"pb(node { name: "t" op: "ControlTrigger" })pb";
  for (JitMode jit : {JitMode::kNone, JitMode::kAll}) {
    EXPECT_TRUE(RunGraph("control_trigger.pbtxt", graph, jit, {}, "", {"t"}).ok());
  }
}

}  // namespace
}  // namespace tfjit::optest
