// Every pass, alone and in the default order, preserves the results of every module of the
// .hlo corpus (tests/hlo/corpus and the lit inputs), checked with the evaluator.
#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/passes/algebraic_simplifier.h"
#include "compiler/passes/constant_folding.h"
#include "compiler/passes/cse.h"
#include "compiler/passes/dce.h"
#include "compiler/passes/fusion.h"
#include "tests/unit/passes/pass_test_util.h"

namespace tfjit::passes {
namespace {

// Valid modules only: files whose name contains "invalid" are deliberate parse errors.
std::vector<std::filesystem::path> CorpusFiles() {
  std::vector<std::filesystem::path> files;
  const std::filesystem::path root = std::filesystem::path(TFJIT_SOURCE_DIR) / "tests" / "hlo";
  for (const char* dir : {"corpus", "passes"}) {
    if (!std::filesystem::exists(root / dir)) continue;
    for (const auto& entry : std::filesystem::directory_iterator(root / dir)) {
      const std::string name = entry.path().filename().string();
      if (entry.path().extension() == ".hlo" && name.find("invalid") == std::string::npos) {
        files.push_back(entry.path());
      }
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

// Runs the passes in sequence as one pass, so the helper checks the whole pipeline.
class DefaultPipeline : public Pass {
 public:
  absl::string_view name() const override { return "default-pipeline"; }
  absl::StatusOr<bool> Run(hlo::Module& module) override {
    PassPipeline pipeline("default");
    pipeline.AddPass<AlgebraicSimplifierPass>();
    pipeline.AddPass<ConstantFoldingPass>();
    pipeline.AddPass<CsePass>();
    pipeline.AddPass<DcePass>();
    pipeline.AddPass<FusionPass>();
    return pipeline.Run(module);
  }
};

TEST(PipelineCorpusTest, EveryPassPreservesEveryCorpusModule) {
  const std::vector<std::filesystem::path> files = CorpusFiles();
  ASSERT_GE(files.size(), 5u);
  for (const std::filesystem::path& file : files) {
    SCOPED_TRACE(file.string());
    const std::string text = ReadFile(file);
    AlgebraicSimplifierPass simplify;
    ConstantFoldingPass fold;
    CsePass cse;
    DcePass dce;
    FusionPass fusion;
    DefaultPipeline all;
    for (Pass* pass : std::vector<Pass*>{&simplify, &fold, &cse, &dce, &fusion, &all}) {
      for (uint64_t seed : {1, 2}) {
        EXPECT_TRUE(testlib::CheckPassPreservesSemantics(text, *pass, seed, {1e-5, 1e-5}))
            << pass->name();
      }
    }
  }
}

}  // namespace
}  // namespace tfjit::passes
