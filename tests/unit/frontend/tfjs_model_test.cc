// TF.js graph-model loading: model.json + shards written by the test, loaded through
// tfjit::Session, outputs compared with values computed here from the hand-written weights.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"
#include "core/status.h"
#include "frontend/model.h"
#include "frontend/tfjs_weights.h"
#include "gtest/gtest.h"
#include "tfjit/session.h"

namespace tfjit::tf {
namespace {

// ---- the model: z = Sum(Relu(x @ w1 + b1) @ w2, axis 1), y = Reshape(same matmul, [1, 4]) ----

// w1 [3,4] stored as float16 bit patterns, with the values they encode.
const uint16_t kW1Half[12] = {0x3C00, 0xC000, 0x3800, 0x3400, 0xB800, 0x4200,
                              0x3E00, 0x0001, 0xBC00, 0x4000, 0x3A00, 0xB400};
const float kW1[12] = {1.0f,  -2.0f, 0.5f,  0.25f,
                       -0.5f, 3.0f,  1.5f,  5.9604644775390625e-08f /* 2^-24, subnormal */,
                       -1.0f, 2.0f,  0.75f, -0.25f};
// b1 [4] as uint8 with scale 0.1, min -1: value = q * 0.1 - 1.
const uint8_t kB1Quantized[4] = {0, 1, 128, 255};
const float kB1[4] = {-1.0f, -0.9f, 11.8f, 24.5f};
const float kW2[8] = {0.5f, -1.0f, 2.0f, 0.25f, -0.75f, 1.5f, 1.0f, -2.0f};  // [4,2]
const float kX[6] = {1.0f, 2.0f, -1.0f, 0.5f, -3.0f, 2.0f};                  // [2,3]

// The byte stream of the single weight group, in manifest order: w1 (24 bytes), b1 (4),
// w2 (32), sum_axis (4), new_shape (8, an int64 Const narrowed to int32), unused (4).
std::string WeightBytes() {
  std::string s;
  auto put = [&](const void* p, size_t n) { s.append(static_cast<const char*>(p), n); };
  put(kW1Half, sizeof(kW1Half));
  put(kB1Quantized, sizeof(kB1Quantized));
  put(kW2, sizeof(kW2));
  const int32_t axis = 1;
  put(&axis, 4);
  const int32_t shape[2] = {1, 4};
  put(shape, 8);
  const float unused = 42.0f;
  put(&unused, 4);
  return s;
}
constexpr size_t kShard1Size = 40;  // w2 occupies bytes 28..60: it straddles the two shards

// Protobuf-JSON GraphDef as the converter writes it: enum names, int64 as strings, base64
// bytes, {"b": false} attrs, Consts with dtype and shape only.
const char kTopology[] = R"({"node": [
 {"name": "x", "op": "Placeholder", "attr": {"dtype": {"type": "DT_FLOAT"},
   "shape": {"shape": {"dim": [{"size": "2"}, {"size": "3"}]}}}},
 {"name": "w1", "op": "Const", "attr": {"value": {"tensor": {"dtype": "DT_FLOAT",
   "tensorShape": {"dim": [{"size": "3"}, {"size": "4"}]}}}, "dtype": {"type": "DT_FLOAT"}}},
 {"name": "b1", "op": "Const", "attr": {"dtype": {"type": "DT_FLOAT"}, "value": {"tensor":
   {"dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": "4"}]}}}}},
 {"name": "w2", "op": "Const", "attr": {"value": {"tensor": {"dtype": "DT_FLOAT",
   "tensorShape": {"dim": [{"size": "4"}, {"size": "2"}]}}}, "dtype": {"type": "DT_FLOAT"}}},
 {"name": "sum_axis", "op": "Const", "attr": {"value": {"tensor": {"dtype": "DT_INT32",
   "tensorShape": {"dim": [{"size": "1"}]}}}, "dtype": {"type": "DT_INT32"}}},
 {"name": "new_shape", "op": "Const", "attr": {"value": {"tensor": {"dtype": "DT_INT64",
   "tensorShape": {"dim": [{"size": "2"}]}}}, "dtype": {"type": "DT_INT64"}}},
 {"name": "mm1", "op": "MatMul", "input": ["x", "w1"], "device": "/device:CPU:0",
  "attr": {"transpose_a": {"b": false}, "transpose_b": {"b": false}, "T": {"type": "DT_FLOAT"}}},
 {"name": "ba1", "op": "BiasAdd", "input": ["mm1", "b1"],
  "attr": {"T": {"type": "DT_FLOAT"}, "data_format": {"s": "TkhXQw=="}}},
 {"name": "relu", "op": "Relu", "input": ["ba1"], "attr": {"T": {"type": "DT_FLOAT"}}},
 {"name": "mm2", "op": "MatMul", "input": ["relu", "w2"],
  "attr": {"transpose_a": {"b": false}, "transpose_b": {"b": false}, "T": {"type": "DT_FLOAT"}}},
 {"name": "y", "op": "Reshape", "input": ["mm2", "new_shape"],
  "attr": {"T": {"type": "DT_FLOAT"}, "Tshape": {"type": "DT_INT64"}}},
 {"name": "z", "op": "Sum", "input": ["mm2", "sum_axis"],
  "attr": {"T": {"type": "DT_FLOAT"}, "Tidx": {"type": "DT_INT32"}, "keep_dims": {"b": false}}}
], "library": {}, "versions": {"producer": 1205}})";

const char kManifestWeights[] = R"([
 {"name": "w1", "shape": [3, 4], "dtype": "float32",
  "quantization": {"dtype": "float16", "original_dtype": "float32"}},
 {"name": "b1", "shape": [4], "dtype": "float32",
  "quantization": {"dtype": "uint8", "min": -1.0, "scale": 0.1, "original_dtype": "float32"}},
 {"name": "w2", "shape": [4, 2], "dtype": "float32"},
 {"name": "sum_axis", "shape": [1], "dtype": "int32"},
 {"name": "new_shape", "shape": [2], "dtype": "int32"},
 {"name": "unused_weight", "shape": [1], "dtype": "float32"}])";

// Keys deliberately not in alphabetical order: the loader must keep the file's order.
const char kSignature[] = R"({"inputs": {"x": {"name": "x:0", "dtype": "DT_FLOAT",
  "tensorShape": {"dim": [{"size": "2"}, {"size": "3"}]}}},
 "outputs": {"out_z": {"name": "z:0", "dtype": "DT_FLOAT", "tensorShape": {"dim": [{"size": "2"}]}},
             "out_y": {"name": "y:0", "dtype": "DT_FLOAT"}}})";

struct ModelFiles {
  std::string signature;      // top-level "signature" value, or empty
  std::string user_metadata;  // "userDefinedMetadata" value, or empty
  std::string weights = kManifestWeights;
  std::string topology = kTopology;
  std::string format = "graph-model";
  std::string bytes = WeightBytes();
  size_t shard1_size = kShard1Size;
};

std::string ModelJson(const ModelFiles& m) {
  std::string json = absl::StrCat(R"({"format": ")", m.format,
                                  R"(", "generatedBy": "2.15.0", "convertedBy": null,)",
                                  "\n\"modelTopology\": ", m.topology, ",\n");
  if (!m.signature.empty()) absl::StrAppend(&json, "\"signature\": ", m.signature, ",\n");
  if (!m.user_metadata.empty()) {
    absl::StrAppend(&json, "\"userDefinedMetadata\": ", m.user_metadata, ",\n");
  }
  absl::StrAppend(&json, R"("weightsManifest": [{"paths": ["group1-shard1of2.bin", )",
                  R"("group1-shard2of2.bin"], "weights": )", m.weights, "}]}");
  return json;
}

void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  ASSERT_TRUE(out.good()) << path;
}

// A fresh directory per test with model.json and the two shards; returns the model.json path.
std::string WriteModel(const ModelFiles& m) {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) /
      absl::StrCat("tfjs_", info->test_suite_name(), "_", info->name());
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  WriteFile((dir / "model.json").string(), ModelJson(m));
  const size_t cut = std::min(m.shard1_size, m.bytes.size());
  WriteFile((dir / "group1-shard1of2.bin").string(), m.bytes.substr(0, cut));
  WriteFile((dir / "group1-shard2of2.bin").string(), m.bytes.substr(cut));
  return (dir / "model.json").string();
}

// The expected outputs, computed in double from the decoded weight values above.
struct Expected {
  std::vector<float> mm2;  // [2,2]
  std::vector<float> z;    // [2]
};
Expected Reference() {
  Expected e;
  double h[2][4];
  for (int r = 0; r < 2; ++r) {
    for (int c = 0; c < 4; ++c) {
      double acc = kB1[c];
      for (int k = 0; k < 3; ++k) acc += double{kX[r * 3 + k]} * kW1[k * 4 + c];
      h[r][c] = std::max(acc, 0.0);
    }
  }
  for (int r = 0; r < 2; ++r) {
    double row = 0;
    for (int c = 0; c < 2; ++c) {
      double acc = 0;
      for (int k = 0; k < 4; ++k) acc += h[r][k] * kW2[k * 2 + c];
      e.mm2.push_back(static_cast<float>(acc));
      row += acc;
    }
    e.z.push_back(static_cast<float>(row));
  }
  return e;
}

Tensor InputX() {
  return Tensor::FromVector<float>(DType::kFloat32, {2, 3}, std::vector<float>(kX, kX + 6));
}

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

void ExpectNear(const std::vector<float>& got, const std::vector<float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], want[i], 1e-4 * std::max(1.0f, std::fabs(want[i]))) << "element " << i;
  }
}

std::unique_ptr<Session> LoadSession(const std::string& path) {
  StatusOr<std::unique_ptr<Session>> s = Session::Load(path);
  EXPECT_TRUE(s.ok()) << s.status();
  return s.ok() ? std::move(*s) : nullptr;
}

TEST(TfjsModelTest, QuantizedWeightsAcrossShardsRunThroughTopLevelSignature) {
  ModelFiles m;
  m.signature = kSignature;
  std::unique_ptr<Session> session = LoadSession(WriteModel(m));
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->SignatureName(), "serving_default");
  EXPECT_EQ(session->DefaultFetches(), (std::vector<std::string>{"out_z", "out_y"}));
  const std::vector<InputInfo> inputs = session->Inputs();
  ASSERT_EQ(inputs.size(), 1u);
  EXPECT_EQ(inputs[0].name, "x");
  EXPECT_EQ(inputs[0].tensor, "x:0");
  EXPECT_EQ(inputs[0].dims, (std::vector<int64_t>{2, 3}));

  StatusOr<std::vector<Tensor>> out = session->Run({{"x", InputX()}}, {"out_y", "out_z"});
  ASSERT_TRUE(out.ok()) << out.status();
  const Expected want = Reference();
  EXPECT_EQ((*out)[0].dims(), (std::vector<int64_t>{1, 4}));
  ExpectNear(Floats((*out)[0]), want.mm2);
  EXPECT_EQ((*out)[1].dims(), (std::vector<int64_t>{2}));
  ExpectNear(Floats((*out)[1]), want.z);
}

TEST(TfjsModelTest, ConstValuesAreDecodedExactly) {
  ModelFiles m;
  m.signature = kSignature;
  std::unique_ptr<Session> session = LoadSession(WriteModel(m));
  ASSERT_NE(session, nullptr);
  StatusOr<std::vector<Tensor>> out =
      session->Run({}, {"w1:0", "b1:0", "w2:0", "sum_axis:0", "new_shape:0"});
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_EQ(Floats((*out)[0]), std::vector<float>(kW1, kW1 + 12));  // float16, bit-exact
  const std::vector<float> b1 = Floats((*out)[1]);
  for (int i = 0; i < 4; ++i) EXPECT_FLOAT_EQ(b1[i], kB1[i]);
  EXPECT_EQ(Floats((*out)[2]), std::vector<float>(kW2, kW2 + 8));
  ASSERT_EQ((*out)[3].dtype(), DType::kInt32);
  EXPECT_EQ((*out)[3].data<int32_t>()[0], 1);
  // The graph says DT_INT64; the manifest stores it as int32: widened back on load.
  ASSERT_EQ((*out)[4].dtype(), DType::kInt64);
  EXPECT_EQ((*out)[4].data<int64_t>()[0], 1);
  EXPECT_EQ((*out)[4].data<int64_t>()[1], 4);
}

TEST(TfjsModelTest, SignatureInUserDefinedMetadata) {
  ModelFiles m;
  m.user_metadata = absl::StrCat(
      R"({"signature": )",
      absl::StrReplaceAll(kSignature,
                          {{"out_z", "total"}, {"out_y", "flat"}, {"\"x\":", "\"image\":"}}),
      R"(, "structuredOutputKeys": ["a"], "other": [1, "two"]})");
  std::unique_ptr<Session> session = LoadSession(WriteModel(m));
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->SignatureName(), "serving_default");
  EXPECT_EQ(session->DefaultFetches(), (std::vector<std::string>{"total", "flat"}));
  StatusOr<std::vector<Tensor>> out = session->Run({{"image", InputX()}}, {"total"});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Floats((*out)[0]), Reference().z);
}

TEST(TfjsModelTest, MetadataSignatureOverridesTopLevelAsInTfjs) {
  ModelFiles m;
  m.signature = kSignature;
  m.user_metadata = R"({"signature": {"inputs": {"in": {"name": "x:0"}},
                                     "outputs": {"res": {"name": "z:0"}}}})";
  StatusOr<LoadedModel> model = LoadModel(WriteModel(m));
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ(model->format, "tfjs");
  ASSERT_EQ(model->signatures.size(), 1u);
  const Signature& sig = model->signatures[0];
  ASSERT_EQ(sig.inputs.size(), 1u);
  EXPECT_EQ(sig.inputs[0].key, "in");
  EXPECT_EQ(sig.inputs[0].dtype, DType::kFloat32);  // not in the file: taken from the graph
  EXPECT_TRUE(sig.inputs[0].shape.unknown_rank);
  ASSERT_EQ(sig.outputs.size(), 1u);
  EXPECT_EQ(sig.outputs[0].key, "res");
  EXPECT_EQ(sig.outputs[0].tensor, "z:0");
}

TEST(TfjsModelTest, OutputsOnlySignatureInfersInputsFromPlaceholders) {
  // As in human-models' mobilefacenet.json: a tensor name without ":0", no dtype, no inputs.
  ModelFiles m;
  m.user_metadata = R"({"signature": {"outputs": {"embeddings": {"name": "z"}}}})";
  StatusOr<LoadedModel> model = LoadModel(WriteModel(m));
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ(model->signatures.size(), 1u);
  const Signature& sig = model->signatures[0];
  ASSERT_EQ(sig.inputs.size(), 1u);
  EXPECT_EQ(sig.inputs[0].key, "x");
  EXPECT_EQ(sig.inputs[0].tensor, "x:0");
  EXPECT_EQ(sig.inputs[0].shape.dims, (std::vector<int64_t>{2, 3}));
  ASSERT_EQ(sig.outputs.size(), 1u);
  EXPECT_EQ(sig.outputs[0].tensor, "z:0");
  EXPECT_EQ(sig.outputs[0].dtype, DType::kFloat32);
}

TEST(TfjsModelTest, InputsOnlySignatureInfersOutputsFromSinks) {
  ModelFiles m;
  m.signature = R"({"inputs": {"x": {"name": "x:0"}}})";
  StatusOr<LoadedModel> model = LoadModel(WriteModel(m));
  ASSERT_TRUE(model.ok()) << model.status();
  ASSERT_EQ(model->signatures.size(), 1u);
  std::vector<std::string> outputs;
  for (const TensorSpec& s : model->signatures[0].outputs) outputs.push_back(s.tensor);
  EXPECT_EQ(outputs, (std::vector<std::string>{"y:0", "z:0"}));
}

// mm1 carries "device": "/device:CPU:0", as converted graphs do (where the converter ran):
// TF.js ignores it, and so does the loader, so the session's --device places every node.
TEST(TfjsModelTest, ConverterDevicesAreDropped) {
  ModelFiles m;
  StatusOr<LoadedModel> model = LoadModel(WriteModel(m));
  ASSERT_TRUE(model.ok()) << model.status();
  const Node* mm1 = model->graph->FindNode("mm1");
  ASSERT_NE(mm1, nullptr);
  EXPECT_EQ(mm1->requested_device(), "");
  for (const auto& node : model->graph->nodes()) EXPECT_EQ(node->requested_device(), "");
}

TEST(TfjsModelTest, NoSignatureUsesPlaceholdersAndSinks) {
  ModelFiles m;
  std::unique_ptr<Session> session = LoadSession(WriteModel(m));
  ASSERT_NE(session, nullptr);
  // TF.js's inferred inputs and outputs stand in for the missing signature.
  EXPECT_EQ(session->SignatureName(), "serving_default");
  ASSERT_EQ(session->Inputs().size(), 1u);
  EXPECT_EQ(session->Inputs()[0].name, "x");
  EXPECT_EQ(session->DefaultFetches(), (std::vector<std::string>{"y", "z"}));
  StatusOr<std::vector<Tensor>> out = session->Run({{"x:0", InputX()}}, {"z"});
  ASSERT_TRUE(out.ok()) << out.status();
  ExpectNear(Floats((*out)[0]), Reference().z);
}

// ---- errors ----

absl::Status LoadError(const ModelFiles& m) {
  StatusOr<LoadedModel> model = LoadModel(WriteModel(m));
  return model.ok() ? absl::OkStatus() : model.status();
}

TEST(TfjsModelTest, TruncatedShardIsDataLossNamingShardAndWeight) {
  ModelFiles m;
  m.bytes.resize(m.bytes.size() - 10);  // cuts into new_shape (bytes 64..72)
  const absl::Status s = LoadError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_NE(s.message().find("group1-shard2of2.bin"), std::string::npos) << s;
  EXPECT_NE(s.message().find("'new_shape'"), std::string::npos) << s;
}

TEST(TfjsModelTest, MissingShardIsNotFoundNamingPath) {
  ModelFiles m;
  const std::string path = WriteModel(m);
  const std::string shard =
      (std::filesystem::path(path).parent_path() / "group1-shard2of2.bin").string();
  std::filesystem::remove(shard);
  StatusOr<LoadedModel> model = LoadModel(path);
  ASSERT_FALSE(model.ok());
  EXPECT_EQ(model.status().code(), absl::StatusCode::kNotFound) << model.status();
  EXPECT_NE(model.status().message().find(shard), std::string::npos) << model.status();
}

TEST(TfjsModelTest, MalformedJsonIsInvalidArgumentWithPosition) {
  ModelFiles m;
  m.topology = absl::StrReplaceAll(kTopology, {{R"("op": "Relu")", R"("op" "Relu")"}});
  const absl::Status s = LoadError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("model.json"), std::string::npos) << s;
  // The bad token sits on the line of the Relu node.
  const std::string json = ModelJson(m);
  const size_t at = json.find(R"("op" "Relu")");
  const int64_t line = 1 + std::count(json.begin(), json.begin() + static_cast<long>(at), '\n');
  EXPECT_NE(s.message().find(absl::StrCat("line ", line, ",")), std::string::npos) << s;
}

TEST(TfjsModelTest, SchemaMismatchIsInvalidArgumentNamingField) {
  ModelFiles m;
  m.topology = absl::StrReplaceAll(kTopology, {{R"("name": "relu")", R"("name": 7)"}});
  const absl::Status s = LoadError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("node[8].name"), std::string::npos) << s;
}

TEST(TfjsModelTest, UnknownWeightDtypeIsInvalidArgument) {
  ModelFiles m;
  m.weights = absl::StrReplaceAll(kManifestWeights, {{R"("shape": [4, 2], "dtype": "float32")",
                                                      R"("shape": [4, 2], "dtype": "float64")"}});
  const absl::Status s = LoadError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'w2'"), std::string::npos) << s;
  EXPECT_NE(s.message().find("float64"), std::string::npos) << s;
}

TEST(TfjsModelTest, UnknownGraphDtypeNameIsInvalidArgumentNamingNode) {
  ModelFiles m;
  m.topology = absl::StrReplaceAll(
      kTopology, {{R"("op": "Relu", "input": ["ba1"], "attr": {"T": {"type": "DT_FLOAT"}})",
                   R"("op": "Relu", "input": ["ba1"], "attr": {"T": {"type": "DT_BOGUS"}})"}});
  ASSERT_NE(m.topology, kTopology);
  const absl::Status s = LoadError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(NodeOfError(s).first, "relu") << s;
  EXPECT_NE(s.message().find("attr 'T'"), std::string::npos) << s;
}

TEST(TfjsModelTest, UnknownQuantizationIsInvalidArgument) {
  ModelFiles m;
  m.weights =
      absl::StrReplaceAll(kManifestWeights, {{R"({"dtype": "float16")", R"({"dtype": "int4")"}});
  const absl::Status s = LoadError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("int4"), std::string::npos) << s;
}

TEST(TfjsModelTest, AffineQuantizationWithoutScaleIsInvalidArgument) {
  ModelFiles m;
  m.weights = absl::StrReplaceAll(kManifestWeights, {{R"("scale": 0.1, )", ""}});
  const absl::Status s = LoadError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("'b1'"), std::string::npos) << s;
}

TEST(TfjsModelTest, ConstWithoutWeightIsInvalidArgumentNamingNode) {
  ModelFiles m;
  m.weights = absl::StrReplaceAll(kManifestWeights, {{"\"w2\"", "\"not_w2\""}});
  const absl::Status s = LoadError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(NodeOfError(s).first, "w2") << s;
}

TEST(TfjsModelTest, WeightOfTheWrongKindIsInvalidArgument) {
  ModelFiles m;
  m.weights = absl::StrReplaceAll(kManifestWeights,
                                  {{R"("name": "sum_axis", "shape": [1], "dtype": "int32")",
                                    R"("name": "sum_axis", "shape": [1], "dtype": "float32")"}});
  const absl::Status s = LoadError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_EQ(NodeOfError(s).first, "sum_axis") << s;
}

TEST(TfjsModelTest, WeightShapeDifferentFromConstIsInvalidArgument) {
  ModelFiles m;
  m.weights = absl::StrReplaceAll(kManifestWeights, {{R"("shape": [4, 2])", R"("shape": [2, 4])"}});
  const absl::Status s = LoadError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_NE(s.message().find("[2,4]"), std::string::npos) << s;
}

TEST(TfjsModelTest, LayersModelIsUnimplemented) {
  ModelFiles m;
  m.format = "layers-model";
  m.topology = R"({"class_name": "Sequential", "config": {"layers": []}, "keras_version": "2"})";
  const absl::Status s = LoadError(m);
  EXPECT_EQ(s.code(), absl::StatusCode::kUnimplemented) << s;
  EXPECT_NE(s.message().find("layers-model"), std::string::npos) << s;
}

// Every prefix of a valid model.json and random byte corruptions must give a clean error (or,
// for corruptions that keep the file valid, a model) and never crash.
TEST(TfjsModelTest, GarbageNeverCrashes) {
  ModelFiles m;
  m.signature = kSignature;
  const std::string path = WriteModel(m);
  const std::string json = ModelJson(m);
  for (size_t n = 0; n + 1 < json.size(); n += 7) {
    WriteFile(path, json.substr(0, n));
    StatusOr<LoadedModel> model = LoadModel(path);
    EXPECT_FALSE(model.ok()) << "prefix of " << n << " bytes loaded";
  }
  std::mt19937 rng(1234);
  for (int trial = 0; trial < 300; ++trial) {
    std::string bad = json;
    for (int k = 0; k < 3; ++k) bad[rng() % bad.size()] = static_cast<char>(rng() % 256);
    WriteFile(path, bad);
    (void)LoadModel(path);  // any status; must not crash
  }
  WriteFile(path, std::string("\0\xff{[\"", 5));
  EXPECT_EQ(LoadModel(path).status().code(), absl::StatusCode::kInvalidArgument);
}

// ---- DecodeTfjsWeight, against hand-computed values ----

tfjs::WeightSpec Spec(const std::string& dtype, std::vector<int64_t> shape) {
  tfjs::WeightSpec spec;
  spec.set_name("w");
  spec.set_dtype(dtype);
  for (int64_t d : shape) spec.add_shape(d);
  return spec;
}

TEST(TfjsWeightsTest, Float16SpecialValues) {
  tfjs::WeightSpec spec = Spec("float32", {6});
  spec.mutable_quantization()->set_dtype("float16");
  const uint16_t bits[6] = {0x7C00, 0xFC00, 0x8000, 0x0400, 0x7BFF, 0x7E00};
  const std::string bytes(reinterpret_cast<const char*>(bits), sizeof(bits));
  size_t offset = 0;
  absl::StatusOr<TfjsWeight> w = DecodeTfjsWeight(spec, bytes, &offset, "test");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(offset, 12u);
  EXPECT_EQ(w->f32[0], INFINITY);
  EXPECT_EQ(w->f32[1], -INFINITY);
  EXPECT_EQ(w->f32[2], 0.0f);
  EXPECT_TRUE(std::signbit(w->f32[2]));
  EXPECT_EQ(w->f32[3], 6.103515625e-05f);  // 2^-14, the smallest normal half
  EXPECT_EQ(w->f32[4], 65504.0f);
  EXPECT_TRUE(std::isnan(w->f32[5]));
}

TEST(TfjsWeightsTest, Uint16AffineFloat) {
  tfjs::WeightSpec spec = Spec("float32", {3});
  spec.mutable_quantization()->set_dtype("uint16");
  spec.mutable_quantization()->set_scale(0.5);
  spec.mutable_quantization()->set_min(-100.0);
  const uint16_t q[3] = {0, 3, 65535};
  size_t offset = 0;
  absl::StatusOr<TfjsWeight> w = DecodeTfjsWeight(
      spec, std::string(reinterpret_cast<const char*>(q), sizeof(q)), &offset, "test");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->f32, (std::vector<float>{-100.0f, -98.5f, 32667.5f}));
}

TEST(TfjsWeightsTest, Uint8AffineInt32RoundsHalvesUpLikeMathRound) {
  tfjs::WeightSpec spec = Spec("int32", {5});
  spec.mutable_quantization()->set_dtype("uint8");
  spec.mutable_quantization()->set_scale(0.5);
  spec.mutable_quantization()->set_min(-1.0);
  // q * 0.5 - 1 = -1, -0.5, 0.5, 1.25, 1.5 -> Math.round: -1, -0 (=0), 1, 1, 2.
  const std::string bytes("\x00\x01\x03\x04\x05", 5);
  size_t offset = 0;
  absl::StatusOr<TfjsWeight> w = DecodeTfjsWeight(spec, bytes, &offset, "test");
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->i32, (std::vector<int32_t>{-1, 0, 1, 1, 2}));
}

TEST(TfjsWeightsTest, StringsAndBools) {
  std::string bytes("\x02\x00\x00\x00hi\x00\x00\x00\x00\x01\x00\x00\x00z", 15);
  bytes += std::string("\x01\x00\x01", 3);
  size_t offset = 0;
  absl::StatusOr<TfjsWeight> s = DecodeTfjsWeight(Spec("string", {3}), bytes, &offset, "t");
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->strings, (std::vector<std::string>{"hi", "", "z"}));
  absl::StatusOr<TfjsWeight> b = DecodeTfjsWeight(Spec("bool", {3}), bytes, &offset, "t");
  ASSERT_TRUE(b.ok()) << b.status();
  EXPECT_EQ(b->b, (std::vector<uint8_t>{1, 0, 1}));
  EXPECT_EQ(offset, bytes.size());
  // A length prefix pointing past the end is DATA_LOSS, not a read out of bounds.
  offset = 0;
  const std::string truncated(
      "\xff\xff\xff\x7f"
      "ab",
      6);
  EXPECT_EQ(DecodeTfjsWeight(Spec("string", {1}), truncated, &offset, "t").status().code(),
            absl::StatusCode::kDataLoss);
}

TEST(TfjsWeightsTest, HugeOrNegativeShapesAreRejectedBeforeAllocating) {
  size_t offset = 0;
  EXPECT_EQ(DecodeTfjsWeight(Spec("float32", {1LL << 40, 1LL << 40}), "abcd", &offset, "t")
                .status()
                .code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(DecodeTfjsWeight(Spec("float32", {1LL << 40}), "abcd", &offset, "t").status().code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeTfjsWeight(Spec("float32", {-1}), "abcd", &offset, "t").status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(offset, 0u);
}

// Fuzz finding (tests/fuzz/regressions/tfjs_model/zero_element_int32_weight): a weight with
// no elements copied 0 bytes from a null vector buffer (undefined behaviour under UBSan).
TEST(TfjsWeightsTest, ZeroElementWeightsDecodeEmptyAndTakeNoBytes) {
  for (const char* dtype : {"float32", "int32", "complex64", "bool", "string"}) {
    size_t offset = 0;
    absl::StatusOr<TfjsWeight> w = DecodeTfjsWeight(Spec(dtype, {0, 3}), "", &offset, "t");
    ASSERT_TRUE(w.ok()) << dtype << ": " << w.status();
    EXPECT_EQ(offset, 0u) << dtype;
    EXPECT_TRUE(w->f32.empty() && w->i32.empty() && w->b.empty() && w->strings.empty()) << dtype;
    EXPECT_EQ(w->shape, (std::vector<int64_t>{0, 3})) << dtype;
  }
}

}  // namespace
}  // namespace tfjit::tf
