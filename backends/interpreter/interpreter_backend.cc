// InterpreterBackend: the standard HLO pipeline, then evaluation with hlo::Evaluate.
#include "backends/interpreter/interpreter_backend.h"

#include <chrono>

#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/cost.h"
#include "compiler/hlo/symbolic.h"
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
    int64_t batch = 0;
    TFJIT_RETURN_IF_ERROR(backends::CheckArguments(*module_, args, &batch));
    std::vector<hlo::Literal> literals;
    literals.reserve(args.size());
    for (const Tensor& t : args) literals.push_back(hlo::Literal::FromTensor(t));
    // A symbolic module runs as its specialization at the arguments' batch size (HLO.md).
    std::unique_ptr<hlo::Module> specialized;
    if (module_->batch_representative() != 0) specialized = hlo::Specialize(*module_, batch);
    TFJIT_ASSIGN_OR_RETURN(hlo::Literal result,
                           hlo::Evaluate(specialized ? *specialized : *module_, literals));
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
    TFJIT_RETURN_IF_ERROR(Optimize(*module));
    return Finish(std::move(module), start);
  }

  bool compiles_symbolic() const override { return true; }

  absl::StatusOr<std::unique_ptr<backends::Executable>> CompileSymbolic(
      std::vector<backends::BatchProbeModule> probes) const override {
    const auto start = std::chrono::steady_clock::now();
    TFJIT_ASSIGN_OR_RETURN(
        std::unique_ptr<hlo::Module> module,
        backends::OptimizeAndSymbolize(probes, [this](hlo::Module& m) { return Optimize(m); }));
    return Finish(std::move(module), start);
  }

 private:
  absl::Status Optimize(hlo::Module& module) const {
    passes::PassPipeline pipeline("interpreter");
    passes::AddStandardPasses(pipeline, &policy_);
    return pipeline.Run(module).status();
  }

  absl::StatusOr<std::unique_ptr<backends::Executable>> Finish(
      std::unique_ptr<hlo::Module> module, std::chrono::steady_clock::time_point start) const {
    backends::CompileStats stats;
    stats.flops = hlo::MatmulFlops(*module);
    stats.optimize_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
    return std::unique_ptr<backends::Executable>(
        new InterpreterExecutable(std::move(module), stats));
  }

  passes::FusionPolicy policy_;
};

}  // namespace

std::unique_ptr<backends::Backend> CreateInterpreterBackend() {
  return std::make_unique<InterpreterBackend>();
}

}  // namespace tfjit::interpreter
