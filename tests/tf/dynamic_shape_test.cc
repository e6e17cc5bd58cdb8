// Dynamic dims: a -1 batch is resolved from each feed; every new shape compiles once and is
// cached, and the Shape -> StridedSlice -> Pack -> Reshape chain compiles inside the cluster.
#include <algorithm>
#include <filesystem>
#include <vector>

#include "gtest/gtest.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

std::string GraphPath(const std::string& name) {
  return (std::filesystem::path(TFJIT_SOURCE_DIR) / "tests" / "tf" / "graphs" / name).string();
}

// y[b, i] = relu(x[b, 2i] * 1) + relu(x[b, 2i+1] * -2), computed by hand.
std::vector<float> Expected(const std::vector<float>& x) {
  std::vector<float> y;
  for (size_t k = 0; k + 1 < x.size(); k += 2) {
    y.push_back(std::max(x[k], 0.0f) + std::max(-2.0f * x[k + 1], 0.0f));
  }
  return y;
}

class DynamicBatchTest : public ::testing::TestWithParam<JitMode> {};

TEST_P(DynamicBatchTest, EachBatchSizeCompilesOnceAndMatches) {
  SessionOptions options;
  options.jit = GetParam();
  auto session = Session::Load(GraphPath("dynamic_batch.pbtxt"), options);
  ASSERT_TRUE(session.ok()) << session.status();
  int compiles = 0;
  for (int64_t batch : {1, 3, 1, 2, 3, 2}) {
    std::vector<float> x;
    for (int64_t i = 0; i < batch * 4; ++i) x.push_back(static_cast<float>((i * 7) % 11) - 5.0f);
    RunStats stats;
    auto out = (*session)->Run({{"x", Tensor::FromVector<float>(DType::kFloat32, {batch, 4}, x)}},
                               {"y"}, &stats);
    ASSERT_TRUE(out.ok()) << out.status();
    ASSERT_EQ((*out)[0].dims(), (std::vector<int64_t>{batch, 2}));
    const std::vector<float> want = Expected(x);
    for (size_t i = 0; i < want.size(); ++i) {
      EXPECT_FLOAT_EQ((*out)[0].data<float>()[i], want[i]) << "batch " << batch << " i " << i;
    }
    if (GetParam() == JitMode::kAuto || GetParam() == JitMode::kAll) {
      // Every node the run needs (the fed placeholder is not counted) compiles in one cluster:
      // Shape and the folded chain included.
      EXPECT_EQ(stats.clusters, 1);
      EXPECT_EQ(stats.nodes_compiled, stats.nodes_total) << "batch " << batch;
      EXPECT_EQ(stats.nodes_total, 13);
      compiles += stats.compile_ms > 0 && stats.cache_hits == 0 ? 1 : 0;
    }
  }
  if (GetParam() == JitMode::kAuto || GetParam() == JitMode::kAll) {
    EXPECT_EQ(compiles, 3);  // batch 1, 3 and 2, once each
  }
}

INSTANTIATE_TEST_SUITE_P(Jit, DynamicBatchTest,
                         ::testing::Values(JitMode::kNone, JitMode::kOff, JitMode::kAuto,
                                           JitMode::kAll));

}  // namespace
}  // namespace tfjit
