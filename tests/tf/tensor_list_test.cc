// TensorLists and TF1 TensorArrays end to end through the Session (fallback runtime): graphs
// written here build, fill and read lists; the fetched (stacked) values are checked by hand.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/status.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

using ::tfjit::testing::WriteTempFile;

std::vector<double> Values(const Tensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.num_elements(); ++i) out.push_back(ElementAsDouble(t, i));
  return out;
}

// Loads tests/tf/lists/<name> with `mode` on `backend` and runs it once.
StatusOr<std::vector<Tensor>> RunListGraph(const std::string& name, const char* backend,
                                           JitMode mode,
                                           const std::vector<std::pair<std::string, Tensor>>& feeds,
                                           const std::vector<std::string>& fetches,
                                           RunStats* stats) {
  SessionOptions options;
  options.jit = mode;
  options.backend = backend;
  auto session = Session::Load(
      (std::filesystem::path(TFJIT_SOURCE_DIR) / "tests" / "tf" / "lists" / name).string(),
      options);
  if (!session.ok()) return session.status();
  return (*session)->Run(feeds, fetches, stats);
}

// x: float[2] fed. l = Reserve([2], 3); l[0] = [1,2]; l[2] = x; push [7,8]; pop it back.
// Fetches: the stack of the final list, its length, item 1 (unset: zeros), the popped item.
constexpr char kListGraph[] = R"pb(
  node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { dim { size: 2 } } } } }
  node { name: "shape" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 1 } }
                                              int_val: 2 } } } }
  node { name: "unknown" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: -1 } } } }
  node { name: "n" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 3 } } } }
  node { name: "i0" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 } } } }
  node { name: "i1" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 1 } } } }
  node { name: "i2" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 2 } } } }
  node { name: "v0" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                                              float_val: 1 float_val: 2 } } } }
  node { name: "v3" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                                              float_val: 7 float_val: 8 } } } }
  node { name: "l0" op: "TensorListReserve" input: "shape" input: "n"
         attr { key: "element_dtype" value { type: DT_FLOAT } }
         attr { key: "shape_type" value { type: DT_INT32 } } }
  node { name: "l1" op: "TensorListSetItem" input: "l0" input: "i0" input: "v0"
         attr { key: "element_dtype" value { type: DT_FLOAT } } }
  node { name: "l2" op: "TensorListSetItem" input: "l1" input: "i2" input: "x"
         attr { key: "element_dtype" value { type: DT_FLOAT } } }
  node { name: "l3" op: "TensorListPushBack" input: "l2" input: "v3"
         attr { key: "element_dtype" value { type: DT_FLOAT } } }
  node { name: "pop" op: "TensorListPopBack" input: "l3" input: "unknown"
         attr { key: "element_dtype" value { type: DT_FLOAT } } }
  node { name: "stack" op: "TensorListStack" input: "pop" input: "unknown"
         attr { key: "element_dtype" value { type: DT_FLOAT } } }
  node { name: "len" op: "TensorListLength" input: "l3" }
  node { name: "item1" op: "TensorListGetItem" input: "pop" input: "i1" input: "unknown"
         attr { key: "element_dtype" value { type: DT_FLOAT } } }
)pb";

TEST(TensorListSessionTest, ReserveSetPushPopStack) {
  for (JitMode mode : {JitMode::kNone, JitMode::kOff, JitMode::kAuto}) {
    SessionOptions options;
    options.jit = mode;
    auto session = Session::Load(WriteTempFile("tfjit_tensor_list.pbtxt", kListGraph), options);
    ASSERT_TRUE(session.ok()) << StatusToString(session.status());
    const Tensor x = Tensor::FromVector<float>(DType::kFloat32, {2}, {5, 6});
    auto out = (*session)->Run({{"x", x}}, {"stack", "len", "item1", "pop:1"});
    ASSERT_TRUE(out.ok()) << StatusToString(out.status());
    ASSERT_EQ(out->size(), 4u);
    EXPECT_EQ((*out)[0].ShapeString(), "float32[3,2]");
    EXPECT_EQ(Values((*out)[0]), (std::vector<double>{1, 2, 0, 0, 5, 6}));
    EXPECT_EQ(Values((*out)[1]), (std::vector<double>{4}));
    EXPECT_EQ(Values((*out)[2]), (std::vector<double>{0, 0}));
    EXPECT_EQ(Values((*out)[3]), (std::vector<double>{7, 8}));
  }
}

TEST(TensorListSessionTest, KernelErrorsNameTheNode) {
  std::string text = kListGraph;
  text += R"pb(
    node { name: "bad" op: "TensorListGetItem" input: "l0" input: "n" input: "unknown"
           attr { key: "element_dtype" value { type: DT_FLOAT } } }
  )pb";
  auto session = Session::Load(WriteTempFile("tfjit_tensor_list_bad.pbtxt", text));
  ASSERT_TRUE(session.ok()) << StatusToString(session.status());
  const Tensor x = Tensor::FromVector<float>(DType::kFloat32, {2}, {5, 6});
  auto out = (*session)->Run({{"x", x}}, {"bad"});
  ASSERT_FALSE(out.ok());
  EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(out.status().message(),
                                "Trying to access element 3 in a list with 3 elements."))
      << out.status();
  EXPECT_TRUE(absl::StrContains(out.status().message(), "bad")) << out.status();
}

// An index fed at run time, outside the list: compiled code fails with the kernels' message
// (a run-time check, as for gather indices) where HLO's dynamic slices would clamp.
TEST(TensorListSessionTest, FedIndexOutsideTheListFailsCompiledToo) {
  std::string text = kListGraph;
  text += R"pb(
    node { name: "k" op: "Placeholder" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "shape" value { shape {} } } }
    node { name: "setk" op: "TensorListSetItem" input: "l2" input: "k" input: "x"
           attr { key: "element_dtype" value { type: DT_FLOAT } } }
    node { name: "stackk" op: "TensorListStack" input: "setk" input: "unknown"
           attr { key: "element_dtype" value { type: DT_FLOAT } } }
    node { name: "getk" op: "TensorListGetItem" input: "l2" input: "k" input: "unknown"
           attr { key: "element_dtype" value { type: DT_FLOAT } } }
  )pb";
  const std::string path = WriteTempFile("tfjit_tensor_list_fed_index.pbtxt", text);
  const Tensor x = Tensor::FromVector<float>(DType::kFloat32, {2}, {5, 6});
  for (JitMode mode : {JitMode::kNone, JitMode::kAll}) {
    SCOPED_TRACE(static_cast<int>(mode));
    SessionOptions options;
    options.jit = mode;
    auto session = Session::Load(path, options);
    ASSERT_TRUE(session.ok()) << StatusToString(session.status());
    auto run = [&](int32_t k, const std::string& fetch) {
      return (*session)->Run({{"x", x}, {"k", Tensor::FromVector<int32_t>(DType::kInt32, {}, {k})}},
                             {fetch});
    };
    auto good = run(1, "stackk");
    ASSERT_TRUE(good.ok()) << StatusToString(good.status());
    EXPECT_EQ(Values((*good)[0]), (std::vector<double>{1, 2, 5, 6, 5, 6}));
    auto got = run(2, "getk");
    ASSERT_TRUE(got.ok()) << StatusToString(got.status());
    EXPECT_EQ(Values((*got)[0]), (std::vector<double>{5, 6}));
    for (int32_t k : {7, -1}) {
      auto set = run(k, "stackk");
      ASSERT_FALSE(set.ok()) << k;
      EXPECT_TRUE(absl::StrContains(
          set.status().message(),
          absl::StrCat("Trying to modify element ", k, " in a list with 3 elements.")))
          << set.status();
      EXPECT_TRUE(absl::StrContains(set.status().message(), "setk")) << set.status();
      auto get = run(k, "getk");
      ASSERT_FALSE(get.ok()) << k;
      EXPECT_TRUE(absl::StrContains(
          get.status().message(),
          absl::StrCat("Trying to access element ", k, " in a list with 3 elements.")))
          << get.status();
    }
  }
}

// TF1: ta = TensorArrayV3(2); write a at 0 and b at 1 (ordered by the flow); gather [1, 0].
constexpr char kArrayGraph[] = R"pb(
  node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "shape" value { shape { dim { size: 3 } } } } }
  node { name: "size" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 2 } } } }
  node { name: "i0" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 0 } } } }
  node { name: "i1" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 1 } } } }
  node { name: "b" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 3 } }
                                              float_val: 10 float_val: 20 float_val: 30 } } } }
  node { name: "idx" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
         attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } }
                                              int_val: 1 int_val: 0 } } } }
  node { name: "ta" op: "TensorArrayV3" input: "size"
         attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "w0" op: "TensorArrayWriteV3" input: "ta" input: "i0" input: "a" input: "ta:1"
         attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "w1" op: "TensorArrayWriteV3" input: "ta" input: "i1" input: "b" input: "w0"
         attr { key: "T" value { type: DT_FLOAT } } }
  node { name: "gather" op: "TensorArrayGatherV3" input: "ta" input: "idx" input: "w1"
         attr { key: "dtype" value { type: DT_FLOAT } } }
  node { name: "size_out" op: "TensorArraySizeV3" input: "ta" input: "w1" }
)pb";

TEST(TensorArraySessionTest, WriteThenGather) {
  auto session = Session::Load(WriteTempFile("tfjit_tensor_array.pbtxt", kArrayGraph));
  ASSERT_TRUE(session.ok()) << StatusToString(session.status());
  const Tensor a = Tensor::FromVector<float>(DType::kFloat32, {3}, {1, 2, 3});
  for (int run = 0; run < 2; ++run) {  // every run creates a fresh array
    auto out = (*session)->Run({{"a", a}}, {"gather", "size_out"});
    ASSERT_TRUE(out.ok()) << StatusToString(out.status());
    EXPECT_EQ((*out)[0].ShapeString(), "float32[2,3]");
    EXPECT_EQ(Values((*out)[0]), (std::vector<double>{10, 20, 30, 1, 2, 3}));
    EXPECT_EQ(Values((*out)[1]), (std::vector<double>{2}));
  }
}

// Gather, scatter and concat of lists inside a jit function, compiled (cpu and interpreter
// backends) and uncompiled, against the rows of x picked by hand.
TEST(TensorListSessionTest, CompiledGatherScatterConcat) {
  std::vector<float> x(12);
  for (int i = 0; i < 12; ++i) x[i] = static_cast<float>(i) * 0.5f - 1.0f;
  std::vector<double> gathered, scattered(12, 0.0), concat;
  for (int j : {2, 0}) {
    for (int k = 0; k < 3; ++k) gathered.push_back(x[j * 3 + k]);
  }
  for (int k = 0; k < 3; ++k) {
    scattered[3 * 3 + k] = x[2 * 3 + k];  // gathered row 0 (x row 2) goes to index 3
    scattered[1 * 3 + k] = x[0 * 3 + k];  // gathered row 1 (x row 0) goes to index 1
  }
  for (float v : x) concat.push_back(v);
  for (const char* backend : {"cpu", "interpreter"}) {
    for (JitMode mode : {JitMode::kNone, JitMode::kOff, JitMode::kAll}) {
      SCOPED_TRACE(std::string(backend) + " mode " + std::to_string(static_cast<int>(mode)));
      RunStats stats;
      auto out = RunListGraph("gather_scatter_concat.pbtxt", backend, mode,
                              {{"x", Tensor::FromVector(DType::kFloat32, {4, 3}, x)}},
                              {"gathered", "scattered", "concat"}, &stats);
      ASSERT_TRUE(out.ok()) << StatusToString(out.status());
      EXPECT_EQ(Values((*out)[0]), gathered);
      EXPECT_EQ((*out)[1].dims(), (std::vector<int64_t>{4, 3}));
      EXPECT_EQ(Values((*out)[1]), scattered);
      EXPECT_EQ(Values((*out)[2]), concat);
      if (mode != JitMode::kNone) {
        EXPECT_GT(stats.nodes_compiled, 0);
      }
    }
  }
}

// x: float[6, 2] fed, split into a list by `lengths`; fetches the stacked list (equal lengths
// only) and item 1.
std::string SplitGraph(const std::string& lengths, bool stack) {
  std::string g = R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: 6 } dim { size: 2 } } } } }
    node { name: "shape" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape { dim { size: 2 } }
                                                int_val: -1 int_val: 2 } } } }
    node { name: "unknown" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: -1 } } } }
    node { name: "i1" op: "Const" attr { key: "dtype" value { type: DT_INT32 } }
           attr { key: "value" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: 1 } } } }
    node { name: "list" op: "TensorListSplit" input: "x" input: "shape" input: "lengths"
           attr { key: "element_dtype" value { type: DT_FLOAT } }
           attr { key: "shape_type" value { type: DT_INT32 } } }
    node { name: "item1" op: "TensorListGetItem" input: "list" input: "i1" input: "unknown"
           attr { key: "element_dtype" value { type: DT_FLOAT } } }
  )pb";
  g += "node { name: \"lengths\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT64 } } "
       "attr { key: \"value\" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: " +
       std::to_string(std::count(lengths.begin(), lengths.end(), ',') + 1) + " } } " + lengths +
       " } } } }\n";
  if (stack) {
    g += "node { name: \"stack\" op: \"TensorListStack\" input: \"list\" input: \"unknown\" "
         "attr { key: \"element_dtype\" value { type: DT_FLOAT } } }\n";
  }
  return g;
}

// TensorListSplit compiles when its constant lengths are equal (the list is the tensor
// reshaped, as in tf2xla); unequal lengths run on the kernel and must-compile mode says why.
TEST(TensorListSessionTest, SplitCompilesForEqualLengths) {
  std::vector<float> x(12);
  for (int i = 0; i < 12; ++i) x[i] = static_cast<float>(i) + 0.5f;
  const Tensor feed = Tensor::FromVector(DType::kFloat32, {6, 2}, x);
  const std::string equal = SplitGraph("int64_val: 2, int64_val: 2, int64_val: 2", true);
  for (JitMode mode : {JitMode::kNone, JitMode::kAll}) {
    SCOPED_TRACE(static_cast<int>(mode));
    SessionOptions options;
    options.jit = mode;
    auto session = Session::Load(WriteTempFile("tfjit_list_split.pbtxt", equal), options);
    ASSERT_TRUE(session.ok()) << StatusToString(session.status());
    RunStats stats;
    auto out = (*session)->Run({{"x", feed}}, {"stack", "item1"}, &stats);
    ASSERT_TRUE(out.ok()) << StatusToString(out.status());
    EXPECT_EQ((*out)[0].ShapeString(), "float32[3,2,2]");
    EXPECT_EQ(Values((*out)[0]), std::vector<double>(x.begin(), x.end()));
    EXPECT_EQ((*out)[1].ShapeString(), "float32[2,2]");
    EXPECT_EQ(Values((*out)[1]), (std::vector<double>{4.5, 5.5, 6.5, 7.5}));
    EXPECT_EQ(stats.nodes_compiled > 0, mode == JitMode::kAll);
  }
  const std::string unequal = SplitGraph("int64_val: 2, int64_val: 4", false);
  for (JitMode mode : {JitMode::kNone, JitMode::kAll}) {
    SCOPED_TRACE(static_cast<int>(mode));
    SessionOptions options;
    options.jit = mode;
    auto session = Session::Load(WriteTempFile("tfjit_list_split2.pbtxt", unequal), options);
    ASSERT_TRUE(session.ok()) << StatusToString(session.status());
    auto out = (*session)->Run({{"x", feed}}, {"item1"});
    if (mode == JitMode::kNone) {
      ASSERT_TRUE(out.ok()) << StatusToString(out.status());
      EXPECT_EQ((*out)[0].ShapeString(), "float32[4,2]");
      EXPECT_EQ(Values((*out)[0]), std::vector<double>(x.begin() + 4, x.end()));
    } else {
      EXPECT_EQ(out.status().code(), absl::StatusCode::kUnimplemented) << out.status();
      EXPECT_TRUE(absl::StrContains(out.status().message(), "All lengths have to be the same"))
          << out.status();
    }
  }
}

// Known issue B's fix in auto mode: TF keeps list ops out of clusters; with autofix the
// compiled region grows over the list, with the same values.
TEST(TensorListSessionTest, AutofixGrowsAutoClustersOverLists) {
  const std::string path =
      (std::filesystem::path(TFJIT_SOURCE_DIR) / "tests" / "tf" / "lists" / "flat_list.pbtxt")
          .string();
  const std::vector<float> x = {0.25f, -0.5f, 1.0f};
  std::vector<double> want;
  for (float scale : {1.0f, 2.0f}) {
    for (float v : x) want.push_back(static_cast<double>(std::tanh(v * scale)));
  }
  int compiled[2] = {0, 0};
  for (bool autofix : {false, true}) {
    SessionOptions options;
    options.jit = JitMode::kAuto;
    options.autofix = autofix;
    auto session = Session::Load(path, options);
    ASSERT_TRUE(session.ok()) << session.status();
    RunStats stats;
    auto out =
        (*session)->Run({{"x", Tensor::FromVector(DType::kFloat32, {3}, x)}}, {"out"}, &stats);
    ASSERT_TRUE(out.ok()) << StatusToString(out.status());
    const std::vector<double> got = Values((*out)[0]);
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got[i], want[i], 2e-7) << i;
    compiled[autofix ? 1 : 0] = stats.nodes_compiled;
  }
  EXPECT_GT(compiled[1], compiled[0]) << "autofix should compile the list ops too";
}

// A list of lists (lists/list_of_lists.pbtxt): the outer list's buffer stacks its inner lists'
// buffers and lengths; push in a compiled loop, pop and stack after it. Every mode and both
// backends give the hand values.
TEST(TensorListSessionTest, ListsOfListsCompile) {
  const float x = 1.5f;
  for (const char* backend : {"cpu", "interpreter"}) {
    for (JitMode mode : {JitMode::kNone, JitMode::kAll}) {
      SCOPED_TRACE(std::string(backend) + " mode " + std::to_string(static_cast<int>(mode)));
      RunStats stats;
      auto out = RunListGraph("list_of_lists.pbtxt", backend, mode,
                              {{"x", Tensor::FromVector<float>(DType::kFloat32, {}, {x})}},
                              {"last", "mid", "left"}, &stats);
      ASSERT_TRUE(out.ok()) << StatusToString(out.status());
      EXPECT_EQ(Values((*out)[0]), (std::vector<double>{x * 2, x + 2}));
      EXPECT_EQ(Values((*out)[1]), (std::vector<double>{x, x + 1}));
      EXPECT_EQ((*out)[2].data<int32_t>()[0], 1);
      if (mode == JitMode::kAll) {
        EXPECT_EQ(stats.clusters, 1);
        EXPECT_EQ(stats.fallbacks, 0);
      }
    }
  }
}

}  // namespace
}  // namespace tfjit
