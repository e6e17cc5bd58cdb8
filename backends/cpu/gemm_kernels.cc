// GEMM micro-kernels as LLVM IR (gemm_kernels.h): one function per register block shape,
// all of an ISA's in one module, optimised and compiled for that ISA's target and linked into
// a JIT that lives as long as the process.
#include "backends/cpu/gemm_kernels.h"

#include <algorithm>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "backends/cpu/orc_jit.h"
#include "backends/llvm/target.h"
#include "core/status.h"
#include "llvm/IR/IRBuilder.h"
#include "llvm/IR/Intrinsics.h"
#include "llvm/IR/LLVMContext.h"
#include "llvm/IR/Module.h"
#include "llvm/IR/Verifier.h"
#include "llvm/Support/raw_ostream.h"

namespace tfjit::cpu {
namespace {

struct KernelTarget {
  std::string cpu, features;
  int lanes = 0;
};

KernelTarget TargetOf(GemmIsa isa) {
  if (isa == GemmIsa::kAvx2) return {"x86-64-v3", "", 8};
  const llvm_ir::HostTarget& host = llvm_ir::GetHostTarget();
  return {host.cpu, host.features, 16};
}

std::string KernelName(int rows, int vectors) {
  return absl::StrCat("tfjit_gemm_micro_", rows, "x", vectors);
}

// void kernel(i64 kc, ptr a, i64 lda, ptr panel, ptr c, i64 ldc, i64 cols, i64 accumulate):
// gemm::MicroKernelFn's contract for `rows` x `vectors` vectors of `t.lanes` floats.
void EmitKernel(llvm::Module& module, const KernelTarget& t, int rows, int vectors) {
  llvm::LLVMContext& ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Type* f32 = b.getFloatTy();
  llvm::Type* ptr = b.getPtrTy();
  llvm::FixedVectorType* vec = llvm::FixedVectorType::get(f32, static_cast<unsigned>(t.lanes));
  llvm::FunctionType* type =
      llvm::FunctionType::get(b.getVoidTy(), {i64, ptr, i64, ptr, ptr, i64, i64, i64}, false);
  llvm::Function* fn = llvm::Function::Create(type, llvm::Function::ExternalLinkage,
                                              KernelName(rows, vectors), module);
  fn->addFnAttr("target-cpu", t.cpu);
  if (!t.features.empty()) fn->addFnAttr("target-features", t.features);
  if (t.lanes == 16) fn->addFnAttr("prefer-vector-width", "512");
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  for (unsigned p : {1u, 3u, 4u}) fn->addParamAttr(p, llvm::Attribute::NoAlias);
  llvm::Value* kc = fn->getArg(0);
  llvm::Value* a = fn->getArg(1);
  llvm::Value* lda = fn->getArg(2);
  llvm::Value* panel = fn->getArg(3);
  llvm::Value* c = fn->getArg(4);
  llvm::Value* ldc = fn->getArg(5);
  llvm::Value* cols = fn->getArg(6);
  llvm::Value* accumulate = fn->getArg(7);

  llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  llvm::BasicBlock* loop4 = llvm::BasicBlock::Create(ctx, "k_loop4", fn);
  llvm::BasicBlock* rest = llvm::BasicBlock::Create(ctx, "k_rest", fn);
  llvm::BasicBlock* loop1 = llvm::BasicBlock::Create(ctx, "k_loop1", fn);
  llvm::BasicBlock* done = llvm::BasicBlock::Create(ctx, "k_done", fn);
  const llvm::Align align(4);
  llvm::Constant* zero = llvm::ConstantAggregateZero::get(vec);
  const int width = vectors * t.lanes;
  const size_t num_acc = static_cast<size_t>(rows * vectors);

  b.SetInsertPoint(entry);
  std::vector<llvm::Value*> a_rows;  // a + r * lda
  for (int r = 0; r < rows; ++r) {
    a_rows.push_back(b.CreateGEP(f32, a, b.CreateMul(b.getInt64(r), lda)));
  }
  b.CreateCondBr(b.CreateICmpSGE(kc, b.getInt64(4)), loop4, rest);

  // One k step on the accumulators: the panel's vectors times each row's broadcast `a`.
  auto step = [&](llvm::Value* kk, const std::vector<llvm::Value*>& acc) {
    std::vector<llvm::Value*> bv;
    llvm::Value* panel_row = b.CreateMul(kk, b.getInt64(width));
    for (int v = 0; v < vectors; ++v) {
      llvm::Value* at = b.CreateGEP(f32, panel, b.CreateAdd(panel_row, b.getInt64(v * t.lanes)));
      bv.push_back(b.CreateAlignedLoad(vec, at, align, "b"));
    }
    std::vector<llvm::Value*> next(num_acc);
    for (int r = 0; r < rows; ++r) {
      llvm::Value* at = b.CreateGEP(f32, a_rows[static_cast<size_t>(r)], kk);
      llvm::Value* splat = b.CreateVectorSplat(static_cast<unsigned>(t.lanes),
                                               b.CreateAlignedLoad(f32, at, align, "a"));
      for (int v = 0; v < vectors; ++v) {
        const size_t i = static_cast<size_t>(r * vectors + v);
        next[i] = b.CreateIntrinsic(llvm::Intrinsic::fma, {vec},
                                    {splat, bv[static_cast<size_t>(v)], acc[i]});
      }
    }
    return next;
  };
  // A loop block whose accumulators and k are phis (so they stay in registers), entered
  // from `from` with (k0, acc0), running `unroll` steps per iteration while `more` holds.
  struct Loop {
    llvm::PHINode* kk;
    std::vector<llvm::PHINode*> acc;
    llvm::Value* kk_next;
    std::vector<llvm::Value*> acc_next;
  };
  auto emit_loop = [&](llvm::BasicBlock* block, llvm::BasicBlock* from, llvm::Value* k0,
                       const std::vector<llvm::Value*>& acc0, int unroll) {
    b.SetInsertPoint(block);
    Loop l;
    l.kk = b.CreatePHI(i64, 2, "kk");
    l.kk->addIncoming(k0, from);
    std::vector<llvm::Value*> acc;
    for (size_t i = 0; i < num_acc; ++i) {
      l.acc.push_back(b.CreatePHI(vec, 2, "acc"));
      l.acc.back()->addIncoming(acc0[i], from);
      acc.push_back(l.acc.back());
    }
    for (int u = 0; u < unroll; ++u) acc = step(b.CreateAdd(l.kk, b.getInt64(u)), acc);
    l.kk_next = b.CreateAdd(l.kk, b.getInt64(unroll));
    l.kk->addIncoming(l.kk_next, block);
    for (size_t i = 0; i < num_acc; ++i) l.acc[i]->addIncoming(acc[i], block);
    l.acc_next = acc;
    return l;
  };
  const std::vector<llvm::Value*> zeros(num_acc, zero);

  // Four k steps per iteration while four remain (the loop overhead and address arithmetic
  // shared by four steps), then one at a time. The chain of each output stays in k order.
  Loop l4 = emit_loop(loop4, entry, b.getInt64(0), zeros, 4);
  b.CreateCondBr(b.CreateICmpSLE(b.CreateAdd(l4.kk_next, b.getInt64(4)), kc), loop4, rest);

  b.SetInsertPoint(rest);
  llvm::PHINode* kk_rest = b.CreatePHI(i64, 2, "kk_rest");
  kk_rest->addIncoming(b.getInt64(0), entry);
  kk_rest->addIncoming(l4.kk_next, loop4);
  std::vector<llvm::Value*> acc_rest;
  for (size_t i = 0; i < num_acc; ++i) {
    llvm::PHINode* phi = b.CreatePHI(vec, 2, "acc_rest");
    phi->addIncoming(zero, entry);
    phi->addIncoming(l4.acc_next[i], loop4);
    acc_rest.push_back(phi);
  }
  b.CreateCondBr(b.CreateICmpSLT(kk_rest, kc), loop1, done);

  Loop l1 = emit_loop(loop1, rest, kk_rest, acc_rest, 1);
  b.CreateCondBr(b.CreateICmpSLT(l1.kk_next, kc), loop1, done);

  b.SetInsertPoint(done);
  std::vector<llvm::Value*> result;
  for (size_t i = 0; i < num_acc; ++i) {
    llvm::PHINode* phi = b.CreatePHI(vec, 2, "sum");
    phi->addIncoming(acc_rest[i], rest);
    phi->addIncoming(l1.acc_next[i], loop1);
    result.push_back(phi);
  }
  // Four store paths: full or masked columns, with or without accumulating into c.
  llvm::BasicBlock* ret = llvm::BasicBlock::Create(ctx, "ret", fn);
  llvm::BasicBlock* full = llvm::BasicBlock::Create(ctx, "full", fn);
  llvm::BasicBlock* partial = llvm::BasicBlock::Create(ctx, "partial", fn);
  llvm::Value* adds = b.CreateICmpNE(accumulate, b.getInt64(0));
  b.CreateCondBr(b.CreateICmpSGE(cols, b.getInt64(width)), full, partial);
  std::vector<llvm::Constant*> lane_ids;
  for (int l = 0; l < t.lanes; ++l) lane_ids.push_back(b.getInt64(static_cast<uint64_t>(l)));
  llvm::Constant* lanes = llvm::ConstantVector::get(lane_ids);
  for (bool masked : {false, true}) {
    llvm::BasicBlock* head = masked ? partial : full;
    llvm::BasicBlock* add = llvm::BasicBlock::Create(ctx, masked ? "partial_add" : "full_add", fn);
    llvm::BasicBlock* set = llvm::BasicBlock::Create(ctx, masked ? "partial_set" : "full_set", fn);
    b.SetInsertPoint(head);
    std::vector<llvm::Value*> masks;
    for (int v = 0; v < vectors && masked; ++v) {
      llvm::Value* left = b.CreateSub(cols, b.getInt64(v * t.lanes));
      masks.push_back(
          b.CreateICmpSLT(lanes, b.CreateVectorSplat(static_cast<unsigned>(t.lanes), left)));
    }
    b.CreateCondBr(adds, add, set);
    for (bool adding : {true, false}) {
      b.SetInsertPoint(adding ? add : set);
      for (int v = 0; v < vectors; ++v) {
        for (int r = 0; r < rows; ++r) {
          llvm::Value* at = b.CreateGEP(
              f32, c, b.CreateAdd(b.CreateMul(b.getInt64(r), ldc), b.getInt64(v * t.lanes)));
          llvm::Value* out = result[static_cast<size_t>(r * vectors + v)];
          if (adding) {
            llvm::Value* prev =
                masked ? static_cast<llvm::Value*>(b.CreateMaskedLoad(
                             vec, at, align, masks[static_cast<size_t>(v)], zero))
                       : b.CreateAlignedLoad(vec, at, align);
            out = b.CreateFAdd(out, prev);
          }
          if (masked) {
            b.CreateMaskedStore(out, at, align, masks[static_cast<size_t>(v)]);
          } else {
            b.CreateAlignedStore(out, at, align);
          }
        }
      }
      b.CreateBr(ret);
    }
  }
  b.SetInsertPoint(ret);
  b.CreateRetVoid();
}

struct Shape {
  int rows, vectors;
};

std::vector<Shape> AllShapes() {
  std::vector<Shape> shapes;
  for (int rows = 1; rows <= gemm::kMaxMicroRows; ++rows) {
    for (int vectors = 1; vectors <= 2; ++vectors) shapes.push_back({rows, vectors});
  }
  return shapes;
}

// One ISA's compiled kernels; the JIT owns their code.
struct Compiled {
  std::unique_ptr<OrcJit> jit;
  gemm::MicroKernelSet set;
};

absl::StatusOr<std::unique_ptr<Compiled>> Compile(GemmIsa isa) {
  llvm_ir::InitializeLlvm();
  const KernelTarget t = TargetOf(isa);
  const std::vector<Shape> shapes = AllShapes();
  llvm::LLVMContext ctx;
  llvm::Module module("tfjit_gemm_micro_kernels", ctx);
  for (const Shape& s : shapes) EmitKernel(module, t, s.rows, s.vectors);
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (llvm::verifyModule(module, &os)) {
    return Internal("generated GEMM micro-kernels for %s fail LLVM's verifier: %s",
                    GemmIsaName(isa), errors);
  }
  // The 16 kernels take about 0.4 s of LLVM on one core of the 2 GHz Xeon: split over up to
  // 4 threads, as the backend splits a cluster's module (the first compile in a process
  // waits for them).
  const int threads = std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 4);
  TFJIT_ASSIGN_OR_RETURN(std::vector<std::string> objects,
                         llvm_ir::CompileInParts(module, t.cpu, t.features, /*opt_level=*/3,
                                                 threads, threads));
  auto compiled = std::make_unique<Compiled>();
  TFJIT_ASSIGN_OR_RETURN(compiled->jit, OrcJit::Create(/*opt_level=*/3));
  for (const std::string& object : objects) TFJIT_RETURN_IF_ERROR(compiled->jit->AddObject(object));
  compiled->set.lanes = t.lanes;
  compiled->set.isa = GemmIsaName(isa);
  for (const Shape& s : shapes) {
    TFJIT_ASSIGN_OR_RETURN(void* address, compiled->jit->Lookup(KernelName(s.rows, s.vectors)));
    compiled->set.kernels[s.rows][s.vectors] = reinterpret_cast<gemm::MicroKernelFn>(address);
  }
  return compiled;
}

}  // namespace

const char* GemmIsaName(GemmIsa isa) { return isa == GemmIsa::kAvx2 ? "avx2+fma" : "avx512"; }

bool HostRuns(GemmIsa isa) {
#if defined(__x86_64__)
  if (isa == GemmIsa::kAvx512) return gemm::HostHasAvx512();
  return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
#else
  (void)isa;
  return false;
#endif
}

absl::StatusOr<const gemm::MicroKernelSet*> GetGemmMicroKernels(GemmIsa isa) {
  if (!HostRuns(isa)) {
    return absl::UnavailableError(
        absl::StrCat("this CPU cannot run GEMM micro-kernels generated for ", GemmIsaName(isa)));
  }
  static std::mutex mu;
  // Never destroyed: kernels may run until the process exits.
  static auto* compiled = new std::map<GemmIsa, absl::StatusOr<std::unique_ptr<Compiled>>>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = compiled->find(isa);
  if (it == compiled->end()) it = compiled->emplace(isa, Compile(isa)).first;
  if (!it->second.ok()) return it->second.status();
  return &(*it->second)->set;
}

std::string GemmMicroKernelIr(GemmIsa isa, int rows, int vectors) {
  llvm_ir::InitializeLlvm();
  llvm::LLVMContext ctx;
  llvm::Module module("tfjit_gemm_micro_kernel", ctx);
  EmitKernel(module, TargetOf(isa), rows, vectors);
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  return text;
}

absl::Status InstallHostGemmKernels() {
  static std::once_flag once;
  static absl::Status status;
  std::call_once(once, [] {
    // TFJIT_GEMM=generated uses them also where the hand-written AVX-512 kernels would run,
    // =avx2 the AVX2 ones even on an AVX-512 host (both to compare, and to test every ISA's
    // path on one machine); =eigen keeps Eigen's GEMM wherever there is no AVX-512.
    const char* env = std::getenv("TFJIT_GEMM");
    std::string mode = env != nullptr ? env : "auto";
    if (mode != "auto" && mode != "generated" && mode != "avx2" && mode != "eigen") {
      status = absl::InvalidArgumentError(absl::StrCat(
          "TFJIT_GEMM='", mode, "' is not one of auto, generated, avx2, eigen; using auto"));
      mode = "auto";
    }
    if (mode == "eigen") return;
    const bool generated_everywhere = mode == "generated" || mode == "avx2";
    if (gemm::HostHasAvx512() && !generated_everywhere) return;
    const GemmIsa isa =
        HostRuns(GemmIsa::kAvx512) && mode != "avx2" ? GemmIsa::kAvx512 : GemmIsa::kAvx2;
    if (!HostRuns(isa)) return;  // no AVX2+FMA: Eigen's generic code
    absl::StatusOr<const gemm::MicroKernelSet*> set = GetGemmMicroKernels(isa);
    if (!set.ok()) {
      status = set.status();  // (replaces a note about TFJIT_GEMM: this one matters more)
      return;
    }
    gemm::InstallMicroKernels(*set);
    if (generated_everywhere) gemm::SetIsaForTesting(gemm::Isa::kGenerated);
  });
  return status;
}

}  // namespace tfjit::cpu
