// InterpreterBackend: the standard HLO pipeline, then evaluation with hlo::Evaluate.
#include "backends/interpreter/interpreter_backend.h"

#include <chrono>

#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/cost.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/standard_pipeline.h"
#include "core/status.h"

namespace tfjit::interpreter {
namespace {

class InterpreterExecutable : public backends::Executable {
 public:
  InterpreterExecutable(std::unique_ptr<hlo::Module> module, backends::CompileStats stats)
      : module_(std::move(module)), stats_(stats) {}

  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<Tensor>& args,
                                          ThreadPool* pool) const override {
    TFJIT_RETURN_IF_ERROR(backends::CheckArguments(*module_, args));
    std::vector<hlo::Literal> literals;
    literals.reserve(args.size());
    for (const Tensor& t : args) literals.push_back(hlo::Literal::FromTensor(t));
    TFJIT_ASSIGN_OR_RETURN(hlo::Literal result, hlo::Evaluate(*module_, literals));
    std::vector<Tensor> outputs;
    if (!result.shape().IsTuple()) {
      outputs.push_back(result.tensor());
      return outputs;
    }
    for (const hlo::Literal& element : result.elements()) {
      if (element.shape().IsTuple()) {
        return Unimplemented("interpreter backend: nested tuple results are not supported");
      }
      outputs.push_back(element.tensor());
    }
    return outputs;
  }
  const backends::CompileStats& stats() const override { return stats_; }
  const hlo::Module& module() const override { return *module_; }

 private:
  std::unique_ptr<hlo::Module> module_;
  backends::CompileStats stats_;
};

class InterpreterBackend : public backends::Backend {
 public:
  absl::string_view name() const override { return "interpreter"; }
  const passes::FusionPolicy& fusion_policy() const override { return policy_; }

  absl::StatusOr<std::unique_ptr<backends::Executable>> Compile(
      std::unique_ptr<hlo::Module> module) const override {
    const auto start = std::chrono::steady_clock::now();
    passes::PassPipeline pipeline("interpreter");
    passes::AddStandardPasses(pipeline, &policy_);
    TFJIT_RETURN_IF_ERROR(pipeline.Run(*module).status());
    backends::CompileStats stats;
    stats.flops = hlo::MatmulFlops(*module);
    stats.optimize_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return std::unique_ptr<backends::Executable>(
        new InterpreterExecutable(std::move(module), stats));
  }

 private:
  passes::FusionPolicy policy_;
};

}  // namespace

std::unique_ptr<backends::Backend> CreateInterpreterBackend() {
  return std::make_unique<InterpreterBackend>();
}

}  // namespace tfjit::interpreter
