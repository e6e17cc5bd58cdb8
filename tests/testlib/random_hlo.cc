// The random HLO generator. A module is grown step by step from a pool of values: each step
// picks an operation, finds or builds operands of the right shape (an existing value, a
// broadcast, convert or reshape of one, or a new parameter / constant / iota) and adds the
// instruction through the Builder, so shape inference keeps it valid. Each new value's error
// bound comes from random_hlo_bounds.cc; a value that would be invalid (e.g. a compare of two
// approximate floats) is removed again and another step is tried.
#include "tests/testlib/random_hlo.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/container/node_hash_map.h"
#include "absl/strings/str_cat.h"
#include "compiler/hlo/builder.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/verifier.h"
#include "core/dtype.h"
#include "core/status.h"
#include "tests/testlib/random_hlo_bounds.h"
#include "tests/testlib/random_literal.h"

namespace tfjit::testlib {
namespace {

using hlo::Attributes;
using hlo::Builder;
using hlo::Computation;
using hlo::Instruction;
using hlo::Literal;
using hlo::Opcode;
using hlo::Shape;

class Rng {
 public:
  explicit Rng(uint64_t seed) : state_(seed * 0x2545F4914F6CDD1Dull + 17) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform in [lo, hi].
  int64_t Int(int64_t lo, int64_t hi) {
    return lo + static_cast<int64_t>(Next() % static_cast<uint64_t>(hi - lo + 1));
  }
  bool Chance(double p) { return static_cast<double>(Next() >> 11) * 0x1.0p-53 < p; }
  template <typename T>
  const T& Pick(const std::vector<T>& v) {
    return v[static_cast<size_t>(Int(0, static_cast<int64_t>(v.size()) - 1))];
  }

 private:
  uint64_t state_;
};

// Values of one computation that later steps may use as operands.
struct Scope {
  Computation* comp;
  Builder b;
  std::vector<Instruction*> pool;
  int depth = 0;
};

enum class ScalarKind { kZero, kOne, kLowest, kHighest, kAllOnes };

Literal ScalarLiteral(DType t, ScalarKind kind) {
  Literal l(Shape::Scalar(t));
  DispatchNumeric(t, [&](auto tag) {
    using T = decltype(tag);
    T v{};
    if constexpr (std::is_same_v<T, bool>) {
      v = kind == ScalarKind::kOne || kind == ScalarKind::kHighest || kind == ScalarKind::kAllOnes;
    } else {
      using L = std::numeric_limits<T>;
      switch (kind) {
        case ScalarKind::kZero:
          v = T(0);
          break;
        case ScalarKind::kOne:
          v = T(1);
          break;
        case ScalarKind::kLowest:
          v = L::has_infinity ? -L::infinity() : L::lowest();
          break;
        case ScalarKind::kHighest:
          v = L::has_infinity ? L::infinity() : L::max();
          break;
        case ScalarKind::kAllOnes:
          if constexpr (std::is_integral_v<T>) v = static_cast<T>(~uint64_t{0});
          break;
      }
    }
    *l.data<T>() = v;
  });
  return l;
}

std::vector<int64_t> Factorize(int64_t n) {
  std::vector<int64_t> f;
  for (int64_t p = 2; p * p <= n; ++p) {
    while (n % p == 0) {
      f.push_back(p);
      n /= p;
    }
  }
  if (n > 1) f.push_back(n);
  return f;
}

int64_t NumElements(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

int BitWidth(DType t) { return static_cast<int>(DTypeSize(t)) * 8; }

class Generator {
 public:
  Generator(uint64_t seed, const RandomHloOptions& options)
      : rng_(seed),
        options_(options),
        module_(std::make_unique<hlo::Module>(absl::StrCat("random_", seed))) {
    edge_ = rng_.Chance(0.25);
  }

  absl::StatusOr<RandomHloModule> Run();

 private:
  // Adds an instruction through the Builder and records its bound. Returns nullptr (and removes
  // the instruction) when the bound is invalid. A shape error is a generator bug.
  absl::StatusOr<Instruction*> Emit(Scope& s, Opcode op, const std::vector<Instruction*>& operands,
                                    Attributes attrs = {}, std::vector<Computation*> called = {},
                                    const Shape& hint = Shape());
  void Record(Scope& s, Instruction* inst, ValueBound bound);
  absl::StatusOr<Instruction*> Leaf(Scope& s, const Shape& shape);
  absl::StatusOr<Instruction*> ValueOf(Scope& s, const Shape& shape);
  absl::StatusOr<Instruction*> Pick(Scope& s);
  absl::StatusOr<Instruction*> Scalar(Scope& s, DType t, ScalarKind kind);
  absl::StatusOr<Instruction*> StartIndex(Scope& s, DType t, int64_t dim);
  DType RandomDType();
  std::vector<int64_t> RandomDims();
  Computation* Combiner(Opcode op, DType t) {
    return hlo::GetOrAddScalarBinaryComputation(module_.get(), op, t);
  }
  const ValueBound& BoundOf(const Instruction* i) { return bounds_[i]; }
  void Analyze(const Computation& comp, const ValueBound& param_bound);

  // One random step; nullptr when the chosen operation did not fit.
  absl::StatusOr<Instruction*> Step(Scope& s);
  absl::StatusOr<Instruction*> GenUnary(Scope& s);
  absl::StatusOr<Instruction*> GenBinary(Scope& s, Instruction* a = nullptr);
  absl::StatusOr<Instruction*> GenCompare(Scope& s);
  absl::StatusOr<Instruction*> GenSelect(Scope& s);
  absl::StatusOr<Instruction*> GenClamp(Scope& s);
  absl::StatusOr<Instruction*> GenConvert(Scope& s);
  absl::StatusOr<Instruction*> GenBroadcast(Scope& s);
  absl::StatusOr<Instruction*> GenReshape(Scope& s);
  absl::StatusOr<Instruction*> GenTranspose(Scope& s);
  absl::StatusOr<Instruction*> GenSlice(Scope& s);
  absl::StatusOr<Instruction*> GenConcatenate(Scope& s);
  absl::StatusOr<Instruction*> GenPad(Scope& s);
  absl::StatusOr<Instruction*> GenReverse(Scope& s);
  absl::StatusOr<Instruction*> GenReduce(Scope& s, Instruction* x = nullptr);
  absl::StatusOr<Instruction*> GenReduceWindow(Scope& s);
  absl::StatusOr<Instruction*> GenDot(Scope& s);
  absl::StatusOr<Instruction*> GenDynamicSlice(Scope& s);
  absl::StatusOr<Instruction*> GenDynamicUpdateSlice(Scope& s);
  absl::StatusOr<Instruction*> GenGather(Scope& s);
  absl::StatusOr<Instruction*> GenTupleGte(Scope& s);
  absl::StatusOr<Instruction*> GenChain(Scope& s);
  absl::StatusOr<Instruction*> GenWhile(Scope& s);
  absl::StatusOr<Instruction*> GenConditional(Scope& s);
  // Generates `steps` steps in a fresh scope over the get-tuple-elements of `param`, then picks
  // for each state element from `first` on a value of its shape (only exact ones where the
  // element is exact), falling back to the element itself.
  absl::StatusOr<std::vector<Instruction*>> GenSubComputation(Scope& sub, Instruction* param,
                                                              int steps, size_t first);

  Rng rng_;
  RandomHloOptions options_;
  std::unique_ptr<hlo::Module> module_;
  bool edge_ = false;
  int num_params_ = 0;
  // node_hash_map: TransferBound holds pointers to operands' bounds while new ones are added.
  absl::node_hash_map<const Instruction*, ValueBound> bounds_;
};

void Generator::Record(Scope& s, Instruction* inst, ValueBound bound) {
  const bool usable = bound.valid && inst->shape().IsArray();
  bounds_[inst] = std::move(bound);
  if (usable) s.pool.push_back(inst);
}

absl::StatusOr<Instruction*> Generator::Emit(Scope& s, Opcode op,
                                             const std::vector<Instruction*>& operands,
                                             Attributes attrs, std::vector<Computation*> called,
                                             const Shape& hint) {
  auto inst = s.b.Add(op, operands, std::move(attrs), std::move(called), hint);
  if (!inst.ok()) {
    return Internal("random hlo generator built an invalid %s: %s", hlo::OpcodeName(op),
                    inst.status().message());
  }
  std::vector<const ValueBound*> ops;
  for (const Instruction* o : operands) ops.push_back(&bounds_[o]);
  ValueBound bound = TransferBound(**inst, ops);
  if (!bound.valid) {
    TFJIT_RETURN_IF_ERROR(s.comp->RemoveInstruction(*inst));
    return nullptr;
  }
  Record(s, *inst, std::move(bound));
  return *inst;
}

DType Generator::RandomDType() {
  const int r = static_cast<int>(rng_.Int(0, 99));
  if (r < 36) return DType::kFloat32;
  if (r < 56) return DType::kInt32;
  if (r < 66) return DType::kBool;
  if (r < 76) return DType::kFloat64;
  if (r < 83) return DType::kFloat16;
  if (r < 89) return DType::kBFloat16;
  if (r < 94) return DType::kInt64;
  if (r < 97) return DType::kUInt8;
  return DType::kUInt32;
}

std::vector<int64_t> Generator::RandomDims() {
  if (rng_.Chance(0.04)) {  // occasionally larger: ~1000 elements
    if (rng_.Chance(0.5)) return {rng_.Int(900, 1100)};
    return {rng_.Int(28, 36), rng_.Int(28, 36)};
  }
  const int r = static_cast<int>(rng_.Int(0, 99));
  const int rank = r < 15 ? 0 : r < 40 ? 1 : r < 70 ? 2 : r < 90 ? 3 : 4;
  std::vector<int64_t> dims;
  for (int i = 0; i < rank; ++i) {
    const int k = static_cast<int>(rng_.Int(0, 99));
    dims.push_back(k < 4 ? 0 : k < 24 ? 1 : rng_.Int(2, 9));
  }
  while (NumElements(dims) > 512) {
    for (int64_t& d : dims) d = std::max<int64_t>(1, d / 2);
  }
  return dims;
}

absl::StatusOr<Instruction*> Generator::Leaf(Scope& s, const Shape& shape) {
  const int r = static_cast<int>(rng_.Int(0, 99));
  Instruction* inst = nullptr;
  ValueBound bound;
  if (s.depth == 0 && r < 60 && num_params_ < 8) {
    inst = s.b.Parameter(num_params_++, shape);
    bound = ParameterBound(shape, edge_);
  } else if (r < 85 || shape.element_type() == DType::kBool || shape.rank() == 0) {
    Literal lit = RandomLiteral(shape, rng_.Next(), edge_ && rng_.Chance(0.5));
    bound = LiteralBound(lit);
    inst = s.b.Constant(std::move(lit));
  } else {
    Attributes attrs;
    attrs.iota_dimension = rng_.Int(0, shape.rank() - 1);
    TFJIT_ASSIGN_OR_RETURN(inst, s.b.Add(Opcode::kIota, {}, attrs, {}, shape));
    bound = TransferBound(*inst, {});
  }
  Record(s, inst, std::move(bound));
  return inst;
}

absl::StatusOr<Instruction*> Generator::Scalar(Scope& s, DType t, ScalarKind kind) {
  Instruction* c = s.b.Constant(ScalarLiteral(t, kind));
  Record(s, c, LiteralBound(c->literal()));
  return c;
}

absl::StatusOr<Instruction*> Generator::Pick(Scope& s) {
  if (s.pool.empty()) return Leaf(s, Shape(RandomDType(), RandomDims()));
  const int64_t n = static_cast<int64_t>(s.pool.size());
  // Often one of the newest values, so chains form; often an unused one, so fewer values end
  // up dead (DCE'd before the backend sees them); otherwise any.
  const int r = static_cast<int>(rng_.Int(0, 9));
  if (r < 3) {
    std::vector<Instruction*> unused;
    for (Instruction* v : s.pool) {
      if (v->user_count() == 0) unused.push_back(v);
    }
    if (!unused.empty()) return rng_.Pick(unused);
  }
  const int64_t i = r < 7 ? rng_.Int(std::max<int64_t>(0, n - 4), n - 1) : rng_.Int(0, n - 1);
  return s.pool[static_cast<size_t>(i)];
}

absl::StatusOr<Instruction*> Generator::ValueOf(Scope& s, const Shape& shape) {
  std::vector<Instruction*> same, lower, convertible, reshapable;
  for (Instruction* v : s.pool) {
    const Shape& vs = v->shape();
    if (vs == shape)
      same.push_back(v);
    else if (vs.dims() == shape.dims())
      convertible.push_back(v);
    else if (vs.element_type() == shape.element_type() && vs.rank() < shape.rank())
      lower.push_back(v);
    else if (vs.element_type() == shape.element_type() && vs.num_elements() == shape.num_elements())
      reshapable.push_back(v);
  }
  if (!same.empty() && rng_.Chance(0.8)) return rng_.Pick(same);
  if (!lower.empty() && rng_.Chance(0.6)) {
    Instruction* x = rng_.Pick(lower);
    // Map x's dims onto increasing result dims of equal size (greedy from a random start).
    std::vector<int64_t> map;
    int next = 0;
    if (x->shape().rank() > 0 && rng_.Chance(0.5)) {
      next = static_cast<int>(rng_.Int(0, shape.rank() - x->shape().rank()));
    }
    for (int i = 0; i < x->shape().rank(); ++i) {
      while (next < shape.rank() && shape.dim(next) != x->shape().dim(i)) ++next;
      if (next == shape.rank()) break;
      map.push_back(next++);
    }
    if (static_cast<int>(map.size()) == x->shape().rank()) {
      Attributes attrs;
      attrs.dimensions = map;
      TFJIT_ASSIGN_OR_RETURN(Instruction * b, Emit(s, Opcode::kBroadcast, {x}, attrs, {}, shape));
      if (b != nullptr) return b;
    }
  }
  if (!convertible.empty() && rng_.Chance(0.5)) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * c,
                           Emit(s, Opcode::kConvert, {rng_.Pick(convertible)}, {}, {}, shape));
    if (c != nullptr) return c;
  }
  if (!reshapable.empty() && rng_.Chance(0.5)) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * r,
                           Emit(s, Opcode::kReshape, {rng_.Pick(reshapable)}, {}, {}, shape));
    if (r != nullptr) return r;
  }
  if (!same.empty()) return rng_.Pick(same);
  return Leaf(s, shape);
}

absl::StatusOr<Instruction*> Generator::StartIndex(Scope& s, DType t, int64_t dim) {
  if (rng_.Chance(0.6)) {
    Literal l(Shape::Scalar(t));
    const int64_t v = rng_.Int(-3, dim + 3);  // in range and out of range (clamped)
    if (t == DType::kInt32)
      *l.data<int32_t>() = static_cast<int32_t>(v);
    else
      *l.data<int64_t>() = v;
    Instruction* c = s.b.Constant(std::move(l));
    Record(s, c, LiteralBound(c->literal()));
    return c;
  }
  return ValueOf(s, Shape::Scalar(t));
}

void Generator::Analyze(const Computation& comp, const ValueBound& param_bound) {
  for (Instruction* inst : comp.instructions()) {
    if (inst->opcode() == Opcode::kParameter) {
      bounds_[inst] = param_bound;
      continue;
    }
    if (inst->opcode() == Opcode::kConstant) {
      bounds_[inst] = LiteralBound(inst->literal());
      continue;
    }
    std::vector<const ValueBound*> ops;
    for (const Instruction* o : inst->operands()) ops.push_back(&bounds_[o]);
    bounds_[inst] = TransferBound(*inst, ops);
  }
}

absl::StatusOr<Instruction*> Generator::Step(Scope& s) {
  const bool control = options_.control_flow && s.depth == 0;
  const int r = static_cast<int>(rng_.Int(0, 117));
  if (r < 14) return GenUnary(s);
  if (r < 32) return GenBinary(s);
  if (r < 37) return GenCompare(s);
  if (r < 41) return GenSelect(s);
  if (r < 43) return GenClamp(s);
  if (r < 48) return GenConvert(s);
  if (r < 52) return GenBroadcast(s);
  if (r < 56) return GenReshape(s);
  if (r < 59) return GenTranspose(s);
  if (r < 63) return GenSlice(s);
  if (r < 66) return GenConcatenate(s);
  if (r < 69) return GenPad(s);
  if (r < 71) return GenReverse(s);
  if (r < 78) return GenReduce(s);
  if (r < 82) return GenDot(s);
  if (r < 85) return GenDynamicSlice(s);
  if (r < 88) return GenDynamicUpdateSlice(s);
  if (r < 91) return GenGather(s);
  if (r < 94) return GenReduceWindow(s);
  if (r < 96) return GenTupleGte(s);
  if (r < 101) return GenChain(s);
  if (r < 104) return Leaf(s, Shape(RandomDType(), RandomDims()));
  if (r < 112) return control ? GenWhile(s) : GenBinary(s);
  return control ? GenConditional(s) : GenUnary(s);
}

absl::StatusOr<Instruction*> Generator::GenUnary(Scope& s) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, Pick(s));
  const DType t = x->shape().element_type();
  std::vector<Opcode> ops;
  if (IsFloatingDType(t)) {
    ops = {Opcode::kAbs,
           Opcode::kNegate,
           Opcode::kSign,
           Opcode::kFloor,
           Opcode::kCeil,
           Opcode::kRoundNearestAfz,
           Opcode::kRoundNearestEven,
           Opcode::kSqrt,
           Opcode::kRsqrt,
           Opcode::kExp,
           Opcode::kExpm1,
           Opcode::kLog,
           Opcode::kLog1p,
           Opcode::kTanh,
           Opcode::kLogistic,
           Opcode::kSine,
           Opcode::kCosine,
           Opcode::kTan,
           Opcode::kErf,
           Opcode::kCbrt,
           Opcode::kIsFinite,
           Opcode::kAbs,
           Opcode::kNegate,
           Opcode::kTanh};
  } else if (t == DType::kBool) {
    ops = {Opcode::kNot};
  } else {
    ops = {Opcode::kAbs, Opcode::kNegate, Opcode::kSign, Opcode::kNot};
  }
  return Emit(s, rng_.Pick(ops), {x});
}

absl::StatusOr<Instruction*> Generator::GenBinary(Scope& s, Instruction* a) {
  if (a == nullptr) {
    TFJIT_ASSIGN_OR_RETURN(a, Pick(s));
  }
  const DType t = a->shape().element_type();
  std::vector<Opcode> ops;
  if (IsFloatingDType(t)) {
    ops = {Opcode::kAdd,       Opcode::kSubtract, Opcode::kMultiply, Opcode::kDivide,
           Opcode::kRemainder, Opcode::kMaximum,  Opcode::kMinimum,  Opcode::kPower,
           Opcode::kAtan2,     Opcode::kAdd,      Opcode::kMultiply, Opcode::kSubtract};
  } else if (t == DType::kBool) {
    ops = {Opcode::kAnd, Opcode::kOr, Opcode::kXor, Opcode::kMaximum, Opcode::kMinimum};
  } else {
    ops = {Opcode::kAdd,
           Opcode::kSubtract,
           Opcode::kMultiply,
           Opcode::kDivide,
           Opcode::kRemainder,
           Opcode::kMaximum,
           Opcode::kMinimum,
           Opcode::kPower,
           Opcode::kAnd,
           Opcode::kOr,
           Opcode::kXor,
           Opcode::kShiftLeft,
           Opcode::kShiftRightArithmetic,
           Opcode::kShiftRightLogical};
  }
  const Opcode op = rng_.Pick(ops);
  TFJIT_ASSIGN_OR_RETURN(Instruction * b, ValueOf(s, a->shape()));
  if (op == Opcode::kShiftLeft || op == Opcode::kShiftRightArithmetic ||
      op == Opcode::kShiftRightLogical) {
    // Amounts in [0, 2*width): HLO.md defines amounts >= width (0 or sign fill) but says
    // nothing of negative ones, which are out of the contract.
    Literal mask(Shape::Scalar(t));
    DispatchNumeric(t, [&](auto tag) {
      using T = decltype(tag);
      *mask.data<T>() = static_cast<T>(2 * BitWidth(t) - 1);
    });
    Instruction* m = s.b.Constant(std::move(mask));
    Record(s, m, LiteralBound(m->literal()));
    if (!a->shape().IsScalar()) {
      Attributes attrs;
      TFJIT_ASSIGN_OR_RETURN(m, Emit(s, Opcode::kBroadcast, {m}, attrs, {}, a->shape()));
    }
    TFJIT_ASSIGN_OR_RETURN(b, Emit(s, Opcode::kAnd, {b, m}));
  }
  return Emit(s, op, {a, b});
}

absl::StatusOr<Instruction*> Generator::GenCompare(Scope& s) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, Pick(s));
  TFJIT_ASSIGN_OR_RETURN(Instruction * b, ValueOf(s, a->shape()));
  Attributes attrs;
  attrs.comparison = static_cast<hlo::ComparisonDirection>(rng_.Int(0, 5));
  return Emit(s, Opcode::kCompare, {a, b}, attrs);
}

absl::StatusOr<Instruction*> Generator::GenSelect(Scope& s) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * t, Pick(s));
  TFJIT_ASSIGN_OR_RETURN(Instruction * f, ValueOf(s, t->shape()));
  const Shape pred_shape =
      rng_.Chance(0.2) ? Shape::Scalar(DType::kBool) : t->shape().WithElementType(DType::kBool);
  TFJIT_ASSIGN_OR_RETURN(Instruction * p, ValueOf(s, pred_shape));
  return Emit(s, Opcode::kSelect, {p, t, f});
}

absl::StatusOr<Instruction*> Generator::GenClamp(Scope& s) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, Pick(s));
  if (x->shape().element_type() == DType::kBool) return nullptr;
  const Shape scalar = Shape::Scalar(x->shape().element_type());
  TFJIT_ASSIGN_OR_RETURN(Instruction * lo, ValueOf(s, rng_.Chance(0.6) ? scalar : x->shape()));
  TFJIT_ASSIGN_OR_RETURN(Instruction * hi, ValueOf(s, rng_.Chance(0.6) ? scalar : x->shape()));
  return Emit(s, Opcode::kClamp, {lo, x, hi});
}

absl::StatusOr<Instruction*> Generator::GenConvert(Scope& s) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, Pick(s));
  DType to = RandomDType();
  if (to == x->shape().element_type()) to = rng_.Chance(0.5) ? DType::kFloat16 : DType::kInt64;
  return Emit(s, Opcode::kConvert, {x}, {}, {}, x->shape().WithElementType(to));
}

absl::StatusOr<Instruction*> Generator::GenBroadcast(Scope& s) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, Pick(s));
  if (x->shape().rank() >= 4) return nullptr;
  std::vector<int64_t> dims = x->shape().dims();
  std::vector<bool> is_new(dims.size(), false);
  const int add = static_cast<int>(rng_.Int(1, std::min(2, 4 - x->shape().rank())));
  for (int i = 0; i < add; ++i) {
    const size_t pos = static_cast<size_t>(rng_.Int(0, static_cast<int64_t>(dims.size())));
    dims.insert(dims.begin() + static_cast<std::ptrdiff_t>(pos),
                rng_.Chance(0.1) ? 0 : rng_.Int(1, 6));
    is_new.insert(is_new.begin() + static_cast<std::ptrdiff_t>(pos), true);
  }
  if (NumElements(dims) > 4096) return nullptr;
  Attributes attrs;
  for (size_t i = 0; i < dims.size(); ++i) {
    if (!is_new[i]) attrs.dimensions.push_back(static_cast<int64_t>(i));
  }
  return Emit(s, Opcode::kBroadcast, {x}, attrs, {}, Shape(x->shape().element_type(), dims));
}

absl::StatusOr<Instruction*> Generator::GenReshape(Scope& s) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, Pick(s));
  const int64_t n = x->shape().num_elements();
  std::vector<int64_t> dims;
  if (n == 0) {
    const int rank = static_cast<int>(rng_.Int(1, 3));
    for (int i = 0; i < rank; ++i) dims.push_back(rng_.Int(1, 4));
    dims[static_cast<size_t>(rng_.Int(0, rank - 1))] = 0;
  } else {
    const int rank = static_cast<int>(rng_.Int(n == 1 ? 0 : 1, 4));
    dims.assign(static_cast<size_t>(rank), 1);
    for (int64_t f : Factorize(n)) dims[static_cast<size_t>(rng_.Int(0, rank - 1))] *= f;
  }
  return Emit(s, Opcode::kReshape, {x}, {}, {}, Shape(x->shape().element_type(), dims));
}

absl::StatusOr<Instruction*> Generator::GenTranspose(Scope& s) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, Pick(s));
  if (x->shape().rank() < 2) return nullptr;
  Attributes attrs;
  for (int i = 0; i < x->shape().rank(); ++i) attrs.dimensions.push_back(i);
  for (size_t i = attrs.dimensions.size() - 1; i > 0; --i) {
    std::swap(attrs.dimensions[i],
              attrs.dimensions[static_cast<size_t>(rng_.Int(0, static_cast<int64_t>(i)))]);
  }
  return Emit(s, Opcode::kTranspose, {x}, attrs);
}

absl::StatusOr<Instruction*> Generator::GenSlice(Scope& s) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, Pick(s));
  Attributes attrs;
  for (int64_t d : x->shape().dims()) {
    hlo::SliceDim sd;
    sd.start = rng_.Int(0, d);
    sd.limit = rng_.Int(sd.start, d);
    sd.stride = rng_.Int(1, 3);
    attrs.slice.push_back(sd);
  }
  return Emit(s, Opcode::kSlice, {x}, attrs);
}

absl::StatusOr<Instruction*> Generator::GenConcatenate(Scope& s) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, Pick(s));
  if (x->shape().rank() == 0) return nullptr;
  const int64_t d = rng_.Int(0, x->shape().rank() - 1);
  std::vector<Instruction*> xs = {x};
  const int more = static_cast<int>(rng_.Int(1, 2));
  for (int i = 0; i < more; ++i) {
    std::vector<int64_t> dims = x->shape().dims();
    dims[static_cast<size_t>(d)] =
        rng_.Chance(0.3) ? x->shape().dim(static_cast<int>(d)) : rng_.Int(0, 4);
    TFJIT_ASSIGN_OR_RETURN(Instruction * y, ValueOf(s, Shape(x->shape().element_type(), dims)));
    xs.insert(xs.begin() + rng_.Int(0, static_cast<int64_t>(xs.size())), y);
  }
  Attributes attrs;
  attrs.dimensions = {d};
  return Emit(s, Opcode::kConcatenate, xs, attrs);
}

absl::StatusOr<Instruction*> Generator::GenPad(Scope& s) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, Pick(s));
  Attributes attrs;
  int64_t total = 1;
  for (int64_t d : x->shape().dims()) {
    hlo::PadDim p;
    p.lo = rng_.Int(-2, 3);
    p.hi = rng_.Int(-2, 3);
    p.interior = rng_.Chance(0.3) ? rng_.Int(1, 2) : 0;
    if (p.lo + p.hi + d + std::max<int64_t>(d - 1, 0) * p.interior < 0) p.lo = p.hi = 0;
    total *= p.lo + p.hi + d + std::max<int64_t>(d - 1, 0) * p.interior;
    attrs.padding.push_back(p);
  }
  if (total > 4096) return nullptr;
  TFJIT_ASSIGN_OR_RETURN(Instruction * v, ValueOf(s, Shape::Scalar(x->shape().element_type())));
  return Emit(s, Opcode::kPad, {x, v}, attrs);
}

absl::StatusOr<Instruction*> Generator::GenReverse(Scope& s) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, Pick(s));
  Attributes attrs;
  for (int i = 0; i < x->shape().rank(); ++i) {
    if (rng_.Chance(0.5)) attrs.dimensions.push_back(i);
  }
  return Emit(s, Opcode::kReverse, {x}, attrs);
}

// A reduction combiner valid for `t` and its identity.
std::pair<Opcode, ScalarKind> RandomCombiner(Rng& rng, DType t) {
  if (t == DType::kBool) {
    return rng.Chance(0.5) ? std::make_pair(Opcode::kAnd, ScalarKind::kOne)
                           : std::make_pair(Opcode::kOr, ScalarKind::kZero);
  }
  const int r = static_cast<int>(rng.Int(0, IsFloatingDType(t) ? 3 : 7));
  switch (r) {
    case 0:
    case 1:
      return {Opcode::kAdd, ScalarKind::kZero};
    case 2:
      return {Opcode::kMaximum, ScalarKind::kLowest};
    case 3:
      return {Opcode::kMinimum, ScalarKind::kHighest};
    case 4:
      return {Opcode::kMultiply, ScalarKind::kOne};
    case 5:
      return {Opcode::kOr, ScalarKind::kZero};
    case 6:
      return {Opcode::kXor, ScalarKind::kZero};
    default:
      return {Opcode::kAnd, ScalarKind::kAllOnes};
  }
}

absl::StatusOr<Instruction*> Generator::GenReduce(Scope& s, Instruction* x) {
  if (x == nullptr) {
    TFJIT_ASSIGN_OR_RETURN(x, Pick(s));
  }
  if (x->shape().rank() == 0) return nullptr;
  const DType t = x->shape().element_type();
  Attributes attrs;
  for (int i = 0; i < x->shape().rank(); ++i) {
    if (rng_.Chance(0.5)) attrs.dimensions.push_back(i);
  }
  if (attrs.dimensions.empty()) attrs.dimensions.push_back(rng_.Int(0, x->shape().rank() - 1));
  const auto [op, identity] = RandomCombiner(rng_, t);
  TFJIT_ASSIGN_OR_RETURN(Instruction * init, Scalar(s, t, identity));
  return Emit(s, Opcode::kReduce, {x, init}, attrs, {Combiner(op, t)});
}

absl::StatusOr<Instruction*> Generator::GenReduceWindow(Scope& s) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, Pick(s));
  if (x->shape().rank() == 0) return nullptr;
  const DType t = x->shape().element_type();
  Attributes attrs;
  for (int i = 0; i < x->shape().rank(); ++i) {
    hlo::WindowDim w;
    w.size = rng_.Int(1, 3);
    w.stride = rng_.Int(1, 2);
    w.pad_lo = rng_.Chance(0.3) ? 1 : 0;
    w.pad_hi = rng_.Chance(0.3) ? 1 : 0;
    attrs.window.push_back(w);
  }
  auto [op, identity] = RandomCombiner(rng_, t);
  if (op == Opcode::kMultiply || op == Opcode::kXor || (op == Opcode::kAnd && t != DType::kBool) ||
      (op == Opcode::kOr && t != DType::kBool)) {
    op = Opcode::kAdd;
    identity = ScalarKind::kZero;
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * init, Scalar(s, t, identity));
  return Emit(s, Opcode::kReduceWindow, {x, init}, attrs, {Combiner(op, t)});
}

absl::StatusOr<Instruction*> Generator::GenDot(Scope& s) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * lhs, Pick(s));
  const Shape& ls = lhs->shape();
  if (ls.element_type() == DType::kBool || ls.rank() == 0 || ls.rank() > 3) return nullptr;
  hlo::DotDims dn;
  for (int i = 0; i < ls.rank(); ++i) {
    const int r = static_cast<int>(rng_.Int(0, 9));
    if (r < 2 && dn.lhs_batch.size() < 2)
      dn.lhs_batch.push_back(i);
    else if (r < 6 && dn.lhs_contracting.size() < 2)
      dn.lhs_contracting.push_back(i);
  }
  // rhs dims in a random order: batch, contracting and 0-2 free dims.
  struct RhsDim {
    int64_t size;
    int role;
    size_t k;
  };  // role 0 batch, 1 contracting, 2 free
  std::vector<RhsDim> rd;
  for (size_t k = 0; k < dn.lhs_batch.size(); ++k)
    rd.push_back({ls.dim(static_cast<int>(dn.lhs_batch[k])), 0, k});
  for (size_t k = 0; k < dn.lhs_contracting.size(); ++k) {
    rd.push_back({ls.dim(static_cast<int>(dn.lhs_contracting[k])), 1, k});
  }
  const int free = static_cast<int>(rng_.Int(0, 2));
  for (int k = 0; k < free; ++k) rd.push_back({rng_.Int(0, 6), 2, 0});
  for (size_t i = rd.size(); i > 1; --i)
    std::swap(rd[i - 1], rd[static_cast<size_t>(rng_.Int(0, static_cast<int64_t>(i) - 1))]);
  std::vector<int64_t> rhs_dims;
  dn.rhs_batch.assign(dn.lhs_batch.size(), 0);
  dn.rhs_contracting.assign(dn.lhs_contracting.size(), 0);
  for (size_t i = 0; i < rd.size(); ++i) {
    rhs_dims.push_back(rd[i].size);
    if (rd[i].role == 0) dn.rhs_batch[rd[i].k] = static_cast<int64_t>(i);
    if (rd[i].role == 1) dn.rhs_contracting[rd[i].k] = static_cast<int64_t>(i);
  }
  int64_t k = 1, out = NumElements(rhs_dims);
  for (int64_t c : dn.lhs_contracting) k *= ls.dim(static_cast<int>(c));
  out = out / std::max<int64_t>(k, 1) * ls.num_elements();
  if (out > 65536 || NumElements(rhs_dims) > 4096) return nullptr;
  TFJIT_ASSIGN_OR_RETURN(Instruction * rhs, ValueOf(s, Shape(ls.element_type(), rhs_dims)));
  Attributes attrs;
  attrs.dot = dn;
  return Emit(s, Opcode::kDot, {lhs, rhs}, attrs);
}

absl::StatusOr<Instruction*> Generator::GenDynamicSlice(Scope& s) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, Pick(s));
  const DType it = rng_.Chance(0.8) ? DType::kInt32 : DType::kInt64;
  Attributes attrs;
  std::vector<Instruction*> ops = {x};
  for (int64_t d : x->shape().dims()) {
    attrs.dynamic_slice_sizes.push_back(rng_.Chance(0.2) ? d : rng_.Int(0, d));
    TFJIT_ASSIGN_OR_RETURN(Instruction * i, StartIndex(s, it, d));
    ops.push_back(i);
  }
  return Emit(s, Opcode::kDynamicSlice, ops, attrs);
}

absl::StatusOr<Instruction*> Generator::GenDynamicUpdateSlice(Scope& s) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, Pick(s));
  const DType it = rng_.Chance(0.8) ? DType::kInt32 : DType::kInt64;
  std::vector<int64_t> udims;
  for (int64_t d : x->shape().dims()) udims.push_back(rng_.Int(0, d));
  TFJIT_ASSIGN_OR_RETURN(Instruction * u, ValueOf(s, Shape(x->shape().element_type(), udims)));
  std::vector<Instruction*> ops = {x, u};
  for (int64_t d : x->shape().dims()) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * i, StartIndex(s, it, d));
    ops.push_back(i);
  }
  return Emit(s, Opcode::kDynamicUpdateSlice, ops);
}

absl::StatusOr<Instruction*> Generator::GenGather(Scope& s) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, Pick(s));
  const Shape& xs = x->shape();
  if (xs.rank() == 0 || xs.dim(0) == 0) return nullptr;
  const bool two = xs.rank() >= 2 && xs.dim(1) > 0 && rng_.Chance(0.4);
  const int64_t n_idx = rng_.Int(0, 5);
  const DType it = rng_.Chance(0.8) ? DType::kInt32 : DType::kInt64;
  // TF's Gather (axis 0) and GatherNd with 2-vectors: indices [n] or [n, 2].
  const Shape idx_shape = two ? Shape(it, {n_idx, 2}) : Shape(it, {n_idx});
  TFJIT_ASSIGN_OR_RETURN(Instruction * idx, ValueOf(s, idx_shape));
  Attributes attrs;
  hlo::GatherDims& g = attrs.gather;
  const int collapsed = two ? 2 : 1;
  g.index_vector_dim = 1;  // [n]: implicit trailing index vector; [n, 2]: explicit
  for (int i = 0; i < collapsed; ++i) {
    g.collapsed_slice_dims.push_back(i);
    g.start_index_map.push_back(i);
    g.slice_sizes.push_back(1);
  }
  for (int i = collapsed; i < xs.rank(); ++i) {
    g.slice_sizes.push_back(rng_.Chance(0.7) ? xs.dim(i) : rng_.Int(0, xs.dim(i)));
    g.offset_dims.push_back(1 + i - collapsed);
  }
  return Emit(s, Opcode::kGather, {x, idx}, attrs);
}

absl::StatusOr<Instruction*> Generator::GenTupleGte(Scope& s) {
  TFJIT_ASSIGN_OR_RETURN(Instruction * a, Pick(s));
  TFJIT_ASSIGN_OR_RETURN(Instruction * b, Pick(s));
  TFJIT_ASSIGN_OR_RETURN(Instruction * t, Emit(s, Opcode::kTuple, {a, b}));
  if (t == nullptr) return nullptr;
  Attributes attrs;
  attrs.tuple_index = rng_.Int(0, 1);
  return Emit(s, Opcode::kGetTupleElement, {t}, attrs);
}

absl::StatusOr<Instruction*> Generator::GenChain(Scope& s) {
  // Fusion-prone: broadcast -> a run of elementwise ops on one shape -> maybe a reduce.
  TFJIT_ASSIGN_OR_RETURN(Instruction * x, Pick(s));
  if (x->shape().element_type() == DType::kBool) return nullptr;
  const int n = static_cast<int>(rng_.Int(3, 8));
  for (int i = 0; i < n; ++i) {
    Instruction* y = nullptr;
    if (rng_.Chance(0.6)) {
      TFJIT_ASSIGN_OR_RETURN(y, GenBinary(s, x));
    } else {
      const Opcode op =
          IsFloatingDType(x->shape().element_type())
              ? rng_.Pick(std::vector<Opcode>{Opcode::kNegate, Opcode::kAbs, Opcode::kTanh,
                                              Opcode::kExp, Opcode::kFloor, Opcode::kSqrt})
              : Opcode::kNegate;
      TFJIT_ASSIGN_OR_RETURN(y, Emit(s, op, {x}));
    }
    if (y != nullptr && y->shape() == x->shape()) x = y;
  }
  if (rng_.Chance(0.5)) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * r, GenReduce(s, x));
    if (r != nullptr) return r;
  }
  return x;
}

absl::StatusOr<std::vector<Instruction*>> Generator::GenSubComputation(Scope& sub,
                                                                       Instruction* param,
                                                                       int steps, size_t first) {
  std::vector<Instruction*> elems;
  for (int64_t i = 0; i < static_cast<int64_t>(param->shape().tuple_shapes().size()); ++i) {
    Attributes attrs;
    attrs.tuple_index = i;
    auto inst = sub.b.Add(Opcode::kGetTupleElement, {param}, attrs);
    if (!inst.ok()) return Internal("random hlo: %s", inst.status().message());
    Record(sub, *inst, TransferBound(**inst, {&bounds_[param]}));
    elems.push_back(*inst);
  }
  for (int i = 0; i < steps; ++i) TFJIT_RETURN_IF_ERROR(Step(sub).status());
  std::vector<Instruction*> outs;
  for (size_t i = first; i < elems.size(); ++i) {
    const bool want_exact = bounds_[elems[i]].exact;
    std::vector<Instruction*> cands;
    for (Instruction* v : sub.pool) {
      if (v->shape() == elems[i]->shape() && (!want_exact || bounds_[v].exact)) cands.push_back(v);
    }
    if (cands.empty() || rng_.Chance(0.2)) {
      outs.push_back(elems[i]);
    } else {
      // Prefer the newest candidates: they carry the most computation.
      outs.push_back(cands[static_cast<size_t>(
          rng_.Int(std::max<int64_t>(0, static_cast<int64_t>(cands.size()) - 3),
                   static_cast<int64_t>(cands.size()) - 1))]);
    }
  }
  return outs;
}

absl::StatusOr<Instruction*> Generator::GenWhile(Scope& s) {
  // State (s32[] counter, v1..vk); the condition is counter < trip with trip in [0, 4].
  const int k = static_cast<int>(rng_.Int(1, 3));
  TFJIT_ASSIGN_OR_RETURN(Instruction * zero, Scalar(s, DType::kInt32, ScalarKind::kZero));
  std::vector<Instruction*> init = {zero};
  for (int i = 0; i < k; ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * v, Pick(s));
    init.push_back(v);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * init_tuple, Emit(s, Opcode::kTuple, init));
  if (init_tuple == nullptr) return nullptr;
  const Shape state = init_tuple->shape();
  const int64_t trip = rng_.Int(0, 4);

  Computation* cond = module_->AddComputation("cond");
  {
    Scope c{cond, Builder(cond), {}, s.depth + 1};
    Instruction* p = c.b.Parameter(0, state);
    Attributes gte;
    gte.tuple_index = 0;
    auto counter = c.b.Add(Opcode::kGetTupleElement, {p}, gte);
    Instruction* limit = c.b.ScalarConstant<int32_t>(DType::kInt32, static_cast<int32_t>(trip));
    if (!counter.ok()) return Internal("random hlo: %s", counter.status().message());
    auto lt = c.b.Compare(hlo::ComparisonDirection::kLt, *counter, limit);
    if (!lt.ok()) return Internal("random hlo: %s", lt.status().message());
    cond->set_root(*lt);
  }
  Computation* body = module_->AddComputation("body");
  Scope bs{body, Builder(body), {}, s.depth + 1};
  Instruction* param = bs.b.Parameter(0, state);
  bounds_[param] = bounds_[init_tuple];
  TFJIT_ASSIGN_OR_RETURN(std::vector<Instruction*> outs,
                         GenSubComputation(bs, param, static_cast<int>(rng_.Int(2, 8)), 1));
  Attributes gte0;
  gte0.tuple_index = 0;
  auto counter = bs.b.Add(Opcode::kGetTupleElement, {param}, gte0);
  if (!counter.ok()) return Internal("random hlo: %s", counter.status().message());
  Instruction* one = bs.b.ScalarConstant<int32_t>(DType::kInt32, 1);
  auto next = bs.b.Binary(Opcode::kAdd, *counter, one);
  if (!next.ok()) return Internal("random hlo: %s", next.status().message());
  outs.insert(outs.begin(), *next);
  auto new_root = bs.b.Add(Opcode::kTuple, outs);
  if (!new_root.ok()) return Internal("random hlo: %s", new_root.status().message());
  body->set_root(*new_root);

  auto w = s.b.Add(Opcode::kWhile, {init_tuple}, {}, {cond, body});
  if (!w.ok()) return Internal("random hlo: while: %s", w.status().message());
  // Exactly `trip` iterations: propagate the state's bound through the body that many times.
  ValueBound b = bounds_[init_tuple];
  for (int64_t i = 0; i < trip; ++i) {
    Analyze(*body, b);
    b = bounds_[*new_root];
  }
  Record(s, *w, b);
  Instruction* last = nullptr;
  for (int64_t i = 1; i <= k; ++i) {
    Attributes attrs;
    attrs.tuple_index = i;
    TFJIT_ASSIGN_OR_RETURN(Instruction * g, Emit(s, Opcode::kGetTupleElement, {*w}, attrs));
    if (g != nullptr) last = g;
  }
  return last;
}

absl::StatusOr<Instruction*> Generator::GenConditional(Scope& s) {
  const bool by_pred = rng_.Chance(0.5);
  TFJIT_ASSIGN_OR_RETURN(Instruction * selector,
                         ValueOf(s, Shape::Scalar(by_pred ? DType::kBool : DType::kInt32)));
  const int branches = by_pred ? 2 : static_cast<int>(rng_.Int(1, 3));
  std::vector<Instruction*> carried;
  const int k = static_cast<int>(rng_.Int(1, 2));
  for (int i = 0; i < k; ++i) {
    TFJIT_ASSIGN_OR_RETURN(Instruction * v, Pick(s));
    carried.push_back(v);
  }
  TFJIT_ASSIGN_OR_RETURN(Instruction * operand, Emit(s, Opcode::kTuple, carried));
  if (operand == nullptr) return nullptr;
  std::vector<Computation*> comps;
  ValueBound result;
  for (int i = 0; i < branches; ++i) {
    Computation* c = module_->AddComputation("branch");
    Scope bs{c, Builder(c), {}, s.depth + 1};
    Instruction* param = bs.b.Parameter(0, operand->shape());
    bounds_[param] = bounds_[operand];
    TFJIT_ASSIGN_OR_RETURN(std::vector<Instruction*> outs,
                           GenSubComputation(bs, param, static_cast<int>(rng_.Int(1, 6)), 0));
    auto root = bs.b.Add(Opcode::kTuple, outs);
    if (!root.ok()) return Internal("random hlo: %s", root.status().message());
    c->set_root(*root);
    std::vector<const ValueBound*> out_bounds;
    for (Instruction* o : outs) out_bounds.push_back(&bounds_[o]);
    const ValueBound rb = TransferBound(**root, out_bounds);
    result = i == 0 ? rb : JoinBounds(result, rb);
    comps.push_back(c);
  }
  std::vector<Instruction*> ops = {selector};
  for (int i = 0; i < branches; ++i) ops.push_back(operand);
  auto cond = s.b.Add(Opcode::kConditional, ops, {}, comps);
  if (!cond.ok()) return Internal("random hlo: conditional: %s", cond.status().message());
  Record(s, *cond, result);
  Instruction* last = nullptr;
  for (int64_t i = 0; i < k; ++i) {
    Attributes attrs;
    attrs.tuple_index = i;
    TFJIT_ASSIGN_OR_RETURN(Instruction * g, Emit(s, Opcode::kGetTupleElement, {*cond}, attrs));
    if (g != nullptr) last = g;
  }
  return last;
}

absl::StatusOr<RandomHloModule> Generator::Run() {
  Computation* entry = module_->AddComputation("main");
  module_->set_entry(entry);
  Scope s{entry, Builder(entry), {}, 0};
  const int steps =
      static_cast<int>(rng_.Int(options_.min_instructions, options_.max_instructions));
  for (int i = 0; i < steps; ++i) TFJIT_RETURN_IF_ERROR(Step(s).status());
  if (s.pool.empty()) TFJIT_RETURN_IF_ERROR(Leaf(s, Shape(RandomDType(), RandomDims())).status());
  // Outputs: mostly values nothing else uses (the ends of the DAG), newest first.
  std::vector<Instruction*> sinks;
  for (Instruction* v : s.pool) {
    if (v->user_count() == 0) sinks.push_back(v);
  }
  std::vector<Instruction*> outs;
  const int k = static_cast<int>(rng_.Int(1, 6));
  for (int i = 0; i < k; ++i) {
    if (!sinks.empty() && rng_.Chance(0.8)) {
      outs.push_back(sinks.back());
      sinks.pop_back();
    } else {
      TFJIT_ASSIGN_OR_RETURN(Instruction * v, Pick(s));
      outs.push_back(v);
    }
  }
  RandomHloModule result;
  if (outs.size() == 1 && rng_.Chance(0.7)) {
    entry->set_root(outs[0]);
  } else {
    auto root = s.b.Add(Opcode::kTuple, outs);
    if (!root.ok()) return Internal("random hlo: root: %s", root.status().message());
    entry->set_root(*root);
  }
  for (Instruction* o : outs) result.output_bounds.push_back(bounds_[o]);
  for (Computation* c : module_->computations()) c->RemoveDeadInstructions();
  module_->RemoveUnusedComputations();
  if (absl::Status st = hlo::VerifyModule(*module_); !st.ok()) {
    return Internal("random hlo generator produced an invalid module: %s\n%s", st.message(),
                    hlo::PrintModule(*module_));
  }
  result.module = std::move(module_);
  result.edge_values = edge_;
  return result;
}

}  // namespace

absl::StatusOr<RandomHloModule> GenerateRandomHlo(uint64_t seed, const RandomHloOptions& options) {
  Generator g(seed, options);
  TFJIT_ASSIGN_OR_RETURN(RandomHloModule m, g.Run());
  m.args_seed = seed;
  return m;
}

}  // namespace tfjit::testlib
