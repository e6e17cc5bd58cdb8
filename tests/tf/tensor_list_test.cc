// TensorLists and TF1 TensorArrays end to end through the Session (fallback runtime): graphs
// written here build, fill and read lists; the fetched (stacked) values are checked by hand.
#include <filesystem>
#include <fstream>

#include "absl/strings/match.h"
#include "core/dtype.h"
#include "core/status.h"
#include "gtest/gtest.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

std::string WriteGraph(const std::string& name, const std::string& text) {
  const std::string path = (std::filesystem::temp_directory_path() / name).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

std::vector<double> Values(const Tensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.num_elements(); ++i) out.push_back(ElementAsDouble(t, i));
  return out;
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
    auto session = Session::Load(WriteGraph("tfjit_tensor_list.pbtxt", kListGraph), options);
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
  auto session = Session::Load(WriteGraph("tfjit_tensor_list_bad.pbtxt", text));
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
  auto session = Session::Load(WriteGraph("tfjit_tensor_array.pbtxt", kArrayGraph));
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

}  // namespace
}  // namespace tfjit
