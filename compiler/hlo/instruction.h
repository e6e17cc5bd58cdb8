// Instruction: one HLO operation. Owned by its Computation; operands, users and called
// computations are raw, non-owning pointers. Use lists change only through Computation.
#ifndef TFJIT_COMPILER_HLO_INSTRUCTION_H_
#define TFJIT_COMPILER_HLO_INSTRUCTION_H_

#include <cstdint>
#include <optional>

#include <string>
#include <vector>
#include "absl/strings/string_view.h"

#include "compiler/hlo/literal.h"
#include "compiler/hlo/opcode.h"
#include "compiler/hlo/shape.h"

namespace tfjit::hlo {

class Computation;

enum class ComparisonDirection : uint8_t { kEq, kNe, kLt, kLe, kGt, kGe };
absl::string_view ComparisonDirectionName(ComparisonDirection d);  // "EQ", "NE", ...
std::optional<ComparisonDirection> ComparisonDirectionFromName(absl::string_view name);

// Where an instruction came from: the TF node and op, and a source location when known.
struct Metadata {
  std::string tf_node;
  std::string tf_op;
  std::string source_file;
  int source_line = 0;
  bool empty() const { return tf_node.empty() && tf_op.empty() && source_file.empty(); }
  bool operator==(const Metadata&) const = default;
};

// slice={[start:limit:stride], ...}
struct SliceDim {
  int64_t start = 0, limit = 0, stride = 1;
  bool operator==(const SliceDim&) const = default;
};
// padding=lo_hi[_interior] per dim
struct PadDim {
  int64_t lo = 0, hi = 0, interior = 0;
  bool operator==(const PadDim&) const = default;
};
// window={size=.. stride=.. pad=lo_hi lhs_dilate=.. rhs_dilate=..}, one entry per dim
struct WindowDim {
  int64_t size = 1, stride = 1, pad_lo = 0, pad_hi = 0, lhs_dilate = 1, rhs_dilate = 1;
  bool operator==(const WindowDim&) const = default;
};
// dot: result dims = batch, lhs free, rhs free.
struct DotDims {
  std::vector<int64_t> lhs_batch, rhs_batch, lhs_contracting, rhs_contracting;
  bool operator==(const DotDims&) const = default;
};
// convolution dim_labels, e.g. b01f_01io->b01f: positions of batch/feature/spatial dims.
struct ConvDims {
  int64_t input_batch = 0, input_feature = 0;
  std::vector<int64_t> input_spatial;
  int64_t kernel_input_feature = 0, kernel_output_feature = 0;
  std::vector<int64_t> kernel_spatial;
  int64_t output_batch = 0, output_feature = 0;
  std::vector<int64_t> output_spatial;
  bool operator==(const ConvDims&) const = default;
};
// gather/scatter dimension numbers as XLA defines them.
struct GatherDims {
  std::vector<int64_t> offset_dims, collapsed_slice_dims, start_index_map;
  int64_t index_vector_dim = 0;
  std::vector<int64_t> slice_sizes;  // gather only
  bool operator==(const GatherDims&) const = default;
};
struct ScatterDims {
  std::vector<int64_t> update_window_dims, inserted_window_dims, scatter_dims_to_operand_dims;
  int64_t index_vector_dim = 0;
  bool operator==(const ScatterDims&) const = default;
};

// Opcode-specific attributes. Only the fields the opcode uses are meaningful; the printer
// prints, the parser reads and the verifier checks exactly those (see HLO.md).
struct Attributes {
  int64_t parameter_number = -1;    // parameter
  int64_t tuple_index = -1;         // get-tuple-element (text: index=)
  int64_t iota_dimension = -1;      // iota
  int64_t feature_group_count = 1;  // convolution
  // broadcast, transpose, reduce, reverse, concatenate (one entry), reduce dims, ...
  std::vector<int64_t> dimensions;
  std::vector<int64_t> dynamic_slice_sizes;                   // dynamic-slice
  std::optional<Literal> literal;                             // constant
  ComparisonDirection comparison = ComparisonDirection::kEq;  // compare
  std::vector<SliceDim> slice;                                // slice
  std::vector<PadDim> padding;                                // pad
  std::vector<WindowDim> window;                              // reduce-window, convolution
  DotDims dot;                                                // dot
  ConvDims conv;                                              // convolution
  GatherDims gather;                                          // gather
  ScatterDims scatter;                                        // scatter
  std::string fusion_kind;         // fusion: "kLoop", "kInput", "kOutput"
  std::string custom_call_target;  // custom-call
  std::string rng_algorithm;       // rng-bit-generator: "rng_philox"
};

class Instruction {
 public:
  Instruction(Opcode opcode, Shape shape) : opcode_(opcode), shape_(std::move(shape)) {}
  Instruction(const Instruction&) = delete;
  Instruction& operator=(const Instruction&) = delete;

  Opcode opcode() const { return opcode_; }
  const Shape& shape() const { return shape_; }
  void set_shape(Shape s) { shape_ = std::move(s); }
  const std::string& name() const { return name_; }
  void set_name(std::string n) { name_ = std::move(n); }
  // Creation order within the module; deterministic, used for stable iteration.
  int64_t unique_id() const { return unique_id_; }

  const std::vector<Instruction*>& operands() const { return operands_; }
  Instruction* operand(int i) const { return operands_[static_cast<size_t>(i)]; }
  int operand_count() const { return static_cast<int>(operands_.size()); }
  const std::vector<Instruction*>& users() const { return users_; }
  int user_count() const { return static_cast<int>(users_.size()); }

  // Computations this instruction calls, in a fixed order per opcode:
  // reduce/reduce-window/scatter: {to_apply}; call: {to_apply}; fusion: {calls};
  // while: {condition, body}; conditional: branch computations.
  const std::vector<Computation*>& called_computations() const { return called_; }
  void set_called_computations(std::vector<Computation*> c) { called_ = std::move(c); }
  Computation* to_apply() const { return called_.empty() ? nullptr : called_[0]; }

  const Attributes& attrs() const { return attrs_; }
  Attributes& mutable_attrs() { return attrs_; }
  const Metadata& metadata() const { return metadata_; }
  void set_metadata(Metadata m) { metadata_ = std::move(m); }

  Computation* parent() const { return parent_; }

  // Convenience accessors.
  const Literal& literal() const { return *attrs_.literal; }
  const std::vector<int64_t>& dimensions() const { return attrs_.dimensions; }
  int64_t parameter_number() const { return attrs_.parameter_number; }

  bool IsRoot() const;

 private:
  friend class Computation;

  Opcode opcode_;
  Shape shape_;
  std::string name_;
  int64_t unique_id_ = -1;
  std::vector<Instruction*> operands_;
  std::vector<Instruction*> users_;
  std::vector<Computation*> called_;
  Attributes attrs_;
  Metadata metadata_;
  Computation* parent_ = nullptr;
};

}  // namespace tfjit::hlo

#endif  // TFJIT_COMPILER_HLO_INSTRUCTION_H_
