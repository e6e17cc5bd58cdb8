// CPU IR emission of library calls (GEMM and convolution bodies, which the runtime library
// splits across the pool) and custom calls (top-k, NMS, scans, where, linalg): each a call
// into runtime_library.cc with the operands' pointers and sizes.
#include <cstdint>
#include <string>
#include <vector>

#include "backends/cpu/ir_emitter_internal.h"
#include "backends/cpu/runtime_abi.h"
#include "core/dtype.h"
#include "core/linalg.h"
#include "core/nms.h"
#include "core/random_fill.h"
#include "core/status.h"
#include "core/top_k.h"
#include "core/where.h"

namespace tfjit::cpu {

using hlo::Opcode;

void CpuIrEmitter::EmitGemmBody(const Instruction& inst, const GemmShape& g, llvm::Value* out,
                                llvm::Value* lhs, llvm::Value* rhs, llvm::Value* packed,
                                llvm::Value* ctx, llvm::Value* epilogue, llvm::Value* buffers) {
  const bool f32 = inst.shape().element_type() == DType::kFloat32;
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::Type* i32 = b_.getInt32Ty();
  if (g.rhs_outer > 0) {
    llvm::FunctionCallee outer = module_->getOrInsertFunction(
        f32 ? "tfjit_cpu_matmul_outer_f32" : "tfjit_cpu_matmul_outer_f64",
        llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, ptr, ptr, i64, i64, i64, i64, i32},
                                false));
    b_.CreateCall(outer,
                  {ctx, out, lhs, rhs, b_.getInt64(g.rhs_outer), b_.getInt64(g.m), b_.getInt64(g.n),
                   b_.getInt64(g.k), b_.getInt32(g.transpose_lhs ? 1 : 0)});
    return;
  }
  llvm::FunctionCallee fn = module_->getOrInsertFunction(
      f32 ? "tfjit_cpu_matmul_f32" : "tfjit_cpu_matmul_f64",
      llvm::FunctionType::get(b_.getVoidTy(),
                              {ptr, ptr, ptr, ptr, ptr, i64, i64, i64, i64, i32, i32, ptr, ptr},
                              false));
  // A symbolic module's batch size reaches the GEMM's batch count (the output's dim 0 is
  // the first batch dim), its rows (no batch dims: dim 0 is the lhs's first free dim) or its
  // depth (the lhs contracts its dim 0).
  llvm::Value* batch = b_.getInt64(g.batch);
  llvm::Value* m = b_.getInt64(g.m);
  llvm::Value* k = b_.getInt64(g.k);
  const hlo::Shape& lhs_shape = inst.operand(0)->shape();
  const hlo::DotDims& dd = inst.attrs().dot;
  if (inst.shape().has_symbolic_dim0()) {
    if (!dd.lhs_batch.empty() && dd.lhs_batch[0] == 0) {
      batch = ScaledByDim0(inst.shape(), g.batch);
    } else if (dd.lhs_batch.empty()) {
      m = ScaledByDim0(inst.shape(), g.m);
    }
  } else if (lhs_shape.has_symbolic_dim0() && dd.lhs_contracting.size() == 1 &&
             dd.lhs_contracting[0] == 0) {
    k = ScaledByDim0(lhs_shape, g.k);
  }
  b_.CreateCall(fn, {ctx, out, lhs, rhs, packed, batch, m, b_.getInt64(g.n), k,
                     b_.getInt32(g.transpose_lhs ? 1 : 0), b_.getInt32(g.transpose_rhs ? 1 : 0),
                     epilogue, buffers});
}

// One call; the runtime splits the convolution across the pool itself.
void CpuIrEmitter::EmitConvBody(const Instruction& inst, const conv::Conv2DParams& p,
                                llvm::Value* out, llvm::Value* lhs, llvm::Value* rhs,
                                llvm::Value* packed, llvm::Value* ctx, llvm::Value* epilogue,
                                llvm::Value* buffers) {
  const bool f32 = inst.shape().element_type() == DType::kFloat32;
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i64 = b_.getInt64Ty();
  std::vector<llvm::Type*> params = {ptr, ptr, ptr, ptr, ptr};
  const std::vector<int64_t> values = {
      p.batch,    p.in_h,         p.in_w,         p.in_c,         p.k_h,          p.k_w,
      p.out_c,    p.out_h,        p.out_w,        p.stride_h,     p.stride_w,     p.pad_top,
      p.pad_left, p.lhs_dilate_h, p.lhs_dilate_w, p.rhs_dilate_h, p.rhs_dilate_w, p.groups};
  params.insert(params.end(), values.size(), i64);
  params.push_back(ptr);
  params.push_back(ptr);
  llvm::FunctionCallee fn =
      module_->getOrInsertFunction(f32 ? "tfjit_cpu_conv2d_f32" : "tfjit_cpu_conv2d_f64",
                                   llvm::FunctionType::get(b_.getVoidTy(), params, false));
  std::vector<llvm::Value*> args = {ctx, out, lhs, rhs, packed};
  for (int64_t v : values) args.push_back(b_.getInt64(v));
  // NHWC: a symbolic module's batch size is the images' count.
  const hlo::Shape& lhs_shape = inst.operand(0)->shape();
  if (lhs_shape.has_symbolic_dim0() && inst.attrs().conv.input_batch == 0) {
    args[5] = elemental_.Dim(lhs_shape, 0);
  }
  args.push_back(epilogue);
  args.push_back(buffers);
  b_.CreateCall(fn, args);
}

// A Philox fill (core/random_fill.h), a top-k (core/top_k.h), a decomposition (core/linalg.h)
// or a non-max suppression (core/nms.h): one runtime call from the entry
// function, which shards the work across the pool itself (CheckSequenced accepted the target
// and shapes).
absl::Status CpuIrEmitter::EmitCustomCall(const Instruction& inst, const FramePlan& frame) {
  if (inst.attrs().custom_call_target == topk::kTopKTarget) return EmitTopK(inst, frame);
  if (inst.attrs().custom_call_target == nms::kNmsTarget) return EmitNms(inst, frame);
  if (inst.attrs().custom_call_target == where::kWhereTarget) return EmitWhere(inst, frame);
  if (linalg::CallOfTarget(inst.attrs().custom_call_target)) return EmitLinalg(inst, frame);
  const int64_t n = inst.shape().num_elements();
  if (n == 0) return absl::OkStatus();
  const std::optional<random::RandomDistribution> dist =
      random::RandomDistributionOfTarget(inst.attrs().custom_call_target);
  if (!dist.has_value()) return UnsupportedOpcode(inst);
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::FunctionCallee fill = module_->getOrInsertFunction(
      "tfjit_cpu_philox_fill",
      llvm::FunctionType::get(b_.getVoidTy(), {ptr, i32, i32, ptr, ptr, b_.getInt64Ty()}, false));
  b_.CreateCall(fill, {run_ctx_, b_.getInt32(static_cast<int32_t>(*dist)),
                       b_.getInt32(static_cast<int32_t>(inst.shape().element_type())),
                       Pointer(frame.leaves(inst.operand(0))[0]), Pointer(frame.leaves(&inst)[0]),
                       b_.getInt64(n)});
  return absl::OkStatus();
}

absl::Status CpuIrEmitter::EmitTopK(const Instruction& inst, const FramePlan& frame) {
  const hlo::Shape& in = inst.operand(0)->shape();
  const int64_t n = in.dims().back();
  const int64_t k = inst.shape().tuple_shape(0).dims().back();
  const int64_t rows = n == 0 ? 0 : in.num_elements() / n;
  if (rows == 0 || k == 0) return absl::OkStatus();
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::FunctionType* type = llvm::FunctionType::get(
      b_.getVoidTy(), {ptr, b_.getInt32Ty(), ptr, ptr, ptr, i64, i64, i64}, false);
  llvm::FunctionCallee top_k = module_->getOrInsertFunction("tfjit_cpu_top_k", type);
  const Leaves& out = frame.leaves(&inst);
  b_.CreateCall(top_k, {run_ctx_, b_.getInt32(static_cast<int32_t>(in.element_type())),
                        Pointer(frame.leaves(inst.operand(0))[0]), Pointer(out[0]), Pointer(out[1]),
                        b_.getInt64(rows), b_.getInt64(n), b_.getInt64(k)});
  return absl::OkStatus();
}

// Non-max suppression (core/nms.h, IsNms accepted the shapes): one runtime call.
absl::Status CpuIrEmitter::EmitNms(const Instruction& inst, const FramePlan& frame) {
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::FunctionType* type = llvm::FunctionType::get(
      b_.getVoidTy(), {ptr, ptr, ptr, ptr, ptr, i64, i64, ptr, ptr, ptr}, false);
  llvm::FunctionCallee nms_fn = module_->getOrInsertFunction("tfjit_cpu_nms", type);
  const Leaves& out = frame.leaves(&inst);
  // The soft-NMS form has a fifth operand (sigma) and a third result (the selected scores).
  const bool soft = inst.operand_count() == 5;
  llvm::Value* null = llvm::ConstantPointerNull::get(llvm::PointerType::get(b_.getContext(), 0));
  b_.CreateCall(
      nms_fn, {Pointer(frame.leaves(inst.operand(0))[0]), Pointer(frame.leaves(inst.operand(1))[0]),
               Pointer(frame.leaves(inst.operand(2))[0]), Pointer(frame.leaves(inst.operand(3))[0]),
               soft ? Pointer(frame.leaves(inst.operand(4))[0]) : null,
               b_.getInt64(inst.operand(0)->shape().dims()[0]),
               b_.getInt64(inst.shape().tuple_shape(0).dims()[0]), Pointer(out[0]), Pointer(out[1]),
               soft ? Pointer(out[2]) : null});
  return absl::OkStatus();
}

// A prefix-scan reduce-window (MatchScan): one runtime call, O(n) per line, in order.
absl::Status CpuIrEmitter::EmitScan(const ScanShape& scan, const Instruction& inst,
                                    const FramePlan& frame) {
  if (inst.shape().num_elements() == 0) return absl::OkStatus();
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::FunctionType* type =
      llvm::FunctionType::get(b_.getVoidTy(), {ptr, i32, i32, ptr, ptr, i64, i64, i64}, false);
  llvm::FunctionCallee fn = module_->getOrInsertFunction("tfjit_cpu_scan", type);
  b_.CreateCall(fn, {run_ctx_, b_.getInt32(scan.multiply ? 1 : 0),
                     b_.getInt32(static_cast<int32_t>(scan.type)),
                     Pointer(frame.leaves(inst.operand(0))[0]), Pointer(frame.leaves(&inst)[0]),
                     b_.getInt64(scan.outer), b_.getInt64(scan.n), b_.getInt64(scan.inner)});
  return absl::OkStatus();
}

// Where's coordinates (core/where.h, IsWhere accepted the shapes): one runtime call, the
// operand's dims a constant array of the module.
absl::Status CpuIrEmitter::EmitWhere(const Instruction& inst, const FramePlan& frame) {
  const hlo::Shape& in = inst.operand(0)->shape();
  llvm::Type* ptr = b_.getPtrTy();
  std::vector<uint64_t> dims(in.dims().begin(), in.dims().end());
  dims.push_back(0);  // never an empty array
  llvm::Constant* init = llvm::ConstantDataArray::get(module_->getContext(), dims);
  auto* dims_global =
      new llvm::GlobalVariable(*module_, init->getType(), /*isConstant=*/true,
                               llvm::GlobalValue::PrivateLinkage, init, "where_dims");
  llvm::FunctionType* type =
      llvm::FunctionType::get(b_.getVoidTy(), {ptr, ptr, b_.getInt32Ty(), ptr, ptr}, false);
  llvm::FunctionCallee where_fn = module_->getOrInsertFunction("tfjit_cpu_where", type);
  const Leaves& out = frame.leaves(&inst);
  b_.CreateCall(where_fn, {Pointer(frame.leaves(inst.operand(0))[0]), dims_global,
                           b_.getInt32(in.rank()), Pointer(out[0]), Pointer(out[1])});
  return absl::OkStatus();
}

// A decomposition or solver of core/linalg.h (IsLinalg accepted the shapes): one runtime call,
// which shards the batch across the pool.
absl::Status CpuIrEmitter::EmitLinalg(const Instruction& inst, const FramePlan& frame) {
  const std::optional<linalg::Call> call = linalg::CallOfTarget(inst.attrs().custom_call_target);
  std::vector<std::vector<int64_t>> ins;
  for (int64_t i = 0; i < inst.operand_count(); ++i) ins.push_back(inst.operand(i)->shape().dims());
  std::vector<std::pair<DType, std::vector<int64_t>>> outs;
  for (const hlo::Shape& t : inst.shape().tuple_shapes())
    outs.push_back({t.element_type(), t.dims()});
  const DType dtype = inst.operand(0)->shape().element_type();
  const std::optional<linalg::Problem> p = linalg::MatchShapes(*call, dtype, ins, outs);
  if (!p.has_value()) return UnsupportedOpcode(inst);
  if (p->batch == 0) return absl::OkStatus();
  llvm::Type* ptr = b_.getPtrTy();
  llvm::Type* i32 = b_.getInt32Ty();
  llvm::Type* i64 = b_.getInt64Ty();
  llvm::FunctionType* type = llvm::FunctionType::get(
      b_.getVoidTy(), {ptr, i32, i32, i32, i64, i64, i64, i64, ptr, ptr, ptr, ptr, ptr}, false);
  llvm::FunctionCallee fn = module_->getOrInsertFunction("tfjit_cpu_linalg", type);
  const Leaves& out = frame.leaves(&inst);
  llvm::Value* null =
      llvm::ConstantPointerNull::get(llvm::PointerType::getUnqual(module_->getContext()));
  std::vector<llvm::Value*> args = {run_ctx_,
                                    b_.getInt32(static_cast<int32_t>(call->kind)),
                                    b_.getInt32(call->flags),
                                    b_.getInt32(static_cast<int32_t>(dtype)),
                                    b_.getInt64(p->batch),
                                    b_.getInt64(p->m),
                                    b_.getInt64(p->n),
                                    b_.getInt64(p->k)};
  for (int64_t i = 0; i < 2; ++i) {
    args.push_back(i < inst.operand_count() ? Pointer(frame.leaves(inst.operand(i))[0]) : null);
  }
  for (size_t i = 0; i < 3; ++i) args.push_back(i < out.size() ? Pointer(out[i]) : null);
  b_.CreateCall(fn, args);
  return absl::OkStatus();
}

}  // namespace tfjit::cpu
