// GraphDef text helpers for the tests that write small graphs by hand (the variable
// read-modify-write tests): shapes, Const and Placeholder nodes, and loading the text into a
// Session.
#ifndef TFJIT_TESTS_TF_GRAPH_TEXT_H_
#define TFJIT_TESTS_TF_GRAPH_TEXT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tfjit/session.h"

namespace tfjit::testing {

// `key { dim { size: d } ... }`: key is "shape" in attrs, "tensor_shape" in tensors.
inline std::string ShapeText(const char* key, const std::vector<int64_t>& dims) {
  std::string s = absl::StrCat(key, " { ");
  for (int64_t d : dims) absl::StrAppend(&s, "dim { size: ", d, " } ");
  return s + "}";
}

// A Const node of `dtype` ("DT_FLOAT") whose values go in `field` ("float_val").
template <typename T>
std::string ConstNode(const std::string& name, const char* dtype, const char* field,
                      const std::vector<int64_t>& dims, const std::vector<T>& values) {
  std::string vals;
  for (T v : values) absl::StrAppend(&vals, field, ": ", v, " ");
  return absl::StrCat("node { name: \"", name, "\" op: \"Const\" attr { key: \"dtype\" value { ",
                      "type: ", dtype, " } } attr { key: \"value\" value { tensor { dtype: ", dtype,
                      " ", ShapeText("tensor_shape", dims), " ", vals, "} } } }\n");
}

inline std::string PlaceholderNode(const std::string& name, const char* dtype,
                                   const std::vector<int64_t>& dims) {
  return absl::StrCat("node { name: \"", name, "\" op: \"Placeholder\" attr { key: \"dtype\" ",
                      "value { type: ", dtype, " } } attr { key: \"shape\" value { ",
                      ShapeText("shape", dims), " } } }\n");
}

// The graph text written to a temp file and loaded with `mode`; null (and a test failure
// showing the graph) when loading fails.
inline std::unique_ptr<Session> LoadGraphText(const std::string& file, const std::string& graph,
                                              JitMode mode) {
  SessionOptions options;
  options.jit = mode;
  auto session = Session::Load(WriteTempFile(file, graph), options);
  EXPECT_TRUE(session.ok()) << StatusToString(session.status()) << "\n" << graph;
  return session.ok() ? std::move(*session) : nullptr;
}

}  // namespace tfjit::testing

#endif  // TFJIT_TESTS_TF_GRAPH_TEXT_H_
