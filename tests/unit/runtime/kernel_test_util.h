// Test helper for fallback kernels: builds a one-op GraphDef (text form) whose inputs are
// Placeholders, runs the op's registered kernel on given tensors and returns its outputs.
#ifndef TFJIT_TESTS_UNIT_RUNTIME_KERNEL_TEST_UTIL_H_
#define TFJIT_TESTS_UNIT_RUNTIME_KERNEL_TEST_UTIL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/dtype.h"
#include "core/thread_pool.h"
#include "frontend/graph.h"
#include "google/protobuf/text_format.h"
#include "gtest/gtest.h"
#include "runtime/kernels/kernel.h"

namespace tfjit::runtime::testing {

// TF's DataType enum spelling for text GraphDefs.
inline std::string TfTypeName(DType dtype) {
  switch (dtype) {
    case DType::kBool:
      return "DT_BOOL";
    case DType::kInt8:
      return "DT_INT8";
    case DType::kInt16:
      return "DT_INT16";
    case DType::kInt32:
      return "DT_INT32";
    case DType::kInt64:
      return "DT_INT64";
    case DType::kUInt8:
      return "DT_UINT8";
    case DType::kUInt16:
      return "DT_UINT16";
    case DType::kUInt32:
      return "DT_UINT32";
    case DType::kUInt64:
      return "DT_UINT64";
    case DType::kFloat16:
      return "DT_HALF";
    case DType::kBFloat16:
      return "DT_BFLOAT16";
    case DType::kFloat32:
      return "DT_FLOAT";
    case DType::kFloat64:
      return "DT_DOUBLE";
    default:
      return "DT_INVALID";
  }
}

// Usage: OpRunner("Add").T(DType::kFloat32).Input(a).Input(b).Run0()
class OpRunner {
 public:
  explicit OpRunner(std::string op) : op_(std::move(op)) {}

  OpRunner& Input(Tensor t) {
    inputs_.push_back(std::move(t));
    return *this;
  }
  OpRunner& Type(const std::string& name, DType dtype) {
    return RawAttr(name, absl::StrCat("type: ", TfTypeName(dtype)));
  }
  OpRunner& T(DType dtype) { return Type("T", dtype); }
  OpRunner& Bool(const std::string& name, bool v) {
    return RawAttr(name, absl::StrCat("b: ", v ? "true" : "false"));
  }
  OpRunner& Int(const std::string& name, int64_t v) {
    return RawAttr(name, absl::StrCat("i: ", v));
  }
  OpRunner& Str(const std::string& name, const std::string& v) {
    return RawAttr(name, absl::StrCat("s: \"", v, "\""));
  }
  OpRunner& Ints(const std::string& name, const std::vector<int64_t>& v) {
    std::string list = "list { ";
    for (int64_t x : v) absl::StrAppend(&list, "i: ", x, " ");
    return RawAttr(name, list + "}");
  }
  // `value` is the text of an AttrValue body, e.g. "tensor { dtype: DT_FLOAT ... }".
  OpRunner& RawAttr(const std::string& name, const std::string& value) {
    absl::StrAppend(&attrs_, "  attr { key: \"", name, "\" value { ", value, " } }\n");
    return *this;
  }
  OpRunner& Pool(ThreadPool* pool) {
    pool_ = pool;
    return *this;
  }

  // Builds the graph, runs the kernel and returns every output.
  absl::StatusOr<std::vector<Tensor>> Run() const {
    std::string text;
    std::vector<std::string> names;
    for (size_t i = 0; i < inputs_.size(); ++i) {
      names.push_back(absl::StrCat("\"in", i, "\""));
      absl::StrAppend(&text, "node { name: \"in", i,
                      "\" op: \"Placeholder\" attr { key: "
                      "\"dtype\" value { type: ",
                      TfTypeName(inputs_[i].dtype()), " } } }\n");
    }
    absl::StrAppend(&text, "node { name: \"op\" op: \"", op_, "\"\n");
    for (const std::string& n : names) absl::StrAppend(&text, "  input: ", n, "\n");
    absl::StrAppend(&text, attrs_, "}\n");
    tensorflow::GraphDef graph_def;
    if (!google::protobuf::TextFormat::ParseFromString(text, &graph_def)) {
      return absl::InternalError(absl::StrCat("bad test GraphDef:\n", text));
    }
    absl::StatusOr<std::unique_ptr<tf::Graph>> graph = tf::Graph::Build(graph_def, "test");
    if (!graph.ok()) return graph.status();
    const tf::Node* node = (*graph)->FindNode("op");
    KernelRegistry registry;
    RegisterAllKernels(registry);
    KernelFn fn = registry.Find(op_);
    if (fn == nullptr) return absl::NotFoundError(absl::StrCat("no kernel for ", op_));
    KernelContext ctx(*node, inputs_, pool_);
    absl::Status status = fn(ctx);
    if (!status.ok()) return status;
    return ctx.outputs();
  }
  // Output 0 (the common case).
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
  ThreadPool* pool_ = nullptr;
};

// Tensor builders.
inline Tensor F32(std::vector<int64_t> dims, const std::vector<float>& v) {
  return Tensor::FromVector<float>(DType::kFloat32, std::move(dims), v);
}
inline Tensor F64(std::vector<int64_t> dims, const std::vector<double>& v) {
  return Tensor::FromVector<double>(DType::kFloat64, std::move(dims), v);
}
inline Tensor I32(std::vector<int64_t> dims, const std::vector<int32_t>& v) {
  return Tensor::FromVector<int32_t>(DType::kInt32, std::move(dims), v);
}
inline Tensor I64(std::vector<int64_t> dims, const std::vector<int64_t>& v) {
  return Tensor::FromVector<int64_t>(DType::kInt64, std::move(dims), v);
}
inline Tensor U8(std::vector<int64_t> dims, const std::vector<uint8_t>& v) {
  return Tensor::FromVector<uint8_t>(DType::kUInt8, std::move(dims), v);
}
inline Tensor Bool(std::vector<int64_t> dims, const std::vector<bool>& v) {
  Tensor t(DType::kBool, std::move(dims));
  for (size_t i = 0; i < v.size(); ++i) t.data<bool>()[i] = v[i];
  return t;
}
inline Tensor F16(std::vector<int64_t> dims, const std::vector<float>& v) {
  Tensor t(DType::kFloat16, std::move(dims));
  for (size_t i = 0; i < v.size(); ++i) t.data<half>()[i] = half(v[i]);
  return t;
}

// Every element as double, for EXPECT_THAT(..., ElementsAre(...)).
inline std::vector<double> Values(const Tensor& t) {
  std::vector<double> out;
  for (int64_t i = 0; i < t.num_elements(); ++i) out.push_back(ElementAsDouble(t, i));
  return out;
}

}  // namespace tfjit::runtime::testing

#define TFJIT_EXPECT_ERROR(expr, expected_code, substr)                            \
  do {                                                                             \
    auto _r = (expr);                                                              \
    ASSERT_FALSE(_r.ok()) << "expected an error";                                  \
    EXPECT_EQ(_r.status().code(), expected_code) << _r.status();                   \
    EXPECT_THAT(std::string(_r.status().message()), ::testing::HasSubstr(substr)); \
  } while (0)

#endif  // TFJIT_TESTS_UNIT_RUNTIME_KERNEL_TEST_UTIL_H_
