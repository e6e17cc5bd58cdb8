// Session-level tests: errors a user can cause (files, graphs, feeds, fetches, devices) end in
// a precise absl::Status, and concurrent Runs agree.
#include <atomic>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include "absl/strings/match.h"
#include "backends/gpu/gpu_backend.h"
#include "core/status.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

using ::tfjit::testing::WriteTempFile;

std::string Graph(const std::string& name) {
  return (std::filesystem::path(TFJIT_SOURCE_DIR) / "tests" / "tf" / "graphs" / name).string();
}

void ExpectError(const absl::Status& s, absl::StatusCode code, const std::string& substring) {
  EXPECT_EQ(s.code(), code) << StatusToString(s);
  EXPECT_TRUE(absl::StrContains(s.message(), substring))
      << "message: " << s.message() << "\nexpected to contain: " << substring;
}

TEST(SessionTest, JitModeSpellingsRoundTrip) {
  const std::vector<std::pair<JitMode, std::string>> spellings = {{JitMode::kNone, "none"},
                                                                  {JitMode::kOff, "off"},
                                                                  {JitMode::kAuto, "auto"},
                                                                  {JitMode::kAll, "all"}};
  for (const auto& [mode, text] : spellings) {
    EXPECT_EQ(JitModeName(mode), text);
    StatusOr<JitMode> parsed = ParseJitMode(text);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed, mode) << text;
  }
  StatusOr<JitMode> bad = ParseJitMode("fast");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(bad.status().message(), "none, off, auto, all")) << bad.status();
}

TEST(SessionTest, MissingFileIsNotFound) {
  const std::string path =
      (std::filesystem::path(::tfjit::testing::TestTempDir()) / "no_such_dir" / "model.pb")
          .string();
  auto s = Session::Load(path);
  ExpectError(s.status(), absl::StatusCode::kNotFound, path);
}

TEST(SessionTest, GarbageFileIsInvalidArgument) {
  auto s = Session::Load(WriteTempFile("tfjit_garbage.pb", std::string("\xff\x01\x02garbage", 10)));
  ExpectError(s.status(), absl::StatusCode::kInvalidArgument, "tfjit_garbage.pb");
}

TEST(SessionTest, UnknownOpsAreListedTogether) {
  const std::string path = WriteTempFile("tfjit_unknown.pbtxt", R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "a" op: "FancyOp" input: "x" }
    node { name: "b" op: "OtherOp" input: "a" }
  )pb");
  auto s = Session::Load(path);
  ExpectError(s.status(), absl::StatusCode::kUnimplemented, "FancyOp");
  EXPECT_TRUE(absl::StrContains(s.status().message(), "OtherOp")) << s.status();
}

TEST(SessionTest, FeedErrors) {
  auto session = Session::Load(Graph("matmul.pbtxt"));
  ASSERT_TRUE(session.ok()) << session.status();
  Tensor good(DType::kFloat32, {5, 7});
  // Wrong dtype.
  auto r = (*session)->Run({{"a", Tensor(DType::kInt32, {5, 7})}}, {"mm/plain"});
  ExpectError(r.status(), absl::StatusCode::kInvalidArgument, "expected dtype float32");
  // Wrong shape.
  r = (*session)->Run(
      {{"a", Tensor(DType::kFloat32, {5, 8})}, {"b", Tensor(DType::kFloat32, {7, 3})}},
      {"mm/plain"});
  ExpectError(r.status(), absl::StatusCode::kInvalidArgument, "placeholder shape is [5,7]");
  // Unfed placeholder.
  r = (*session)->Run({{"a", good}}, {"mm/plain"});
  ExpectError(r.status(), absl::StatusCode::kInvalidArgument,
              "You must feed a value for placeholder tensor 'b'");
  // Unknown fetch.
  r = (*session)->Run({{"a", good}}, {"no_such_node"});
  ExpectError(r.status(), absl::StatusCode::kNotFound, "no_such_node");
}

// One run asked with its feeds and fetches in another order finds the same plan, with its
// shape history: after batch sizes 1 and 2 (a static and a symbolic executable), batch 3 asked
// in the other order compiles nothing (a plan of its own would start over with a static
// compile), and the answers come in the order asked.
TEST(SessionTest, FeedAndFetchOrderShareOnePlan) {
  constexpr char kGraph[] = R"pb(
    node { name: "a" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: -1 } } } } }
    node { name: "b" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } }
           attr { key: "shape" value { shape { dim { size: -1 } } } } }
    node { name: "sum" op: "AddV2" input: "a" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "diff" op: "Sub" input: "a" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
  )pb";
  auto session = Session::Load(WriteTempFile("feed_order.pbtxt", kGraph));
  ASSERT_TRUE(session.ok()) << session.status();
  auto column = [](int64_t n, float v) {
    return Tensor::FromVector<float>(DType::kFloat32, {n}, std::vector<float>(n, v));
  };
  int compiles = 0;
  for (int64_t n : {1, 2}) {
    RunStats stats;
    auto out = (*session)->Run({{"a", column(n, 7)}, {"b", column(n, 2)}}, {"sum", "diff"}, &stats);
    ASSERT_TRUE(out.ok()) << out.status();
    EXPECT_EQ((*out)[0].data<float>()[0], 9.0f);  // sum
    EXPECT_EQ((*out)[1].data<float>()[0], 5.0f);  // diff
    compiles += static_cast<int>(stats.compiles.size());
  }
  EXPECT_GT(compiles, 0);
  RunStats stats;
  auto out = (*session)->Run({{"b", column(3, 2)}, {"a", column(3, 7)}}, {"diff", "sum"}, &stats);
  ASSERT_TRUE(out.ok()) << out.status();
  EXPECT_TRUE(stats.compiles.empty()) << stats.compiles.size() << " compiles";
  EXPECT_EQ((*out)[0].data<float>()[2], 5.0f);  // diff
  EXPECT_EQ((*out)[1].data<float>()[2], 9.0f);  // sum
}

TEST(SessionTest, MissingDevicesFailPrecondition) {
  SessionOptions options;
  options.device = "GPU:0";
  std::string why;
  if (gpu::VisibleGpuCount(&why) == 0) {
    // Without a driver or a GPU, the error says which is missing.
    ExpectError(Session::Load(Graph("matmul.pbtxt"), options).status(),
                absl::StatusCode::kFailedPrecondition, "GPU:0 does not exist: " + why);
  }
  options.device = "GPU:7";
  ExpectError(Session::Load(Graph("matmul.pbtxt"), options).status(),
              absl::StatusCode::kFailedPrecondition, "GPU:7 does not exist: ");
  options.device = "cpu:1";
  ExpectError(Session::Load(Graph("matmul.pbtxt"), options).status(),
              absl::StatusCode::kFailedPrecondition, "--logical-cpus 2");
  options.logical_cpus = 2;
  EXPECT_TRUE(Session::Load(Graph("matmul.pbtxt"), options).ok());
  options.device = "tpu:0";
  ExpectError(Session::Load(Graph("matmul.pbtxt"), options).status(),
              absl::StatusCode::kInvalidArgument, "invalid device name 'tpu:0'");
}

TEST(SessionTest, ConcurrentRunsAgree) {
  auto session = Session::Load(Graph("elementwise.pbtxt"));
  ASSERT_TRUE(session.ok()) << session.status();
  Tensor x(DType::kFloat32, {3, 17}), y(DType::kFloat32, {17});
  for (int i = 0; i < 51; ++i) x.data<float>()[i] = 0.01f * i - 0.2f;
  for (int i = 0; i < 17; ++i) y.data<float>()[i] = 0.3f - 0.02f * i;
  auto reference = (*session)->Run({{"x", x}, {"y", y}}, {"out/a", "out/f"});
  ASSERT_TRUE(reference.ok()) << reference.status();
  std::vector<std::thread> threads;
  std::atomic<int> mismatches{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int k = 0; k < 10; ++k) {
        auto r = (*session)->Run({{"x", x}, {"y", y}}, {"out/a", "out/f"});
        if (!r.ok()) {
          mismatches++;
          continue;
        }
        for (size_t i = 0; i < r->size(); ++i) {
          if (std::memcmp((*r)[i].raw_data(), (*reference)[i].raw_data(), (*r)[i].byte_size()) !=
              0) {
            mismatches++;
          }
        }
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(mismatches.load(), 0);
}

TEST(SessionTest, CompileCacheHitsOnSecondRun) {
  auto session = Session::Load(Graph("reductions.pbtxt"));
  ASSERT_TRUE(session.ok());
  Tensor x(DType::kFloat32, {4, 1, 33});
  RunStats first, second;
  ASSERT_TRUE((*session)->Run({{"x", x}}, {"r/sum"}, &first).ok());
  ASSERT_TRUE((*session)->Run({{"x", x}}, {"r/sum"}, &second).ok());
  EXPECT_EQ(first.cache_hits, 0);
  EXPECT_GT(first.compile_ms, 0);
  EXPECT_EQ(second.cache_hits, second.clusters);
  EXPECT_EQ(second.compile_ms, 0);
}

// SessionOptions::compile_cache_dir: a second session (as a second process would) loads the
// compiled clusters from disk and gives the same bits.
TEST(SessionTest, DiskCacheServesALaterSession) {
  const std::string dir = ::tfjit::testing::TestTempDir() + "/session_disk_cache";
  std::filesystem::remove_all(dir);
  SessionOptions options;
  options.compile_cache_dir = dir;
  Tensor x(DType::kFloat32, {3, 17}), y(DType::kFloat32, {17});
  for (int i = 0; i < 51; ++i) x.data<float>()[i] = 0.03f * i - 0.7f;
  for (int i = 0; i < 17; ++i) y.data<float>()[i] = 0.5f - 0.04f * i;
  std::vector<Tensor> outputs[2];
  RunStats stats[2];
  for (int s = 0; s < 2; ++s) {
    auto session = Session::Load(Graph("elementwise.pbtxt"), options);
    ASSERT_TRUE(session.ok()) << session.status();
    auto r = (*session)->Run({{"x", x}, {"y", y}}, {"out/a", "out/f"}, &stats[s]);
    ASSERT_TRUE(r.ok()) << r.status();
    outputs[s] = std::move(*r);
  }
  ASSERT_GT(stats[0].clusters, 0);
  EXPECT_EQ(stats[0].disk_cache_hits, 0);
  EXPECT_EQ(stats[1].disk_cache_hits, stats[1].clusters);
  ASSERT_EQ(outputs[0].size(), outputs[1].size());
  for (size_t i = 0; i < outputs[0].size(); ++i) {
    ASSERT_EQ(outputs[0][i].byte_size(), outputs[1][i].byte_size());
    EXPECT_EQ(
        std::memcmp(outputs[0][i].raw_data(), outputs[1][i].raw_data(), outputs[0][i].byte_size()),
        0);
  }
  // Without the option (and TFJIT_CACHE_DIR unset, as under ctest) nothing is loaded.
  if (std::getenv("TFJIT_CACHE_DIR") == nullptr) {
    auto session = Session::Load(Graph("elementwise.pbtxt"));
    ASSERT_TRUE(session.ok());
    RunStats plain;
    ASSERT_TRUE((*session)->Run({{"x", x}, {"y", y}}, {"out/a", "out/f"}, &plain).ok());
    EXPECT_EQ(plain.disk_cache_hits, 0);
  }
}

TEST(SessionTest, ExplainNamesClustersAndReasons) {
  SessionOptions options;
  options.jit = JitMode::kAuto;
  auto session = Session::Load(
      (std::filesystem::path(TFJIT_SOURCE_DIR) / "examples" / "models" / "demo_mlp.pbtxt").string(),
      options);
  ASSERT_TRUE(session.ok()) << session.status();
  auto report = (*session)->Explain((*session)->DefaultFetches());
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(absl::StrContains(*report, "2 cluster(s)")) << *report;
  EXPECT_TRUE(absl::StrContains(*report, "'dense/check' (CheckNumerics)")) << *report;
}

// Explain also reports inside function bodies: the body's own jit mode (a jit function is
// "all" even under --jit off), its device, its clusters, and why a body cannot compile.
TEST(SessionTest, ExplainDescendsIntoFunctionBodies) {
  SessionOptions options;
  options.jit = JitMode::kOff;
  const auto functions = std::filesystem::path(TFJIT_SOURCE_DIR) / "tests" / "tf" / "functions";
  auto session = Session::Load((functions / "jit_function.pbtxt").string(), options);
  ASSERT_TRUE(session.ok()) << session.status();
  auto report = (*session)->Explain({"post"});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(absl::StrContains(*report,
                                "function '__inference_f_12' called by "
                                "'StatefulPartitionedCall' (StatefulPartitionedCall) on "
                                "/job:localhost/replica:0/task:0/device:CPU:0:"))
      << *report;
  EXPECT_TRUE(absl::StrContains(*report, "    jit mode: all, 1 cluster(s)")) << *report;
  auto bad = Session::Load((functions / "check_numerics.pbtxt").string(), options);
  ASSERT_TRUE(bad.ok()) << bad.status();
  report = (*bad)->Explain({"Identity"});
  ASSERT_TRUE(report.ok()) << report.status();
  EXPECT_TRUE(absl::StrContains(*report,
                                "does not compile: INVALID_ARGUMENT: Detected "
                                "unsupported operations"))
      << *report;
}

// A NoOp that orders two computations (tf.group's control edges) stays out of the
// must-compile cluster; the compiled nodes must not form one cluster around it (that would
// be a cycle cluster -> NoOp -> cluster, and nothing would run).
TEST(SessionTest, MustCompileAroundAGroupNoOpRunsEverything) {
  const std::string path = WriteTempFile("tfjit_group_noop.pbtxt", R"pb(
    node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
    node { name: "a" op: "Exp" input: "x" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "group" op: "NoOp" input: "^a" }
    node { name: "b" op: "Neg" input: "x" input: "^group" attr { key: "T" value { type: DT_FLOAT } } }
    node { name: "c" op: "AddV2" input: "a" input: "b" attr { key: "T" value { type: DT_FLOAT } } }
  )pb");
  SessionOptions options;
  options.jit = JitMode::kAll;
  auto session = Session::Load(path, options);
  ASSERT_TRUE(session.ok()) << session.status();
  auto out = (*session)->Run(
      {{"x", Tensor::FromVector(DType::kFloat32, {2}, std::vector<float>{0.0f, 1.0f})}}, {"c"});
  ASSERT_TRUE(out.ok()) << StatusToString(out.status());
  EXPECT_FLOAT_EQ((*out)[0].data<float>()[0], 1.0f);
  EXPECT_FLOAT_EQ((*out)[0].data<float>()[1], std::exp(1.0f) - 1.0f);
}

}  // namespace
}  // namespace tfjit
