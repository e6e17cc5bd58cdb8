// TF functions through the Session: tf.function(jit_compile=True) graphs as TF 2.x exports
// them (StatefulPartitionedCall + library FunctionDef with _XlaMustCompile), in every jit mode.
#include <atomic>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_replace.h"
#include "core/status.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

using ::tfjit::testing::WriteTempFile;

std::string FunctionGraph(const std::string& name) {
  return (std::filesystem::path(TFJIT_SOURCE_DIR) / "tests" / "tf" / "functions" / name).string();
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::unique_ptr<Session> Load(const std::string& path, JitMode mode) {
  SessionOptions options;
  options.jit = mode;
  auto session = Session::Load(path, options);
  EXPECT_TRUE(session.ok()) << StatusToString(session.status());
  return session.ok() ? std::move(*session) : nullptr;
}

const std::vector<float> kX = {0.5f, -1.0f, 2.0f, 0.25f, 3.0f, -0.75f};
const std::vector<float> kY = {1.5f, 0.5f, -2.0f, 4.0f, 0.1f, 1.0f};

std::vector<std::pair<std::string, Tensor>> Feeds() {
  return {{"x", Tensor::FromVector(DType::kFloat32, {2, 3}, kX)},
          {"y", Tensor::FromVector(DType::kFloat32, {2, 3}, kY)}};
}

void ExpectNear(const Tensor& t, const std::vector<float>& want, const std::string& what) {
  ASSERT_EQ(t.dtype(), DType::kFloat32) << what;
  ASSERT_EQ(t.num_elements(), static_cast<int64_t>(want.size())) << what;
  for (size_t i = 0; i < want.size(); ++i) {
    EXPECT_NEAR(t.data<float>()[i], want[i], 1e-5 * std::max(1.0f, std::fabs(want[i])))
        << what << " element " << i;
  }
}

// post = tanh(2x*y) + 2x - y, rowsum = sum over rows of 2x*y, direct:0 = tanh(2x*y) + 2x.
TEST(FunctionTest, JitFunctionAgreesWithHandComputedValuesInEveryMode) {
  std::vector<float> post, direct, rowsum = {0, 0};
  for (size_t i = 0; i < kX.size(); ++i) {
    const float pre = 2 * kX[i];
    const float mul = pre * kY[i];
    direct.push_back(std::tanh(mul) + pre);
    post.push_back(direct.back() - kY[i]);
    rowsum[i / 3] += mul;
  }
  for (JitMode mode : {JitMode::kNone, JitMode::kOff, JitMode::kAuto, JitMode::kAll}) {
    SCOPED_TRACE(JitModeName(mode));
    auto session = Load(FunctionGraph("jit_function.pbtxt"), mode);
    ASSERT_NE(session, nullptr);
    RunStats stats;
    auto out = session->Run(Feeds(), {"post", "rowsum", "direct:0", "direct:1"}, &stats);
    ASSERT_TRUE(out.ok()) << StatusToString(out.status());
    ExpectNear((*out)[0], post, "post");
    ExpectNear((*out)[1], rowsum, "rowsum");
    ExpectNear((*out)[2], direct, "direct:0");
    ExpectNear((*out)[3], rowsum, "direct:1");
    if (mode == JitMode::kNone) {
      // none ignores _XlaMustCompile: nothing compiles.
      EXPECT_EQ(stats.clusters, 0);
      EXPECT_EQ(stats.nodes_compiled, 0);
    } else {
      // off still compiles the must-compile function: one cluster per call (two calls), and
      // the nested clusters count in the outer run's stats.
      EXPECT_GE(stats.clusters, 2);
      EXPECT_GE(stats.nodes_compiled, 2 * 5);
    }
    EXPECT_GE(stats.nodes_total, stats.nodes_compiled);
    // A second run hits the caches (bodies and executables) and gives the same values.
    auto again = session->Run(Feeds(), {"post"}, &stats);
    ASSERT_TRUE(again.ok()) << StatusToString(again.status());
    ExpectNear((*again)[0], post, "post (second run)");
    if (mode != JitMode::kNone) {
      EXPECT_GE(stats.cache_hits, 1);
    }
  }
}

TEST(FunctionTest, MustCompileFunctionWithCheckNumericsFailsLikeTf) {
  for (JitMode mode : {JitMode::kOff, JitMode::kAuto, JitMode::kAll}) {
    SCOPED_TRACE(JitModeName(mode));
    auto session = Load(FunctionGraph("check_numerics.pbtxt"), mode);
    ASSERT_NE(session, nullptr);
    auto out = session->Run(
        {{"x", Tensor::FromVector(DType::kFloat32, {4}, std::vector<float>{0, 1, 2, 3})}},
        {"Identity"});
    ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument)
        << StatusToString(out.status());
    EXPECT_TRUE(absl::StartsWith(out.status().message(),
                                 "Detected unsupported operations when trying to compile graph "
                                 "__inference_f_12 on "
                                 "/job:localhost/replica:0/task:0/device:CPU:0"))
        << out.status().message();
    EXPECT_TRUE(absl::StrContains(out.status().message(), "CheckNumerics")) << out.status();
    EXPECT_TRUE(absl::StrContains(out.status().message(),
                                  "in function '__inference_f_12' called by node "
                                  "'StatefulPartitionedCall'"))
        << out.status();
  }
}

TEST(FunctionTest, CheckNumericsRunsUncompiledWithoutMustCompile) {
  const std::string text = ReadFile(FunctionGraph("check_numerics.pbtxt"));
  const std::string no_must =
      absl::StrReplaceAll(text, {{"key: \"_XlaMustCompile\" value { b: true }",
                                  "key: \"_XlaMustCompile\" value { b: false }"}});
  ASSERT_NE(text, no_must);
  const std::vector<float> x = {0, 1, 2, 3};
  const std::string marked = FunctionGraph("check_numerics.pbtxt");
  for (const std::string& path :
       {WriteTempFile("tfjit_fn_no_must_compile.pbtxt", no_must), marked}) {
    // _XlaMustCompile: false never compiles, even in auto/all; jit none ignores `true`.
    const bool marked_true = path == marked;
    for (JitMode mode : marked_true
                            ? std::vector<JitMode>{JitMode::kNone}
                            : std::vector<JitMode>{JitMode::kOff, JitMode::kAuto, JitMode::kAll}) {
      SCOPED_TRACE(std::string(JitModeName(mode)) + " " + path);
      auto session = Load(path, mode);
      ASSERT_NE(session, nullptr);
      RunStats stats;
      auto out =
          session->Run({{"x", Tensor::FromVector(DType::kFloat32, {4}, x)}}, {"Identity"}, &stats);
      ASSERT_TRUE(out.ok()) << StatusToString(out.status());
      ExpectNear((*out)[0], {1.0f, std::exp(1.0f), std::exp(2.0f), std::exp(3.0f)}, "exp");
      // Nothing of the body compiles; in kAll only the outer Identity does.
      EXPECT_EQ(stats.nodes_compiled, mode == JitMode::kAll ? 1 : 0);
      // The uncompiled CheckNumerics still checks: exp(100) overflows float32.
      auto bad = session->Run(
          {{"x", Tensor::FromVector(DType::kFloat32, {4}, std::vector<float>{0, 100, 0, 0})}},
          {"Identity"});
      ASSERT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument)
          << StatusToString(bad.status());
      EXPECT_TRUE(absl::StrContains(bad.status().message(), "exp overflowed")) << bad.status();
      EXPECT_TRUE(absl::StrContains(bad.status().message(), "in function '__inference_f_12'"))
          << bad.status();
    }
  }
}

TEST(FunctionTest, NestedCallsCompileInsideMustCompileCaller) {
  const std::vector<float> x = {1.5f, -2.0f, 0.5f};
  for (JitMode mode : {JitMode::kNone, JitMode::kOff, JitMode::kAuto, JitMode::kAll}) {
    SCOPED_TRACE(JitModeName(mode));
    auto session = Load(FunctionGraph("nested.pbtxt"), mode);
    ASSERT_NE(session, nullptr);
    RunStats stats;
    auto out =
        session->Run({{"x", Tensor::FromVector(DType::kFloat32, {3}, x)}}, {"Identity"}, &stats);
    ASSERT_TRUE(out.ok()) << StatusToString(out.status());
    ExpectNear((*out)[0], {1.5f * 1.5f + 1, 4.0f + 1, 0.25f + 1}, "Identity");
    if (mode == JitMode::kNone) {
      EXPECT_EQ(stats.clusters, 0);
    } else {
      // The inner call is inlined into the must-compile outer body: its mul and the outer
      // add compile as one cluster (--jit all compiles the top-level Identity as well).
      EXPECT_EQ(stats.clusters, mode == JitMode::kAll ? 2 : 1);
    }
  }
}

// A TensorList made in a jit function and written by a function it calls: the call is inlined
// into the compiled body (as XLA does), so the list never crosses the compiled boundary and
// known issue B does not apply. Every mode gives [x, 2x]; the uncompiled run is the reference.
TEST(FunctionTest, ListPassesBetweenNestedFunctionsOfAJitFunction) {
  const std::vector<float> x = {1.5f, -2.0f, 0.5f};
  for (JitMode mode : {JitMode::kNone, JitMode::kOff, JitMode::kAuto, JitMode::kAll}) {
    SCOPED_TRACE(JitModeName(mode));
    auto session = Load(FunctionGraph("nested_list.pbtxt"), mode);
    ASSERT_NE(session, nullptr);
    RunStats stats;
    auto out =
        session->Run({{"x", Tensor::FromVector(DType::kFloat32, {3}, x)}}, {"Identity"}, &stats);
    ASSERT_TRUE(out.ok()) << StatusToString(out.status());
    EXPECT_EQ((*out)[0].ShapeString(), "float32[2,3]");
    ExpectNear((*out)[0], {1.5f, -2.0f, 0.5f, 3.0f, -4.0f, 1.0f}, "Identity");
    if (mode != JitMode::kNone) {
      // The outer body with the inlined call is one cluster; --jit all compiles the
      // top-level Identity as well.
      EXPECT_EQ(stats.clusters, mode == JitMode::kAll ? 2 : 1);
      EXPECT_EQ(stats.fallbacks, 0);
    }
  }
}

TEST(FunctionTest, CallToMissingFunctionIsNotFound) {
  const std::string text = absl::StrReplaceAll(
      ReadFile(FunctionGraph("jit_function.pbtxt")),
      {{"func { name: \"__inference_f_12\" }", "func { name: \"__inference_g_99\" }"}});
  auto session = Session::Load(WriteTempFile("tfjit_fn_missing.pbtxt", text));
  ASSERT_EQ(session.status().code(), absl::StatusCode::kNotFound)
      << StatusToString(session.status());
  EXPECT_TRUE(absl::StrContains(session.status().message(), "__inference_g_99"));
  EXPECT_TRUE(absl::StrContains(session.status().message(), "'StatefulPartitionedCall'"));
}

TEST(FunctionTest, RecursionIsInvalidArgument) {
  // The inner function calls the outer one again.
  const std::string text = absl::StrReplaceAll(
      ReadFile(FunctionGraph("nested.pbtxt")),
      {{"input: \"v\" input: \"v\"", "input: \"v\" input: \"again:output:0\""},
       {"node_def { name: \"sq\"",
        "node_def { name: \"again\" op: \"PartitionedCall\" input: \"v\" "
        "attr { key: \"Tin\" value { list { type: DT_FLOAT } } } "
        "attr { key: \"Tout\" value { list { type: DT_FLOAT } } } "
        "attr { key: \"f\" value { func { name: \"__inference_outer_20\" } } } }\n"
        "node_def { name: \"sq\""}});
  auto session = Load(WriteTempFile("tfjit_fn_recursive.pbtxt", text), JitMode::kNone);
  ASSERT_NE(session, nullptr);
  auto out = session->Run({{"x", Tensor(DType::kFloat32, {3})}}, {"Identity"});
  ASSERT_EQ(out.status().code(), absl::StatusCode::kInvalidArgument)
      << StatusToString(out.status());
  EXPECT_TRUE(absl::StrContains(out.status().message(),
                                "function '__inference_outer_20' calls itself "
                                "(__inference_outer_20 -> __inference_inner_10 -> "
                                "__inference_outer_20)"))
      << out.status();
}

TEST(FunctionTest, ExplainSaysWhyCallsStayOut) {
  auto session = Load(FunctionGraph("jit_function.pbtxt"), JitMode::kAuto);
  ASSERT_NE(session, nullptr);
  auto text = session->Explain({"post"});
  ASSERT_TRUE(text.ok()) << StatusToString(text.status());
  EXPECT_TRUE(absl::StrContains(*text,
                                "'StatefulPartitionedCall' (StatefulPartitionedCall): "
                                "function call runs as a unit (must-compile: yes)"))
      << *text;
}

TEST(FunctionTest, ConcurrentRunsShareOneInstance) {
  auto session = Load(FunctionGraph("jit_function.pbtxt"), JitMode::kOff);
  ASSERT_NE(session, nullptr);
  auto reference = session->Run(Feeds(), {"post"});
  ASSERT_TRUE(reference.ok()) << StatusToString(reference.status());
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 5; ++i) {
        auto out = session->Run(Feeds(), {"post", "direct:1"});
        if (!out.ok() || std::memcmp((*out)[0].raw_data(), (*reference)[0].raw_data(),
                                     (*reference)[0].byte_size()) != 0) {
          failures++;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(failures.load(), 0);
}

}  // namespace
}  // namespace tfjit
