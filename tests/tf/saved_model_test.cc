// SavedModels written by TensorFlow (tests/data/savedmodels, copied from tensorflow/serving's
// testdata) through the Session: variables restored from the checkpoint, signatures by key, state
// kept across runs, and damaged files ending in precise errors. Expected values come from the
// generating script (tensorflow_serving/servables/tensorflow/testdata/
// saved_model_half_plus_two.py): a = 0.5, b = 2, c = 3; y = a*x + b, y2 = a*x + c,
// y3 = a*x2 + c (TF2) / a2*x2 + c2 with a2 = 0.5, c2 = 3 (TF1).
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/status.h"
#include "frontend/proto/saved_model.pb.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

namespace fs = std::filesystem;

std::string Model(const std::string& name) {
  return (fs::path(TFJIT_SOURCE_DIR) / "tests" / "data" / "savedmodels" / name / "00000123")
      .string();
}

void ExpectError(const absl::Status& s, absl::StatusCode code, const std::string& substring) {
  EXPECT_EQ(s.code(), code) << StatusToString(s);
  EXPECT_TRUE(absl::StrContains(s.message(), substring))
      << "message: " << s.message() << "\nexpected to contain: " << substring;
}

std::unique_ptr<Session> Load(const std::string& path, JitMode jit,
                              const std::string& signature = "") {
  SessionOptions options;
  options.jit = jit;
  options.signature = signature;
  auto session = Session::Load(path, options);
  EXPECT_TRUE(session.ok()) << session.status();
  return session.ok() ? std::move(session).value() : nullptr;
}

// Runs `key` of the session's signature on x and checks out = slope*x + offset elementwise.
void ExpectAffine(Session& session, const std::string& in_key, const std::string& out_key,
                  std::vector<int64_t> dims, const std::vector<float>& x, float slope,
                  float offset) {
  auto out =
      session.Run({{in_key, Tensor::FromVector<float>(DType::kFloat32, dims, x)}}, {out_key});
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_EQ((*out)[0].dtype(), DType::kFloat32);
  ASSERT_EQ((*out)[0].dims(), dims);
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_FLOAT_EQ((*out)[0].data<float>()[i], slope * x[i] + offset) << "element " << i;
  }
}

class HalfPlusTwoTest : public ::testing::TestWithParam<JitMode> {};

TEST_P(HalfPlusTwoTest, Tf1ServingDefaultAndRegressX2) {
  auto session = Load(Model("saved_model_half_plus_two_cpu"), GetParam());
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->SignatureName(), "serving_default");
  EXPECT_EQ(session->SignatureNames(),
            (std::vector<std::string>{"classify_x_to_y", "regress_x2_to_y3", "regress_x_to_y",
                                      "regress_x_to_y2", "serving_default"}));
  ExpectAffine(*session, "x", "y", {3, 1}, {0.0f, 1.0f, -4.0f}, 0.5f, 2.0f);
  // Graph tensor names still work next to signature keys.
  ExpectAffine(*session, "x:0", "y:0", {2, 1}, {10.0f, 3.0f}, 0.5f, 2.0f);

  auto x2 = Load(Model("saved_model_half_plus_two_cpu"), GetParam(), "regress_x2_to_y3");
  ASSERT_NE(x2, nullptr);
  ExpectAffine(*x2, "inputs", "outputs", {2, 1}, {2.0f, 8.0f}, 0.5f, 3.0f);
}

TEST_P(HalfPlusTwoTest, Tf2SignaturesThroughFunctions) {
  auto session = Load(Model("saved_model_half_plus_two_tf2_cpu"), GetParam());
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->SignatureName(), "serving_default");
  ExpectAffine(*session, "x", "y", {1}, {4.0f}, 0.5f, 2.0f);
  ExpectAffine(*session, "x", "y", {1}, {-3.0f}, 0.5f, 2.0f);
  for (const char* sig : {"regress_x2_to_y3", "classify_x2_to_y3"}) {
    auto s = Load(Model("saved_model_half_plus_two_tf2_cpu"), GetParam(), sig);
    ASSERT_NE(s, nullptr);
    ExpectAffine(*s, "inputs", sig == std::string("regress_x2_to_y3") ? "outputs" : "scores", {1},
                 {6.0f}, 0.5f, 3.0f);
  }
}

TEST_P(HalfPlusTwoTest, TfExampleSignaturesNeedStringsAndSayWhy) {
  for (const char* model : {"saved_model_half_plus_two_cpu", "saved_model_half_plus_two_tf2_cpu"}) {
    for (const char* sig : {"regress_x_to_y", "regress_x_to_y2", "classify_x_to_y"}) {
      SCOPED_TRACE(std::string(model) + " " + sig);
      auto s = Load(Model(model), GetParam(), sig);
      ASSERT_NE(s, nullptr);
      const std::vector<InputInfo> inputs = s->Inputs();
      ASSERT_EQ(inputs.size(), 1u);
      EXPECT_EQ(inputs[0].dtype, DType::kString);
      auto out = s->Run({{"inputs", Tensor::FromVector<float>(DType::kFloat32, {1}, {1.0f})}},
                        s->DefaultFetches());
      // A float where a string goes is a dtype error; the hint names the signatures that run.
      ExpectError(out.status(), absl::StatusCode::kInvalidArgument,
                  "is a string tensor (e.g. serialized tf.Example protos");
      ExpectError(out.status(), absl::StatusCode::kInvalidArgument, "'regress_x2_to_y3'");
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Jit, HalfPlusTwoTest,
                         ::testing::Values(JitMode::kNone, JitMode::kOff, JitMode::kAuto));

class CounterTest : public ::testing::TestWithParam<JitMode> {};

float Scalar(const absl::StatusOr<std::vector<Tensor>>& out) {
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok() || out->empty() || (*out)[0].num_elements() != 1) return -12345.0f;
  return (*out)[0].data<float>()[0];
}

TEST_P(CounterTest, StatePersistsAcrossRunsOfOneSession) {
  const std::string path = Model("saved_model_counter");
  // One session per signature would each restore the checkpoint; a single session reaches
  // every signature's tensors by graph name, which is how the state is shared.
  auto s = Load(path, GetParam(), "get_counter");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(Scalar(s->Run({}, {"output"})), 0.0f);  // checkpoint value
  EXPECT_EQ(Scalar(s->Run({}, {"incr_counter_op/AssignAdd:0"})), 1.0f);
  EXPECT_EQ(Scalar(s->Run({}, {"incr_counter_op/AssignAdd:0"})), 2.0f);
  EXPECT_EQ(Scalar(s->Run({{"delta:0", Tensor::FromVector<float>(DType::kFloat32, {}, {5.0f})}},
                          {"incr_counter_by_op/AssignAdd:0"})),
            7.0f);
  EXPECT_EQ(Scalar(s->Run({}, {"output"})), 7.0f);
  EXPECT_EQ(Scalar(s->Run({}, {"reset_counter_op/Assign:0"})), 0.0f);
  EXPECT_EQ(Scalar(s->Run({}, {"output"})), 0.0f);

  auto by = Load(path, GetParam(), "incr_counter_by");
  ASSERT_NE(by, nullptr);
  const Tensor delta = Tensor::FromVector<float>(DType::kFloat32, {}, {2.5f});
  EXPECT_EQ(Scalar(by->Run({{"delta", delta}}, {"output"})), 2.5f);
  EXPECT_EQ(Scalar(by->Run({{"delta", delta}}, {"output"})), 5.0f);
  auto incr = Load(path, GetParam(), "incr_counter");
  ASSERT_NE(incr, nullptr);
  EXPECT_EQ(Scalar(incr->Run({}, {"output"})), 1.0f);  // a new session starts from the file
  EXPECT_EQ(Scalar(incr->Run({}, {"output"})), 2.0f);
  auto reset = Load(path, GetParam(), "reset_counter");
  ASSERT_NE(reset, nullptr);
  EXPECT_EQ(Scalar(reset->Run({}, {"output"})), 0.0f);
}

INSTANTIATE_TEST_SUITE_P(Jit, CounterTest,
                         ::testing::Values(JitMode::kNone, JitMode::kOff, JitMode::kAuto));

TEST(SavedModelTest, UnknownSignatureAndTagsAreNotFound) {
  SessionOptions options;
  options.signature = "no_such_signature";
  auto s = Session::Load(Model("saved_model_counter"), options);
  ExpectError(s.status(), absl::StatusCode::kNotFound, "incr_counter_by");
  SessionOptions tags;
  tags.tags = {"serve", "gpu"};
  s = Session::Load(Model("saved_model_counter"), tags);
  ExpectError(s.status(), absl::StatusCode::kNotFound, "[serve]");
}

// A writable copy of a model in a fresh temp directory.
std::string CopyModel(const std::string& name, const std::string& tag) {
  const fs::path dst = fs::path(::tfjit::testing::TestTempDir()) / ("sm_" + tag + "_" + name);
  fs::remove_all(dst);
  fs::copy(Model(name), dst, fs::copy_options::recursive);
  for (const auto& e : fs::recursive_directory_iterator(dst)) {
    fs::permissions(e.path(), fs::perms::owner_write, fs::perm_options::add);
  }
  return dst.string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}
void WriteFile(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary | std::ios::trunc) << bytes;
}

TEST(SavedModelTest, FlippedDataByteIsDataLossNamingFileAndTensor) {
  const std::string dir = CopyModel("saved_model_half_plus_two_cpu", "flip");
  const std::string data = dir + "/variables/variables.data-00000-of-00001";
  std::string bytes = ReadFile(data);
  ASSERT_EQ(bytes.size(), 20u);  // a, a2, b, c, c2 as float32, in that order
  bytes[9] ^= 0x10;              // inside b
  WriteFile(data, bytes);
  auto s = Session::Load(dir);
  ExpectError(s.status(), absl::StatusCode::kDataLoss, "variables.data-00000-of-00001");
  ExpectError(s.status(), absl::StatusCode::kDataLoss, "'b'");
  ExpectError(s.status(), absl::StatusCode::kDataLoss, "CRC32C");
}

TEST(SavedModelTest, TruncatedDataFileIsDataLoss) {
  const std::string dir = CopyModel("saved_model_half_plus_two_tf2_cpu", "trunc");
  const std::string data = dir + "/variables/variables.data-00000-of-00001";
  // a @0, b @4, c @8 (4 bytes each), then the object graph: cut inside c.
  WriteFile(data, ReadFile(data).substr(0, 10));
  auto s = Session::Load(dir);
  ExpectError(s.status(), absl::StatusCode::kDataLoss, "truncated");
  ExpectError(s.status(), absl::StatusCode::kDataLoss, "'c/.ATTRIBUTES/VARIABLE_VALUE'");
  ExpectError(s.status(), absl::StatusCode::kDataLoss, "variables.data-00000-of-00001");
}

TEST(SavedModelTest, DamagedIndexIsAnErrorNeverACrash) {
  const std::string dir = CopyModel("saved_model_counter", "index");
  const std::string index = dir + "/variables/variables.index";
  const std::string good = ReadFile(index);
  ASSERT_EQ(good.size(), 123u);
  // Truncations and garbage must fail. Single flipped bytes must fail where the bytes are
  // checked (formats.md 2.6: data block + trailer [0, 0x2b), index block + trailer
  // [0x38, 0x4b), the index handle 0x4d-0x4e, the magic [0x73, 0x7b)); elsewhere (the
  // metaindex, which LevelDB reads only with a filter policy, and the footer padding) a flip
  // is harmless and may load, but must not crash.
  std::vector<std::pair<std::string, bool>> damaged = {{good.substr(0, 60), true},
                                                       {good.substr(0, 100), true},
                                                       {"", true},
                                                       {std::string(123, 'x'), true}};
  for (size_t i = 0; i < good.size(); ++i) {
    std::string b = good;
    b[i] = static_cast<char>(b[i] ^ 0x41);
    const bool checked = i < 0x2b || (i >= 0x38 && i < 0x4b) || i == 0x4d || i == 0x4e || i >= 0x73;
    damaged.push_back({b, checked});
  }
  for (size_t i = 0; i < damaged.size(); ++i) {
    WriteFile(index, damaged[i].first);
    auto s = Session::Load(dir);
    if (s.ok()) {
      EXPECT_FALSE(damaged[i].second) << "case " << i << " loaded";
      continue;
    }
    EXPECT_TRUE(s.status().code() == absl::StatusCode::kDataLoss ||
                s.status().code() == absl::StatusCode::kInvalidArgument ||
                s.status().code() == absl::StatusCode::kNotFound)
        << "case " << i << ": " << StatusToString(s.status());
    EXPECT_TRUE(absl::StrContains(s.status().message(), "variables"))
        << "case " << i << ": " << s.status();
  }
  WriteFile(index, damaged[0].first);
  ExpectError(Session::Load(dir).status(), absl::StatusCode::kDataLoss, "variables.index");
}

TEST(SavedModelTest, TruncatedSavedModelPbIsInvalidArgument) {
  const std::string dir = CopyModel("saved_model_half_plus_two_cpu", "pb");
  const std::string pb = dir + "/saved_model.pb";
  WriteFile(pb, ReadFile(pb).substr(0, 5000));
  ExpectError(Session::Load(dir).status(), absl::StatusCode::kInvalidArgument, "saved_model.pb");
}

TEST(SavedModelTest, MissingVariablesDirectoryIsAClearError) {
  const std::string dir = CopyModel("saved_model_half_plus_two_tf2_cpu", "novars");
  fs::remove_all(dir + "/variables");
  auto s = Session::Load(dir);
  ExpectError(s.status(), absl::StatusCode::kNotFound, "variables/variables.index");
  ExpectError(s.status(), absl::StatusCode::kNotFound, "3 variable(s)");
}

TEST(SavedModelTest, TextSavedModelLoads) {
  const std::string dir = CopyModel("saved_model_counter", "pbtxt");
  tensorflow::SavedModel proto;
  ASSERT_TRUE(proto.ParseFromString(ReadFile(dir + "/saved_model.pb")));
  google::protobuf::TextFormat::Printer printer;
  printer.SetHideUnknownFields(true);
  std::string text;
  ASSERT_TRUE(printer.PrintToString(proto, &text));
  fs::remove(dir + "/saved_model.pb");
  WriteFile(dir + "/saved_model.pbtxt", text);
  auto s = Load(dir, JitMode::kNone, "incr_counter");
  ASSERT_NE(s, nullptr);
  EXPECT_EQ(Scalar(s->Run({}, {"output"})), 1.0f);
  WriteFile(dir + "/saved_model.pbtxt", "meta_graphs { bogus_field: [ }");
  auto bad = Session::Load(dir);
  ExpectError(bad.status(), absl::StatusCode::kInvalidArgument, "saved_model.pbtxt");
  ExpectError(bad.status(), absl::StatusCode::kInvalidArgument, "line 1:");
}

// TF Serving's layout: the base directory of numbered versions loads its highest version.
TEST(SavedModelTest, BaseDirectoryOfVersionsLoadsTheHighest) {
  const fs::path base = fs::path(::tfjit::testing::TestTempDir()) / "sm_versions";
  fs::remove_all(base);
  fs::create_directories(base / "7");  // an empty, unfinished export is skipped
  fs::copy(Model("saved_model_half_plus_two_cpu"), base / "3", fs::copy_options::recursive);
  fs::copy(Model("saved_model_half_plus_two_tf2_cpu"), base / "12", fs::copy_options::recursive);
  auto session = Session::Load(base.string());
  ASSERT_TRUE(session.ok()) << StatusToString(session.status());
  // Version 12 (the TF2 export) has the classify_x2_to_y3 signature; version 3 has not.
  const std::vector<std::string> names = (*session)->SignatureNames();
  EXPECT_NE(std::find(names.begin(), names.end(), "classify_x2_to_y3"), names.end());
  ExpectAffine(**session, "x", "y", {1}, {6.0f}, 0.5f, 2.0f);
  fs::remove_all(base);
}

TEST(SavedModelTest, MissingSavedModelFileIsNotFound) {
  const fs::path dir = fs::path(::tfjit::testing::TestTempDir()) / "sm_empty_dir";
  fs::create_directories(dir);
  ExpectError(Session::Load(dir.string()).status(), absl::StatusCode::kNotFound, "saved_model.pb");
}

}  // namespace
}  // namespace tfjit
