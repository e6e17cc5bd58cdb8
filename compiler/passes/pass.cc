// PassPipeline: runs passes in order, verifies after each, times them, prefixes errors with
// the pass name and writes NN_<pass>.hlo dumps.
#include "compiler/passes/pass.h"

#include <chrono>
#include <cmath>
#include <fstream>
#include <regex>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/verifier.h"
#include "core/dtype.h"
#include "core/run_control.h"
#include "core/status.h"

namespace tfjit::passes {
namespace {

absl::Status DumpModule(const hlo::Module& module, const std::string& dir,
                        const std::string& prefix, int index, absl::string_view pass_name) {
  const std::string path = absl::StrFormat("%s/%s%02d_%s.hlo", dir, prefix, index, pass_name);
  std::ofstream out(path);
  if (!out) return NotFound("cannot open dump file '%s' for writing", path);
  out << hlo::PrintModule(module);
  return out.good() ? absl::OkStatus() : Internal("writing dump file '%s' failed", path);
}

}  // namespace

absl::StatusOr<bool> PassPipeline::Run(hlo::Module& module) {
  timings_.clear();
  if (!options_.dump_dir.empty() &&
      (!options_.dump_after.empty() || !options_.dump_after_regex.empty())) {
    TFJIT_RETURN_IF_ERROR(
        DumpModule(module, options_.dump_dir, options_.dump_prefix, 0, "before_optimizations"));
  }
  if (!options_.dump_after_regex.empty() && !dump_regex_.has_value()) {
    try {
      dump_regex_.emplace(options_.dump_after_regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return InvalidArgument("the pass-dump regex '%s' is invalid: %s", options_.dump_after_regex,
                             e.what());
    }
  }
  bool changed = false;
  int index = 0;
  for (const std::unique_ptr<Pass>& pass : passes_) {
    const std::string name(pass->name());
    if (options_.disabled.contains(name)) continue;
    const std::string context = absl::StrFormat("pass '%s'", name);
    // The run's deadline and cancellation hold while compiling (core/run_control.h).
    TFJIT_RETURN_IF_ERROR(RunCheckpoint(
        [&] { return absl::StrCat("HLO ", context, " of module '", module.name(), "'"); }));
    const auto start = std::chrono::steady_clock::now();
    absl::StatusOr<bool> result = pass->Run(module);
    const auto end = std::chrono::steady_clock::now();
    timings_.emplace_back(name, std::chrono::duration<double, std::milli>(end - start).count());
    if (!result.ok()) return WithContext(result.status(), context);
    changed = changed || *result;
    if (options_.verify) {
      absl::Status verified = hlo::VerifyModule(module);
      if (!verified.ok()) {
        return WithContext(verified, absl::StrFormat("%s: invalid module after the pass", context));
      }
    }
    ++index;
    if (!options_.dump_dir.empty() &&
        (options_.dump_after.contains(name) || options_.dump_after.contains("all") ||
         (dump_regex_.has_value() && std::regex_match(name, *dump_regex_)))) {
      TFJIT_RETURN_IF_ERROR(
          DumpModule(module, options_.dump_dir, options_.dump_prefix, index, name));
    }
  }
  return changed;
}

absl::StatusOr<bool> SweepToFixedPoint(
    hlo::Module& module, int max_sweeps,
    const std::function<absl::StatusOr<bool>(hlo::Computation&)>& sweep) {
  bool changed = false;
  for (hlo::Computation* computation : module.computations()) {
    for (int i = 0; i < max_sweeps; ++i) {
      TFJIT_ASSIGN_OR_RETURN(bool changed_now, sweep(*computation));
      if (!changed_now) break;
      changed = true;
    }
  }
  return changed;
}

bool IsFiniteConstant(const hlo::Instruction* inst) {
  if (inst->opcode() != hlo::Opcode::kConstant || !inst->shape().IsArray()) return false;
  const Tensor& t = inst->literal().tensor();
  for (int64_t i = 0; i < t.num_elements(); ++i) {
    if (!std::isfinite(ElementAsDouble(t, i))) return false;
  }
  return true;
}

}  // namespace tfjit::passes
