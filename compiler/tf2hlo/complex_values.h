// Complex values in compiled code. tfjit's HLO has no complex element type: a TF
// complex64 (complex128) tensor of dims D is held as an f32 (f64) HLO value of dims D + [2]
// whose last dim is (real, imaginary), the byte layout of std::complex. Cluster arguments and
// results are therefore the runtime's own buffers read as reals (ParameterShape,
// Tensor::BitcastView), and every complex operation is spelled in real HLO.
//
// Only the lowerings registered for complex values (FindComplexLowering: the math_complex and
// fft families' own, and the linear ops whose real lowering runs once per part) ever see such
// a value; CanLower keeps every other node with a complex input or output out of clusters, so
// no lowering can mistake the (real, imaginary) dim for data.
#ifndef TFJIT_COMPILER_TF2HLO_COMPLEX_VALUES_H_
#define TFJIT_COMPILER_TF2HLO_COMPLEX_VALUES_H_

#include <vector>

#include "absl/status/statusor.h"
#include "compiler/tf2hlo/op_lowerings.h"

namespace tfjit::tf2hlo {

// A complex value's parts, two real values of the TF tensor's dims.
struct ComplexParts {
  hlo::Instruction* re = nullptr;
  hlo::Instruction* im = nullptr;
};

// Splits a held complex value (dims D + [2]) into its parts (dims D).
absl::StatusOr<ComplexParts> SplitComplex(LoweringContext& ctx, hlo::Instruction* z);
// The held complex value (dims D + [2]) of two real parts of dims D and one element type.
absl::StatusOr<hlo::Instruction*> JoinComplex(LoweringContext& ctx, const ComplexParts& z);
// Input `i` of `node` as parts: a complex input split, a real one with a zero imaginary part.
absl::StatusOr<ComplexParts> ComplexInput(LoweringContext& ctx, const tf::Node& node, int i);
// Sets output `i` of `node` to the complex value of `z`.
absl::Status SetComplexOutput(LoweringContext& ctx, const tf::Node& node, int i,
                              const ComplexParts& z);

// The complex lowerings of the fft family (fft_lowerings.cc).
void AppendFftComplexLowerings(std::vector<OpLowering>* table);

// The linear ops' complex lowerings (math_complex_linear_lowerings.cc): every op whose real
// lowering runs once per part, and Einsum.
void AppendComplexLinearLowerings(std::vector<OpLowering>* table);
// Runs `node`'s real lowering on the real parts, then on the imaginary parts, of its complex
// inputs (its real inputs unchanged) and joins the results' parts.
absl::Status LowerComponentwise(LoweringContext& ctx, const tf::Node& node);

}  // namespace tfjit::tf2hlo

#endif  // TFJIT_COMPILER_TF2HLO_COMPLEX_VALUES_H_
