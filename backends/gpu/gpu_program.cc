// BuildGpuProgram: steps in program order, slots placed by liveness.
#include "backends/gpu/gpu_program.h"

#include <algorithm>
#include <climits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/status.h"

namespace tfjit::gpu {
namespace {

using hlo::Instruction;
using hlo::Opcode;

constexpr int64_t kAlignment = 256;  // cuBLAS's and the widest vector loads' alignment

int64_t AlignUp(int64_t bytes) { return (bytes + kAlignment - 1) / kAlignment * kAlignment; }

int64_t ArrayBytes(const hlo::Shape& shape) {
  return shape.num_elements() * static_cast<int64_t>(DTypeSize(shape.element_type()));
}

// A dot cuBLAS computes: a float GEMM whose sizes fit cuBLAS's int arguments.
std::optional<backends::GemmShape> CublasGemm(const Instruction& inst) {
  if (inst.opcode() != Opcode::kDot) return std::nullopt;
  std::optional<backends::GemmShape> g = backends::MatchGemm(inst);
  if (!g.has_value() || g->rhs_outer > 0) return std::nullopt;
  for (int64_t d : {g->batch, g->m, g->n, g->k}) {
    if (d <= 0 || d > INT_MAX) return std::nullopt;
  }
  for (int i = 0; i < 2; ++i) {
    if (inst.operand(i)->shape().element_type() != inst.shape().element_type()) {
      return std::nullopt;
    }
  }
  return g;
}

// A one-group NHWC convolution cuBLAS computes as patches times filter, its sizes within
// cuBLAS's int arguments.
std::optional<conv::Conv2DParams> CublasConv(const Instruction& inst) {
  if (inst.opcode() != Opcode::kConvolution) return std::nullopt;
  std::optional<conv::Conv2DParams> c = backends::MatchConv2D(inst);
  if (!c.has_value() || c->groups != 1) return std::nullopt;
  for (int64_t d : {c->batch * c->out_h * c->out_w, c->k_h * c->k_w * c->in_c, c->out_c,
                    c->batch * c->out_h * c->out_w * c->k_h * c->k_w * c->in_c}) {
    if (d <= 0 || d > INT_MAX) return std::nullopt;
  }
  return c;
}

// Arena buffers of [first, last] live steps, placed first fit, largest first: two share bytes
// only when their live ranges are disjoint.
struct Interval {
  int slot;
  int64_t bytes, first, last, offset = 0;
};

int64_t PlaceIntervals(std::vector<Interval>& intervals) {
  std::vector<Interval*> order;
  for (Interval& i : intervals) order.push_back(&i);
  std::stable_sort(order.begin(), order.end(),
                   [](const Interval* a, const Interval* b) { return a->bytes > b->bytes; });
  std::vector<const Interval*> placed;
  int64_t end = 0;
  for (Interval* cur : order) {
    std::vector<std::pair<int64_t, int64_t>> taken;  // [begin, end) of live-overlapping buffers
    for (const Interval* p : placed) {
      if (p->first <= cur->last && cur->first <= p->last) {
        taken.emplace_back(p->offset, p->offset + p->bytes);
      }
    }
    std::sort(taken.begin(), taken.end());
    int64_t offset = 0;
    for (const auto& [b, e] : taken) {
      if (offset + cur->bytes <= b) break;
      offset = std::max(offset, AlignUp(e));
    }
    cur->offset = offset;
    end = std::max(end, offset + cur->bytes);
    placed.push_back(cur);
  }
  return AlignUp(end);
}

}  // namespace

absl::StatusOr<GpuProgram> BuildGpuProgram(const hlo::Module& module, const std::string& sm) {
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr) return InvalidArgument("module '%s' has no entry", module.name());
  GpuProgram program;
  program.sm = sm;
  absl::flat_hash_map<const Instruction*, int> slot_of;
  std::vector<Interval> intervals;  // arena slots' live ranges, by slot order
  absl::flat_hash_map<int, size_t> interval_of;
  auto add_arena_slot = [&](int64_t bytes, int64_t step) {
    const int slot = static_cast<int>(program.slots.size());
    program.slots.push_back(GpuSlot{GpuSlot::Kind::kArena, 0, bytes});
    interval_of[slot] = intervals.size();
    intervals.push_back(Interval{slot, std::max<int64_t>(bytes, 1), step, step});
    return slot;
  };
  auto use = [&](int slot, int64_t step) {
    auto it = interval_of.find(slot);
    if (it != interval_of.end()) intervals[it->second].last = step;
  };

  std::vector<KernelSpec> kernels;
  program.parameter_slots.assign(static_cast<size_t>(entry->num_parameters()), -1);
  const Instruction* root = entry->root();
  const auto order = entry->MakePostOrder();
  for (const Instruction* inst : order) {
    switch (inst->opcode()) {
      case Opcode::kWhile: case Opcode::kConditional: case Opcode::kCall:
      case Opcode::kCustomCall: case Opcode::kRngBitGenerator:
        return Unimplemented("gpu backend: opcode '%s' is not compiled to PTX yet (instruction "
                             "'%s')", std::string(hlo::OpcodeName(inst->opcode())), inst->name());
      default:
        break;
    }
  }
  int64_t step = 0;
  for (const Instruction* inst : order) {
    switch (inst->opcode()) {
      case Opcode::kParameter: {
        const int slot = add_arena_slot(ArrayBytes(inst->shape()), -1);
        program.parameter_slots[static_cast<size_t>(inst->parameter_number())] = slot;
        slot_of[inst] = slot;
        continue;
      }
      case Opcode::kConstant: {
        if (!inst->shape().IsArray()) {
          return Unimplemented("gpu backend: tuple constant '%s'", inst->name());
        }
        const int slot = static_cast<int>(program.slots.size());
        const int64_t bytes = ArrayBytes(inst->shape());
        program.slots.push_back(
            GpuSlot{GpuSlot::Kind::kConstant, program.constant_bytes, bytes, inst});
        program.constant_bytes += AlignUp(std::max<int64_t>(bytes, 1));
        slot_of[inst] = slot;
        continue;
      }
      case Opcode::kTuple:
        // The root's, or one that only get-tuple-elements read (they alias its elements).
        for (const Instruction* user : inst->users()) {
          if (user->opcode() != Opcode::kGetTupleElement) {
            return Unimplemented("gpu backend: tuple '%s' read by '%s' is not compiled yet",
                                 inst->name(), user->name());
          }
        }
        continue;
      case Opcode::kGetTupleElement:
        if (inst->operand(0)->opcode() != Opcode::kTuple) {
          return Unimplemented("gpu backend: get-tuple-element '%s' of a non-tuple value",
                               inst->name());
        }
        slot_of[inst] = slot_of.at(inst->operand(0)->operand(static_cast<int>(inst->attrs().tuple_index)));
        continue;
      default:
        break;
    }
    if (!inst->shape().IsArray()) {
      return Unimplemented("gpu backend: opcode '%s' with a tuple result is not compiled yet "
                           "(instruction '%s')", std::string(hlo::OpcodeName(inst->opcode())),
                           inst->name());
    }
    GpuStep s;
    s.inst = inst;
    s.type = inst->shape().element_type();
    for (const Instruction* operand : inst->operands()) s.operands.push_back(slot_of.at(operand));
    s.output = add_arena_slot(ArrayBytes(inst->shape()), step);
    slot_of[inst] = s.output;
    if (std::optional<backends::GemmShape> g = CublasGemm(*inst)) {
      s.kind = GpuStep::Kind::kGemm;
      s.gemm = *g;
    } else if (std::optional<conv::Conv2DParams> c = CublasConv(*inst)) {
      // out [pixels, out_c] = patches [pixels, taps] x filter [taps, out_c]; a pointwise
      // convolution's patches are its input.
      s.kind = GpuStep::Kind::kGemm;
      s.gemm.m = c->batch * c->out_h * c->out_w;
      s.gemm.k = c->k_h * c->k_w * c->in_c;
      s.gemm.n = c->out_c;
      if (!c->pointwise()) {
        GpuStep patches;
        patches.inst = inst;
        patches.type = s.type;
        patches.kind = GpuStep::Kind::kKernel;
        patches.patches = true;
        patches.kernel = static_cast<int>(kernels.size());
        patches.elements = s.gemm.m * s.gemm.k;
        patches.operands = {s.operands[0]};
        patches.output = add_arena_slot(
            patches.elements * static_cast<int64_t>(DTypeSize(s.type)), step);
        kernels.push_back(KernelSpec{inst, /*patches=*/true});
        use(patches.operands[0], step);
        program.steps.push_back(patches);
        s.operands[0] = patches.output;
        ++step;
      }
    } else {
      s.kind = GpuStep::Kind::kKernel;
      s.kernel = static_cast<int>(kernels.size());
      s.elements = inst->shape().num_elements();
      kernels.push_back(KernelSpec{inst});
    }
    for (int slot : s.operands) use(slot, step);
    program.steps.push_back(std::move(s));
    ++step;
  }
  // The outputs are copied out after the last step.
  std::vector<const Instruction*> outputs;
  if (root->opcode() == Opcode::kTuple) {
    outputs.assign(root->operands().begin(), root->operands().end());
  } else {
    outputs.push_back(root);
  }
  for (const Instruction* out : outputs) {
    if (!out->shape().IsArray()) {
      return Unimplemented("gpu backend: nested tuple output '%s'", out->name());
    }
    const int slot = slot_of.at(out);
    program.output_slots.push_back(slot);
    program.output_shapes.push_back(out->shape());
    use(slot, step);
  }
  for (const Interval& i : intervals) program.arena_bytes_unshared += AlignUp(i.bytes);
  program.arena_bytes = PlaceIntervals(intervals);
  for (const Interval& i : intervals) {
    program.slots[static_cast<size_t>(i.slot)].offset = i.offset;
  }
  TFJIT_ASSIGN_OR_RETURN(program.ptx, EmitPtxKernels(module, kernels, sm));
  return program;
}

CublasGemmArgs CublasArgsFor(const backends::GemmShape& g) {
  CublasGemmArgs a;
  a.m = static_cast<int>(g.n);
  a.n = static_cast<int>(g.m);
  a.k = static_cast<int>(g.k);
  a.transa = g.transpose_rhs ? 1 : 0;
  a.transb = g.transpose_lhs ? 1 : 0;
  a.lda = g.transpose_rhs ? a.k : a.m;
  a.ldb = g.transpose_lhs ? a.n : a.k;
  a.ldc = a.m;
  a.stride_a = static_cast<long long>(g.k) * g.n;
  a.stride_b = static_cast<long long>(g.m) * g.k;
  a.stride_c = static_cast<long long>(g.m) * g.n;
  a.batch = static_cast<int>(g.batch);
  return a;
}

std::string GpuProgram::Describe() const {
  auto slot_name = [this](int s) {
    const GpuSlot& slot = slots[static_cast<size_t>(s)];
    return absl::StrCat("s", s, slot.kind == GpuSlot::Kind::kConstant ? "(const)" : "");
  };
  std::string out;
  for (const GpuStep& s : steps) {
    absl::StrAppend(&out, s.kind == GpuStep::Kind::kGemm ? "gemm " : "kernel ", s.inst->name(),
                    " <- [",
                    absl::StrJoin(s.operands, " ",
                                  [&](std::string* o, int v) { o->append(slot_name(v)); }),
                    "] -> ", slot_name(s.output), " (arena ",
                    slots[static_cast<size_t>(s.output)].offset, "+",
                    slots[static_cast<size_t>(s.output)].bytes, ")\n");
  }
  return out;
}

}  // namespace tfjit::gpu
