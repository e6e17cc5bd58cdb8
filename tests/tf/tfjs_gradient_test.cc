// TF's gradient ops in tfjit against TF.js's own gradient kernels (tfjs-backend-cpu), which are
// written independently of tfjit's kernels and lowerings (issue 22). The cases, their inputs and
// TF.js's results come from tests/tf/tfjs_gradients.mjs, which run_tfjs_gradients.sh runs with
// node and hands over in $TFJIT_TFJS_GRADIENTS; each case runs here uncompiled (--jit none, the
// fallback kernels) and compiled whole (--jit all).
#include <cmath>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tfjit/ops.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

struct Case {
  std::string name, graph;
  std::vector<std::pair<std::string, Tensor>> feeds;
  Tensor expect;
};

// "d0,d1,... v0 v1 ..." as a float32 tensor.
Tensor ParseTensor(const std::vector<std::string>& words, size_t first) {
  std::vector<int64_t> dims;
  for (absl::string_view d : absl::StrSplit(words[first], ',', absl::SkipEmpty())) {
    int64_t v = 0;
    EXPECT_TRUE(absl::SimpleAtoi(d, &v)) << words[first];
    dims.push_back(v);
  }
  Tensor t(DType::kFloat32, dims);
  EXPECT_EQ(words.size() - first - 1, static_cast<size_t>(t.num_elements()));
  for (int64_t i = 0; i < t.num_elements() && first + 1 + i < words.size(); ++i) {
    float v = 0;
    EXPECT_TRUE(absl::SimpleAtof(words[first + 1 + static_cast<size_t>(i)], &v));
    t.data<float>()[i] = v;
  }
  return t;
}

std::vector<Case> ReadCases(const std::string& path) {
  std::ifstream in(path);
  std::vector<Case> cases;
  std::string line;
  while (std::getline(in, line)) {
    const size_t space = line.find(' ');
    const std::string key = line.substr(0, space);
    const std::string rest = space == std::string::npos ? "" : line.substr(space + 1);
    if (key == "case") {
      cases.push_back({rest, "", {}, Tensor()});
    } else if (cases.empty()) {
      continue;
    } else if (key == "graph") {
      cases.back().graph = rest;
    } else if (key == "input") {
      std::vector<std::string> w = absl::StrSplit(rest, ' ', absl::SkipEmpty());
      cases.back().feeds.push_back({w[0], ParseTensor(w, 1)});
    } else if (key == "expect") {
      std::vector<std::string> w = absl::StrSplit(rest, ' ', absl::SkipEmpty());
      cases.back().expect = ParseTensor(w, 0);
    }
  }
  return cases;
}

TEST(TfjsGradientTest, GradientOpsMatchTfjsKernels) {
  const char* path = std::getenv("TFJIT_TFJS_GRADIENTS");
  if (path == nullptr) {
    GTEST_SKIP() << "TFJIT_TFJS_GRADIENTS is not set: run through tests/tf/run_tfjs_gradients.sh "
                    "(ctest does), which makes TF.js's results with node";
  }
  const std::vector<Case> cases = ReadCases(path);
  // Every case tfjs_gradients.mjs writes: 16 TF.js gradient kernels, some in two settings.
  ASSERT_EQ(cases.size(), 23u) << path;
  for (const Case& c : cases) {
    ASSERT_TRUE(c.expect.valid()) << c.name;
    double scale = 1;
    for (int64_t i = 0; i < c.expect.num_elements(); ++i) {
      scale = std::max(scale, std::abs(static_cast<double>(c.expect.data<float>()[i])));
    }
    // The op's name: the case's name up to its first '_'.
    const std::string op = c.name.substr(0, c.name.find('_'));
    absl::StatusOr<OpSupport> support = DescribeOp(op);
    ASSERT_TRUE(support.ok()) << op << ": " << support.status();
    std::vector<JitMode> modes = {JitMode::kNone};
    if (support->cpu) {
      modes.push_back(JitMode::kAll);
    } else {
      std::printf("%s: no CPU lowering (tfjit ops %s); checked uncompiled only\n", c.name.c_str(),
                  op.c_str());
    }
    for (JitMode mode : modes) {
      SessionOptions options;
      options.jit = mode;
      auto s = Session::Load(testing::WriteTempFile(c.name + ".pbtxt", c.graph), options);
      ASSERT_TRUE(s.ok()) << c.name << ": " << s.status();
      RunStats stats;
      auto out = (*s)->Run(c.feeds, {"y"}, &stats);
      ASSERT_TRUE(out.ok()) << c.name << " jit " << static_cast<int>(mode) << ": " << out.status();
      if (mode == JitMode::kAll) {
        EXPECT_EQ(stats.clusters, 1) << c.name;
      }
      const Tensor& got = (*out)[0];
      ASSERT_EQ(got.dims(), c.expect.dims()) << c.name;
      // float32 sums in another order than TF.js's loops.
      for (int64_t i = 0; i < got.num_elements(); ++i) {
        ASSERT_NEAR(got.data<float>()[i], c.expect.data<float>()[i], 2e-5 * scale)
            << c.name << " jit " << static_cast<int>(mode) << " element " << i;
      }
    }
  }
}

}  // namespace
}  // namespace tfjit
