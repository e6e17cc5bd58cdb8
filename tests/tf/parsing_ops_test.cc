// The parsing ops (runtime/kernels/parsing_kernels.cc) through the Session: ParseExample and
// ParseExampleV2 on hand-built tf.Example records, against hand-computed dense, sparse and
// ragged outputs and TF's messages for bad records; and TF Serving's half-plus-two SavedModels,
// whose classify and regress signatures parse tf.Examples (expected values from the script
// that wrote them: y = 0.5x + 2, y2 = 0.5x + 3).
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/status.h"
#include "core/string_tensor.h"
#include "frontend/proto/example.pb.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

namespace fs = std::filesystem;

// An Example of float, int64 and bytes features.
struct Feat {
  std::string key;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> bytes;
};
std::string Record(const std::vector<Feat>& features) {
  tensorflow::Example ex;
  auto& map = *ex.mutable_features()->mutable_feature();
  for (const Feat& f : features) {
    tensorflow::Feature& out = map[f.key];
    if (!f.floats.empty()) {
      for (float v : f.floats) out.mutable_float_list()->add_value(v);
    } else if (!f.ints.empty()) {
      for (int64_t v : f.ints) out.mutable_int64_list()->add_value(v);
    } else {
      for (const std::string& v : f.bytes) out.mutable_bytes_list()->add_value(v);
    }
  }
  return ex.SerializeAsString();
}

Tensor Records(const std::vector<std::string>& records) {
  return MakeStringTensor({static_cast<int64_t>(records.size())}, records);
}

template <typename T>
std::vector<T> Values(const Tensor& t) {
  return std::vector<T>(t.data<T>(), t.data<T>() + t.num_elements());
}

// ParseExample (V1): a sparse int64 feature "s"; dense "a" (float [2], default [-1, -2]), "b"
// (int64 [], required) and "v" (float [-1], variable length padded with 9).
constexpr char kParseExample[] = R"pb(
  node { name: "serialized" op: "Placeholder" attr { key: "dtype" value { type: DT_STRING } }
         attr { key: "shape" value { shape { dim { size: -1 } } } } }
  node { name: "names" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
         attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 0 } } } } } }
  node { name: "key_s" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
         attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { } string_val: "s" } } } }
  node { name: "key_a" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
         attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { } string_val: "a" } } } }
  node { name: "key_b" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
         attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { } string_val: "b" } } } }
  node { name: "key_v" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
         attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { } string_val: "v" } } } }
  node { name: "default_a" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { dim { size: 2 } }
                                              float_val: -1 float_val: -2 } } } }
  node { name: "default_b" op: "Const" attr { key: "dtype" value { type: DT_INT64 } }
         attr { key: "value" value { tensor { dtype: DT_INT64 tensor_shape { dim { size: 0 } } } } } }
  node { name: "default_v" op: "Const" attr { key: "dtype" value { type: DT_FLOAT } }
         attr { key: "value" value { tensor { dtype: DT_FLOAT tensor_shape { } float_val: 9 } } } }
  node { name: "parse" op: "ParseExample"
         input: "serialized" input: "names" input: "key_s" input: "key_a" input: "key_b"
         input: "key_v" input: "default_a" input: "default_b" input: "default_v"
         attr { key: "Nsparse" value { i: 1 } } attr { key: "Ndense" value { i: 3 } }
         attr { key: "sparse_types" value { list { type: DT_INT64 } } }
         attr { key: "Tdense" value { list { type: DT_FLOAT type: DT_INT64 type: DT_FLOAT } } }
         attr { key: "dense_shapes" value { list { shape { dim { size: 2 } } shape { }
                                                   shape { dim { size: -1 } } } } } }
)pb";

const std::vector<std::string> kFetches = {"parse:0", "parse:1", "parse:2",
                                           "parse:3", "parse:4", "parse:5"};

TEST(ParseExampleTest, DenseSparseAndVariableLengthFeatures) {
  auto session = Session::Load(testing::WriteTempFile("parse_example.pbtxt", kParseExample));
  ASSERT_TRUE(session.ok()) << session.status();
  const Tensor records =
      Records({Record({{"a", {1, 2}}, {"b", {}, {7}}, {"v", {1, 2, 3}}, {"s", {}, {10, 11}}}),
               Record({{"b", {}, {8}}}),
               Record({{"a", {3, 4}}, {"b", {}, {9}}, {"v", {5}}, {"s", {}, {12}}})});
  auto out = (*session)->Run({{"serialized", records}}, kFetches);
  ASSERT_TRUE(out.ok()) << out.status();
  const std::vector<Tensor>& o = *out;
  EXPECT_EQ(o[0].dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Values<int64_t>(o[0]), (std::vector<int64_t>{0, 0, 0, 1, 2, 0}));
  EXPECT_EQ(Values<int64_t>(o[1]), (std::vector<int64_t>{10, 11, 12}));
  EXPECT_EQ(Values<int64_t>(o[2]), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(o[3].dims(), (std::vector<int64_t>{3, 2}));
  EXPECT_EQ(Values<float>(o[3]), (std::vector<float>{1, 2, -1, -2, 3, 4}));
  EXPECT_EQ(o[4].dims(), (std::vector<int64_t>{3}));
  EXPECT_EQ(Values<int64_t>(o[4]), (std::vector<int64_t>{7, 8, 9}));
  EXPECT_EQ(o[5].dims(), (std::vector<int64_t>{3, 3}));
  EXPECT_EQ(Values<float>(o[5]), (std::vector<float>{1, 2, 3, 9, 9, 9, 5, 9, 9}));
  // An empty batch: empty outputs of the right ranks.
  auto empty = (*session)->Run({{"serialized", Records({})}}, kFetches);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ((*empty)[3].dims(), (std::vector<int64_t>{0, 2}));
  EXPECT_EQ((*empty)[5].dims(), (std::vector<int64_t>{0, 0}));
}

TEST(ParseExampleTest, BadRecordsGetTfsMessages) {
  auto session = Session::Load(testing::WriteTempFile("parse_example_bad.pbtxt", kParseExample));
  ASSERT_TRUE(session.ok()) << session.status();
  auto run = [&](const std::string& record) {
    return (*session)->Run({{"serialized", Records({Record({{"b", {}, {1}}}), record})}}, kFetches);
  };
  const std::vector<std::pair<std::string, std::string>> cases = {
      {Record({{"a", {1, 2}}}),
       "Name: <unknown>, Feature: b (data type: int64) is required but could not be found."},
      {Record({{"a", {1, 2, 3}}, {"b", {}, {1}}}),
       "Name: <unknown>, Key: a, Index: 1.  Number of float values != expected.  Values size: 3 "
       "but output shape: [2]"},
      {Record({{"a", {}, {1, 2}}, {"b", {}, {1}}}),
       "Name: <unknown>, Key: a, Index: 1.  Data types don't match. Data type: int64 but "
       "expected type: float"},
      {Record({{"b", {}, {1}}, {"s", {1.5f}}}),
       "Name: <unknown>, Key: s, Index: 1.  Data types don't match. Expected type: int64, "
       "Actual type: float"},
      {std::string("\x0a\x05garbage", 9), "Could not parse example input, value: '"},
  };
  for (const auto& [record, message] : cases) {
    auto out = run(record);
    ASSERT_FALSE(out.ok()) << message;
    EXPECT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
    EXPECT_TRUE(absl::StrContains(out.status().message(), message))
        << out.status().message() << "\nexpected: " << message;
    EXPECT_TRUE(absl::StrContains(out.status().message(), "node 'parse' (ParseExample)"))
        << out.status().message();
  }
  // serialized must be a vector.
  auto scalar = (*session)->Run({{"serialized", MakeStringTensor({}, {Record({})})}}, kFetches);
  EXPECT_FALSE(scalar.ok());
}

// ParseExampleV2: keys as vectors, a bytes dense feature with a default, a ragged float
// feature; and a scalar `serialized` (one record, no batch dim).
TEST(ParseExampleTest, V2DenseBytesAndRaggedFeatures) {
  constexpr char kGraph[] = R"pb(
    node { name: "serialized" op: "Placeholder" attr { key: "dtype" value { type: DT_STRING } }
           attr { key: "shape" value { shape { unknown_rank: true } } } }
    node { name: "names" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
           attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 0 } } } } } }
    node { name: "sparse_keys" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
           attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 0 } } } } } }
    node { name: "dense_keys" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
           attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 1 } } string_val: "w" } } } }
    node { name: "ragged_keys" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
           attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { dim { size: 1 } } string_val: "r" } } } }
    node { name: "default_w" op: "Const" attr { key: "dtype" value { type: DT_STRING } }
           attr { key: "value" value { tensor { dtype: DT_STRING tensor_shape { } string_val: "none" } } } }
    node { name: "parse" op: "ParseExampleV2"
           input: "serialized" input: "names" input: "sparse_keys" input: "dense_keys"
           input: "ragged_keys" input: "default_w"
           attr { key: "num_sparse" value { i: 0 } }
           attr { key: "sparse_types" value { list { } } }
           attr { key: "Tdense" value { list { type: DT_STRING } } }
           attr { key: "ragged_value_types" value { list { type: DT_FLOAT } } }
           attr { key: "ragged_split_types" value { list { type: DT_INT64 } } }
           attr { key: "dense_shapes" value { list { shape { } } } } }
  )pb";
  auto session = Session::Load(testing::WriteTempFile("parse_example_v2.pbtxt", kGraph));
  ASSERT_TRUE(session.ok()) << session.status();
  const Tensor records = Records({Record({{"w", {}, {}, {"hi"}}, {"r", {1, 2}}}),
                                  Record({{"r", {3}}}), Record({{"w", {}, {}, {"x"}}})});
  auto out = (*session)->Run({{"serialized", records}}, {"parse:0", "parse:1", "parse:2"});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_NE(StringValues((*out)[0]), nullptr);
  EXPECT_EQ(*StringValues((*out)[0]), (std::vector<std::string>{"hi", "none", "x"}));
  EXPECT_EQ(Values<float>((*out)[1]), (std::vector<float>{1, 2, 3}));
  EXPECT_EQ(Values<int64_t>((*out)[2]), (std::vector<int64_t>{0, 2, 3, 3}));
  // One record as a scalar: the dense output has no batch dim; ragged is refused by name.
  auto one = (*session)->Run({{"serialized", MakeStringTensor({}, {Record({})})}}, {"parse:0"});
  ASSERT_FALSE(one.ok());
  EXPECT_EQ(one.status().code(), absl::StatusCode::kUnimplemented) << one.status();
}

// TF Serving's half-plus-two models: the classify and regress signatures take serialized
// tf.Examples with a float feature "x" and now run, on every jit mode.
class TfExampleSignatureTest : public ::testing::TestWithParam<JitMode> {};

TEST_P(TfExampleSignatureTest, ClassifyAndRegressSignaturesParseExamples) {
  const fs::path models = fs::path(TFJIT_SOURCE_DIR) / "tests" / "data" / "savedmodels";
  struct Case {
    const char* model;
    const char* signature;
    const char* output;
    float offset;
  };
  std::vector<Case> cases;
  for (const char* model : {"saved_model_half_plus_two_cpu", "saved_model_half_plus_two_tf2_cpu"}) {
    cases.push_back({model, "classify_x_to_y", "scores", 2.0f});
    cases.push_back({model, "regress_x_to_y", "outputs", 2.0f});
    cases.push_back({model, "regress_x_to_y2", "outputs", 3.0f});
  }
  for (const Case& c : cases) {
    SCOPED_TRACE(std::string(c.model) + " " + c.signature);
    SessionOptions options;
    options.jit = GetParam();
    options.signature = c.signature;
    auto session = Session::Load((models / c.model / "00000123").string(), options);
    ASSERT_TRUE(session.ok()) << session.status();
    const std::vector<float> x = {0.0f, 1.0f, -4.0f, 10.0f};
    std::vector<std::string> records;
    for (float v : x) records.push_back(Record({{"x", {v}}}));
    auto out = (*session)->Run({{"inputs", Records(records)}}, {c.output});
    ASSERT_TRUE(out.ok()) << out.status();
    const Tensor& y = (*out)[0];
    ASSERT_EQ(y.num_elements(), 4);
    ASSERT_EQ(y.dim(0), 4);
    for (size_t i = 0; i < x.size(); ++i) {
      EXPECT_FLOAT_EQ(y.data<float>()[i], 0.5f * x[i] + c.offset) << i;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Jit, TfExampleSignatureTest,
                         ::testing::Values(JitMode::kNone, JitMode::kOff, JitMode::kAuto));

}  // namespace
}  // namespace tfjit
