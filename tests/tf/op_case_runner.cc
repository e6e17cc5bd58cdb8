// Running one OpCase (op_case_runner.h).
#include "tests/tf/op_case_runner.h"

#include <algorithm>
#include <cmath>

#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "examples/cli_output.h"
#include "frontend/proto/graph.pb.h"
#include "frontend/tensor_proto.h"
#include "google/protobuf/text_format.h"

namespace tfjit::optest {

std::vector<std::pair<bool, int>> InputOrder(const OpCase& c) {
  const int n_in = static_cast<int>(c.inputs.size()), n_const = static_cast<int>(c.consts.size());
  std::vector<std::pair<bool, int>> order;
  if (!c.const_positions.empty()) {
    order.assign(static_cast<size_t>(n_in + n_const), {false, -1});
    for (int i = 0; i < n_const; ++i) {
      order[static_cast<size_t>(c.const_positions[static_cast<size_t>(i)])] = {true, i};
    }
    int next = 0;
    for (auto& slot : order) {
      if (slot.second < 0) slot = {false, next++};
    }
    return order;
  }
  for (int i = 0; i < n_const && c.consts_first; ++i) order.push_back({true, i});
  for (int i = 0; i < n_in; ++i) order.push_back({false, i});
  for (int i = 0; i < n_const && !c.consts_first; ++i) order.push_back({true, i});
  return order;
}

std::string GraphText(const OpCase& c) {
  tensorflow::GraphDef g;
  auto* op = g.add_node();
  op->set_name("op");
  op->set_op(c.op);
  const DType in_type = c.input_dtype == DType::kInvalid ? c.dtype : c.input_dtype;
  for (const auto& [is_const, i] : InputOrder(c)) {
    const size_t k = static_cast<size_t>(i);
    auto* n = g.add_node();
    if (is_const) {
      n->set_name(absl::StrCat("k", i));
      n->set_op("Const");
      (*n->mutable_attr())["dtype"] = TypeAttr(c.consts[k].dtype());
      *(*n->mutable_attr())["value"].mutable_tensor() = tf::TensorToProto(c.consts[k]);
    } else {
      n->set_name(absl::StrCat("p", i));
      n->set_op("Placeholder");
      (*n->mutable_attr())["dtype"] =
          TypeAttr(k < c.input_dtypes.size() ? c.input_dtypes[k] : in_type);
      auto* shape = (*n->mutable_attr())["shape"].mutable_shape();
      for (int64_t d : c.inputs[k]) shape->add_dim()->set_size(d);
    }
    op->add_input(n->name());
  }
  if (c.has_t) (*op->mutable_attr())["T"] = TypeAttr(c.dtype);
  for (const auto& [k, v] : c.attrs) (*op->mutable_attr())[k] = v;
  std::string text;
  google::protobuf::TextFormat::PrintToString(g, &text);
  return text;
}

std::vector<Tensor> Feeds(const OpCase& c) {
  if (!c.feed_values.empty()) return c.feed_values;
  const DType in_type = c.input_dtype == DType::kInvalid ? c.dtype : c.input_dtype;
  std::vector<Tensor> feeds;
  for (size_t i = 0; i < c.inputs.size(); ++i) {
    const DType t = i < c.input_dtypes.size() ? c.input_dtypes[i] : in_type;
    feeds.push_back(cli::RandomTensor(t, c.inputs[i], 17 + i * 101));
  }
  return feeds;
}

PathResult RunPath(const std::string& path, const OpCase& c, JitMode jit,
                   const std::string& backend) {
  // XLA_FLAGS applies as in the CLI: the sanitizer builds run this test with
  // --xla_backend_optimization_level=0 (tests/tf/CMakeLists.txt). Read once.
  static const absl::StatusOr<SessionOptions> from_environment = SessionOptionsFromEnvironment();
  absl::StatusOr<SessionOptions> options = from_environment;
  if (!options.ok()) return {options.status(), {}};
  options->jit = jit;
  options->backend = backend;
  auto session = Session::Load(path, *options);
  if (!session.ok()) return {session.status(), {}};
  std::vector<Tensor> values = Feeds(c);
  std::vector<std::pair<std::string, Tensor>> feeds;
  for (size_t i = 0; i < values.size(); ++i) feeds.push_back({absl::StrCat("p", i), values[i]});
  auto out = (*session)->Run(feeds, {c.output == 0 ? "op" : absl::StrCat("op:", c.output)});
  if (!out.ok()) return {out.status(), {}};
  return {absl::OkStatus(), (*out)[0]};
}

double Tolerance(DType t) {
  switch (t) {
    case DType::kFloat16:
      return 4e-3;
    case DType::kBFloat16:
      return 2e-2;
    case DType::kFloat64:
      return 1e-12;
    case DType::kComplex128:
      return 1e-12;  // per part, like float64 (complex64: float32's)
    default:
      return 2e-6;
  }
}

::testing::AssertionResult SameTensor(const Tensor& e, const Tensor& a, double atol) {
  if (e.ShapeString() != a.ShapeString()) {
    return ::testing::AssertionFailure() << e.ShapeString() << " vs " << a.ShapeString();
  }
  const double tol = Tolerance(e.dtype());
  if (IsComplexDType(e.dtype())) {
    // Both parts, each like a float of the part's type, relative to the element's modulus.
    for (int64_t k = 0; k < e.num_elements(); ++k) {
      const complex128 ev = ElementAsComplex(e, k), av = ElementAsComplex(a, k);
      const double scale = tol * std::max(1.0, std::abs(ev)) + atol;
      const auto part_ok = [&](double x, double y) {
        return (std::isnan(x) && std::isnan(y)) || x == y || std::abs(x - y) <= scale;
      };
      if (!part_ok(ev.real(), av.real()) || !part_ok(ev.imag(), av.imag())) {
        return ::testing::AssertionFailure()
               << "element " << k << ": (" << ev.real() << "," << ev.imag() << ") vs (" << av.real()
               << "," << av.imag() << ")";
      }
    }
    return ::testing::AssertionSuccess();
  }
  for (int64_t k = 0; k < e.num_elements(); ++k) {
    const double ev = ElementAsDouble(e, k), av = ElementAsDouble(a, k);
    if (std::isnan(ev) && std::isnan(av)) continue;
    if (ev == av) continue;
    const bool close =
        IsFloatingDType(e.dtype()) && std::abs(ev - av) <= tol * std::max(1.0, std::abs(ev)) + atol;
    if (!close) {
      return ::testing::AssertionFailure() << "element " << k << ": " << ev << " vs " << av;
    }
  }
  return ::testing::AssertionSuccess();
}

}  // namespace tfjit::optest
