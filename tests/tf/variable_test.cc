// Resource and TF1 variables through the Session: values persist across runs and agree in
// every jit mode; TF's errors for uninitialized reads, constants read from variables (known
// issue F, testGetConstantOutOfResourceVariable) and variables on another device (known issue
// A, testResourceWrongDevice, on CPU:0/CPU:1 — or GPU:0 when the build has a GPU).
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "core/status.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

using ::tfjit::testing::WriteTempFile;

std::string VariableGraph(const std::string& name) {
  return (std::filesystem::path(TFJIT_SOURCE_DIR) / "tests" / "tf" / "variables" / name).string();
}

std::unique_ptr<Session> Load(const std::string& name, JitMode mode, int cpus = 1,
                              bool autofix = false) {
  SessionOptions options;
  options.jit = mode;
  options.logical_cpus = cpus;
  options.autofix = autofix;
  auto session = Session::Load(VariableGraph(name), options);
  EXPECT_TRUE(session.ok()) << StatusToString(session.status());
  return session.ok() ? std::move(*session) : nullptr;
}

std::vector<float> Floats(const Tensor& t) {
  return std::vector<float>(t.data<float>(), t.data<float>() + t.num_elements());
}

constexpr JitMode kModes[] = {JitMode::kNone, JitMode::kOff, JitMode::kAuto, JitMode::kAll};

TEST(VariableTest, ResourceVariablesPersistAcrossRunsInEveryMode) {
  for (JitMode mode : kModes) {
    SCOPED_TRACE(JitModeName(mode));
    auto session = Load("counter.pbtxt", mode);
    ASSERT_NE(session, nullptr);
    ASSERT_TRUE(session->Run({}, {}, {"init"}).ok());
    const Tensor x = Tensor::FromVector(DType::kFloat32, {2}, std::vector<float>{0.5f, -1.0f});
    for (int run = 1; run <= 3; ++run) {
      RunStats stats;
      auto out = session->Run({{"x", x}}, {"read", "sq", "steps", "ready"}, &stats);
      ASSERT_TRUE(out.ok()) << StatusToString(out.status());
      const std::vector<float> v = {1.0f + 0.5f * run, 2.0f - 1.0f * run};
      EXPECT_EQ(Floats((*out)[0]), v) << "run " << run;
      EXPECT_EQ(Floats((*out)[1]), (std::vector<float>{v[0] * v[0], v[1] * v[1]}));
      EXPECT_EQ((*out)[2].data<int64_t>()[0], run);
      EXPECT_TRUE((*out)[3].data<bool>()[0]);
      if (mode == JitMode::kAuto || mode == JitMode::kAll) {
        EXPECT_GT(stats.nodes_compiled, 0) << "the variable ops should compile";
      }
    }
  }
}

TEST(VariableTest, UninitializedReadIsTfsFailedPrecondition) {
  for (JitMode mode : kModes) {
    SCOPED_TRACE(JitModeName(mode));
    auto session = Load("counter.pbtxt", mode);
    ASSERT_NE(session, nullptr);
    auto out = session->Run({}, {"peek"});
    ASSERT_EQ(out.status().code(), absl::StatusCode::kFailedPrecondition) << out.status();
    EXPECT_TRUE(absl::StartsWith(out.status().message(),
                                 "Could not find variable v. This could mean that the variable "
                                 "has been deleted."))
        << out.status().message();
    EXPECT_EQ(NodeOfError(out.status()).first, "peek");
  }
}

TEST(VariableTest, Tf1ReferenceVariablesReadTheValueWhenTheConsumerRuns) {
  for (JitMode mode : {JitMode::kNone, JitMode::kAuto}) {
    SCOPED_TRACE(JitModeName(mode));
    auto session = Load("tf1_variable.pbtxt", mode);
    ASSERT_NE(session, nullptr);
    const Tensor eye = Tensor::FromVector(DType::kFloat32, {2, 2}, std::vector<float>{1, 0, 0, 1});
    auto uninit = session->Run({{"x", eye}}, {"y"});
    EXPECT_EQ(uninit.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE(
        absl::StartsWith(uninit.status().message(), "Attempting to use uninitialized value w"))
        << uninit.status();
    ASSERT_TRUE(session->Run({}, {}, {"init"}).ok());
    std::vector<Tensor> out;
    for (int run = 0; run < 2; ++run) {
      auto r = session->Run({{"x", eye}}, {"y", "is_init"});
      ASSERT_TRUE(r.ok()) << StatusToString(r.status());
      out = *r;
    }
    // w = [[1,2],[3,4]] + 2*I = [[3,2],[3,6]]; w*w = [[15,18],[27,42]].
    EXPECT_EQ(Floats(out[0]), (std::vector<float>{15, 18, 27, 42}));
    EXPECT_TRUE(out[1].data<bool>()[0]);
  }
}

// testGetConstantOutOfResourceVariable: the variables' values at launch are compile-time
// constants; after an assignment inside the function they are not.
TEST(VariableTest, ConstantReadFromVariableCompilesAndWriteFirstIsIssueF) {
  std::vector<float> x(100);
  for (int i = 0; i < 100; ++i) x[i] = static_cast<float>(i);
  const Tensor xt = Tensor::FromVector(DType::kFloat32, {100}, x);
  for (JitMode mode : kModes) {
    SCOPED_TRACE(JitModeName(mode));
    auto session = Load("constant_from_variable.pbtxt", mode);
    ASSERT_NE(session, nullptr);
    ASSERT_TRUE(session->Run({}, {}, {"init"}).ok());
    auto f = session->Run({{"x", xt}}, {"f_call"});
    ASSERT_TRUE(f.ok()) << StatusToString(f.status());
    EXPECT_EQ((*f)[0].dims(), (std::vector<int64_t>{50, 2}));
    EXPECT_EQ(Floats((*f)[0]), x);
    auto g = session->Run({{"x", xt}}, {"g_call"});
    if (mode == JitMode::kNone) {  // uncompiled: TF's runtime has no such limit
      ASSERT_TRUE(g.ok()) << StatusToString(g.status());
      EXPECT_EQ((*g)[0].dims(), (std::vector<int64_t>{50, 2}));
      continue;
    }
    ASSERT_EQ(g.status().code(), absl::StatusCode::kInvalidArgument) << g.status();
    EXPECT_TRUE(absl::StartsWith(g.status().message(),
                                 "Input 1 to node `Reshape` with op Reshape must be a "
                                 "compile-time constant.\n\nXLA compilation requires"))
        << g.status().message();
    EXPECT_EQ(NodeOfError(g.status()).first, "Reshape");
  }
}

// testResourceWrongDevice: a variable on CPU:0 updated by a jit function placed on CPU:1.
TEST(VariableTest, VariableOnAnotherDeviceIsIssueA) {
  const Tensor x = Tensor::FromVector(DType::kFloat32, {2}, std::vector<float>{1.0f, 2.0f});
  for (JitMode mode : {JitMode::kOff, JitMode::kAuto, JitMode::kAll}) {
    SCOPED_TRACE(JitModeName(mode));
    auto session = Load("wrong_device.pbtxt", mode, /*cpus=*/2);
    ASSERT_NE(session, nullptr);
    ASSERT_TRUE(session->Run({}, {}, {"Variable/Assign"}).ok());
    auto out = session->Run({{"x", x}}, {"read"});
    ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
    EXPECT_TRUE(absl::StartsWith(
        out.status().message(),
        "Trying to access resource Variable located in device "
        "/job:localhost/replica:0/task:0/device:CPU:0 from device "
        "/job:localhost/replica:0/task:0/device:CPU:1\n Cf. "
        "https://www.tensorflow.org/xla/known_issues#tfvariable_on_a_different_device"))
        << out.status().message();
    EXPECT_EQ(NodeOfError(out.status()).first, "AssignAddVariableOp");
  }
}

// A jit function updating a variable inside a While and an If (the handle is a loop variable
// and a branch operand): compiled, the loop carries the value and writes it back.
TEST(VariableTest, VariablesInsideCompiledLoopsAndConditionals) {
  for (JitMode mode : kModes) {
    for (const std::vector<float>& x :
         {std::vector<float>{0.5f, 1.0f}, std::vector<float>{0.5f, -2.0f}}) {
      SCOPED_TRACE(std::string(JitModeName(mode)) + (x[1] > 0 ? " positive" : " negative"));
      auto session = Load("loop_update.pbtxt", mode);
      ASSERT_NE(session, nullptr);
      ASSERT_TRUE(session->Run({}, {}, {"v/Assign"}).ok());
      std::vector<float> v = {1.0f, 2.0f};
      const bool positive = x[0] + x[1] > 0;
      for (int run = 0; run < 2; ++run) {
        RunStats stats;
        auto out = session->Run({{"x", Tensor::FromVector(DType::kFloat32, {2}, x)}},
                                {"StatefulPartitionedCall", "read"}, &stats);
        ASSERT_TRUE(out.ok()) << StatusToString(out.status());
        for (int k = 0; k < 2; ++k) v[k] = v[k] + x[k] + x[k] + x[k] - (positive ? x[k] : 0.0f);
        EXPECT_EQ(Floats((*out)[0]), v) << "run " << run;
        EXPECT_EQ(Floats((*out)[1]), v) << "run " << run;
        if (mode != JitMode::kNone) {
          EXPECT_GT(stats.nodes_compiled, 0);
        }
      }
    }
  }
}

// TF's workaround: create the variable on the device the function runs on.
TEST(VariableTest, VariableOnTheFunctionsDeviceCompiles) {
  std::ifstream in(VariableGraph("wrong_device.pbtxt"));
  std::stringstream text;
  text << in.rdbuf();
  const std::string path = WriteTempFile(
      "same_device.pbtxt", absl::StrReplaceAll(text.str(), {{"device:CPU:0", "device:CPU:1"}}));
  SessionOptions options;
  options.jit = JitMode::kOff;
  options.logical_cpus = 2;
  auto session = Session::Load(path, options);
  ASSERT_TRUE(session.ok()) << session.status();
  ASSERT_TRUE((*session)->Run({}, {}, {"Variable/Assign"}).ok());
  const Tensor x = Tensor::FromVector(DType::kFloat32, {2}, std::vector<float>{1.0f, 2.0f});
  RunStats stats;
  auto out = (*session)->Run({{"x", x}}, {"read"}, &stats);
  ASSERT_TRUE(out.ok()) << StatusToString(out.status());
  EXPECT_EQ(Floats((*out)[0]), (std::vector<float>{3.1f + 1.0f, 3.2f + 2.0f}));
  EXPECT_EQ(stats.clusters, 1) << "the jit function compiles";
}

TEST(VariableTest, AutofixCopiesTheVariableToTheClustersDevice) {
  const Tensor x = Tensor::FromVector(DType::kFloat32, {2}, std::vector<float>{1.0f, 2.0f});
  std::vector<float> reference;
  for (JitMode mode : {JitMode::kNone, JitMode::kOff, JitMode::kAll}) {
    SCOPED_TRACE(JitModeName(mode));
    auto session = Load("wrong_device.pbtxt", mode, /*cpus=*/2, /*autofix=*/true);
    ASSERT_NE(session, nullptr);
    ASSERT_TRUE(session->Run({}, {}, {"Variable/Assign"}).ok());
    std::vector<float> got;
    for (int run = 0; run < 2; ++run) {
      auto out = session->Run({{"x", x}}, {"read"});
      ASSERT_TRUE(out.ok()) << StatusToString(out.status());
      got = Floats((*out)[0]);
    }
    EXPECT_EQ(got, (std::vector<float>{3.1f + 1.0f + 1.0f, 3.2f + 2.0f + 2.0f}));
    if (mode == JitMode::kNone) reference = got;
    EXPECT_EQ(got, reference);
  }
}

// Known issue A with a real GPU (skipped without one): testResourceWrongDevice as TF writes it
// (a variable on CPU:0, the jit function on GPU:0); an int32 variable asked for on GPU:0 stays
// in host memory (CPU:0), so the GPU function meets the same error; int64, TF's documented
// workaround, lives on the GPU and compiles there.
std::string OnGpu(const std::string& dtype, bool variable_on_gpu) {
  std::ifstream in(VariableGraph("wrong_device.pbtxt"));
  std::stringstream text;
  text << in.rdbuf();
  std::string graph = absl::StrReplaceAll(text.str(), {{"device:CPU:1", "device:GPU:0"}});
  if (variable_on_gpu) graph = absl::StrReplaceAll(graph, {{"device:CPU:0", "device:GPU:0"}});
  if (dtype != "DT_FLOAT") {
    const std::string field = dtype == "DT_INT64" ? "int64_val" : "int_val";
    graph = absl::StrReplaceAll(
        graph,
        {{"DT_FLOAT", dtype}, {"float_val: 3.1 float_val: 3.2", field + ": 3 " + field + ": 4"}});
  }
  return WriteTempFile("gpu_" + dtype + (variable_on_gpu ? "_gpu.pbtxt" : "_cpu.pbtxt"), graph);
}

std::string NoGpuReason() {
  SessionOptions options;
  options.device = "GPU:0";
  auto session = Session::Load(VariableGraph("counter.pbtxt"), options);
  return session.ok() ? "" : std::string(session.status().message());
}

TEST(VariableGpuTest, IssueAWithRealDevices) {
  if (const std::string why = NoGpuReason(); !why.empty()) GTEST_SKIP() << why;
  struct Case {
    const char* dtype;
    bool variable_on_gpu;
    bool fails;
  };
  for (const Case& c : {Case{"DT_FLOAT", false, true}, Case{"DT_INT32", true, true},
                        Case{"DT_INT64", true, false}}) {
    SCOPED_TRACE(std::string(c.dtype) + (c.variable_on_gpu ? " asked on GPU:0" : " on CPU:0"));
    SessionOptions options;
    options.jit = JitMode::kOff;
    auto session = Session::Load(OnGpu(c.dtype, c.variable_on_gpu), options);
    ASSERT_TRUE(session.ok()) << session.status();
    ASSERT_TRUE((*session)->Run({}, {}, {"Variable/Assign"}).ok());
    const DType type = c.dtype == std::string("DT_FLOAT")   ? DType::kFloat32
                       : c.dtype == std::string("DT_INT32") ? DType::kInt32
                                                            : DType::kInt64;
    Tensor x(type, {2});
    if (type == DType::kFloat32) {
      x = Tensor::FromVector(DType::kFloat32, {2}, std::vector<float>{1.0f, 2.0f});
    } else if (type == DType::kInt32) {
      x = Tensor::FromVector(DType::kInt32, {2}, std::vector<int32_t>{1, 2});
    } else {
      x = Tensor::FromVector(DType::kInt64, {2}, std::vector<int64_t>{1, 2});
    }
    auto out = (*session)->Run({{"x", x}}, {"read"});
    if (c.fails) {
      ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument) << out.status();
      EXPECT_TRUE(absl::StartsWith(out.status().message(),
                                   "Trying to access resource Variable located in device "
                                   "/job:localhost/replica:0/task:0/device:CPU:0 from device "
                                   "/job:localhost/replica:0/task:0/device:GPU:0\n Cf. "))
          << out.status().message();
      continue;
    }
    ASSERT_TRUE(out.ok()) << StatusToString(out.status());
    EXPECT_EQ((*out)[0].data<int64_t>()[0], 4);
    EXPECT_EQ((*out)[0].data<int64_t>()[1], 6);
  }
}

}  // namespace
}  // namespace tfjit
