// tfjit-opt: parses an .hlo file, runs the named passes and prints the module (or evaluates it
// on seeded random arguments, or prints its PTX). The driver of the lit/FileCheck IR tests.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "backends/gpu/ptx_emitter.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "compiler/passes/algebraic_simplifier.h"
#include "compiler/passes/constant_folding.h"
#include "compiler/passes/cse.h"
#include "compiler/passes/dce.h"
#include "compiler/passes/fusion.h"
#include "compiler/passes/liveness.h"
#include "compiler/passes/transpose_sinking.h"
#include "compiler/passes/transposed_conv_split.h"
#include "compiler/passes/pass.h"
#include "core/status.h"
#include "tests/testlib/random_literal.h"

namespace tfjit {
namespace {

constexpr char kUsage[] =
    "usage: tfjit-opt [--passes=simplify,transpose-sinking,constant-folding,\n"
    "                  split-transposed-conv,cse,dce,fusion]\n"
    "                 [--canonical] [--no-verify] [--evaluate-seed=N] [--emit-ptx=sm_80|sm_90|sm_90a]\n"
    "                 [--print-liveness]\n"
    "                 [--dump-ir-after=PASS,...|all --dump-dir=DIR] FILE.hlo|-\n";

struct Flags {
  std::vector<std::string> passes;
  bool canonical = false;
  bool verify = true;
  bool evaluate = false;
  uint64_t seed = 0;
  std::string file;
  std::vector<std::string> dump_after;  // pass names or "all"
  std::string dump_dir;
  std::string ptx_sm;  // --emit-ptx: print PTX for this compute capability instead of HLO
  bool liveness = false;  // --print-liveness: each computation's schedule and live ranges
};

int UsageError(const std::string& why) {
  std::cerr << "tfjit-opt: " << why << "\n" << kUsage;
  return 2;
}

// Returns an empty string on success, else the usage problem.
std::string ParseFlags(int argc, char** argv, Flags& flags) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    if (arg.rfind("--passes=", 0) == 0) {
      for (absl::string_view p : absl::StrSplit(arg.substr(9), ',', absl::SkipEmpty())) {
        flags.passes.emplace_back(p);
      }
    } else if (arg == "--canonical") {
      flags.canonical = true;
    } else if (arg == "--no-verify") {
      flags.verify = false;
    } else if (arg == "--print-liveness") {
      flags.liveness = true;
    } else if (arg.rfind("--emit-ptx=", 0) == 0) {
      flags.ptx_sm = arg.substr(11);
    } else if (arg.rfind("--evaluate-seed=", 0) == 0) {
      if (!absl::SimpleAtoi(arg.substr(16), &flags.seed)) return absl::StrCat("bad seed in ", arg);
      flags.evaluate = true;
    } else if (arg.rfind("--dump-ir-after=", 0) == 0) {
      for (absl::string_view p : absl::StrSplit(arg.substr(16), ',', absl::SkipEmpty())) {
        flags.dump_after.emplace_back(p);
      }
    } else if (arg.rfind("--dump-dir=", 0) == 0) {
      flags.dump_dir = arg.substr(11);
    } else if (arg == "-" || arg.rfind("-", 0) != 0) {
      if (!flags.file.empty()) return "more than one input file";
      flags.file = arg;
    } else {
      return absl::StrCat("unknown flag ", arg);
    }
  }
  if (!flags.dump_after.empty() && flags.dump_dir.empty()) return "--dump-ir-after needs --dump-dir";
  return flags.file.empty() ? "no input file" : "";
}

// Adds the pass called `name`; false when there is none.
bool AddPass(passes::PassPipeline& pipeline, const std::string& name) {
  if (name == "simplify") pipeline.AddPass<passes::AlgebraicSimplifierPass>();
  else if (name == "constant-folding") pipeline.AddPass<passes::ConstantFoldingPass>();
  else if (name == "transpose-sinking") pipeline.AddPass<passes::TransposeSinkingPass>();
  else if (name == "split-transposed-conv")
    pipeline.AddPass<passes::TransposedConvolutionSplitPass>();
  else if (name == "cse") pipeline.AddPass<passes::CsePass>();
  else if (name == "dce") pipeline.AddPass<passes::DcePass>();
  else if (name == "fusion") pipeline.AddPass<passes::FusionPass>();
  else return false;
  return true;
}

absl::StatusOr<std::string> ReadInput(const std::string& file) {
  std::stringstream buffer;
  if (file == "-") {
    buffer << std::cin.rdbuf();
  } else {
    std::ifstream in(file);
    if (!in) return NotFound("cannot open '%s'", file);
    buffer << in.rdbuf();
  }
  return buffer.str();
}

std::string LiteralToString(const hlo::Literal& literal) {
  if (!literal.shape().IsTuple()) {
    return absl::StrCat(literal.shape().ToString(), " ", literal.ValueToString());
  }
  std::vector<std::string> parts;
  for (const hlo::Literal& e : literal.elements()) parts.push_back(LiteralToString(e));
  return absl::StrCat("(", absl::StrJoin(parts, ", "), ")");
}

absl::Status Run(const Flags& flags, passes::PassPipeline& pipeline) {
  TFJIT_ASSIGN_OR_RETURN(std::string text, ReadInput(flags.file));
  std::unique_ptr<hlo::Module> module;
  if (flags.verify) {
    TFJIT_ASSIGN_OR_RETURN(module, hlo::ParseAndVerifyModule(text));
  } else {
    TFJIT_ASSIGN_OR_RETURN(module, hlo::ParseModule(text));
  }
  TFJIT_RETURN_IF_ERROR(pipeline.Run(*module).status());
  if (flags.evaluate) {
    TFJIT_ASSIGN_OR_RETURN(hlo::Literal result,
                           hlo::Evaluate(*module, testlib::RandomArgs(*module, flags.seed)));
    std::cout << LiteralToString(result) << "\n";
    return absl::OkStatus();
  }
  if (flags.liveness) {
    std::cout << passes::ModuleLiveness(*module).ToString();
    return absl::OkStatus();
  }
  if (!flags.ptx_sm.empty()) {
    TFJIT_ASSIGN_OR_RETURN(gpu::PtxModule ptx, gpu::EmitPtx(*module, flags.ptx_sm));
    std::cout << ptx.ptx;
    return absl::OkStatus();
  }
  hlo::PrintOptions options;
  options.canonical = flags.canonical;
  std::cout << hlo::PrintModule(*module, options);
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  Flags flags;
  const std::string problem = ParseFlags(argc, argv, flags);
  if (!problem.empty()) return UsageError(problem);
  passes::PipelineOptions options;
  options.verify = flags.verify;
  options.dump_dir = flags.dump_dir;
  options.dump_after.insert(flags.dump_after.begin(), flags.dump_after.end());
  passes::PassPipeline pipeline("tfjit-opt", options);
  for (const std::string& name : flags.passes) {
    if (!AddPass(pipeline, name)) {
      return UsageError(absl::StrCat("unknown pass '", name,
                                     "' (known: simplify, transpose-sinking, constant-folding, "
                                     "split-transposed-conv, cse, dce, fusion)"));
    }
  }
  absl::Status status = Run(flags, pipeline);
  if (!status.ok()) {
    std::cerr << StatusToString(status) << "\n";
    return 1;
  }
  return 0;
}

}  // namespace
}  // namespace tfjit

int main(int argc, char** argv) { return tfjit::Main(argc, argv); }
