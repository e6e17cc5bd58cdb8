// Stateful random ops in compiled code (known issue E), through the Session on both backends:
// by default they ignore their seeds as XLA does (a new stream per run, the same first run in
// every new session, TF's warning); with autofix they continue the runtime kernel's stream
// exactly; auto-clustering keeps them out of clusters as TF does. Inside compiled While and
// If bodies they draw from a state the loop or conditional carries.
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/proto/graph.pb.h"
#include "frontend/tensor_proto.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

using ::tfjit::testing::WriteTempFile;

tensorflow::AttrValue TypeAttr(DType t) {
  tensorflow::AttrValue a;
  a.set_type(static_cast<tensorflow::DataType>(DTypeToTfEnum(t)));
  return a;
}

struct RandomCase {
  const char* op;
  DType dtype;
  const char* api;  // the tf.random name in the warning
};
const RandomCase kCases[] = {{"RandomUniform", DType::kFloat32, "uniform"},
                             {"RandomStandardNormal", DType::kFloat64, "normal"},
                             {"TruncatedNormal", DType::kFloat32, "truncated_normal"},
                             {"RandomUniformInt", DType::kInt32, "uniform"},
                             {"RandomStandardNormal", DType::kFloat16, "normal"}};

void AddConst(tensorflow::GraphDef& g, const std::string& name, const Tensor& value) {
  auto* n = g.add_node();
  n->set_name(name);
  n->set_op("Const");
  (*n->mutable_attr())["dtype"] = TypeAttr(value.dtype());
  *(*n->mutable_attr())["value"].mutable_tensor() = tf::TensorToProto(value);
}

void AddRandom(tensorflow::GraphDef& g, const std::string& name, const RandomCase& c, int64_t seed,
               int64_t seed2) {
  auto* n = g.add_node();
  n->set_name(name);
  n->set_op(c.op);
  n->add_input("shape");
  const bool is_int = IsIntegerDType(c.dtype);
  if (is_int) {
    n->add_input("lo");
    n->add_input("hi");
  }
  (*n->mutable_attr())[is_int ? "Tout" : "dtype"] = TypeAttr(c.dtype);
  (*n->mutable_attr())["T"] = TypeAttr(DType::kInt32);
  (*n->mutable_attr())["seed"].set_i(seed);
  (*n->mutable_attr())["seed2"].set_i(seed2);
}

// shape [3, 7] (21 outputs: not a multiple of the 4-wide Philox block), one or two random
// nodes ("r", "r2") and, for floats, y = r * r2-like arithmetic so the cluster computes more.
std::string WriteGraph(const RandomCase& c, bool two_nodes, const std::string& tag) {
  tensorflow::GraphDef g;
  AddConst(g, "shape", Tensor::FromVector<int32_t>(DType::kInt32, {2}, {3, 7}));
  AddConst(g, "lo", Tensor::FromVector<int32_t>(DType::kInt32, {}, {-5}));
  AddConst(g, "hi", Tensor::FromVector<int32_t>(DType::kInt32, {}, {1000}));
  AddRandom(g, "r", c, 87654321, 17);
  if (two_nodes) {
    AddRandom(g, "r2", c, 3, 4);
    auto* add = g.add_node();
    add->set_name("sum");
    add->set_op("AddV2");
    add->add_input("r");
    add->add_input("r2");
    (*add->mutable_attr())["T"] = TypeAttr(c.dtype);
  }
  std::string text;
  google::protobuf::TextFormat::PrintToString(g, &text);
  return WriteTempFile(absl::StrCat("compiled_rng_", tag, ".pbtxt"), text);
}

std::unique_ptr<Session> Open(const std::string& path, JitMode jit, const std::string& backend,
                              bool autofix) {
  SessionOptions options;
  options.jit = jit;
  options.backend = backend;
  options.autofix = autofix;
  auto s = Session::Load(path, options);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

// `runs` consecutive runs of one session; stderr of the first run in `first_log`.
std::vector<std::vector<Tensor>> RunTimes(Session& s, const std::vector<std::string>& fetches,
                                          int runs, std::string* first_log = nullptr,
                                          RunStats* first_stats = nullptr) {
  std::vector<std::vector<Tensor>> out;
  for (int i = 0; i < runs; ++i) {
    if (i == 0 && first_log != nullptr) ::testing::internal::CaptureStderr();
    auto r = s.Run({}, fetches, i == 0 ? first_stats : nullptr);
    if (i == 0 && first_log != nullptr) *first_log = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return out;
    out.push_back(*std::move(r));
  }
  return out;
}

bool Same(const Tensor& a, const Tensor& b) {
  return a.ShapeString() == b.ShapeString() &&
         std::memcmp(a.raw_data(), b.raw_data(), a.byte_size()) == 0;
}

std::string Name(const RandomCase& c, const char* backend) {
  return absl::StrCat(c.op, "_", DTypeName(c.dtype), "_", backend);
}

TEST(CompiledRandomTest, WithoutAutofixSeedsAreIgnoredAsInXla) {
  for (const RandomCase& c : kCases) {
    const std::string path = WriteGraph(c, false, absl::StrCat("xla_", c.op));
    for (const char* backend : {"cpu", "interpreter"}) {
      SCOPED_TRACE(Name(c, backend));
      std::string log;
      RunStats stats;
      auto first = Open(path, JitMode::kAll, backend, false);
      ASSERT_NE(first, nullptr);
      auto runs = RunTimes(*first, {"r"}, 2, &log, &stats);
      ASSERT_EQ(runs.size(), 2u);
      EXPECT_EQ(stats.clusters, 1);
      EXPECT_FALSE(Same(runs[0][0], runs[1][0])) << "each run draws a new stream";
      EXPECT_TRUE(absl::StrContains(
          log, absl::StrCat("Warning: Using tf.random.", c.api,
                            " with XLA compilation will "
                            "ignore seeds; consider using tf.random.stateless_",
                            c.api, " instead if reproducible behavior is desired. r")))
          << log;
      auto second = Open(path, JitMode::kAll, backend, false);
      auto again = RunTimes(*second, {"r"}, 1);
      ASSERT_EQ(again.size(), 1u);
      EXPECT_TRUE(Same(runs[0][0], again[0][0])) << "a new session starts the same way";
      // The seeds are ignored, so the kernels' seeded stream is not what comes out.
      auto kernels = Open(path, JitMode::kNone, backend, false);
      auto k = RunTimes(*kernels, {"r"}, 1);
      ASSERT_EQ(k.size(), 1u);
      EXPECT_FALSE(Same(k[0][0], runs[0][0]));
    }
    std::filesystem::remove(path);
  }
}

TEST(CompiledRandomTest, AutofixContinuesTheKernelStream) {
  for (const RandomCase& c : kCases) {
    const std::string path = WriteGraph(c, true, absl::StrCat("fix_", c.op));
    auto reference = Open(path, JitMode::kNone, "cpu", false);
    ASSERT_NE(reference, nullptr);
    const auto want = RunTimes(*reference, {"r", "r2", "sum"}, 3);
    ASSERT_EQ(want.size(), 3u);
    for (const char* backend : {"cpu", "interpreter"}) {
      SCOPED_TRACE(Name(c, backend));
      auto s = Open(path, JitMode::kAll, backend, true);
      ASSERT_NE(s, nullptr);
      std::string log;
      RunStats stats;
      const auto got = RunTimes(*s, {"r", "r2", "sum"}, 3, &log, &stats);
      ASSERT_EQ(got.size(), 3u);
      EXPECT_EQ(stats.clusters, 1);
      EXPECT_TRUE(absl::StrContains(log, "autofix E: ")) << log;
      EXPECT_FALSE(absl::StrContains(log, "will ignore seeds")) << log;
      for (int run = 0; run < 3; ++run) {
        for (int k = 0; k < 3; ++k) {
          EXPECT_TRUE(Same(want[run][k], got[run][k]))
              << "run " << run << " fetch " << k << "\nkernels: " << want[run][k].DebugString(8)
              << "\ncompiled: " << got[run][k].DebugString(8);
        }
      }
    }
    std::filesystem::remove(path);
  }
}

// Auto-clustering leaves stateful random ops in the runtime (TF's rule): the kernel's stream,
// no warning, whatever the autofix setting.
TEST(CompiledRandomTest, AutoClusteringKeepsStatefulOpsOut) {
  const RandomCase& c = kCases[0];
  const std::string path = WriteGraph(c, true, "auto");
  auto reference = Open(path, JitMode::kNone, "cpu", false);
  const auto want = RunTimes(*reference, {"sum"}, 2);
  for (bool autofix : {false, true}) {
    auto s = Open(path, JitMode::kAuto, "cpu", autofix);
    std::string log;
    const auto got = RunTimes(*s, {"sum"}, 2, &log);
    ASSERT_EQ(got.size(), 2u);
    for (int run = 0; run < 2; ++run) EXPECT_TRUE(Same(want[run][0], got[run][0])) << run;
    EXPECT_FALSE(absl::StrContains(log, "will ignore seeds")) << log;
    auto explain = s->Explain({"sum"});
    ASSERT_TRUE(explain.ok()) << explain.status();
    EXPECT_TRUE(absl::StrContains(*explain, "stateful op RandomUniform stays in the runtime"))
        << *explain;
  }
  std::filesystem::remove(path);
}

// A While whose body draws (b <- uniform, a <- the previous b, two iterations) and an If whose
// then branch adds a draw: in must-compile mode the loop and the conditional carry one Philox
// state through their bodies (XLA's semantics: seeds ignored, TF's warning), so the two
// iterations draw different numbers, a new session's first run is the same on both backends,
// and each run draws anew. Auto-clustering leaves them to the runtime, as it does the ops.
constexpr char kRandomInBodiesGraph[] = R"pb(
node { name: "i0" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
node { name: "z" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
       attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } }
                                            float_val: 0 } } } }
node { name: "p" op: "Placeholder" attr { key: "dtype" value { type: DT_BOOL } }
       attr { key: "shape" value { shape { } } } }
node { name: "loop" op: "While" input: "i0" input: "z" input: "z"
       attr { key: "T" value { list { type: DT_INT32 type: DT_FLOAT type: DT_FLOAT } } }
       attr { key: "cond" value { func { name: "cond" } } }
       attr { key: "body" value { func { name: "body" } } }
       attr { key: "output_shapes" value { list { shape { } shape { dim { size: 3 } } shape { dim { size: 3 } } } } }
       attr { key: "parallel_iterations" value { i: 10 } } }
node { name: "a" op: "Identity" input: "loop:1" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "b" op: "Identity" input: "loop:2" attr { key: "T" value { type: DT_FLOAT } } }
node { name: "pick" op: "If" input: "p" input: "z"
       attr { key: "Tcond" value { type: DT_BOOL } }
       attr { key: "Tin" value { list { type: DT_FLOAT } } }
       attr { key: "Tout" value { list { type: DT_FLOAT } } }
       attr { key: "output_shapes" value { list { shape { dim { size: 3 } } } } }
       attr { key: "then_branch" value { func { name: "draw" } } }
       attr { key: "else_branch" value { func { name: "keep" } } } }
node { name: "c" op: "Identity" input: "pick" attr { key: "T" value { type: DT_FLOAT } } }
library {
  function {
    signature { name: "cond" input_arg { name: "i" type: DT_INT32 }
                input_arg { name: "a" type: DT_FLOAT } input_arg { name: "b" type: DT_FLOAT }
                output_arg { name: "c" type: DT_BOOL } }
    node_def { name: "two" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
               attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 2 } } } }
    node_def { name: "less" op: "Less" input: "i" input: "two:output:0"
               attr { key: "T" value { type: DT_INT32 } } }
    ret { key: "c" value: "less:z:0" }
  }
  function {
    signature { name: "body" input_arg { name: "i" type: DT_INT32 }
                input_arg { name: "a" type: DT_FLOAT } input_arg { name: "b" type: DT_FLOAT }
                output_arg { name: "i2" type: DT_INT32 } output_arg { name: "a2" type: DT_FLOAT }
                output_arg { name: "b2" type: DT_FLOAT } }
    node_def { name: "one" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
               attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }
    node_def { name: "next" op: "AddV2" input: "i" input: "one:output:0"
               attr { key: "T" value { type: DT_INT32 } } }
    node_def { name: "shape" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
               attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } }
                                                    int_val: 3 } } } }
    node_def { name: "u" op: "RandomUniform" input: "shape:output:0"
               attr { key: "dtype" value { type: DT_FLOAT } }
               attr { key: "T" value { type: DT_INT32 } }
               attr { key: "seed" value { i: 5 } } attr { key: "seed2" value { i: 7 } } }
    node_def { name: "prev" op: "Identity" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
    ret { key: "i2" value: "next:z:0" }
    ret { key: "a2" value: "prev:output:0" }
    ret { key: "b2" value: "u:output:0" }
  }
  function {
    signature { name: "draw" input_arg { name: "x" type: DT_FLOAT }
                output_arg { name: "y" type: DT_FLOAT } }
    node_def { name: "shape" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
               attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } }
                                                    int_val: 3 } } } }
    node_def { name: "u" op: "RandomUniform" input: "shape:output:0"
               attr { key: "dtype" value { type: DT_FLOAT } }
               attr { key: "T" value { type: DT_INT32 } } }
    node_def { name: "add" op: "AddV2" input: "x" input: "u:output:0"
               attr { key: "T" value { type: DT_FLOAT } } }
    ret { key: "y" value: "add:z:0" }
  }
  function {
    signature { name: "keep" input_arg { name: "x" type: DT_FLOAT }
                output_arg { name: "y" type: DT_FLOAT } }
    node_def { name: "same" op: "Identity" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    ret { key: "y" value: "same:output:0" }
  }
}
)pb";

std::vector<float> Values(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

TEST(CompiledRandomTest, LoopsAndConditionalsCarryTheStateThroughTheirBodies) {
  const std::string path = WriteTempFile("random_in_bodies.pbtxt", kRandomInBodiesGraph);
  const std::vector<std::string> fetches = {"a", "b", "c"};
  auto run = [&](Session& s, bool p, RunStats* stats = nullptr, std::string* log = nullptr) {
    if (log != nullptr) ::testing::internal::CaptureStderr();
    auto r = s.Run({{"p", Tensor::FromVector<bool>(DType::kBool, {}, {p})}}, fetches, stats);
    if (log != nullptr) *log = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *std::move(r) : std::vector<Tensor>();
  };
  auto in_unit_range = [](const Tensor& t) {
    for (float v : Values(t)) {
      if (!(v >= 0.0f && v < 1.0f)) return false;
    }
    return true;
  };
  std::vector<Tensor> first_cpu;
  for (const char* backend : {"cpu", "interpreter"}) {
    SCOPED_TRACE(backend);
    auto s = Open(path, JitMode::kAll, backend, false);
    ASSERT_NE(s, nullptr);
    RunStats stats;
    std::string log;
    const std::vector<Tensor> first = run(*s, true, &stats, &log);
    ASSERT_EQ(first.size(), 3u);
    EXPECT_EQ(stats.fallbacks, 0);
    EXPECT_EQ(stats.nodes_compiled, stats.nodes_total);
    EXPECT_TRUE(absl::StrContains(log, "will ignore seeds")) << log;
    EXPECT_TRUE(in_unit_range(first[0]) && in_unit_range(first[1]) && in_unit_range(first[2]));
    EXPECT_NE(Values(first[0]), Values(first[1])) << "each iteration draws anew";
    EXPECT_NE(Values(first[1]), Values(first[2])) << "the If draws after the loop";
    const std::vector<Tensor> second = run(*s, true);
    ASSERT_EQ(second.size(), 3u);
    EXPECT_FALSE(Same(first[0], second[0])) << "each run draws a new stream";
    // The branch not taken draws nothing: c is z.
    const std::vector<Tensor> not_taken = run(*s, false);
    ASSERT_EQ(not_taken.size(), 3u);
    EXPECT_EQ(Values(not_taken[2]), (std::vector<float>{0, 0, 0}));
    if (first_cpu.empty()) {
      first_cpu = first;
    } else {
      for (size_t k = 0; k < 3; ++k) {
        EXPECT_TRUE(Same(first_cpu[k], first[k])) << "fetch " << k << ": the JIT and the "
                                                  << "evaluator draw the same first run";
      }
    }
  }
  // The kernels (the runtime's While/If) and auto-clustering, which keeps them out.
  for (JitMode jit : {JitMode::kNone, JitMode::kAuto}) {
    auto s = Open(path, jit, "cpu", false);
    ASSERT_NE(s, nullptr);
    const std::vector<Tensor> out = run(*s, true);
    ASSERT_EQ(out.size(), 3u);
    EXPECT_TRUE(in_unit_range(out[0]) && in_unit_range(out[1]) && in_unit_range(out[2]));
    if (jit == JitMode::kAuto) {
      auto explain = s->Explain(fetches);
      ASSERT_TRUE(explain.ok()) << explain.status();
      EXPECT_TRUE(absl::StrContains(*explain, "stateful op RandomUniform stays in the runtime"))
          << *explain;
    }
  }
  std::filesystem::remove(path);
}

// A loop that draws into a TensorList made without an element shape (dropout into a TF2
// TensorArray): the element shape is learned by lowering the body once, which must carry the
// loop's random state too.
constexpr char kRandomIntoUnshapedListGraph[] = R"pb(
node { name: "es" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: -1 } } } }
node { name: "n" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 3 } } } }
node { name: "list" op: "TensorListReserve" input: "es" input: "n"
       attr { key: "element_dtype" value { type: DT_FLOAT } }
       attr { key: "shape_type" value { type: DT_INT32 } } }
node { name: "i0" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 0 } } } }
node { name: "loop" op: "While" input: "i0" input: "list"
       attr { key: "T" value { list { type: DT_INT32 type: DT_VARIANT } } }
       attr { key: "cond" value { func { name: "cond" } } }
       attr { key: "body" value { func { name: "body" } } } }
node { name: "es2" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
       attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } }
                                            int_val: 2 } } } }
node { name: "rows" op: "TensorListStack" input: "loop:1" input: "es2"
       attr { key: "element_dtype" value { type: DT_FLOAT } }
       attr { key: "num_elements" value { i: -1 } } }
library {
  function {
    signature { name: "cond" input_arg { name: "i" type: DT_INT32 }
                input_arg { name: "l" type: DT_VARIANT } output_arg { name: "c" type: DT_BOOL } }
    node_def { name: "three" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
               attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 3 } } } }
    node_def { name: "less" op: "Less" input: "i" input: "three:output:0"
               attr { key: "T" value { type: DT_INT32 } } }
    ret { key: "c" value: "less:z:0" }
  }
  function {
    signature { name: "body" input_arg { name: "i" type: DT_INT32 }
                input_arg { name: "l" type: DT_VARIANT } output_arg { name: "i2" type: DT_INT32 }
                output_arg { name: "l2" type: DT_VARIANT } }
    node_def { name: "one" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
               attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { } int_val: 1 } } } }
    node_def { name: "shape" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
               attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } }
                                                    int_val: 2 } } } }
    node_def { name: "u" op: "RandomUniform" input: "shape:output:0"
               attr { key: "dtype" value { type: DT_FLOAT } } attr { key: "T" value { type: DT_INT32 } } }
    node_def { name: "set" op: "TensorListSetItem" input: "l" input: "i" input: "u:output:0"
               attr { key: "element_dtype" value { type: DT_FLOAT } } }
    node_def { name: "next" op: "AddV2" input: "i" input: "one:output:0"
               attr { key: "T" value { type: DT_INT32 } } }
    ret { key: "i2" value: "next:z:0" }
    ret { key: "l2" value: "set:output_handle:0" }
  }
}
)pb";

TEST(CompiledRandomTest, LoopDrawingIntoAnUnshapedListCompiles) {
  const std::string path =
      WriteTempFile("random_unshaped_list.pbtxt", kRandomIntoUnshapedListGraph);
  for (const char* backend : {"cpu", "interpreter"}) {
    SCOPED_TRACE(backend);
    auto s = Open(path, JitMode::kAll, backend, false);
    ASSERT_NE(s, nullptr);
    RunStats stats;
    auto out = s->Run({}, {"rows"}, &stats);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ(stats.fallbacks, 0);
    ASSERT_EQ((*out)[0].ShapeString(), "float32[3,2]");
    const std::vector<float> v = Values((*out)[0]);
    for (float x : v) EXPECT_TRUE(x >= 0.0f && x < 1.0f) << x;
    EXPECT_NE(std::vector<float>(v.begin(), v.begin() + 2),
              std::vector<float>(v.begin() + 2, v.begin() + 4))
        << "each iteration draws anew";
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tfjit
