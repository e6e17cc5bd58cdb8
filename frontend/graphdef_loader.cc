// GraphDef file loading: binary or text protobuf, with precise parse errors.
#include "frontend/graphdef_loader.h"

#include <fstream>
#include <limits>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/status.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"

namespace tfjit::tf {
namespace {

// Keeps the first text-format error, 1-based, as "line L:C: message".
class FirstErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, int column, const std::string& message) override {
    if (error_.empty()) error_ = absl::StrCat("line ", line + 1, ":", column + 1, ": ", message);
  }
  const std::string& error() const { return error_; }

 private:
  std::string error_;
};

// Returns "" on success, else the first error ("line L:C: ...").
std::string ParseText(absl::string_view bytes, tensorflow::GraphDef* out) {
  FirstErrorCollector errors;
  google::protobuf::TextFormat::Parser parser;
  parser.RecordErrorsTo(&errors);
  out->Clear();
  if (parser.ParseFromString(std::string(bytes), out)) return "";
  return errors.error().empty() ? std::string("line ?: text parse failed") : errors.error();
}

bool ParseBinary(absl::string_view bytes, tensorflow::GraphDef* out) {
  out->Clear();
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) return false;
  return out->ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

// A binary GraphDef holds tags and lengths (bytes below 0x20) within its first records;
// text format never has control characters other than whitespace.
bool LooksLikeText(absl::string_view bytes) {
  const size_t n = std::min<size_t>(bytes.size(), 64 * 1024);
  for (size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(bytes[i]);
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != '\v') return false;
  }
  return true;
}

bool HasTextExtension(absl::string_view path) {
  return absl::EndsWith(path, ".pbtxt") || absl::EndsWith(path, ".txt") ||
         absl::EndsWith(path, ".pbtext") || absl::EndsWith(path, ".prototxt");
}

}  // namespace

absl::StatusOr<tensorflow::GraphDef> ParseGraphDefFromString(absl::string_view bytes, bool is_text,
                                                             absl::string_view source) {
  tensorflow::GraphDef graph_def;
  if (is_text) {
    std::string error = ParseText(bytes, &graph_def);
    if (error.empty()) return graph_def;
    // A binary file with a text name: accept it only if it really is a binary GraphDef.
    if (!LooksLikeText(bytes) && ParseBinary(bytes, &graph_def)) return graph_def;
    return InvalidArgument("file '%s': text GraphDef parse failed at %s", std::string(source),
                           error);
  }
  if (ParseBinary(bytes, &graph_def)) return graph_def;
  std::string error = ParseText(bytes, &graph_def);
  if (error.empty()) return graph_def;
  return InvalidArgument(
      "file '%s': not a GraphDef: binary parse failed and text parse failed "
      "at %s",
      std::string(source), error);
}

absl::StatusOr<tensorflow::GraphDef> ReadGraphDefFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return NotFound("file '%s': cannot open (does it exist?)", path);
  std::ostringstream contents;
  contents << file.rdbuf();
  if (file.bad()) return InvalidArgument("file '%s': read error", path);
  const std::string bytes = contents.str();
  const bool is_text = HasTextExtension(path) || (!bytes.empty() && LooksLikeText(bytes));
  return ParseGraphDefFromString(bytes, is_text, path);
}

namespace {

// TF's legacy rule for graphs written before GraphDef version 22: a Placeholder could not
// say "unknown shape", so a scalar `shape` attr means unknown (TF's Placeholder shape function
// and kernel read it so; no `versions` is producer 0). tf.placeholder(tf.float32) in early TF
// 1.x wrote exactly that. Applied to binary files, which TF writes; text GraphDefs without
// versions are mostly hand-written and keep their shapes as written.
void ApplyLegacyPlaceholderShapes(tensorflow::GraphDef* graph_def) {
  if (graph_def->versions().producer() > 21) return;
  for (tensorflow::NodeDef& node : *graph_def->mutable_node()) {
    if (node.op() != "Placeholder") continue;
    auto it = node.mutable_attr()->find("shape");
    if (it == node.mutable_attr()->end() || !it->second.has_shape()) continue;
    tensorflow::TensorShapeProto* shape = it->second.mutable_shape();
    if (!shape->unknown_rank() && shape->dim_size() == 0) shape->set_unknown_rank(true);
  }
}

}  // namespace

absl::StatusOr<std::unique_ptr<Graph>> LoadGraphDefFile(const std::string& path) {
  TFJIT_ASSIGN_OR_RETURN(tensorflow::GraphDef graph_def, ReadGraphDefFile(path));
  if (!HasTextExtension(path)) ApplyLegacyPlaceholderShapes(&graph_def);
  return Graph::Build(graph_def, path);
}

}  // namespace tfjit::tf
