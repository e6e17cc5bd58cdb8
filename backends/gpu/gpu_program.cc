// BuildGpuProgram: steps in program order, slots placed by liveness.
#include "backends/gpu/gpu_program.h"

#include <algorithm>
#include <climits>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/hlo/symbolic.h"
#include "compiler/passes/buffer_assignment.h"
#include "core/status.h"

namespace tfjit::gpu {
namespace {

using hlo::Instruction;
using hlo::Opcode;

constexpr int64_t kAlignment =
    kGpuArenaAlignment;  // cuBLAS's and the widest vector loads' alignment

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

// Builds a program's steps computation by computation. A value is the slots of an array (one)
// or of a tuple's elements. Which slots a computation's values take, and which updates go in
// place, is the shared buffer assignment's (compiler/passes/buffer_assignment.h) with the
// GPU's policy: the builder is its BufferSource. Steps are numbered in emission order across
// nested computations; the shared ArenaAssignment places the arena slots by the steps that
// touch them (a slot touched inside a loop is live for the whole loop).
class ProgramBuilder : public passes::BufferSource {
 public:
  explicit ProgramBuilder(GpuProgram& program) : program_(program) {}

  using Value = std::vector<int>;

  // BufferSource: a computation's values get arena slots, defined when their step runs.
  int NewBuffer(const Instruction& value, const hlo::Shape& leaf) override {
    return NewArenaSlot(ArrayBytes(leaf), absl::StrCat("%", value.name()));
  }
  void DropBuffer(int slot) override { arena_.Exclude(arena_of_.at(slot)); }
  bool MayWrite(int slot) const override { return arena_of_.contains(slot); }

  // Emits `computation`'s steps into `steps`, its parameter i bound to params[i]; returns the
  // root's value.
  // `role`: the entry, a while loop's body, or another called computation (what may be
  // updated in place depends on it).
  enum class Role { kEntry, kLoopBody, kOther };
  absl::StatusOr<Value> Emit(const hlo::Computation& computation, const std::vector<Value>& params,
                             std::vector<GpuStep>& steps, Role role = Role::kOther) {
    std::vector<passes::Leaves> param_leaves;
    for (const Value& v : params) {
      passes::Leaves leaves;
      for (int slot : v) leaves.push_back(passes::BufferRef{slot, nullptr});
      param_leaves.push_back(std::move(leaves));
    }
    // A loop body's parameter is the loop's state, which its result replaces: it may be
    // updated in place, as may the entry's where the policy says so.
    const passes::BufferPolicy policy = GpuBufferPolicy();
    TFJIT_ASSIGN_OR_RETURN(
        passes::FrameAssignment frame,
        passes::FrameAssignment::Build(
            computation, std::move(param_leaves),
            role == Role::kLoopBody || (role == Role::kEntry && policy.entry_parameters_writable),
            policy, *this));
    absl::flat_hash_map<const Instruction*, Value> value_of;
    for (const Instruction* inst : frame.order()) {
      TFJIT_ASSIGN_OR_RETURN(Value v, EmitInstruction(*inst, frame, value_of, steps));
      value_of[inst] = std::move(v);
    }
    return value_of.at(computation.root());
  }

  // A scratch slot of the program's own (a patch matrix, a copy's temporary), defined at
  // `step`.
  int AddArenaSlot(int64_t bytes, int64_t step, std::string label) {
    const int slot = NewArenaSlot(bytes, std::move(label));
    Use(slot, step);
    return slot;
  }

  void Use(int slot, int64_t step) {
    auto it = arena_of_.find(slot);
    if (it != arena_of_.end()) arena_.Touch(it->second, step);
  }

  int64_t step() const { return step_; }
  std::vector<KernelSpec>& kernels() { return kernels_; }

  // After the last step: the arena layout. For a symbolic module, `at_next` is the program
  // built at the next batch size, whose slot sizes give each buffer's bytes per batch row.
  absl::Status Finish(int64_t representative = 0, const GpuProgram* at_next = nullptr) {
    if (at_next == nullptr) {
      arena_.Finalize(kAlignment);
      program_.arena_bytes = arena_.arena_bytes();
      for (const auto& [slot, id] : arena_of_) {
        program_.slots[static_cast<size_t>(slot)].offset = arena_.offset(id);
      }
    } else {
      if (at_next->slots.size() != program_.slots.size()) {
        return FailedPrecondition("the GPU program has %d buffers at batch %d and %d at batch %d",
                                  program_.slots.size(), representative, at_next->slots.size(),
                                  representative + 1);
      }
      std::vector<int64_t> per_row(static_cast<size_t>(arena_.size()), 0);
      for (const auto& [slot, id] : arena_of_) {
        const int64_t grows = at_next->slots[static_cast<size_t>(slot)].bytes -
                              program_.slots[static_cast<size_t>(slot)].bytes;
        if (grows < 0) {
          return FailedPrecondition("GPU buffer s%d shrinks as the batch grows", slot);
        }
        per_row[static_cast<size_t>(id)] = grows;
      }
      // Offsets and the arena's size are k * b + c: held here at the representative.
      arena_.FinalizeSymbolic(kAlignment, per_row, representative);
      program_.arena_bytes = arena_.arena_bytes() + arena_.unit_bytes() * representative;
      program_.arena_bytes_per_row = arena_.unit_bytes();
      for (const auto& [slot, id] : arena_of_) {
        GpuSlot& s = program_.slots[static_cast<size_t>(slot)];
        s.offset = arena_.offset(id) + arena_.unit_offset(id) * representative;
        s.offset_per_row = arena_.unit_offset(id);
      }
    }
    program_.arena_bytes_unshared = arena_.unshared_bytes();
    program_.assignment = arena_.ToString();
    return absl::OkStatus();
  }

 private:
  int NewArenaSlot(int64_t bytes, std::string label) {
    const int slot = static_cast<int>(program_.slots.size());
    program_.slots.push_back(GpuSlot{GpuSlot::Kind::kArena, 0, bytes});
    arena_of_[slot] = arena_.Add(std::max<int64_t>(bytes, 1), std::move(label));
    return slot;
  }

  // The slots of a value as the frame assigned them: constants' slots, and the GEMM output
  // standing for a bias epilogue's fusion.
  Value SlotsOf(const passes::Leaves& leaves) const {
    Value v;
    for (const passes::BufferRef& ref : leaves) {
      if (ref.constant != nullptr) {
        v.push_back(constant_slot_.at(ref.constant));
        continue;
      }
      auto absorbed = absorbed_.find(ref.id);
      v.push_back(absorbed == absorbed_.end() ? ref.id : absorbed->second);
    }
    return v;
  }

  absl::StatusOr<Value> EmitInstruction(
      const Instruction& inst, const passes::FrameAssignment& frame,
      const absl::flat_hash_map<const Instruction*, Value>& value_of, std::vector<GpuStep>& steps) {
    auto operand = [&](int i) -> const Value& { return value_of.at(inst.operand(i)); };
    switch (inst.opcode()) {
      case Opcode::kParameter:
        return SlotsOf(frame.leaves(&inst));
      case Opcode::kConstant: {
        if (!inst.shape().IsArray()) {
          return Unimplemented("gpu backend: tuple constant '%s'", inst.name());
        }
        const int slot = static_cast<int>(program_.slots.size());
        const int64_t bytes = ArrayBytes(inst.shape());
        program_.slots.push_back(
            GpuSlot{GpuSlot::Kind::kConstant, program_.constant_bytes, bytes, &inst});
        program_.constant_bytes += AlignUp(std::max<int64_t>(bytes, 1));
        constant_slot_[&inst] = slot;
        return Value{slot};
      }
      case Opcode::kTuple: {
        for (int i = 0; i < inst.operand_count(); ++i) {
          if (operand(i).size() != 1) {
            return Unimplemented("gpu backend: nested tuple '%s'", inst.name());
          }
        }
        return SlotsOf(frame.leaves(&inst));
      }
      case Opcode::kGetTupleElement:
        return SlotsOf(frame.leaves(&inst));
      case Opcode::kWhile:
        return EmitWhile(inst, operand(0), SlotsOf(frame.leaves(&inst)), steps);
      case Opcode::kConditional:
        return EmitConditional(inst, value_of, SlotsOf(frame.leaves(&inst)), steps);
      case Opcode::kCustomCall:
      case Opcode::kRngBitGenerator:
        return EmitHost(inst, value_of, SlotsOf(frame.leaves(&inst)), steps);
      case Opcode::kCall:
        return Unimplemented(
            "gpu backend: opcode '%s' is not compiled to PTX yet (instruction "
            "'%s')",
            std::string(hlo::OpcodeName(inst.opcode())), inst.name());
      default:
        break;
    }
    if (!inst.shape().IsArray()) {
      return Unimplemented(
          "gpu backend: opcode '%s' with a tuple result is not compiled yet "
          "(instruction '%s')",
          std::string(hlo::OpcodeName(inst.opcode())), inst.name());
    }
    GpuStep s;
    s.inst = &inst;
    s.type = inst.shape().element_type();
    for (int i = 0; i < inst.operand_count(); ++i) {
      if (operand(i).size() != 1) {
        return Unimplemented("gpu backend: '%s' reads a tuple", inst.name());
      }
      s.operands.push_back(operand(i)[0]);
    }
    const int own = frame.leaves(&inst).at(0).id;
    if (int gemm = BiasEpilogueGemm(inst, value_of, steps); gemm >= 0) {
      // The bias joins the GEMM that computed the fusion's other operand (its only reader):
      // the fusion's slot is the GEMM's output.
      GpuStep& g = steps[static_cast<size_t>(gemm)];
      g.bias = s.operands[BiasOperand(inst)];
      Use(g.bias, step_ - 1);
      DropBuffer(own);
      absorbed_[own] = g.output;
      return Value{g.output};
    }
    if (frame.in_place(&inst)) {
      // The update goes into the operand's buffer, which becomes the result's.
      s.kind = GpuStep::Kind::kKernel;
      s.in_place = true;
      s.output = s.operands[0];
      s.kernel = static_cast<int>(kernels_.size());
      s.elements = inst.operand(1)->shape().num_elements();
      kernels_.push_back(KernelSpec{&inst, /*patches=*/false, /*in_place=*/true});
      for (int slot : s.operands) Use(slot, step_);
      const int output = s.output;
      steps.push_back(std::move(s));
      ++step_;
      return Value{output};
    }
    s.output = own;
    Use(own, step_);
    if (std::optional<backends::GemmShape> g = CublasGemm(inst)) {
      s.kind = GpuStep::Kind::kGemm;
      s.gemm = *g;
    } else if (std::optional<conv::Conv2DParams> c = CublasConv(inst)) {
      // out [pixels, out_c] = patches [pixels, taps] x filter [taps, out_c]; a pointwise
      // convolution's patches are its input.
      s.kind = GpuStep::Kind::kGemm;
      s.gemm.m = c->batch * c->out_h * c->out_w;
      s.gemm.k = c->k_h * c->k_w * c->in_c;
      s.gemm.n = c->out_c;
      if (!c->pointwise()) {
        GpuStep patches;
        patches.inst = &inst;
        patches.type = s.type;
        patches.kind = GpuStep::Kind::kKernel;
        patches.patches = true;
        patches.kernel = static_cast<int>(kernels_.size());
        patches.elements = s.gemm.m * s.gemm.k;
        patches.operands = {s.operands[0]};
        patches.output = AddArenaSlot(patches.elements * static_cast<int64_t>(DTypeSize(s.type)),
                                      step_, absl::StrCat("%", inst.name(), " (patches)"));
        kernels_.push_back(KernelSpec{&inst, /*patches=*/true});
        Use(patches.operands[0], step_);
        steps.push_back(patches);
        s.operands[0] = patches.output;
        ++step_;
      }
    } else {
      s.kind = GpuStep::Kind::kKernel;
      s.kernel = static_cast<int>(kernels_.size());
      s.elements = inst.shape().num_elements();
      kernels_.push_back(KernelSpec{&inst});
    }
    for (int slot : s.operands) Use(slot, step_);
    const int output = s.output;
    steps.push_back(std::move(s));
    ++step_;
    return Value{output};
  }

  // For a loop fusion computing add(x, broadcast(bias)) over x's last dim (float32, either
  // order), the fusion operand that is the bias vector; -1 otherwise.
  static int BiasOperand(const Instruction& fusion) {
    if (fusion.opcode() != Opcode::kFusion || fusion.called_computations().empty() ||
        fusion.shape().element_type() != DType::kFloat32 || fusion.shape().rank() < 1) {
      return -1;
    }
    const Instruction* root = fusion.called_computations()[0]->root();
    if (root->opcode() != Opcode::kAdd) return -1;
    for (int side = 0; side < 2; ++side) {
      const Instruction* x = root->operand(side);
      const Instruction* b = root->operand(1 - side);
      if (x->opcode() != Opcode::kParameter || b->opcode() != Opcode::kBroadcast) continue;
      const Instruction* v = b->operand(0);
      const int64_t last = fusion.shape().rank() - 1;
      if (v->opcode() == Opcode::kParameter && v->shape().rank() == 1 &&
          b->dimensions() == std::vector<int64_t>{last}) {
        return static_cast<int>(v->parameter_number());
      }
    }
    return -1;
  }

  // For such a fusion whose other operand is the result of the last step emitted, a float32
  // GEMM with one batch that only this fusion reads: that step's index in `steps`; else -1.
  int BiasEpilogueGemm(const Instruction& fusion,
                       const absl::flat_hash_map<const Instruction*, Value>& value_of,
                       const std::vector<GpuStep>& steps) const {
    const int bias = BiasOperand(fusion);
    if (bias < 0 || steps.empty()) return -1;
    const Instruction* root = fusion.called_computations()[0]->root();
    const Instruction* x = root->operand(root->operand(0)->opcode() == Opcode::kParameter &&
                                                 root->operand(1)->opcode() == Opcode::kBroadcast
                                             ? 0
                                             : 1);
    const Instruction* product = fusion.operand(static_cast<int>(x->parameter_number()));
    const GpuStep& last = steps.back();
    if (last.kind != GpuStep::Kind::kGemm || last.inst != product || last.bias >= 0 ||
        last.type != DType::kFloat32 || last.gemm.batch != 1 || product->user_count() != 1 ||
        fusion.operand(bias) == product || value_of.at(product).at(0) != last.output) {
      return -1;
    }
    return static_cast<int>(steps.size()) - 1;
  }

  // A step that runs `inst` on the host.
  absl::StatusOr<Value> EmitHost(const Instruction& inst,
                                 const absl::flat_hash_map<const Instruction*, Value>& value_of,
                                 Value results, std::vector<GpuStep>& steps) {
    GpuStep host;
    host.kind = GpuStep::Kind::kHost;
    host.inst = &inst;
    for (const Instruction* op : inst.operands()) {
      const Value& v = value_of.at(op);
      if (v.size() != 1) return Unimplemented("gpu backend: '%s' reads a tuple", inst.name());
      host.operands.push_back(v[0]);
      Use(v[0], step_);
    }
    for (int slot : results) Use(slot, step_);
    host.results = results;
    host.output = results.at(0);
    steps.push_back(std::move(host));
    ++step_;
    return results;
  }

  // A step copying slot `from` into slot `to`.
  void EmitCopy(const Instruction& inst, int from, int to, std::vector<GpuStep>& steps) {
    GpuStep copy;
    copy.kind = GpuStep::Kind::kCopy;
    copy.inst = &inst;
    copy.operands = {from};
    copy.output = to;
    Use(from, step_);
    Use(to, step_);
    steps.push_back(std::move(copy));
    ++step_;
  }

  // Copies `from` into `to` element by element; elements that are themselves among `to`'s
  // slots (a body passing state element i on as element j) go through a fresh slot first, so
  // no copy overwrites what a later one reads.
  void EmitParallelCopy(const Instruction& inst, const Value& from, const Value& to,
                        std::vector<GpuStep>& steps) {
    Value sources = from;
    for (size_t j = 0; j < sources.size(); ++j) {
      if (sources[j] == to[j]) continue;
      if (std::find(to.begin(), to.end(), sources[j]) != to.end()) {
        const int temp = AddArenaSlot(program_.slots[static_cast<size_t>(sources[j])].bytes, step_,
                                      absl::StrCat("%", inst.name(), " (temporary)"));
        EmitCopy(inst, sources[j], temp, steps);
        sources[j] = temp;
      }
    }
    for (size_t j = 0; j < sources.size(); ++j) {
      if (sources[j] != to[j]) EmitCopy(inst, sources[j], to[j], steps);
    }
  }

  absl::StatusOr<Value> EmitWhile(const Instruction& inst, const Value& init, Value state,
                                  std::vector<GpuStep>& steps) {
    const hlo::Computation* cond = inst.called_computations().at(0);
    const hlo::Computation* body = inst.called_computations().at(1);
    EmitParallelCopy(inst, init, state, steps);
    GpuStep loop;
    loop.kind = GpuStep::Kind::kWhile;
    loop.inst = &inst;
    loop.nested.resize(2);
    const int64_t start = step_;
    TFJIT_ASSIGN_OR_RETURN(Value predicate, Emit(*cond, {state}, loop.nested[0]));
    loop.predicate = predicate.at(0);
    Use(loop.predicate, step_);
    ++step_;  // the predicate is read here
    TFJIT_ASSIGN_OR_RETURN(Value next, Emit(*body, {state}, loop.nested[1], Role::kLoopBody));
    if (next.size() != state.size()) {
      return Internal("while '%s': the body's result does not match the state", inst.name());
    }
    EmitParallelCopy(inst, next, state, loop.nested[1]);
    // What the loop touches stays live for all its iterations.
    arena_.Loop(start, step_);
    steps.push_back(std::move(loop));
    ++step_;
    return state;
  }

  absl::StatusOr<Value> EmitConditional(
      const Instruction& inst, const absl::flat_hash_map<const Instruction*, Value>& value_of,
      Value result, std::vector<GpuStep>& steps) {
    GpuStep branch_step;
    branch_step.kind = GpuStep::Kind::kConditional;
    branch_step.inst = &inst;
    branch_step.predicate = value_of.at(inst.operand(0)).at(0);
    Use(branch_step.predicate, step_);
    ++step_;
    const auto& branches = inst.called_computations();
    branch_step.nested.resize(branches.size());
    for (size_t b = 0; b < branches.size(); ++b) {
      const Value& operand = value_of.at(inst.operand(static_cast<int>(b) + 1));
      TFJIT_ASSIGN_OR_RETURN(Value out, Emit(*branches[b], {operand}, branch_step.nested[b]));
      if (out.size() != result.size()) {
        return Internal("conditional '%s': a branch's result does not match", inst.name());
      }
      for (size_t j = 0; j < out.size(); ++j) {
        EmitCopy(inst, out[j], result[j], branch_step.nested[b]);
      }
    }
    steps.push_back(std::move(branch_step));
    ++step_;
    return result;
  }

  GpuProgram& program_;
  passes::ArenaAssignment arena_;
  absl::flat_hash_map<int, int> arena_of_;  // arena slot -> its ArenaAssignment id
  absl::flat_hash_map<const Instruction*, int> constant_slot_;
  absl::flat_hash_map<int, int> absorbed_;  // a bias fusion's slot -> the GEMM output it is
  std::vector<KernelSpec> kernels_;
  int64_t step_ = 0;
};

}  // namespace

passes::BufferPolicy GpuBufferPolicy() {
  passes::BufferPolicy policy;
  policy.entry_parameters_writable = true;  // the run's copies in the arena
  return policy;
}

namespace {

// The program of `module`; for a symbolic module, `at_next` is its program at the next batch
// size (null while that one is built).
absl::StatusOr<GpuProgram> BuildProgram(const hlo::Module& module, const std::string& sm,
                                        const GpuProgram* at_next) {
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr) return InvalidArgument("module '%s' has no entry", module.name());
  GpuProgram program;
  program.sm = sm;
  ProgramBuilder builder(program);
  std::vector<ProgramBuilder::Value> params;
  for (int i = 0; i < entry->num_parameters(); ++i) {
    const hlo::Shape& shape = entry->parameter(i)->shape();
    if (!shape.IsArray()) {
      return Unimplemented("gpu backend: tuple parameter %d of module '%s'", i, module.name());
    }
    const int slot = builder.AddArenaSlot(
        ArrayBytes(shape), -1, absl::StrCat("%", entry->parameter(i)->name(), " (parameter)"));
    program.parameter_slots.push_back(slot);
    params.push_back({slot});
  }
  TFJIT_ASSIGN_OR_RETURN(ProgramBuilder::Value root,
                         builder.Emit(*entry, params, program.steps, ProgramBuilder::Role::kEntry));
  // The outputs are copied out after the last step.
  const hlo::Shape& shape = entry->root()->shape();
  for (size_t k = 0; k < root.size(); ++k) {
    program.output_slots.push_back(root[k]);
    program.output_shapes.push_back(shape.IsArray() ? shape
                                                    : shape.tuple_shape(static_cast<int>(k)));
    builder.Use(root[k], builder.step());
  }
  TFJIT_RETURN_IF_ERROR(builder.Finish(module.batch_representative(), at_next));
  TFJIT_ASSIGN_OR_RETURN(program.ptx, EmitPtxKernels(module, builder.kernels(), sm));
  program.batch_representative = module.batch_representative();
  return program;
}

// Whether `shape` (or an element of it) depends on the batch size.
bool Symbolic(const hlo::Shape& shape) { return shape.IsSymbolic(); }

// Fills the per-row fields of `steps` from the same steps built at the next batch size;
// FAILED_PRECONDITION where the two differ in anything but sizes, or where a host step (the
// evaluator, at the instruction's own shapes) would see a batch-sized value.
absl::Status DeriveSteps(std::vector<GpuStep>& steps, const std::vector<GpuStep>& next) {
  if (steps.size() != next.size()) {
    return FailedPrecondition("the GPU program has %d steps at one batch size and %d at the next",
                              steps.size(), next.size());
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    GpuStep& s = steps[i];
    const GpuStep& t = next[i];
    if (s.kind != t.kind || s.kernel != t.kernel || s.patches != t.patches ||
        s.in_place != t.in_place || s.bias != t.bias || s.output != t.output ||
        s.operands != t.operands || s.results != t.results || s.predicate != t.predicate ||
        s.nested.size() != t.nested.size() || s.inst->name() != t.inst->name() ||
        s.gemm.transpose_lhs != t.gemm.transpose_lhs ||
        s.gemm.transpose_rhs != t.gemm.transpose_rhs || s.gemm.rhs_outer != t.gemm.rhs_outer) {
      return FailedPrecondition(
          "the GPU program's step for '%s' differs between one batch size and the next",
          s.inst->name());
    }
    if (s.kind == GpuStep::Kind::kHost) {
      bool sized = Symbolic(s.inst->shape());
      for (const hlo::Instruction* op : s.inst->operands()) sized = sized || Symbolic(op->shape());
      if (sized) {
        return FailedPrecondition(
            "'%s' runs on the host and its operands or result depend on the batch size",
            s.inst->name());
      }
    }
    s.elements_per_row = t.elements - s.elements;
    s.gemm_per_row.batch = t.gemm.batch - s.gemm.batch;
    s.gemm_per_row.m = t.gemm.m - s.gemm.m;
    s.gemm_per_row.n = t.gemm.n - s.gemm.n;
    s.gemm_per_row.k = t.gemm.k - s.gemm.k;
    for (size_t b = 0; b < s.nested.size(); ++b) {
      TFJIT_RETURN_IF_ERROR(DeriveSteps(s.nested[b], t.nested[b]));
    }
  }
  return absl::OkStatus();
}

// The line of `ptx` where it first differs from `other`, with the kernel it is in.
std::string FirstPtxDifference(const GpuProgram& program, const std::string& other) {
  const std::string& ptx = program.ptx.ptx;
  size_t at = 0;
  while (at < ptx.size() && at < other.size() && ptx[at] == other[at]) ++at;
  const size_t line_start = ptx.rfind('\n', at == 0 ? 0 : at - 1);
  const size_t begin = line_start == std::string::npos ? 0 : line_start + 1;
  size_t end = ptx.find('\n', at);
  if (end == std::string::npos) end = ptx.size();
  std::string line(absl::StripAsciiWhitespace(ptx.substr(begin, end - begin)));
  const size_t entry = ptx.rfind(".entry kernel_", begin);
  int kernel = -1;
  if (entry != std::string::npos) {
    const size_t digits = entry + std::string(".entry kernel_").size();
    (void)absl::SimpleAtoi(ptx.substr(digits, ptx.find_first_not_of("0123456789", digits) - digits),
                           &kernel);
  }
  if (kernel >= 0 && kernel < static_cast<int>(program.ptx.kernels.size())) {
    return absl::StrCat("%", program.ptx.kernels[static_cast<size_t>(kernel)].instruction,
                        " (kernel_", kernel, ": ", line, ")");
  }
  return absl::StrCat("'", line, "'");
}

}  // namespace

absl::StatusOr<GpuProgram> BuildGpuProgram(const hlo::Module& module, const std::string& sm) {
  const int64_t representative = module.batch_representative();
  if (representative <= 0) return BuildProgram(module, sm, nullptr);
  // A symbolic module: its program at the next batch size says what every size gains per
  // row; the code must be the same at both.
  std::unique_ptr<hlo::Module> next_module = hlo::Rebase(module, representative + 1);
  TFJIT_ASSIGN_OR_RETURN(GpuProgram next, BuildProgram(*next_module, sm, nullptr));
  TFJIT_ASSIGN_OR_RETURN(GpuProgram program, BuildProgram(module, sm, &next));
  if (program.ptx.ptx != next.ptx.ptx) {
    return FailedPrecondition(
        "the GPU code of module '%s' depends on the batch size; first difference: %s",
        module.name(), FirstPtxDifference(program, next.ptx.ptx));
  }
  for (size_t k = 0; k < program.ptx.kernels.size(); ++k) {
    const PtxKernel& a = program.ptx.kernels[k];
    const PtxKernel& b = next.ptx.kernels[k];
    if (a.threads_per_element != b.threads_per_element ||
        a.elements_per_thread != b.elements_per_thread || a.one_block != b.one_block) {
      return FailedPrecondition("the GPU launch of %%%s in module '%s' depends on the batch size",
                                a.instruction, module.name());
    }
  }
  if (program.parameter_slots != next.parameter_slots ||
      program.output_slots != next.output_slots) {
    return FailedPrecondition(
        "the GPU program of module '%s' places its arguments or results "
        "differently at batch %d and %d",
        module.name(), representative, representative + 1);
  }
  for (size_t i = 0; i < program.slots.size(); ++i) {
    GpuSlot& s = program.slots[i];
    const GpuSlot& t = next.slots[i];
    if (s.kind != t.kind || (s.kind == GpuSlot::Kind::kConstant && s.bytes != t.bytes)) {
      return FailedPrecondition("GPU buffer s%d of module '%s' differs between batch %d and %d", i,
                                module.name(), representative, representative + 1);
    }
    s.bytes_per_row = t.bytes - s.bytes;
  }
  TFJIT_RETURN_IF_ERROR(DeriveSteps(program.steps, next.steps));
  return program;
}

namespace {

// `value` held at batch `from`, gaining `per_row` per row, at batch `to`.
int64_t At(int64_t value, int64_t per_row, int64_t from, int64_t to) {
  return value + per_row * (to - from);
}

absl::Status StepsAt(std::vector<GpuStep>& steps, int64_t from, int64_t to) {
  for (GpuStep& s : steps) {
    s.elements = At(s.elements, s.elements_per_row, from, to);
    if (s.kind == GpuStep::Kind::kGemm) {
      s.gemm.batch = At(s.gemm.batch, s.gemm_per_row.batch, from, to);
      s.gemm.m = At(s.gemm.m, s.gemm_per_row.m, from, to);
      s.gemm.n = At(s.gemm.n, s.gemm_per_row.n, from, to);
      s.gemm.k = At(s.gemm.k, s.gemm_per_row.k, from, to);
      for (int64_t d : {s.gemm.batch, s.gemm.m, s.gemm.n, s.gemm.k}) {
        if (d < 0 || d > INT_MAX) {
          return OutOfRange(
              "at batch size %d the GEMM of '%s' (%d x %d x %d, %d batches) does "
              "not fit cuBLAS's int arguments",
              to, s.inst->name(), s.gemm.m, s.gemm.n, s.gemm.k, s.gemm.batch);
        }
      }
    }
    for (std::vector<GpuStep>& nested : s.nested) TFJIT_RETURN_IF_ERROR(StepsAt(nested, from, to));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<GpuProgram> GpuProgram::AtBatch(int64_t batch) const {
  if (batch_representative <= 0) {
    return FailedPrecondition("AtBatch: the GPU program is not symbolic");
  }
  if (batch < 1) return InvalidArgument("AtBatch: batch size %d (must be >= 1)", batch);
  const int64_t from = batch_representative;
  GpuProgram out;
  out.sm = sm;
  out.ptx.kernels = ptx.kernels;
  out.steps = steps;
  TFJIT_RETURN_IF_ERROR(StepsAt(out.steps, from, batch));
  out.slots = slots;
  for (GpuSlot& s : out.slots) {
    s.offset = At(s.offset, s.offset_per_row, from, batch);
    s.bytes = At(s.bytes, s.bytes_per_row, from, batch);
  }
  out.parameter_slots = parameter_slots;
  out.output_slots = output_slots;
  for (const hlo::Shape& shape : output_shapes) out.output_shapes.push_back(shape.AtBatch(batch));
  out.arena_bytes = At(arena_bytes, arena_bytes_per_row, from, batch);
  out.arena_bytes_unshared = arena_bytes_unshared;
  out.constant_bytes = constant_bytes;
  out.batch_representative = batch;
  out.arena_bytes_per_row = arena_bytes_per_row;
  return out;
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

namespace {

void DescribeSteps(const GpuProgram& program, const std::vector<GpuStep>& steps,
                   const std::string& indent, std::string& out) {
  auto slot_name = [&](int s) {
    const GpuSlot& slot = program.slots[static_cast<size_t>(s)];
    return absl::StrCat("s", s, slot.kind == GpuSlot::Kind::kConstant ? "(const)" : "");
  };
  auto slots = [&](const std::vector<int>& v) {
    return absl::StrJoin(v, " ", [&](std::string* o, int s) { o->append(slot_name(s)); });
  };
  for (const GpuStep& s : steps) {
    switch (s.kind) {
      case GpuStep::Kind::kWhile:
        absl::StrAppend(&out, indent, "while ", s.inst->name(), " {\n");
        DescribeSteps(program, s.nested[0], indent + "  ", out);
        absl::StrAppend(&out, indent, "} while ", slot_name(s.predicate), " {\n");
        DescribeSteps(program, s.nested[1], indent + "  ", out);
        absl::StrAppend(&out, indent, "}\n");
        continue;
      case GpuStep::Kind::kConditional:
        for (size_t b = 0; b < s.nested.size(); ++b) {
          absl::StrAppend(&out, indent, "branch ", b, " of ", s.inst->name(), " on ",
                          slot_name(s.predicate), " {\n");
          DescribeSteps(program, s.nested[b], indent + "  ", out);
          absl::StrAppend(&out, indent, "}\n");
        }
        continue;
      default:
        break;
    }
    const char* kind = s.kind == GpuStep::Kind::kGemm   ? "gemm "
                       : s.kind == GpuStep::Kind::kCopy ? "copy "
                       : s.kind == GpuStep::Kind::kHost ? "host "
                       : s.in_place                     ? "update "
                       : s.patches                      ? "patches "
                                                        : "kernel ";
    const GpuSlot& out_slot = program.slots[static_cast<size_t>(s.output)];
    absl::StrAppend(&out, indent, kind, s.inst->name(), " <- [", slots(s.operands),
                    s.bias >= 0 ? absl::StrCat(" + bias ", slot_name(s.bias)) : "", "] -> ",
                    slot_name(s.output), " (arena ", out_slot.offset, "+", out_slot.bytes, ")\n");
  }
}

}  // namespace

std::string GpuProgram::Describe() const {
  std::string out;
  DescribeSteps(*this, steps, "", out);
  return out;
}

}  // namespace tfjit::gpu
