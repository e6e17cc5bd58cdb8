// Cases of the per-op differential test (op_differential_test.cc): one-op TF graphs with
// their inputs, attrs and (for ops without a fallback kernel) an independent reference.
#ifndef TFJIT_TESTS_TF_OP_CASES_H_
#define TFJIT_TESTS_TF_OP_CASES_H_

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "frontend/proto/graph.pb.h"
#include "tfjit/tensor.h"

namespace tfjit::optest {

using Dims = std::vector<int64_t>;

// Computes the expected output from the placeholder feeds followed by the consts; used for
// ops without a fallback kernel (and checked against the kernel too when one exists).
using RefFn = std::function<Tensor(const std::vector<Tensor>& inputs)>;

struct OpCase {
  std::string name;
  std::string op;
  DType dtype = DType::kFloat32;  // attr T and the placeholders' dtype
  std::vector<Dims> inputs;       // placeholder shapes
  std::vector<Tensor> consts;     // extra inputs after the placeholders (axes, shapes, ...)
  std::map<std::string, tensorflow::AttrValue> attrs;
  bool has_t = true;                    // whether the op has a "T" attr
  DType input_dtype = DType::kInvalid;  // placeholders' dtype when it differs from T
  std::vector<DType> input_dtypes;      // per-placeholder dtypes (overrides input_dtype)
  std::vector<Tensor> feed_values;      // fixed feeds instead of random ones (shapes from these)
  int output = 0;                       // which output of the op is fetched
  bool consts_first = false;            // consts are the op's first inputs (Concat, Split)
  // The op's input position of each const, when consts and fed inputs interleave (overrides
  // consts_first); the placeholders fill the other positions in order.
  std::vector<int> const_positions;
  RefFn reference;  // independent expected value (see RefFn)
  // Ops XLA does not compile (ops-target.md "XLA compiles: —"): the kernel is checked against
  // `reference` alone, and must-compile mode must refuse the op with a clear error.
  bool kernel_only = false;
  // An absolute tolerance added to the per-element one, for ops whose rounding error grows
  // with the whole input rather than the element (transforms: about eps * n per output).
  double atol = 0;
};

// gtest prints the case by name in failure messages and test lists.

// gtest prints the case by name in failure messages and test lists.
void PrintTo(const OpCase& c, std::ostream* os);

// Every case: the basic families (op_cases.cc) and the later ones (op_cases_<family>*.cc).
std::vector<OpCase> AllCases();

// Shared by the two case files (op_cases.cc).
tensorflow::AttrValue TypeAttr(DType t);
tensorflow::AttrValue BoolAttr(bool b);
tensorflow::AttrValue IntAttr(int64_t i);
tensorflow::AttrValue StringAttr(const std::string& s);
tensorflow::AttrValue FloatAttr(float f);
tensorflow::AttrValue FloatListAttr(const std::vector<float>& v);
Tensor Bools(const std::vector<bool>& v);  // bool[n]
Tensor Ints(const std::vector<int32_t>& v, bool scalar = false);
std::string DimsName(const Dims& d);
Tensor Build(DType dtype, const Dims& dims, const std::function<double(const Dims&)>& f);
RefFn UnaryRef(std::function<double(double)> f, DType out = DType::kInvalid);
RefFn BinaryRef(std::function<double(double, double)> f);
Tensor Floats(DType t, const Dims& dims, const std::vector<double>& v);
Tensor Ints64(const std::vector<int64_t>& v, bool scalar = false);
Dims Unravel(int64_t k, const Dims& dims);
int64_t Ravel(const Dims& idx, const Dims& dims);
void SetFromDouble(Tensor& t, int64_t k, double v);
double FloorMod(double x, double y);
// Einsum's value by explicit sums over every label absent from the output (any number type,
// complex included; '...' as one label), op_cases_linalg.cc.
RefFn EinsumRef(const std::string& equation);

// More helpers of op_cases.cc used by the other op_cases_*.cc.
double At(const Tensor& t, const Dims& idx);
std::vector<int64_t> PySlice(int64_t b, int64_t e, int64_t s, int64_t dim, bool bmask, bool emask);
struct StridedPicks {
  Dims dims;                                // the slice's (final) dims
  std::function<Dims(const Dims&)> source;  // slice index -> input index
};
StridedPicks PickStridedSlice(const Dims& d, const std::vector<int64_t>& b,
                              const std::vector<int64_t>& e, const std::vector<int64_t>& s, int bm,
                              int em, int ellipsis, int newaxis, int shrink);
RefFn StridedSliceRef(std::vector<int64_t> b, std::vector<int64_t> e, std::vector<int64_t> s,
                      int bm, int em, int ellipsis, int newaxis, int shrink);

std::vector<OpCase> BinaryCases();
std::vector<OpCase> UnaryCases();
std::vector<OpCase> MatMulCases();
std::vector<OpCase> ReductionCases();
std::vector<OpCase> ArrayCases();
std::vector<OpCase> ElementwiseCases();
std::vector<OpCase> MathCases();
std::vector<OpCase> SliceCases();  // op_cases_array_slice.cc, with the next three
std::vector<OpCase> ShapeOpCases();
std::vector<OpCase> MoreArrayCases();
std::vector<OpCase> MiscCases();
std::vector<OpCase> NnCases();           // op_cases_nn_more.cc
std::vector<OpCase> BatchMatMulCases();  // op_cases_linalg.cc
std::vector<OpCase> ImageCases();        // op_cases_image.cc
std::vector<OpCase> ConvCases();         // op_cases_nn_conv.cc
std::vector<OpCase> TopKCases();         // op_cases_reduction_topk.cc
std::vector<OpCase> GradientsCases();    // op_cases_gradients.cc
// The window ops' gradients (pooling, convolution, resize, batch norm, LRN, Dilation2D), which
// GradientsCases appends; op_cases_gradients_window.cc.
void AddWindowGradientsCases(std::vector<OpCase>* cases);
std::vector<OpCase> OptimizersCases();      // op_cases_optimizers.cc
std::vector<OpCase> LinalgCases();          // op_cases_linalg.cc
std::vector<OpCase> LinalgComplexCases();   // op_cases_linalg_complex.cc
std::vector<OpCase> ScatterSegmentCases();  // op_cases_scatter_segment.cc
std::vector<OpCase> ArrayMoreCases();       // op_cases_array_more.cc
std::vector<OpCase> SpecialCases();         // op_cases_special.cc
std::vector<OpCase> RandomMoreCases();      // op_cases_random_more.cc
std::vector<OpCase> ImageMoreCases();       // op_cases_image_more.cc
std::vector<OpCase> NnMoreCases();          // op_cases_nn_more.cc
std::vector<OpCase> FftCases();             // op_cases_fft.cc
std::vector<OpCase> XlaCases();             // op_cases_xla.cc
// Basic ops that had no case: comparisons, logical ops, Gather, Where, the NonMaxSuppression
// family, the stateless random family, ... (op_cases_basic_more.cc).
std::vector<OpCase> BasicMoreCases();

}  // namespace tfjit::optest

#endif  // TFJIT_TESTS_TF_OP_CASES_H_
