// PassPipeline tests: order, disabling, error prefixes, verify-after-pass, timings and dumps.
#include "compiler/passes/pass.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "compiler/hlo/printer.h"
#include "compiler/passes/dce.h"
#include "core/status.h"
#include "tests/unit/passes/pass_test_util.h"

namespace tfjit::passes {
namespace {

constexpr char kModule[] = R"(HloModule m

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4] parameter(0)
  %dead = f32[4] negate(%x)
  ROOT %y = f32[4] add(%x, %x)
}
)";

// Records its name in a shared log; optionally fails or breaks the module.
class FakePass : public Pass {
 public:
  enum class Mode { kNoop, kFail, kBreakModule };
  FakePass(std::string name, std::vector<std::string>* log, Mode mode = Mode::kNoop)
      : name_(std::move(name)), log_(log), mode_(mode) {}
  absl::string_view name() const override { return name_; }
  absl::StatusOr<bool> Run(hlo::Module& module) override {
    log_->push_back(name_);
    if (mode_ == Mode::kFail) return InvalidArgument("something is wrong");
    if (mode_ == Mode::kBreakModule) {
      // A shape that disagrees with shape inference: the verifier must catch it.
      module.entry()->root()->set_shape(hlo::Shape(DType::kFloat32, {5}));
      return true;
    }
    return false;
  }

 private:
  std::string name_;
  std::vector<std::string>* log_;
  Mode mode_;
};

TEST(PassPipelineTest, RunsInOrderAndSkipsDisabled) {
  std::unique_ptr<hlo::Module> m = testlib::ParseVerified(kModule);
  ASSERT_NE(m, nullptr);
  std::vector<std::string> log;
  PipelineOptions options;
  options.disabled.insert("b");
  PassPipeline pipeline("p", options);
  pipeline.AddPass<FakePass>("a", &log);
  pipeline.AddPass<FakePass>("b", &log);
  pipeline.AddPass<FakePass>("c", &log);
  absl::StatusOr<bool> changed = pipeline.Run(*m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_FALSE(*changed);
  EXPECT_EQ(log, (std::vector<std::string>{"a", "c"}));
  ASSERT_EQ(pipeline.timings().size(), 2u);
  EXPECT_EQ(pipeline.timings()[1].first, "c");
  EXPECT_GE(pipeline.timings()[1].second, 0.0);
}

TEST(PassPipelineTest, ErrorsArePrefixedWithThePassNameAndStopThePipeline) {
  std::unique_ptr<hlo::Module> m = testlib::ParseVerified(kModule);
  ASSERT_NE(m, nullptr);
  std::vector<std::string> log;
  PassPipeline pipeline("p");
  pipeline.AddPass<FakePass>("bad", &log, FakePass::Mode::kFail);
  pipeline.AddPass<FakePass>("after", &log);
  absl::StatusOr<bool> changed = pipeline.Run(*m);
  EXPECT_EQ(changed.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(changed.status().message(), "pass 'bad': something is wrong");
  EXPECT_EQ(log, (std::vector<std::string>{"bad"}));
}

TEST(PassPipelineTest, VerifierRunsAfterEachPassWhenEnabled) {
  std::vector<std::string> log;
  {
    std::unique_ptr<hlo::Module> m = testlib::ParseVerified(kModule);
    ASSERT_NE(m, nullptr);
    PassPipeline pipeline("p");
    pipeline.AddPass<FakePass>("breaker", &log, FakePass::Mode::kBreakModule);
    absl::StatusOr<bool> changed = pipeline.Run(*m);
    EXPECT_EQ(changed.status().code(), absl::StatusCode::kInternal);
    EXPECT_EQ(changed.status().message().rfind("pass 'breaker': ", 0), 0u)
        << changed.status().message();
  }
  {
    std::unique_ptr<hlo::Module> m = testlib::ParseVerified(kModule);
    ASSERT_NE(m, nullptr);
    PipelineOptions options;
    options.verify = false;
    PassPipeline pipeline("p", options);
    pipeline.AddPass<FakePass>("breaker", &log, FakePass::Mode::kBreakModule);
    absl::StatusOr<bool> changed = pipeline.Run(*m);
    ASSERT_TRUE(changed.ok()) << changed.status();
    EXPECT_TRUE(*changed);
  }
}

TEST(PassPipelineTest, DumpsAfterNamedPassesOrAll) {
  const std::filesystem::path dir =
      std::filesystem::path(::testing::TempDir()) / "tfjit_pass_dumps";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  std::unique_ptr<hlo::Module> m = testlib::ParseVerified(kModule);
  ASSERT_NE(m, nullptr);
  std::vector<std::string> log;
  PipelineOptions options;
  options.dump_dir = dir.string();
  options.dump_after.insert("dce");
  PassPipeline pipeline("p", options);
  pipeline.AddPass<FakePass>("first", &log);
  pipeline.AddPass<DcePass>();
  absl::StatusOr<bool> changed = pipeline.Run(*m);
  ASSERT_TRUE(changed.ok()) << changed.status();
  EXPECT_TRUE(*changed);
  EXPECT_FALSE(std::filesystem::exists(dir / "01_first.hlo"));
  ASSERT_TRUE(std::filesystem::exists(dir / "02_dce.hlo"));
  std::ifstream in(dir / "02_dce.hlo");
  std::stringstream text;
  text << in.rdbuf();
  EXPECT_EQ(text.str(), hlo::PrintModule(*m));
  EXPECT_EQ(text.str().find("negate"), std::string::npos);
  // The module as the pipeline received it comes first, dead negate and all.
  std::ifstream before(dir / "00_before_optimizations.hlo");
  std::stringstream before_text;
  before_text << before.rdbuf();
  EXPECT_NE(before_text.str().find("negate"), std::string::npos) << before_text.str();

  PipelineOptions all = options;
  all.dump_after = {"all"};
  PassPipeline pipeline2("p", all);
  pipeline2.AddPass<FakePass>("first", &log);
  ASSERT_TRUE(pipeline2.Run(*m).ok());
  EXPECT_TRUE(std::filesystem::exists(dir / "01_first.hlo"));
}

}  // namespace
}  // namespace tfjit::passes
