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
#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/frame_plan.h"
#include "backends/cpu/ir_emitter.h"
#include "backends/gpu/gpu_program.h"
#include "backends/gpu/ptx_emitter.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "compiler/passes/algebraic_simplifier.h"
#include "compiler/passes/buffer_assignment.h"
#include "compiler/passes/constant_folding.h"
#include "compiler/passes/cse.h"
#include "compiler/passes/dce.h"
#include "compiler/passes/fusion.h"
#include "compiler/passes/liveness.h"
#include "compiler/passes/pass.h"
#include "compiler/passes/standard_pipeline.h"
#include "compiler/passes/transpose_sinking.h"
#include "compiler/passes/transposed_conv_split.h"
#include "compiler/tf2hlo/lowering.h"
#include "core/status.h"
#include "frontend/attr.h"
#include "frontend/graphdef_loader.h"
#include "tests/testlib/random_literal.h"

namespace tfjit {
namespace {

constexpr char kUsage[] =
    "usage: tfjit-opt [--passes=simplify,transpose-sinking,constant-folding,\n"
    "                  split-transposed-conv,cse,dce,fusion | cpu (the CPU backend's pipeline)]\n"
    "                 [--canonical] [--no-verify] [--evaluate-seed=N] "
    "[--emit-ptx=sm_80|sm_90|sm_90a]\n"
    "                 [--print-liveness] [--print-buffer-assignment=cpu|gpu] [--emit-llvm]\n"
    "                 [--lower [--outputs=NODE[:K],...] [--autofix]]\n"
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
  std::string ptx_sm;     // --emit-ptx: print PTX for this compute capability instead of HLO
  bool liveness = false;  // --print-liveness: each computation's schedule and live ranges
  // --print-buffer-assignment: the shared buffer assignment with this backend's policy
  std::string buffers_for;
  bool emit_llvm = false;  // --emit-llvm: the CPU backend's LLVM IR, before LLVM's passes
  // --lower: the input is a GraphDef (text or binary); its Placeholders and VarHandleOps are
  // the parameters and the rest one cluster, lowered by tf2hlo (the module before any HLO pass
  // unless
  // --passes names some).
  bool lower = false;
  std::vector<std::string> outputs;  // --outputs: what the cluster returns (default: sinks)
  bool autofix = false;
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
    } else if (arg.rfind("--print-buffer-assignment=", 0) == 0) {
      flags.buffers_for = arg.substr(26);
      if (flags.buffers_for != "cpu" && flags.buffers_for != "gpu") {
        return absl::StrCat("--print-buffer-assignment takes cpu or gpu, not '", flags.buffers_for,
                            "'");
      }
    } else if (arg == "--emit-llvm") {
      flags.emit_llvm = true;
    } else if (arg == "--lower") {
      flags.lower = true;
    } else if (arg == "--autofix") {
      flags.autofix = true;
    } else if (arg.rfind("--outputs=", 0) == 0) {
      for (absl::string_view o : absl::StrSplit(arg.substr(10), ',', absl::SkipEmpty())) {
        flags.outputs.emplace_back(o);
      }
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
  if (!flags.dump_after.empty() && flags.dump_dir.empty())
    return "--dump-ir-after needs --dump-dir";
  return flags.file.empty() ? "no input file" : "";
}

// Adds the pass called `name`; false when there is none.
bool AddPass(passes::PassPipeline& pipeline, const std::string& name) {
  // The CPU backend's own pipeline, its fusion policy included (output fusions, siblings).
  static const cpu::CpuFusionPolicy* const cpu_policy = new cpu::CpuFusionPolicy();
  if (name == "cpu") {
    passes::AddStandardPasses(pipeline, cpu_policy);
    return true;
  }
  if (name == "simplify")
    pipeline.AddPass<passes::AlgebraicSimplifierPass>();
  else if (name == "constant-folding")
    pipeline.AddPass<passes::ConstantFoldingPass>();
  else if (name == "transpose-sinking")
    pipeline.AddPass<passes::TransposeSinkingPass>();
  else if (name == "split-transposed-conv")
    pipeline.AddPass<passes::TransposedConvolutionSplitPass>();
  else if (name == "cse")
    pipeline.AddPass<passes::CsePass>();
  else if (name == "dce")
    pipeline.AddPass<passes::DcePass>();
  else if (name == "fusion")
    pipeline.AddPass<passes::FusionPass>();
  else
    return false;
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

// --lower: the graph in `file` as one cluster. Placeholders and resource variables
// (VarHandleOp; full shapes) are its parameters, in graph order, a variable's being its value
// at launch; its outputs are `outputs`, or every output no node reads, then the variables it
// assigns.
absl::StatusOr<std::unique_ptr<hlo::Module>> LowerGraph(const std::string& file,
                                                        const std::vector<std::string>& outputs,
                                                        bool autofix) {
  std::unique_ptr<tf::Graph> graph;
  if (file == "-") {
    TFJIT_ASSIGN_OR_RETURN(std::string bytes, ReadInput(file));
    TFJIT_ASSIGN_OR_RETURN(tensorflow::GraphDef def,
                           tf::ParseGraphDefFromString(bytes, /*is_text=*/true, "<stdin>"));
    TFJIT_ASSIGN_OR_RETURN(graph, tf::Graph::Build(def, "<stdin>"));
  } else {
    TFJIT_ASSIGN_OR_RETURN(graph, tf::LoadGraphDefFile(file));
  }
  tf2hlo::ClusterSpec cluster;
  cluster.name = "lowered";
  std::vector<tf2hlo::ArgInfo> args;
  for (const tf::Node* node : graph->topological_order()) {
    const bool variable = node->op() == "VarHandleOp";
    if (node->op() != "Placeholder" && !variable) {
      if (node->op() != "NoOp") cluster.nodes.push_back(node);
      continue;
    }
    TFJIT_ASSIGN_OR_RETURN(DType dtype, tf::GetTypeAttr(*node, "dtype"));
    TFJIT_ASSIGN_OR_RETURN(tf::PartialShape shape, tf::GetShapeAttr(*node, "shape"));
    if (!shape.IsFullyDefined()) {
      return InvalidArgument(
          "%s: %s has shape %s; --lower needs every dim (give the attr "
          "'shape' a full shape)",
          file, node->DebugName(), shape.ToString());
    }
    cluster.inputs.push_back(tf::Output{const_cast<tf::Node*>(node), 0});
    tf2hlo::ArgInfo arg;
    arg.dtype = dtype;
    arg.dims = shape.dims;
    if (variable) {  // its value at launch is the parameter; what the cluster assigns, a result
      tf2hlo::VariableInfo info;
      TFJIT_ASSIGN_OR_RETURN(info.name, tf::GetStringAttr(*node, "shared_name"));
      if (info.name.empty()) info.name = node->name();
      info.initialized = true;
      arg.variable = std::move(info);
    }
    args.push_back(std::move(arg));
  }
  if (outputs.empty()) {
    for (const tf::Node* node : cluster.nodes) {
      std::vector<bool> read(static_cast<size_t>(node->num_outputs()), false);
      for (const auto& [consumer, slot] : node->data_consumers()) {
        const tf::Output& in = consumer->input(slot);
        if (in.index >= 0 && in.index < node->num_outputs())
          read[static_cast<size_t>(in.index)] = true;
      }
      for (int k = 0; k < node->num_outputs(); ++k) {
        if (!read[static_cast<size_t>(k)])
          cluster.outputs.push_back(tf::Output{const_cast<tf::Node*>(node), k});
      }
    }
  }
  for (const std::string& name : outputs) {
    TFJIT_ASSIGN_OR_RETURN(tf::Output out, graph->FindOutput(name));
    cluster.outputs.push_back(out);
  }
  return tf2hlo::LowerCluster(cluster, args, autofix);
}

absl::Status Run(const Flags& flags, passes::PassPipeline& pipeline) {
  std::unique_ptr<hlo::Module> module;
  if (flags.lower) {
    TFJIT_ASSIGN_OR_RETURN(module, LowerGraph(flags.file, flags.outputs, flags.autofix));
    TFJIT_RETURN_IF_ERROR(pipeline.Run(*module).status());
    hlo::PrintOptions options;
    options.canonical = flags.canonical;
    std::cout << hlo::PrintModule(*module, options);
    return absl::OkStatus();
  }
  TFJIT_ASSIGN_OR_RETURN(std::string text, ReadInput(flags.file));
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
  if (!flags.buffers_for.empty()) {
    const bool cpu = flags.buffers_for == "cpu";
    TFJIT_ASSIGN_OR_RETURN(passes::ModuleBufferAssignment assignment,
                           passes::ModuleBufferAssignment::Build(
                               *module, cpu ? cpu::CpuBufferPolicy() : gpu::GpuBufferPolicy(),
                               cpu ? cpu::kCpuArenaAlignment : gpu::kGpuArenaAlignment));
    std::cout << assignment.ToString();
    return absl::OkStatus();
  }
  if (flags.emit_llvm) {
    TFJIT_ASSIGN_OR_RETURN(std::string ir,
                           cpu::EmitCpuModuleText(*module, cpu::IrEmitterOptions()));
    std::cout << ir;
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
                                     "split-transposed-conv, cse, dce, fusion, cpu)"));
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
