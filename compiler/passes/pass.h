// Pass interface and pipeline: Run returns whether the module changed; the pipeline verifies
// after every pass, times passes, adds the pass name to errors and can dump IR after passes.
#ifndef TFJIT_COMPILER_PASSES_PASS_H_
#define TFJIT_COMPILER_PASSES_PASS_H_

#include <functional>
#include <memory>
#include <optional>
#include <regex>
#include <string>
#include <utility>
#include <vector>
#include "absl/strings/string_view.h"

#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "compiler/hlo/module.h"

namespace tfjit::passes {

class Pass {
 public:
  virtual ~Pass() = default;
  virtual absl::string_view name() const = 0;
  // Returns true iff the module changed. Must leave a valid module on success.
  virtual absl::StatusOr<bool> Run(hlo::Module& module) = 0;
};

struct PipelineOptions {
  bool verify = true;  // run the verifier after each pass
  // Where NN_<pass>.hlo files go ("" = no dumps). With dump_after or dump_after_regex set,
  // the module as the pipeline receives it goes first, as 00_before_optimizations.hlo (XLA's
  // name): for a lowered cluster, what tf2hlo made of the TF graph.
  std::string dump_dir;
  std::string dump_prefix;                      // prepended to those names ("" = none)
  absl::flat_hash_set<std::string> dump_after;  // pass names, or "all"
  std::string dump_after_regex;  // also dump after passes whose whole name this matches
  absl::flat_hash_set<std::string> disabled;  // pass names to skip
};

class PassPipeline {
 public:
  explicit PassPipeline(std::string name, PipelineOptions options = {})
      : name_(std::move(name)), options_(std::move(options)) {}

  template <typename T, typename... Args>
  T& AddPass(Args&&... args) {
    auto pass = std::make_unique<T>(std::forward<Args>(args)...);
    T& ref = *pass;
    passes_.push_back(std::move(pass));
    return ref;
  }

  // Runs every pass in order. Errors are prefixed "pass '<name>': ".
  absl::StatusOr<bool> Run(hlo::Module& module);

  // (pass name, milliseconds) of the last Run.
  const std::vector<std::pair<std::string, double>>& timings() const { return timings_; }

 private:
  std::string name_;
  PipelineOptions options_;
  std::vector<std::unique_ptr<Pass>> passes_;
  std::vector<std::pair<std::string, double>> timings_;
  std::optional<std::regex> dump_regex_;  // dump_after_regex, compiled on the first Run
};

// Runs `sweep` (one pass over a computation; whether it changed it) on each computation of
// `module` until a sweep changes nothing or `max_sweeps` have run. Whether anything changed.
absl::StatusOr<bool> SweepToFixedPoint(
    hlo::Module& module, int max_sweeps,
    const std::function<absl::StatusOr<bool>(hlo::Computation&)>& sweep);

// Whether `inst` is an array constant whose elements are all finite (no NaN, no infinity):
// rewrites that skip multiplications by zero (0 * inf is NaN) need it of the other factor.
bool IsFiniteConstant(const hlo::Instruction* inst);

}  // namespace tfjit::passes

#endif  // TFJIT_COMPILER_PASSES_PASS_H_
