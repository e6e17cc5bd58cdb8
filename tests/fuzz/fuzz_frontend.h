// Shared by the frontend fuzz targets: lower loader limits, decoding a graph's constants, and
// the body of the graphdef_binary and graphdef_text targets.
#ifndef TFJIT_TESTS_FUZZ_FUZZ_FRONTEND_H_
#define TFJIT_TESTS_FUZZ_FUZZ_FRONTEND_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/strings/string_view.h"
#include "frontend/attr.h"
#include "frontend/graph.h"
#include "frontend/graphdef_loader.h"
#include "frontend/tensor_proto.h"
#include "tests/fuzz/fuzz_util.h"

namespace tfjit::fuzz {

// libFuzzer runs with -malloc_limit_mb=1024 and -rss_limit_mb=2048: a tensor the loaders
// accept must stay well below that, so the targets lower the per-tensor cap from its
// default (4 GiB) to 64 MiB. Anything the loaders would allocate beyond a tensor this size
// for a small file is a finding.
inline bool LowerLoaderLimits() {
  tf::SetLoaderLimits({/*max_tensor_elements=*/int64_t{1} << 24,
                       /*max_tensor_bytes=*/int64_t{64} << 20});
  return true;
}

// Decodes every Const's value, as a session does when it runs the graph.
inline void DecodeConsts(const tf::Graph& graph) {
  for (const auto& node : graph.nodes()) {
    if (node->op() == "Const") (void)tf::GetTensorAttr(*node, "value");
  }
}

inline void FuzzGraphDef(const uint8_t* data, size_t size, bool is_text) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<tensorflow::GraphDef> graph_def =
      tf::ParseGraphDefFromString(bytes, is_text, is_text ? "fuzz.pbtxt" : "fuzz.pb");
  if (!graph_def.ok()) {
    TFJIT_FUZZ_CHECK(graph_def.status().code() == absl::StatusCode::kInvalidArgument);
    return;
  }
  // Every tensor attr of the parsed proto decodes to a status or a tensor within the limits.
  for (const tensorflow::NodeDef& node : graph_def->node()) {
    for (const auto& [name, value] : node.attr()) {
      if (value.value_case() != tensorflow::AttrValue::kTensor) continue;
      absl::StatusOr<Tensor> t = tf::TensorFromProto(value.tensor());
      if (t.ok())
        TFJIT_FUZZ_CHECK(t->byte_size() <=
                         static_cast<size_t>(tf::GetLoaderLimits().max_tensor_bytes));
    }
  }
  absl::StatusOr<std::unique_ptr<tf::Graph>> graph = tf::Graph::Build(*graph_def, "fuzz");
  if (graph.ok()) DecodeConsts(**graph);
}

}  // namespace tfjit::fuzz

#endif  // TFJIT_TESTS_FUZZ_FUZZ_FRONTEND_H_
