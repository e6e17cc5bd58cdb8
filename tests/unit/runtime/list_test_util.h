// Test helper for the list and TensorArray kernels: like kernel_test_util.h's OpRunner, but
// its Placeholder inputs may be variant (lists) or resource (TensorArray handles) tensors.
#ifndef TFJIT_TESTS_UNIT_RUNTIME_LIST_TEST_UTIL_H_
#define TFJIT_TESTS_UNIT_RUNTIME_LIST_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "tests/unit/runtime/kernel_test_util.h"

namespace tfjit::runtime::testing {

inline std::string AnyTfTypeName(DType dtype) {
  if (dtype == DType::kVariant) return "DT_VARIANT";
  if (dtype == DType::kResource) return "DT_RESOURCE";
  return TfTypeName(dtype);
}

// Usage: ListOp("TensorListStack").Type("element_dtype", kFloat32).Input(l).Input(s).Run0()
class ListOp {
 public:
  explicit ListOp(std::string op) : op_(std::move(op)) {}
  ListOp& Input(Tensor t) {
    inputs_.push_back(std::move(t));
    return *this;
  }
  ListOp& Type(const std::string& name, DType dtype) {
    return Raw(name, absl::StrCat("type: ", AnyTfTypeName(dtype)));
  }
  ListOp& ElementDType(DType dtype) { return Type("element_dtype", dtype); }
  ListOp& Bool(const std::string& name, bool v) {
    return Raw(name, absl::StrCat("b: ", v ? "true" : "false"));
  }
  ListOp& Int(const std::string& name, int64_t v) { return Raw(name, absl::StrCat("i: ", v)); }
  ListOp& Str(const std::string& name, const std::string& v) {
    return Raw(name, absl::StrCat("s: \"", v, "\""));
  }
  // A shape attr: dims (-1 unknown), or unknown rank when `unknown_rank`.
  ListOp& Shape(const std::string& name, const std::vector<int64_t>& dims,
                bool unknown_rank = false) {
    std::string body = "shape { ";
    if (unknown_rank) absl::StrAppend(&body, "unknown_rank: true ");
    for (int64_t d : dims) absl::StrAppend(&body, "dim { size: ", d, " } ");
    return Raw(name, body + "}");
  }
  ListOp& Raw(const std::string& name, const std::string& value) {
    absl::StrAppend(&attrs_, "  attr { key: \"", name, "\" value { ", value, " } }\n");
    return *this;
  }

  absl::StatusOr<std::vector<Tensor>> Run() const {
    std::string text;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      absl::StrAppend(&text, "node { name: \"in", i,
                      "\" op: \"Placeholder\" attr { key: \"dtype\" value { type: ",
                      AnyTfTypeName(inputs_[i].dtype()), " } } }\n");
    }
    absl::StrAppend(&text, "node { name: \"op\" op: \"", op_, "\"\n");
    for (size_t i = 0; i < inputs_.size(); ++i) absl::StrAppend(&text, "  input: \"in", i, "\"\n");
    absl::StrAppend(&text, attrs_, "}\n");
    tensorflow::GraphDef graph_def;
    if (!google::protobuf::TextFormat::ParseFromString(text, &graph_def)) {
      return absl::InternalError(absl::StrCat("bad test GraphDef:\n", text));
    }
    absl::StatusOr<std::unique_ptr<tf::Graph>> graph = tf::Graph::Build(graph_def, "test");
    if (!graph.ok()) return graph.status();
    KernelRegistry registry;
    RegisterAllKernels(registry);
    KernelFn fn = registry.Find(op_);
    if (fn == nullptr) return absl::NotFoundError(absl::StrCat("no kernel for ", op_));
    KernelContext ctx(*(*graph)->FindNode("op"), inputs_, nullptr);
    absl::Status status = fn(ctx);
    if (!status.ok()) return status;
    return ctx.outputs();
  }
  absl::StatusOr<Tensor> Run0() const {
    absl::StatusOr<std::vector<Tensor>> outs = Run();
    if (!outs.ok()) return outs.status();
    if (outs->empty()) return absl::InternalError("kernel produced no outputs");
    return (*outs)[0];
  }

 private:
  std::string op_;
  std::vector<Tensor> inputs_;
  std::string attrs_;
};

// Shape inputs: a vector of dims, or the scalar -1 (unknown rank).
inline Tensor ShapeT(const std::vector<int32_t>& dims) {
  return I32({static_cast<int64_t>(dims.size())}, dims);
}
inline Tensor UnknownShapeT() { return I32({}, {-1}); }
inline Tensor Scalar32(int32_t v) { return I32({}, {v}); }

}  // namespace tfjit::runtime::testing

#endif  // TFJIT_TESTS_UNIT_RUNTIME_LIST_TEST_UTIL_H_
