// Buffer assignment: frames' buffers with in-place updates, and the arena packed by live
// intervals (buffer_assignment.h).
#include "compiler/passes/buffer_assignment.h"

#include <algorithm>
#include <limits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/hlo/computation.h"
#include "compiler/hlo/instruction.h"
#include "core/status.h"

namespace tfjit::passes {

using hlo::Instruction;
using hlo::Opcode;

namespace {

void AppendLeafShapes(const hlo::Shape& shape, std::vector<hlo::Shape>& out) {
  if (!shape.IsTuple()) {
    out.push_back(shape);
    return;
  }
  for (const hlo::Shape& s : shape.tuple_shapes()) AppendLeafShapes(s, out);
}

size_t LeafCount(const hlo::Shape& shape) {
  if (!shape.IsTuple()) return 1;
  size_t n = 0;
  for (const hlo::Shape& s : shape.tuple_shapes()) n += LeafCount(s);
  return n;
}

bool Contains(const Leaves& leaves, const BufferRef& ref) {
  return std::find(leaves.begin(), leaves.end(), ref) != leaves.end();
}

// Instructions that read no memory themselves: they only name, regroup or rename buffers.
bool ReadsNothing(const Instruction& inst, const BufferPolicy& policy) {
  switch (inst.opcode()) {
    case Opcode::kParameter:
    case Opcode::kConstant:
    case Opcode::kTuple:
    case Opcode::kGetTupleElement:
      return true;
    case Opcode::kReshape:
      return policy.reshape_aliases;
    default:
      return false;
  }
}

bool IsUpdate(const Instruction& inst, const BufferPolicy& policy) {
  if (inst.opcode() == Opcode::kScatter) return policy.scatter_in_place;
  // An empty update leaves the operand as it is: a copy is the whole work either way.
  return inst.opcode() == Opcode::kDynamicUpdateSlice &&
         inst.operand(1)->shape().num_elements() > 0;
}

constexpr int64_t kEnd = std::numeric_limits<int64_t>::max();

int64_t AlignUp(int64_t x, int64_t alignment) {
  return (x + alignment - 1) / alignment * alignment;
}

std::string RefName(const BufferRef& ref) {
  return ref.constant != nullptr ? std::string("const") : absl::StrCat("b", ref.id);
}

}  // namespace

std::vector<hlo::Shape> LeafShapes(const hlo::Shape& shape) {
  std::vector<hlo::Shape> out;
  AppendLeafShapes(shape, out);
  return out;
}

// ---- FrameAssignment ----

absl::StatusOr<FrameAssignment> FrameAssignment::Build(const hlo::Computation& computation,
                                                       std::vector<Leaves> params,
                                                       bool params_writable,
                                                       const BufferPolicy& policy,
                                                       BufferSource& source) {
  if (static_cast<int>(params.size()) != computation.num_parameters()) {
    return Internal("buffer assignment: computation '%s' takes %d parameters, got %d",
                    computation.name(), computation.num_parameters(),
                    static_cast<int>(params.size()));
  }
  FrameAssignment frame;
  frame.computation_ = &computation;
  for (const Instruction* inst : computation.MakePostOrder()) frame.order_.push_back(inst);
  if (params_writable) {
    for (const Leaves& p : params) {
      for (const BufferRef& ref : p) {
        if (ref.constant == nullptr && ref.id >= 0 && source.MayWrite(ref.id)) {
          frame.writable_params_.insert(ref.id);
        }
      }
    }
  }
  for (const Instruction* inst : frame.order_) {
    Leaves leaves;
    switch (inst->opcode()) {
      case Opcode::kParameter:
        leaves = params[static_cast<size_t>(inst->parameter_number())];
        break;
      case Opcode::kConstant:
        leaves.push_back(BufferRef{-1, inst});
        break;
      case Opcode::kTuple:
        for (const Instruction* op : inst->operands()) {
          const Leaves& l = frame.leaves_.at(op);
          leaves.insert(leaves.end(), l.begin(), l.end());
        }
        break;
      case Opcode::kGetTupleElement: {
        const hlo::Shape& tuple = inst->operand(0)->shape();
        const int index = static_cast<int>(inst->attrs().tuple_index);
        size_t begin = 0;
        for (int j = 0; j < index; ++j) begin += LeafCount(tuple.tuple_shape(j));
        const Leaves& l = frame.leaves_.at(inst->operand(0));
        const size_t end = begin + LeafCount(inst->shape());
        if (end > l.size()) break;  // reported below
        leaves.assign(l.begin() + static_cast<std::ptrdiff_t>(begin),
                      l.begin() + static_cast<std::ptrdiff_t>(end));
        break;
      }
      case Opcode::kReshape:
        if (policy.reshape_aliases) {  // the same row-major bytes
          leaves = frame.leaves_.at(inst->operand(0));
          break;
        }
        [[fallthrough]];
      default:
        for (const hlo::Shape& s : LeafShapes(inst->shape())) {
          const int id = source.NewBuffer(*inst, s);
          frame.owned_.insert(id);
          leaves.push_back(BufferRef{id, nullptr});
        }
        break;
    }
    if (leaves.size() != LeafCount(inst->shape())) {
      return Internal("buffer assignment: instruction '%s' has %d buffers for shape %s",
                      inst->name(), static_cast<int>(leaves.size()), inst->shape().ToString());
    }
    frame.leaves_[inst] = std::move(leaves);
  }
  frame.AssignInPlaceUpdates(policy, source);
  return frame;
}

bool FrameAssignment::Writable(const BufferRef& ref) const {
  return ref.constant == nullptr && ref.id >= 0 &&
         (owned_.contains(ref.id) || writable_params_.contains(ref.id));
}

// Whether an instruction after position `pos`, or the frame's result, reads `ref` (whose value
// at that point is still the one from before order_[pos]).
bool FrameAssignment::OldValueNeeded(size_t pos, const BufferRef& ref) const {
  for (size_t j = pos + 1; j < order_.size(); ++j) {
    const Instruction* user = order_[j];
    const Opcode op = user->opcode();
    if (op == Opcode::kParameter || op == Opcode::kConstant || op == Opcode::kTuple ||
        op == Opcode::kGetTupleElement) {
      continue;  // they read nothing; what reads through them is checked itself
    }
    for (const Instruction* operand : user->operands()) {
      if (Contains(leaves_.at(operand), ref)) return true;
    }
  }
  return Contains(root(), ref);
}

void FrameAssignment::Rename(size_t from_pos, int from_id, int to_id) {
  for (size_t j = from_pos; j < order_.size(); ++j) {
    for (BufferRef& ref : leaves_[order_[j]]) {
      if (ref.constant == nullptr && ref.id == from_id) ref.id = to_id;
    }
  }
}

void FrameAssignment::AssignInPlaceUpdates(const BufferPolicy& policy, BufferSource& source) {
  for (size_t pos = 0; pos < order_.size(); ++pos) {
    const Instruction* update = order_[pos];
    // Both kinds write a part of their operand 0 and keep the rest.
    if (!IsUpdate(*update, policy)) continue;
    const BufferRef target = leaves_.at(update->operand(0))[0];
    if (!Writable(target)) continue;
    bool overlaps = false;  // an update or an index is the buffer being written
    for (int k = 1; k < update->operand_count(); ++k) {
      overlaps = overlaps || Contains(leaves_.at(update->operand(k)), target);
    }
    if (overlaps || OldValueNeeded(pos, target)) continue;
    const int fresh = leaves_.at(update)[0].id;
    source.DropBuffer(fresh);
    owned_.erase(fresh);
    Rename(pos, fresh, target.id);
    in_place_.insert(update);
  }
}

std::string FrameAssignment::ToString() const {
  std::string out;
  for (const Instruction* inst : order_) {
    const Leaves& l = leaves_.at(inst);
    absl::StrAppend(
        &out, "  %", inst->name(), " = {",
        absl::StrJoin(l, " ", [](std::string* o, const BufferRef& r) { o->append(RefName(r)); }),
        "}", in_place(inst) ? " in-place" : "", "\n");
  }
  return out;
}

// ---- ArenaAssignment ----

int ArenaAssignment::Add(int64_t bytes, std::string label) {
  Buffer b;
  b.bytes = bytes;
  b.label = std::move(label);
  buffers_.push_back(std::move(b));
  return size() - 1;
}

void ArenaAssignment::Exclude(int id) { at(id).excluded = true; }

void ArenaAssignment::Touch(int id, int64_t step) {
  Buffer& b = at(id);
  if (!b.touched) {
    b.touched = true;
    b.first = b.last = step;
    return;
  }
  b.first = std::min(b.first, step);
  b.last = std::max(b.last, step);
}

void ArenaAssignment::KeepToEnd(int id) {
  Buffer& b = at(id);
  if (!b.touched) {
    b.touched = true;
    b.first = 0;
  }
  b.last = kEnd;
}

void ArenaAssignment::Loop(int64_t start, int64_t end) {
  for (Buffer& b : buffers_) {
    if (!b.touched || b.last < start || b.first > end) continue;  // not used in the loop
    b.first = std::min(b.first, start);
    b.last = std::max(b.last, end);
  }
}

int64_t ArenaAssignment::Pack(const std::vector<size_t>& ids, const std::vector<int64_t>& size,
                              const std::vector<int64_t>& largest,
                              const std::function<void(size_t, int64_t)>& set) {
  // First fit, largest first: each buffer goes to the lowest offset that overlaps no placed
  // buffer live at the same time.
  std::vector<size_t> order = ids;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return largest[a] > largest[b]; });
  std::vector<std::pair<size_t, int64_t>> placed;  // buffer, offset
  std::vector<std::pair<int64_t, int64_t>> busy;   // [offset, end) of live-overlapping buffers
  int64_t total = 0;
  for (size_t i : order) {
    const Buffer& b = buffers_[i];
    busy.clear();
    for (const auto& [j, at] : placed) {
      const Buffer& o = buffers_[j];
      if (o.first <= b.last && b.first <= o.last) busy.emplace_back(at, at + size[j]);
    }
    std::sort(busy.begin(), busy.end());
    int64_t offset = 0;
    for (const auto& [begin, end] : busy) {
      if (begin >= offset + size[i]) break;
      offset = std::max(offset, end);
    }
    set(i, offset);
    total = std::max(total, offset + size[i]);
    placed.emplace_back(i, offset);
  }
  return total;
}

void ArenaAssignment::Finalize(int64_t alignment) {
  FinalizeSymbolic(alignment, std::vector<int64_t>(buffers_.size(), 0), 0);
}

void ArenaAssignment::FinalizeSymbolic(int64_t alignment, const std::vector<int64_t>& per_batch,
                                       int64_t representative) {
  std::vector<size_t> fixed, scaled;
  std::vector<int64_t> fixed_size(buffers_.size(), 0), unit_size(buffers_.size(), 0),
      bytes(buffers_.size(), 0);
  unshared_bytes_ = 0;
  for (size_t i = 0; i < buffers_.size(); ++i) {
    Buffer& b = buffers_[i];
    b.offset = 0;
    b.unit_offset = 0;
    if (b.excluded || b.bytes == 0) continue;
    if (!b.touched) {  // conservatively live throughout
      b.first = std::numeric_limits<int64_t>::min();
      b.last = kEnd;
    }
    unshared_bytes_ += AlignUp(b.bytes, alignment);
    bytes[i] = b.bytes;
    const int64_t k = i < per_batch.size() ? per_batch[i] : 0;
    if (k == 0) {
      fixed_size[i] = AlignUp(b.bytes, alignment);
      fixed.push_back(i);
    } else {
      const int64_t c = b.bytes - k * representative;
      unit_size[i] = AlignUp(k + std::max<int64_t>(c, 0), alignment);
      scaled.push_back(i);
    }
  }
  arena_bytes_ =
      Pack(fixed, fixed_size, bytes, [&](size_t i, int64_t at) { buffers_[i].offset = at; });
  arena_bytes_ = AlignUp(arena_bytes_, alignment);
  unit_bytes_ = Pack(scaled, unit_size, unit_size, [&](size_t i, int64_t at) {
    buffers_[i].offset = arena_bytes_;
    buffers_[i].unit_offset = at;
  });
}

std::string ArenaAssignment::ToString() const {
  std::string out =
      absl::StrCat("arena ", arena_bytes_, " bytes (unshared ", unshared_bytes_, ")\n");
  auto step = [](int64_t s) {
    return s == kEnd                                  ? std::string("end")
           : s == std::numeric_limits<int64_t>::min() ? std::string("start")
                                                      : absl::StrCat(s);
  };
  for (int id = 0; id < size(); ++id) {
    const Buffer& b = at(id);
    absl::StrAppend(&out, "  b", id, " ", b.label, " ", b.bytes, " bytes");
    if (b.excluded || b.bytes == 0) {
      absl::StrAppend(&out, " excluded\n");
      continue;
    }
    absl::StrAppend(&out, " [", step(b.first), ", ", step(b.last), "] at ", b.offset, "\n");
  }
  return out;
}

// ---- ModuleBufferAssignment ----

namespace {

// The emission walk: one step per non-plumbing instruction, in each frame's order, called
// computations emitted at their call site.
class Walker : public BufferSource {
 public:
  Walker(const BufferPolicy& policy, ArenaAssignment& arena, std::string& frames)
      : policy_(policy), arena_(arena), frames_(frames) {}

  int NewBuffer(const Instruction& value, const hlo::Shape& leaf) override {
    return arena_.Add(leaf.byte_size(), absl::StrCat("%", value.name()));
  }
  void DropBuffer(int id) override { arena_.Exclude(id); }
  bool MayWrite(int id) const override { return !read_only_.contains(id); }

  int AddParameter(const hlo::Shape& shape, const std::string& label, bool writable) {
    const int id = arena_.Add(shape.byte_size(), label);
    if (!writable) read_only_.insert(id);
    return id;
  }

  absl::StatusOr<Leaves> Emit(const hlo::Computation& computation, std::vector<Leaves> params,
                              bool writable) {
    TFJIT_ASSIGN_OR_RETURN(
        FrameAssignment frame,
        FrameAssignment::Build(computation, std::move(params), writable, policy_, *this));
    absl::StrAppend(&frames_, "frame %", computation.name(),
                    writable ? " (writable parameters)" : "", "\n", frame.ToString());
    for (const Instruction* inst : frame.order()) {
      if (ReadsNothing(*inst, policy_)) continue;
      std::vector<BufferRef> read;
      for (const Instruction* op : inst->operands()) {
        for (const BufferRef& r : frame.leaves(op)) read.push_back(r);
      }
      TouchAll(read);
      switch (inst->opcode()) {
        case Opcode::kWhile: {
          const Leaves& state = frame.leaves(inst);
          TouchAll(state);  // the initial value copied in
          ++step_;
          const int64_t start = step_;
          const auto& called = inst->called_computations();
          TFJIT_ASSIGN_OR_RETURN(Leaves predicate, Emit(*called[0], {state}, false));
          TouchAll(predicate);
          ++step_;
          TFJIT_ASSIGN_OR_RETURN(Leaves next, Emit(*called[1], {state}, true));
          TouchAll(next);
          TouchAll(state);  // the body's result copied back
          arena_.Loop(start, ++step_);
          break;
        }
        case Opcode::kConditional: {
          ++step_;
          const auto& branches = inst->called_computations();
          for (size_t b = 0; b < branches.size(); ++b) {
            TFJIT_ASSIGN_OR_RETURN(
                Leaves out, Emit(*branches[b], {frame.leaves(inst->operand(int(b) + 1))}, false));
            TouchAll(out);
            TouchAll(frame.leaves(inst));
            ++step_;
          }
          break;
        }
        case Opcode::kCall: {
          std::vector<Leaves> args;
          for (const Instruction* op : inst->operands()) args.push_back(frame.leaves(op));
          ++step_;
          TFJIT_ASSIGN_OR_RETURN(Leaves out, Emit(*inst->to_apply(), std::move(args), false));
          TouchAll(out);
          TouchAll(frame.leaves(inst));
          break;
        }
        default:
          TouchAll(frame.leaves(inst));
          break;
      }
      ++step_;
    }
    return frame.root();
  }

 private:
  void TouchAll(const Leaves& leaves) {
    for (const BufferRef& r : leaves) {
      if (r.constant == nullptr && r.id >= 0) arena_.Touch(r.id, step_);
    }
  }

  const BufferPolicy& policy_;
  ArenaAssignment& arena_;
  std::string& frames_;
  absl::flat_hash_set<int> read_only_;
  int64_t step_ = 0;
};

}  // namespace

absl::StatusOr<ModuleBufferAssignment> ModuleBufferAssignment::Build(const hlo::Module& module,
                                                                     const BufferPolicy& policy,
                                                                     int64_t alignment) {
  const hlo::Computation* entry = module.entry();
  if (entry == nullptr) return InvalidArgument("module '%s' has no entry", module.name());
  ModuleBufferAssignment result;
  Walker walker(policy, result.arena_, result.frames_);
  std::vector<Leaves> params;
  for (int i = 0; i < entry->num_parameters(); ++i) {
    const Instruction* p = entry->parameter(i);
    Leaves leaves;
    for (const hlo::Shape& s : LeafShapes(p->shape())) {
      const int id = walker.AddParameter(s, absl::StrCat("%", p->name(), " (parameter)"),
                                         policy.entry_parameters_writable);
      result.arena_.Touch(id, -1);
      leaves.push_back(BufferRef{id, nullptr});
    }
    params.push_back(std::move(leaves));
  }
  TFJIT_ASSIGN_OR_RETURN(Leaves root,
                         walker.Emit(*entry, std::move(params), policy.entry_parameters_writable));
  for (const BufferRef& r : root) {
    if (r.constant == nullptr && r.id >= 0) result.arena_.KeepToEnd(r.id);
  }
  result.arena_.Finalize(alignment);
  return result;
}

std::string ModuleBufferAssignment::ToString() const {
  return absl::StrCat(frames_, arena_.ToString());
}

}  // namespace tfjit::passes
