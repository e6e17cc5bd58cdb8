// The closed HLO opcode set: the single source of truth for names, arity and kind.
#ifndef TFJIT_COMPILER_HLO_OPCODE_H_
#define TFJIT_COMPILER_HLO_OPCODE_H_

#include <cstdint>
#include <optional>
#include "absl/strings/string_view.h"

namespace tfjit::hlo {

// Kinds used by printer, verifier, evaluator and emitters to group opcodes.
enum class OpcodeKind : uint8_t {
  kUnary,   // elementwise, one operand
  kBinary,  // elementwise, two operands of one shape
  kOther,   // everything with its own rules
};

// V(enum, text name, arity (-1 = variadic), kind). Kept sorted by text name.
#define TFJIT_HLO_OPCODE_LIST(V)                                 \
  V(kAbs, "abs", 1, kUnary)                                      \
  V(kAdd, "add", 2, kBinary)                                     \
  V(kAnd, "and", 2, kBinary)                                     \
  V(kAtan2, "atan2", 2, kBinary)                                 \
  V(kBitcastConvert, "bitcast-convert", 1, kOther)               \
  V(kBroadcast, "broadcast", 1, kOther)                          \
  V(kCall, "call", -1, kOther)                                   \
  V(kCbrt, "cbrt", 1, kUnary)                                    \
  V(kCeil, "ceil", 1, kUnary)                                    \
  V(kClamp, "clamp", 3, kOther)                                  \
  V(kCompare, "compare", 2, kOther)                              \
  V(kConcatenate, "concatenate", -1, kOther)                     \
  V(kConditional, "conditional", -1, kOther)                     \
  V(kConstant, "constant", 0, kOther)                            \
  V(kConvert, "convert", 1, kOther)                              \
  V(kConvolution, "convolution", 2, kOther)                      \
  V(kCosine, "cosine", 1, kUnary)                                \
  V(kCustomCall, "custom-call", -1, kOther)                      \
  V(kDivide, "divide", 2, kBinary)                               \
  V(kDot, "dot", 2, kOther)                                      \
  V(kDynamicSlice, "dynamic-slice", -1, kOther)                  \
  V(kDynamicUpdateSlice, "dynamic-update-slice", -1, kOther)     \
  V(kErf, "erf", 1, kUnary)                                      \
  V(kExp, "exp", 1, kUnary)                                      \
  V(kExpm1, "expm1", 1, kUnary)                                  \
  V(kFloor, "floor", 1, kUnary)                                  \
  V(kFusion, "fusion", -1, kOther)                               \
  V(kGather, "gather", 2, kOther)                                \
  V(kGetDimensionSize, "get-dimension-size", 1, kOther)          \
  V(kGetTupleElement, "get-tuple-element", 1, kOther)            \
  V(kIota, "iota", 0, kOther)                                    \
  V(kIsFinite, "is-finite", 1, kOther)                           \
  V(kLog, "log", 1, kUnary)                                      \
  V(kLog1p, "log1p", 1, kUnary)                                  \
  V(kLogistic, "logistic", 1, kUnary)                            \
  V(kMaximum, "maximum", 2, kBinary)                             \
  V(kMinimum, "minimum", 2, kBinary)                             \
  V(kMultiply, "multiply", 2, kBinary)                           \
  V(kNegate, "negate", 1, kUnary)                                \
  V(kNot, "not", 1, kUnary)                                      \
  V(kOr, "or", 2, kBinary)                                       \
  V(kPad, "pad", 2, kOther)                                      \
  V(kParameter, "parameter", 0, kOther)                          \
  V(kPower, "power", 2, kBinary)                                 \
  V(kReduce, "reduce", -1, kOther)                               \
  V(kReduceWindow, "reduce-window", -1, kOther)                  \
  V(kRemainder, "remainder", 2, kBinary)                         \
  V(kReshape, "reshape", 1, kOther)                              \
  V(kReverse, "reverse", 1, kOther)                              \
  V(kRngBitGenerator, "rng-bit-generator", 1, kOther)            \
  V(kRoundNearestAfz, "round-nearest-afz", 1, kUnary)            \
  V(kRoundNearestEven, "round-nearest-even", 1, kUnary)          \
  V(kRsqrt, "rsqrt", 1, kUnary)                                  \
  V(kScatter, "scatter", 3, kOther)                              \
  V(kSelect, "select", 3, kOther)                                \
  V(kShiftLeft, "shift-left", 2, kBinary)                        \
  V(kShiftRightArithmetic, "shift-right-arithmetic", 2, kBinary) \
  V(kShiftRightLogical, "shift-right-logical", 2, kBinary)       \
  V(kSign, "sign", 1, kUnary)                                    \
  V(kSine, "sine", 1, kUnary)                                    \
  V(kSlice, "slice", 1, kOther)                                  \
  V(kSqrt, "sqrt", 1, kUnary)                                    \
  V(kSubtract, "subtract", 2, kBinary)                           \
  V(kTan, "tan", 1, kUnary)                                      \
  V(kTanh, "tanh", 1, kUnary)                                    \
  V(kTranspose, "transpose", 1, kOther)                          \
  V(kTuple, "tuple", -1, kOther)                                 \
  V(kWhile, "while", 1, kOther)                                  \
  V(kXor, "xor", 2, kBinary)

enum class Opcode : uint8_t {
#define TFJIT_DECLARE_OPCODE(e, name, arity, kind) e,
  TFJIT_HLO_OPCODE_LIST(TFJIT_DECLARE_OPCODE)
#undef TFJIT_DECLARE_OPCODE
};

inline constexpr int kOpcodeCount = 0
#define TFJIT_COUNT_OPCODE(e, name, arity, kind) +1
    TFJIT_HLO_OPCODE_LIST(TFJIT_COUNT_OPCODE)
#undef TFJIT_COUNT_OPCODE
    ;

absl::string_view OpcodeName(Opcode opcode);
std::optional<Opcode> OpcodeFromName(absl::string_view name);
// -1 when variadic.
int OpcodeArity(Opcode opcode);
OpcodeKind OpcodeKindOf(Opcode opcode);
inline bool IsElementwiseUnary(Opcode op) { return OpcodeKindOf(op) == OpcodeKind::kUnary; }
inline bool IsElementwiseBinary(Opcode op) { return OpcodeKindOf(op) == OpcodeKind::kBinary; }
// Elementwise in the loop-fusion sense: unary, binary, compare, select, clamp, convert,
// is-finite (every output element depends only on the same element of each operand).
bool IsElementwise(Opcode opcode);

}  // namespace tfjit::hlo

#endif  // TFJIT_COMPILER_HLO_OPCODE_H_
