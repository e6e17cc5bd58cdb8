// TF-level differential tests: every graph in tests/tf/graphs runs uncompiled (--jit none),
// auto-clustered and fully compiled on the same seeded inputs; the outputs must agree
// (float32 within 1e-5 relative, integers exactly).
#include <filesystem>
#include <string>
#include <vector>

#include "core/dtype.h"
#include "core/status.h"
#include "examples/cli_output.h"
#include "gtest/gtest.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

std::string GraphsDir() {
  return (std::filesystem::path(TFJIT_SOURCE_DIR) / "tests" / "tf" / "graphs").string();
}

std::vector<std::string> GraphFiles() {
  std::vector<std::string> files;
  for (const auto& entry : std::filesystem::directory_iterator(GraphsDir())) {
    if (entry.path().extension() == ".pbtxt") files.push_back(entry.path().filename().string());
  }
  std::sort(files.begin(), files.end());
  return files;
}

struct Result {
  std::vector<std::string> fetches;
  std::vector<Tensor> outputs;
  RunStats stats;
};

Result RunGraph(const std::string& path, JitMode mode, uint64_t seed) {
  SessionOptions options;
  options.jit = mode;
  auto session = Session::Load(path, options);
  EXPECT_TRUE(session.ok()) << StatusToString(session.status());
  if (!session.ok()) return {};
  Result r;
  r.fetches = (*session)->DefaultFetches();
  std::vector<std::pair<std::string, Tensor>> feeds;
  uint64_t k = 0;
  for (const InputInfo& in : (*session)->Inputs()) {
    std::vector<int64_t> dims = in.dims;
    for (int64_t& d : dims) d = d < 0 ? 3 : d;  // an unknown (batch) dim: feed 3
    feeds.push_back({in.name, cli::RandomTensor(in.dtype, dims, seed + 7919 * k++)});
  }
  auto outputs = (*session)->Run(feeds, r.fetches, &r.stats);
  EXPECT_TRUE(outputs.ok()) << path << " jit=" << static_cast<int>(mode) << ": "
                            << StatusToString(outputs.status());
  if (outputs.ok()) r.outputs = *outputs;
  return r;
}

void ExpectSameOutputs(const Result& expected, const Result& actual, const std::string& what) {
  ASSERT_EQ(expected.outputs.size(), actual.outputs.size()) << what;
  for (size_t i = 0; i < expected.outputs.size(); ++i) {
    const Tensor& e = expected.outputs[i];
    const Tensor& a = actual.outputs[i];
    ASSERT_EQ(e.ShapeString(), a.ShapeString()) << what << " fetch " << expected.fetches[i];
    for (int64_t k = 0; k < e.num_elements(); ++k) {
      const double ev = ElementAsDouble(e, k), av = ElementAsDouble(a, k);
      if (IsFloatingDType(e.dtype())) {
        ASSERT_NEAR(ev, av, 1e-5 * std::max(1.0, std::abs(ev)))
            << what << " fetch " << expected.fetches[i] << " element " << k;
      } else {
        ASSERT_EQ(ev, av) << what << " fetch " << expected.fetches[i] << " element " << k;
      }
    }
  }
}

class TfGraphTest : public ::testing::TestWithParam<std::string> {};

TEST_P(TfGraphTest, CompiledMatchesUncompiled) {
  const std::string path = GraphsDir() + "/" + GetParam();
  for (uint64_t seed : {1u, 2u}) {
    Result none = RunGraph(path, JitMode::kNone, seed);
    ASSERT_FALSE(none.outputs.empty());
    EXPECT_EQ(none.stats.clusters, 0);
    Result autoc = RunGraph(path, JitMode::kAuto, seed);
    ExpectSameOutputs(none, autoc, "auto vs none");
    EXPECT_GT(autoc.stats.nodes_compiled, 0) << "auto-clustering compiled nothing";
    Result all = RunGraph(path, JitMode::kAll, seed);
    ExpectSameOutputs(none, all, "all vs none");
    EXPECT_EQ(all.stats.clusters, 1);
  }
}

INSTANTIATE_TEST_SUITE_P(Graphs, TfGraphTest, ::testing::ValuesIn(GraphFiles()),
                         [](const auto& info) {
                           std::string n = info.param.substr(0, info.param.find('.'));
                           return n;
                         });

}  // namespace
}  // namespace tfjit
