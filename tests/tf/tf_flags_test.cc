// TF_XLA_FLAGS and XLA_FLAGS (include/tfjit/session.h, SessionOptionsFromEnvironment): each
// switch changes the options it should, malformed values are INVALID_ARGUMENT naming the
// variable and flag, other TF flags are ignored; the cluster-size limits and the XLA dumps
// take effect in a session. Also RunOptions::profile.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

std::string Graph(const std::string& name) {
  return (std::filesystem::path(TFJIT_SOURCE_DIR) / "tests" / "tf" / "graphs" / name).string();
}

TEST(TfFlagsTest, AutoJitLevels) {
  for (const auto& [flag, mode] : std::vector<std::pair<std::string, JitMode>>{
           {"--tf_xla_auto_jit=2", JitMode::kAuto},
           {"--tf_xla_auto_jit=1", JitMode::kAuto},
           {"--tf_xla_auto_jit=single-gpu(2)", JitMode::kAuto},
           {"--tf_xla_auto_jit=0", JitMode::kOff},
           {"--tf_xla_auto_jit=-1", JitMode::kOff},
           {"--tf_xla_cpu_global_jit", JitMode::kAuto},
           {"--tf_xla_cpu_global_jit=false", JitMode::kNone}}) {
    SessionOptions base;
    base.jit = JitMode::kNone;  // to see what the flag changes
    auto options = ApplyTfFlags(base, flag, "");
    ASSERT_TRUE(options.ok()) << flag << ": " << options.status();
    EXPECT_EQ(options->jit, mode) << flag;
  }
}

TEST(TfFlagsTest, ClusterSizesAndDumps) {
  auto options = ApplyTfFlags({}, " --tf_xla_min_cluster_size=4\t--tf_xla_max_cluster_size=9 ",
                              "--xla_dump_to=/tmp/d");
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->min_cluster_size, 4);
  EXPECT_EQ(options->max_cluster_size, 9);
  EXPECT_EQ(options->dump_dir, "/tmp/d");
  EXPECT_EQ(options->dump_hlo_pass_regex, ".*");  // XLA dumps every pass by default
  options = ApplyTfFlags({}, "", "--xla_dump_to=/tmp/d --xla_dump_hlo_pass_re=fusion|cse");
  ASSERT_TRUE(options.ok());
  EXPECT_EQ(options->dump_hlo_pass_regex, "fusion|cse");
  // Unknown TF flags are ignored (with a warning); nothing changes.
  options = ApplyTfFlags({}, "--tf_xla_enable_lazy_compilation=false", "--xla_gpu_autotune=0");
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->jit, SessionOptions().jit);
}

TEST(TfFlagsTest, MalformedFlagsNameTheVariableAndFlag) {
  struct Case {
    std::string tf, xla, message;
  };
  for (const Case& c : {Case{"--tf_xla_auto_jit=3", "", "TF_XLA_FLAGS: --tf_xla_auto_jit takes"},
                        Case{"--tf_xla_min_cluster_size=0", "", "--tf_xla_min_cluster_size takes"},
                        Case{"tf_xla_auto_jit=2", "", "TF_XLA_FLAGS: 'tf_xla_auto_jit=2' is not"},
                        Case{"--tf_xla_cpu_global_jit=maybe", "", "takes true or false"},
                        Case{"", "--xla_dump_to", "XLA_FLAGS: --xla_dump_to takes a directory"},
                        Case{"", "--xla_backend_optimization_level=4",
                             "XLA_FLAGS: --xla_backend_optimization_level takes 0, 1, 2 or 3"},
                        Case{"", "--xla_backend_optimization_level=-1",
                             "--xla_backend_optimization_level takes an integer >= 0"}}) {
    auto options = ApplyTfFlags({}, c.tf, c.xla);
    ASSERT_FALSE(options.ok()) << c.tf << c.xla;
    EXPECT_EQ(options.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_TRUE(absl::StrContains(options.status().message(), c.message))
        << options.status().message();
  }
}

// --xla_backend_optimization_level reaches LLVM: level 0 and level 3 compile different code
// (their LLVM IR dumps differ) that computes the same values.
TEST(TfFlagsTest, BackendOptimizationLevelApplies) {
  auto parsed = ApplyTfFlags({}, "", "--xla_backend_optimization_level=1");
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(parsed->backend_optimization_level, 1);
  EXPECT_EQ(SessionOptions().backend_optimization_level, 3);
  auto run = [](int level, std::string* ir) {
    const std::string dir = testing::TestTempDir() + "/opt_level_" + std::to_string(level);
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    auto options = ApplyTfFlags(
        {}, "",
        "--xla_dump_to=" + dir + " --xla_dump_hlo_pass_re=none --xla_backend_optimization_level=" +
            std::to_string(level));
    EXPECT_TRUE(options.ok()) << options.status();
    auto session = Session::Load(Graph("matmul.pbtxt"), *options);
    EXPECT_TRUE(session.ok()) << session.status();
    std::vector<std::pair<std::string, Tensor>> feeds;
    for (const InputInfo& in : (*session)->Inputs()) {
      Tensor t(in.dtype, in.dims);
      float* p = t.data<float>();
      for (int64_t i = 0; i < t.num_elements(); ++i)
        p[i] = 0.25f * static_cast<float>(i % 7) - 0.5f;
      feeds.emplace_back(in.name, t);
    }
    RunStats stats;
    auto out = (*session)->Run(feeds, (*session)->DefaultFetches(), &stats);
    EXPECT_TRUE(out.ok()) << out.status();
    EXPECT_GT(stats.nodes_compiled, 0);
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
      if (absl::EndsWith(entry.path().string(), ".ll")) {
        std::ifstream in(entry.path());
        ir->append(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
      }
    }
    return out.ok() ? *out : std::vector<Tensor>{};
  };
  std::string ir0, ir3;
  const std::vector<Tensor> at0 = run(0, &ir0), at3 = run(3, &ir3);
  ASSERT_FALSE(ir0.empty());
  ASSERT_FALSE(ir3.empty());
  EXPECT_TRUE(ir0 != ir3) << "level 0 and level 3 dumped the same LLVM IR";
  ASSERT_EQ(at0.size(), at3.size());
  ASSERT_FALSE(at0.empty());
  for (size_t k = 0; k < at0.size(); ++k) {
    ASSERT_EQ(at0[k].ShapeString(), at3[k].ShapeString());
    for (int64_t i = 0; i < at0[k].num_elements(); ++i) {
      const float a = at0[k].data<float>()[i], b = at3[k].data<float>()[i];
      EXPECT_NEAR(a, b, 1e-5f * std::max(1.0f, std::abs(a))) << "output " << k << " element " << i;
    }
  }
  SessionOptions bad;
  bad.backend_optimization_level = 4;
  auto refused = Session::Load(Graph("matmul.pbtxt"), bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_TRUE(absl::StrContains(refused.status().message(), "backend_optimization_level"));
}

// In a session: a minimum cluster size above the graph's largest cluster compiles nothing; a
// maximum of 1 splits the clusters into single nodes.
TEST(TfFlagsTest, ClusterSizeLimitsApply) {
  auto run = [](const SessionOptions& options) {
    auto session = Session::Load(Graph("matmul.pbtxt"), options);
    EXPECT_TRUE(session.ok()) << session.status();
    std::vector<std::pair<std::string, Tensor>> feeds;
    for (const InputInfo& in : (*session)->Inputs())
      feeds.emplace_back(in.name, Tensor(in.dtype, in.dims));
    RunStats stats;
    auto out = (*session)->Run(feeds, (*session)->DefaultFetches(), &stats);
    EXPECT_TRUE(out.ok()) << out.status();
    return stats;
  };
  SessionOptions options;
  const RunStats all = run(options);
  ASSERT_GT(all.nodes_compiled, 2);
  options.min_cluster_size = 1000;
  EXPECT_EQ(run(options).nodes_compiled, 0);
  options.min_cluster_size = 1;
  options.max_cluster_size = 1;
  const RunStats split = run(options);
  EXPECT_GT(split.clusters, all.clusters);
  EXPECT_EQ(split.clusters, split.nodes_compiled);  // one node each
}

// XLA_FLAGS-style dumps: the HLO after each matching pass and the LLVM IR.
TEST(TfFlagsTest, DumpsEachMatchingPassAndTheLlvmIr) {
  const std::string dir = testing::TestTempDir() + "/xla_dump";
  std::filesystem::create_directories(dir);
  auto options = ApplyTfFlags({}, "", "--xla_dump_to=" + dir + " --xla_dump_hlo_pass_re=fusion");
  ASSERT_TRUE(options.ok());
  auto session = Session::Load(Graph("matmul.pbtxt"), *options);
  ASSERT_TRUE(session.ok()) << session.status();
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (const InputInfo& in : (*session)->Inputs())
    feeds.emplace_back(in.name, Tensor(in.dtype, in.dims));
  ASSERT_TRUE((*session)->Run(feeds, (*session)->DefaultFetches()).ok());
  int fusion = 0, before = 0, other_pass = 0, ir = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    if (absl::EndsWith(name, "_fusion.hlo")) {
      ++fusion;
    } else if (absl::EndsWith(name, ".00_before_optimizations.hlo")) {
      ++before;  // the lowered module, which every dump starts with
    } else if (absl::StrContains(name, "_") && absl::EndsWith(name, ".hlo") &&
               absl::StrContains(name, ".0")) {
      ++other_pass;
    }
    if (absl::EndsWith(name, ".ll")) ++ir;
  }
  EXPECT_GT(fusion, 0);
  EXPECT_GT(before, 0);
  EXPECT_GT(ir, 0);
  EXPECT_EQ(other_pass, 0) << "only the fusion pass matches";
  // With a disk cache that already holds the module, a dump still compiles and writes the IR
  // (a cache hit would skip it).
  const std::string cache = testing::TestTempDir() + "/xla_dump_cache";
  const std::string again = testing::TestTempDir() + "/xla_dump_again";
  std::filesystem::create_directories(again);
  for (const std::string& to : {dir, again}) {
    SessionOptions cached = *options;
    cached.dump_dir = to;
    cached.compile_cache_dir = cache;
    auto s = Session::Load(Graph("matmul.pbtxt"), cached);
    ASSERT_TRUE(s.ok()) << s.status();
    ASSERT_TRUE((*s)->Run(feeds, (*s)->DefaultFetches()).ok());
  }
  int again_ir = 0;
  for (const auto& entry : std::filesystem::directory_iterator(again)) {
    if (absl::EndsWith(entry.path().string(), ".ll")) ++again_ir;
  }
  EXPECT_GT(again_ir, 0) << "a warm disk cache swallowed the LLVM IR dump";
  SessionOptions bad;
  bad.dump_dir = dir;
  bad.dump_hlo_pass_regex = "(";
  auto refused = Session::Load(Graph("matmul.pbtxt"), bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace tfjit

namespace tfjit {
namespace {

// RunOptions::profile: every unit that ran, once per name, slowest first, clusters marked
// compiled with their kernels, bytes counted; without it, nothing is recorded.
TEST(ProfileTest, RecordsEveryUnitOfTheRun) {
  for (JitMode mode : {JitMode::kAuto, JitMode::kNone}) {
    SessionOptions options;
    options.jit = mode;
    auto session = Session::Load(Graph("matmul.pbtxt"), options);
    ASSERT_TRUE(session.ok()) << session.status();
    std::vector<std::pair<std::string, Tensor>> feeds;
    for (const InputInfo& in : (*session)->Inputs())
      feeds.emplace_back(in.name, Tensor(in.dtype, in.dims));
    RunStats plain;
    ASSERT_TRUE((*session)->Run(feeds, (*session)->DefaultFetches(), &plain).ok());
    EXPECT_TRUE(plain.profile.empty());
    RunOptions run_options;
    run_options.profile = true;
    RunStats stats;
    ASSERT_TRUE((*session)->Run(run_options, feeds, (*session)->DefaultFetches(), {}, &stats).ok());
    ASSERT_FALSE(stats.profile.empty());
    int clusters = 0;
    int64_t kernel_flops = 0;
    for (size_t i = 0; i < stats.profile.size(); ++i) {
      const UnitProfile& p = stats.profile[i];
      // A compiled cluster's kernels: slowest first, inside the cluster's time; their dots'
      // flops add up to the run's (no loops here, so each counts once).
      EXPECT_EQ(p.compiled, !p.kernels.empty()) << p.name;
      double kernels_ms = 0;
      for (size_t k = 0; k < p.kernels.size(); ++k) {
        if (k > 0) {
          EXPECT_LE(p.kernels[k].ms, p.kernels[k - 1].ms);
        }
        EXPECT_EQ(p.kernels[k].calls, 1) << p.kernels[k].name;
        EXPECT_FALSE(p.kernels[k].ops.empty()) << p.kernels[k].name;
        kernels_ms += p.kernels[k].ms;
        kernel_flops += p.kernels[k].flops;
      }
      EXPECT_LE(kernels_ms, p.ms) << p.name;
      if (i > 0) {
        EXPECT_LE(p.ms, stats.profile[i - 1].ms);
      }
      EXPECT_EQ(p.calls, 1) << p.name;
      clusters += p.compiled;
      EXPECT_EQ(p.compiled, p.kind == "cluster") << p.name;
      if (p.name == "mm/plain") {  // a 5x7 by 7x3 MatMul, uncompiled
        EXPECT_EQ(p.input_bytes, (5 * 7 + 7 * 3) * 4);
        EXPECT_EQ(p.output_bytes, 5 * 3 * 4);
      }
    }
    EXPECT_EQ(clusters, stats.clusters) << JitModeName(mode);
    EXPECT_EQ(kernel_flops, stats.flops) << JitModeName(mode);
    if (mode == JitMode::kAuto) {
      EXPECT_EQ(stats.flops, 4 * 2 * 5 * 3 * 7);  // the four 5x7 by 7x3 MatMuls
    }
  }
}

}  // namespace
}  // namespace tfjit

namespace tfjit {
namespace {

// SessionOptions::show_compile_progress: a compile longer than the threshold (0 ms here,
// TFJIT_PROGRESS_AFTER_MS) announces itself on stderr and its end; off, nothing is printed.
TEST(CompileProgressTest, LongCompilesSaySoOnlyWhenAsked) {
  setenv("TFJIT_PROGRESS_AFTER_MS", "0", 1);
  for (bool show : {true, false}) {
    SessionOptions options;
    options.show_compile_progress = show;
    auto session = Session::Load(Graph("matmul.pbtxt"), options);
    ASSERT_TRUE(session.ok());
    std::vector<std::pair<std::string, Tensor>> feeds;
    for (const InputInfo& in : (*session)->Inputs())
      feeds.emplace_back(in.name, Tensor(in.dtype, in.dims));
    ::testing::internal::CaptureStderr();
    auto out = (*session)->Run(feeds, (*session)->DefaultFetches());
    const std::string err = ::testing::internal::GetCapturedStderr();
    ASSERT_TRUE(out.ok());
    EXPECT_EQ(absl::StrContains(err, "tfjit: compiling cluster_"), show) << err;
    EXPECT_EQ(absl::StrContains(err, "tfjit: ... done in "), show) << err;
  }
  unsetenv("TFJIT_PROGRESS_AFTER_MS");
}

}  // namespace
}  // namespace tfjit
