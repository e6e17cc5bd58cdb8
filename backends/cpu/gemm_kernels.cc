// GEMM micro-kernels as LLVM IR (gemm_kernels.h): one function per register block shape,
// all of an ISA's in one module, optimised and compiled for that ISA's target and linked into
// a JIT that lives as long as the process.
#include "backends/cpu/gemm_kernels.h"

#include <algorithm>
#include <cstddef>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/cpu/object_cache.h"
#include "backends/cpu/orc_jit.h"
#include "backends/llvm/target.h"
#include "core/logging.h"
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
            llvm::Value* prev = masked ? static_cast<llvm::Value*>(b.CreateMaskedLoad(
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

// ---- Depthwise tiles (gemm::DepthwiseTileFn) ----

struct TileShape {
  gemm::DepthwiseTile id;
  const char* name;
  int pixels, vectors;
  bool checked;  // nox <= pixels and taps checked against the row; else nox == pixels, inside
};

constexpr TileShape kTiles[] = {
    {gemm::kDepthwiseFull8x1, "full8x1", 8, 1, false},
    {gemm::kDepthwise8x1, "8x1", 8, 1, true},
    {gemm::kDepthwise4x2, "4x2", 4, 2, true},
    {gemm::kDepthwise2x4, "2x4", 2, 4, true},
};

std::string TileName(const TileShape& tile) {
  return absl::StrCat("tfjit_depthwise_tile_", tile.name);
}

// void tile(ptr row, i64 ox0, i64 nox, i64 c0, i64 c_end): gemm::DepthwiseTileFn's contract.
// The function loops over its pixel blocks (the full tile takes any multiple of 8 pixels) and,
// inside, over the channel steps of [c0, c_end), so one call covers a whole run of a channel
// group (per-call setup is amortised; the block's input stays in L1 across the channel
// steps). Accumulators live in allocas that LLVM promotes to registers (their indices are
// constant). The taps loop (kh, kw) at run time: unrolling 3x3 and 5x5 taps made LLVM hoist
// and spill one address offset per (kw, pixel), and measured no faster.
void EmitDepthwiseTile(llvm::Module& module, const KernelTarget& t, const TileShape& tile) {
  llvm::LLVMContext& ctx = module.getContext();
  llvm::IRBuilder<> b(ctx);
  llvm::Type* i64 = b.getInt64Ty();
  llvm::Type* f32 = b.getFloatTy();
  llvm::Type* ptr = b.getPtrTy();
  const unsigned lanes = static_cast<unsigned>(t.lanes);
  llvm::FixedVectorType* vec = llvm::FixedVectorType::get(f32, lanes);
  llvm::FunctionType* type =
      llvm::FunctionType::get(b.getVoidTy(), {ptr, i64, i64, i64, i64}, false);
  llvm::Function* fn =
      llvm::Function::Create(type, llvm::Function::ExternalLinkage, TileName(tile), module);
  fn->addFnAttr("target-cpu", t.cpu);
  if (!t.features.empty()) fn->addFnAttr("target-features", t.features);
  if (t.lanes == 16) fn->addFnAttr("prefer-vector-width", "512");
  fn->addFnAttr(llvm::Attribute::NoUnwind);
  llvm::Value* row_desc = fn->getArg(0);
  llvm::Value* ox0 = fn->getArg(1);
  llvm::Value* nox = fn->getArg(2);
  llvm::Value* c0 = fn->getArg(3);
  llvm::Value* c_end = fn->getArg(4);
  const llvm::Align align(4);
  llvm::Constant* zero = llvm::ConstantAggregateZero::get(vec);
  const int64_t step = static_cast<int64_t>(tile.vectors) * t.lanes;  // channels per step

  llvm::BasicBlock* entry = llvm::BasicBlock::Create(ctx, "entry", fn);
  b.SetInsertPoint(entry);
  auto field = [&](size_t offset, llvm::Type* type_of, const char* name) {
    return b.CreateAlignedLoad(type_of,
                               b.CreateConstInBoundsGEP1_64(b.getInt8Ty(), row_desc, offset),
                               llvm::Align(8), name);
  };
  llvm::Value* rows = field(offsetof(gemm::DepthwiseRow, rows), ptr, "rows");
  llvm::Value* filter = field(offsetof(gemm::DepthwiseRow, filter), ptr, "filter");
  llvm::Value* out = field(offsetof(gemm::DepthwiseRow, out), ptr, "out");
  llvm::Value* k_h = field(offsetof(gemm::DepthwiseRow, k_h), i64, "k_h");
  llvm::Value* k_w = field(offsetof(gemm::DepthwiseRow, k_w), i64, "k_w");
  llvm::Value* in_w = field(offsetof(gemm::DepthwiseRow, in_w), i64, "in_w");
  llvm::Value* channels = field(offsetof(gemm::DepthwiseRow, channels), i64, "channels");
  llvm::Value* stride_w = field(offsetof(gemm::DepthwiseRow, stride_w), i64, "stride_w");
  llvm::Value* dilate_w = field(offsetof(gemm::DepthwiseRow, dilate_w), i64, "dilate_w");
  llvm::Value* pad_left = field(offsetof(gemm::DepthwiseRow, pad_left), i64, "pad_left");
  const int num_acc = tile.pixels * tile.vectors;
  std::vector<llvm::AllocaInst*> acc;
  for (int i = 0; i < num_acc; ++i) acc.push_back(b.CreateAlloca(vec, nullptr, "acc"));
  std::vector<llvm::Constant*> lane_ids;
  for (unsigned l = 0; l < lanes; ++l) lane_ids.push_back(b.getInt32(l));
  llvm::Constant* lane_vec = llvm::ConstantVector::get(lane_ids);
  // The full tile: nox / 8 blocks; a checked one: one block of nox pixels.
  llvm::Value* blocks = tile.checked ? static_cast<llvm::Value*>(b.getInt64(1))
                                     : b.CreateUDiv(nox, b.getInt64(tile.pixels));

  // for (i = 0; i < n; ++i) body(i, latch): body may branch to latch to continue.
  auto counted_loop = [&](llvm::Value* start, llvm::Value* n, llvm::Value* by, const char* name,
                          const auto& body) {
    llvm::BasicBlock* pre = b.GetInsertBlock();
    llvm::BasicBlock* head = llvm::BasicBlock::Create(ctx, absl::StrCat(name, "_head"), fn);
    llvm::BasicBlock* body_block = llvm::BasicBlock::Create(ctx, absl::StrCat(name, "_body"), fn);
    llvm::BasicBlock* latch = llvm::BasicBlock::Create(ctx, absl::StrCat(name, "_latch"), fn);
    llvm::BasicBlock* exit = llvm::BasicBlock::Create(ctx, absl::StrCat(name, "_exit"), fn);
    b.CreateBr(head);
    b.SetInsertPoint(head);
    llvm::PHINode* i = b.CreatePHI(i64, 2, name);
    i->addIncoming(start, pre);
    b.CreateCondBr(b.CreateICmpSLT(i, n), body_block, exit);
    b.SetInsertPoint(body_block);
    body(i, latch);
    b.CreateBr(latch);
    b.SetInsertPoint(latch);
    i->addIncoming(b.CreateAdd(i, by), latch);
    b.CreateBr(head);
    b.SetInsertPoint(exit);
  };
  llvm::Value* one = b.getInt64(1);

  counted_loop(b.getInt64(0), blocks, one, "block", [&](llvm::Value* block, llvm::BasicBlock*) {
    llvm::Value* oxb = b.CreateAdd(ox0, b.CreateMul(block, b.getInt64(tile.pixels)));
    // Pixels of this block: all of them for the full tile, else nox.
    llvm::Value* count = tile.checked ? nox : b.getInt64(tile.pixels);
    counted_loop(c0, c_end, b.getInt64(step), "cstep", [&](llvm::Value* c, llvm::BasicBlock*) {
      llvm::Value* whole = b.CreateICmpSLE(b.CreateAdd(c, b.getInt64(step)), c_end);
      llvm::BasicBlock* join = llvm::BasicBlock::Create(ctx, "cstep_done", fn);
      llvm::BasicBlock* whole_block = llvm::BasicBlock::Create(ctx, "whole", fn);
      llvm::BasicBlock* masked_block = llvm::BasicBlock::Create(ctx, "masked", fn);
      b.CreateCondBr(whole, whole_block, masked_block);
      for (bool masked : {false, true}) {
        b.SetInsertPoint(masked ? masked_block : whole_block);
        std::vector<llvm::Value*> masks;  // lanes below c_end: an i32 compare per vector
        for (int v = 0; v < tile.vectors && masked; ++v) {
          llvm::Value* left = b.CreateSub(c_end, b.CreateAdd(c, b.getInt64(v * t.lanes)));
          left = b.CreateTrunc(
              b.CreateSelect(b.CreateICmpSGT(left, b.getInt64(t.lanes)), b.getInt64(t.lanes), left),
              b.getInt32Ty());
          masks.push_back(b.CreateICmpSLT(lane_vec, b.CreateVectorSplat(lanes, left)));
        }
        auto load = [&](llvm::Value* at, int v) -> llvm::Value* {
          if (!masked) return b.CreateAlignedLoad(vec, at, align);
          return b.CreateMaskedLoad(vec, at, align, masks[static_cast<size_t>(v)], zero);
        };
        for (llvm::AllocaInst* a : acc) b.CreateAlignedStore(zero, a, align);
        // The tap (kh, kw) of input row `row` on every pixel of the block.
        auto tap = [&](llvm::Value* kh, llvm::Value* kw, llvm::Value* row) {
          llvm::Value* index = b.CreateAdd(b.CreateMul(kh, k_w), kw);
          llvm::Value* fp = b.CreateGEP(f32, filter, b.CreateAdd(b.CreateMul(index, channels), c));
          std::vector<llvm::Value*> f;
          for (int v = 0; v < tile.vectors; ++v) {
            f.push_back(load(b.CreateGEP(f32, fp, b.getInt64(v * t.lanes)), v));
          }
          llvm::Value* ix0 = b.CreateSub(
              b.CreateAdd(b.CreateMul(oxb, stride_w), b.CreateMul(kw, dilate_w)), pad_left);
          for (int j = 0; j < tile.pixels; ++j) {
            llvm::Value* ix = b.CreateAdd(ix0, b.CreateMul(b.getInt64(j), stride_w));
            llvm::BasicBlock* after = nullptr;
            if (tile.checked) {
              llvm::Value* inside = b.CreateAnd(
                  b.CreateICmpSLT(b.getInt64(j), count),
                  b.CreateAnd(b.CreateICmpSGE(ix, b.getInt64(0)), b.CreateICmpSLT(ix, in_w)));
              llvm::BasicBlock* then = llvm::BasicBlock::Create(ctx, "tap", fn);
              after = llvm::BasicBlock::Create(ctx, "tap_done", fn);
              b.CreateCondBr(inside, then, after);
              b.SetInsertPoint(then);
            }
            llvm::Value* px = b.CreateGEP(f32, row, b.CreateAdd(b.CreateMul(ix, channels), c));
            for (int v = 0; v < tile.vectors; ++v) {
              llvm::AllocaInst* a = acc[static_cast<size_t>(j * tile.vectors + v)];
              llvm::Value* x = load(b.CreateGEP(f32, px, b.getInt64(v * t.lanes)), v);
              llvm::Value* sum = b.CreateIntrinsic(
                  llvm::Intrinsic::fma, {vec},
                  {x, f[static_cast<size_t>(v)], b.CreateAlignedLoad(vec, a, align)});
              b.CreateAlignedStore(sum, a, align);
            }
            if (after != nullptr) {
              b.CreateBr(after);
              b.SetInsertPoint(after);
            }
          }
        };
        // The taps in (kh, kw) order; a kernel row in the padding is skipped.
        counted_loop(b.getInt64(0), k_h, one, "kh", [&](llvm::Value* kh, llvm::BasicBlock* next) {
          llvm::Value* row = b.CreateAlignedLoad(ptr, b.CreateGEP(ptr, rows, kh), llvm::Align(8));
          llvm::BasicBlock* has_row = llvm::BasicBlock::Create(ctx, "has_row", fn);
          b.CreateCondBr(b.CreateIsNull(row), next, has_row);
          b.SetInsertPoint(has_row);
          counted_loop(b.getInt64(0), k_w, one, "kw",
                       [&](llvm::Value* kw, llvm::BasicBlock*) { tap(kh, kw, row); });
        });
        // Stores: the block's pixels (the first `count` of a checked tile).
        for (int j = 0; j < tile.pixels; ++j) {
          llvm::BasicBlock* after = nullptr;
          if (tile.checked) {
            llvm::BasicBlock* then = llvm::BasicBlock::Create(ctx, "store", fn);
            after = llvm::BasicBlock::Create(ctx, "store_done", fn);
            b.CreateCondBr(b.CreateICmpSLT(b.getInt64(j), count), then, after);
            b.SetInsertPoint(then);
          }
          llvm::Value* pixel = b.CreateAdd(oxb, b.getInt64(j));
          llvm::Value* at = b.CreateGEP(f32, out, b.CreateAdd(b.CreateMul(pixel, channels), c));
          for (int v = 0; v < tile.vectors; ++v) {
            llvm::Value* value =
                b.CreateAlignedLoad(vec, acc[static_cast<size_t>(j * tile.vectors + v)], align);
            llvm::Value* dst = b.CreateGEP(f32, at, b.getInt64(v * t.lanes));
            if (masked) {
              b.CreateMaskedStore(value, dst, align, masks[static_cast<size_t>(v)]);
            } else {
              b.CreateAlignedStore(value, dst, align);
            }
          }
          if (after != nullptr) {
            b.CreateBr(after);
            b.SetInsertPoint(after);
          }
        }
        b.CreateBr(join);
      }
      b.SetInsertPoint(join);
    });
  });
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

// The names of every function in the kernels' module.
std::vector<std::string> FunctionNames() {
  std::vector<std::string> names;
  for (const Shape& s : AllShapes()) names.push_back(KernelName(s.rows, s.vectors));
  for (const TileShape& tile : kTiles) names.push_back(TileName(tile));
  return names;
}

// The kernels' object files, compiled (about 0.4 s of LLVM on one core of the 2 GHz Xeon,
// split over up to 4 threads as the backend splits a cluster's module).
absl::StatusOr<std::vector<std::string>> CompileObjects(GemmIsa isa, const KernelTarget& t) {
  llvm::LLVMContext ctx;
  llvm::Module module("tfjit_gemm_micro_kernels", ctx);
  for (const Shape& s : AllShapes()) EmitKernel(module, t, s.rows, s.vectors);
  for (const TileShape& tile : kTiles) EmitDepthwiseTile(module, t, tile);
  std::string errors;
  llvm::raw_string_ostream os(errors);
  if (llvm::verifyModule(module, &os)) {
    return Internal("generated GEMM micro-kernels for %s fail LLVM's verifier: %s",
                    GemmIsaName(isa), errors);
  }
  const int threads = std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 1, 4);
  return llvm_ir::CompileInParts(module, t.cpu, t.features, /*opt_level=*/3, threads, threads);
}

// The kernels' object files linked into a JIT of their own, every kernel looked up.
absl::StatusOr<std::unique_ptr<GeneratedKernels>> LinkKernels(
    const KernelTarget& t, GemmIsa isa, const std::vector<std::string>& objects) {
  auto compiled = std::make_unique<GeneratedKernels>();
  TFJIT_ASSIGN_OR_RETURN(compiled->jit, OrcJit::Create(/*opt_level=*/3));
  for (const std::string& object : objects) {
    TFJIT_RETURN_IF_ERROR(compiled->jit->AddObject(object));
  }
  compiled->set.lanes = t.lanes;
  compiled->set.isa = GemmIsaName(isa);
  for (const Shape& s : AllShapes()) {
    TFJIT_ASSIGN_OR_RETURN(void* address, compiled->jit->Lookup(KernelName(s.rows, s.vectors)));
    compiled->set.kernels[s.rows][s.vectors] = reinterpret_cast<gemm::MicroKernelFn>(address);
  }
  for (const TileShape& tile : kTiles) {
    TFJIT_ASSIGN_OR_RETURN(void* address, compiled->jit->Lookup(TileName(tile)));
    compiled->set.depthwise[tile.id] = reinterpret_cast<gemm::DepthwiseTileFn>(address);
  }
  return compiled;
}

}  // namespace

absl::StatusOr<std::unique_ptr<GeneratedKernels>> CompileGeneratedKernels(
    GemmIsa isa, const ObjectCache* cache) {
  llvm_ir::InitializeLlvm();
  const KernelTarget t = TargetOf(isa);
  std::string key;
  if (cache != nullptr) {
    // What the objects depend on beyond the code generator's sources and LLVM (in the key).
    key = ObjectCache::ObjectsKey(
        absl::StrCat("gemm micro-kernels and depthwise tiles for ", GemmIsaName(isa), ": ",
                     absl::StrJoin(FunctionNames(), " ")),
        t.cpu, t.features);
    if (std::optional<std::vector<std::string>> objects = cache->LoadObjects(key)) {
      absl::StatusOr<std::unique_ptr<GeneratedKernels>> linked = LinkKernels(t, isa, *objects);
      if (linked.ok()) {
        (*linked)->from_cache = true;
        return linked;
      }
      // An entry that does not link is a miss: it goes, and the compile below stores a new one.
      Log(LogLevel::kWarning, "disk cache: '%s' does not link (%s); compiling instead",
          cache->PathOf(key), linked.status().message());
      cache->Remove(key);
    }
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<std::string> objects, CompileObjects(isa, t));
  if (cache != nullptr) {
    if (absl::Status stored = cache->StoreObjects(key, objects); !stored.ok()) {
      Log(LogLevel::kWarning, "disk cache: generated GEMM kernels not stored: %s",
          stored.ToString());
    }
  }
  return LinkKernels(t, isa, objects);
}

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

absl::StatusOr<const gemm::MicroKernelSet*> GetGemmMicroKernels(GemmIsa isa,
                                                                const ObjectCache* cache) {
  if (!HostRuns(isa)) {
    return absl::UnavailableError(
        absl::StrCat("this CPU cannot run GEMM micro-kernels generated for ", GemmIsaName(isa)));
  }
  static std::mutex mu;
  // Never destroyed: kernels may run until the process exits.
  static auto* compiled =
      new std::map<GemmIsa, absl::StatusOr<std::unique_ptr<GeneratedKernels>>>();
  std::lock_guard<std::mutex> lock(mu);
  auto it = compiled->find(isa);
  if (it == compiled->end()) it = compiled->emplace(isa, CompileGeneratedKernels(isa, cache)).first;
  if (!it->second.ok()) return it->second.status();
  return &(*it->second)->set;
}

namespace {

// The text of a module that `emit` fills (before optimisation).
template <typename Emit>
std::string ModuleIr(const char* name, const Emit& emit) {
  llvm_ir::InitializeLlvm();
  llvm::LLVMContext ctx;
  llvm::Module module(name, ctx);
  emit(module);
  std::string text;
  llvm::raw_string_ostream os(text);
  module.print(os, nullptr);
  return text;
}

}  // namespace

std::string GemmMicroKernelIr(GemmIsa isa, int rows, int vectors) {
  return ModuleIr("tfjit_gemm_micro_kernel",
                  [&](llvm::Module& module) { EmitKernel(module, TargetOf(isa), rows, vectors); });
}

std::string DepthwiseTileIr(GemmIsa isa, gemm::DepthwiseTile tile) {
  return ModuleIr("tfjit_depthwise_tile", [&](llvm::Module& module) {
    for (const TileShape& shape : kTiles) {
      if (shape.id == tile) EmitDepthwiseTile(module, TargetOf(isa), shape);
    }
  });
}

absl::Status InstallHostGemmKernels(const std::string& cache_dir, int64_t cache_max_bytes) {
  static std::once_flag once;
  static absl::Status status;
  std::call_once(once, [&] {
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
    std::optional<ObjectCache> cache;
    if (!cache_dir.empty()) cache.emplace(cache_dir, cache_max_bytes);
    absl::StatusOr<const gemm::MicroKernelSet*> set =
        GetGemmMicroKernels(isa, cache.has_value() ? &*cache : nullptr);
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
