// Loading a GraphDef from a file (.pb binary or .pbtxt text) into a validated tf::Graph.
#ifndef TFJIT_FRONTEND_GRAPHDEF_LOADER_H_
#define TFJIT_FRONTEND_GRAPHDEF_LOADER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "frontend/graph.h"
#include "frontend/proto/graph.pb.h"

namespace tfjit::tf {

// Parses GraphDef bytes. Text errors name `source` and "line L:C". With is_text=false a
// binary parse failure falls back to text (some ".pb" files are text); if both fail the
// error is INVALID_ARGUMENT "file 'x': not a GraphDef: binary parse failed and text parse
// failed at line L:C: ...".
absl::StatusOr<tensorflow::GraphDef> ParseGraphDefFromString(absl::string_view bytes, bool is_text,
                                                             absl::string_view source);

// Reads `path` (NOT_FOUND when missing) and parses it: text for .pbtxt/.txt or content that
// looks like text, binary otherwise (with the fallbacks above).
absl::StatusOr<tensorflow::GraphDef> ReadGraphDefFile(const std::string& path);

// ReadGraphDefFile + Graph::Build(graph_def, path).
absl::StatusOr<std::unique_ptr<Graph>> LoadGraphDefFile(const std::string& path);

}  // namespace tfjit::tf

#endif  // TFJIT_FRONTEND_GRAPHDEF_LOADER_H_
