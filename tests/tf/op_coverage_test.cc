// The op surface against its target (tests/data/ops_target.tsv, from
// shared/docs/ops-target.md): every target op is in the catalog with a fallback kernel, and
// every op XLA compiles has a lowering, unless tests/data/ops_allowlist.tsv names the op, the
// missing part and the reason. An allowlist entry for something that now exists fails too, so
// the list only shrinks.
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_join.h"
#include "gtest/gtest.h"
#include "tests/testlib/test_data.h"
#include "tfjit/ops.h"

namespace tfjit {
namespace {

using ::tfjit::testing::ReadTestDataTsv;

struct Allowed {
  std::string reason;
};

TEST(OpCoverageTest, EveryTargetOpRunsAndEveryXlaOpCompiles) {
  std::map<std::string, OpSupport> ops;
  for (OpSupport& op : ListOps()) ops[op.name] = op;
  // (op, part) -> reason; part is "kernel" or "lowering".
  std::map<std::pair<std::string, std::string>, std::string> allowed;
  for (const auto& row : ReadTestDataTsv("ops_allowlist.tsv")) {
    ASSERT_EQ(row.size(), 3u) << "ops_allowlist.tsv rows are: op, kernel|lowering, reason: "
                              << absl::StrJoin(row, "|");
    ASSERT_TRUE(row[1] == "kernel" || row[1] == "lowering") << absl::StrJoin(row, "|");
    ASSERT_FALSE(row[2].empty()) << "an allowlist entry needs its reason: " << row[0];
    allowed[{row[0], row[1]}] = row[2];
  }
  const auto target = ReadTestDataTsv("ops_target.tsv");
  ASSERT_GT(target.size(), 400u);
  std::vector<std::string> missing_kernel, missing_lowering, stale;
  int kernels = 0, lowerings = 0, xla = 0;
  for (const auto& row : target) {
    ASSERT_EQ(row.size(), 2u) << absl::StrJoin(row, "|");
    const std::string& name = row[0];
    const bool xla_compiles = row[1] == "yes";
    xla += xla_compiles;
    auto it = ops.find(name);
    const bool has_kernel = it != ops.end() && it->second.kernel;
    const bool has_lowering = it != ops.end() && it->second.cpu;
    kernels += has_kernel;
    lowerings += xla_compiles && has_lowering;
    const bool kernel_allowed = allowed.count({name, "kernel"}) > 0;
    const bool lowering_allowed = allowed.count({name, "lowering"}) > 0;
    if (!has_kernel && !kernel_allowed) missing_kernel.push_back(name);
    if (has_kernel && kernel_allowed) stale.push_back(name + " (kernel)");
    if (xla_compiles && !has_lowering && !lowering_allowed) missing_lowering.push_back(name);
    if (has_lowering && lowering_allowed) stale.push_back(name + " (lowering)");
  }
  std::printf("target ops: %zu; with a kernel: %d; XLA compiles %d, of which tfjit lowers %d\n",
              target.size(), kernels, xla, lowerings);
  EXPECT_TRUE(missing_kernel.empty())
      << "target ops without a fallback kernel and not in ops_allowlist.tsv: "
      << absl::StrJoin(missing_kernel, ", ");
  EXPECT_TRUE(missing_lowering.empty())
      << "ops XLA compiles without a lowering and not in ops_allowlist.tsv: "
      << absl::StrJoin(missing_lowering, ", ");
  EXPECT_TRUE(stale.empty()) << "allowlisted but present now (remove from ops_allowlist.tsv): "
                             << absl::StrJoin(stale, ", ");
  for (const auto& [key, reason] : allowed) {
    bool in_target = false;
    for (const auto& row : target) in_target |= row[0] == key.first;
    EXPECT_TRUE(in_target) << key.first << " is allowlisted but not a target op";
  }
}

// Every catalog op names its family, one of the taxonomy's (docs/DESIGN.md, "Op families").
TEST(OpCoverageTest, EveryOpHasAFamily) {
  const std::set<std::string> families = {
      "graph", "math", "special",         "reduction", "array",     "linalg",     "nn",
      "image", "fft",  "scatter_segment", "random",    "gradients", "optimizers", "control_flow",
      "state", "xla",  "parsing"};
  for (const OpSupport& op : ListOps()) {
    EXPECT_TRUE(families.count(op.family) > 0) << op.name << " has family '" << op.family << "'";
  }
}

TEST(OpCoverageTest, DescribeOpNamesCloseMatches) {
  auto relu = DescribeOp("Relu");
  ASSERT_TRUE(relu.ok()) << relu.status();
  EXPECT_EQ(relu->family, "nn");
  EXPECT_TRUE(relu->kernel);
  EXPECT_TRUE(relu->cpu);
  auto sum = DescribeOp("Sum");
  ASSERT_TRUE(sum.ok());
  EXPECT_EQ(sum->constant_inputs, std::vector<std::string>{"reduction_indices"});
  auto typo = DescribeOp("MatMull");
  EXPECT_EQ(typo.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(std::string(typo.status().message()).find("did you mean MatMul"), std::string::npos)
      << typo.status();
}

}  // namespace
}  // namespace tfjit
