// TF.js graph-model loader (see tfjs_model.h). Steps:
//  1. model.json -> protobuf binary with protobuf's own JSON parser (ignore_unknown_fields),
//     then two views of that binary: ModelJson (all fields) and ModelJsonKeyOrder (the JSON
//     key order of the signature objects, which a proto map forgets).
//  2. The weight shards are decoded (tfjs_weights.h) and each weight becomes the `value`
//     tensor of the Const node with its name; the topology's Consts carry only dtype and shape.
//  3. The GraphDef is built into a tf::Graph.
//  4. The signature (userDefinedMetadata.signature overrides the top-level one, as in TF.js's
//     GraphModel) becomes "serving_default"; a missing inputs or outputs half, or a missing
//     signature, is inferred the way TF.js's OperationMapper does.
#include "frontend/tfjs_model.h"

#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/logging.h"
#include "core/status.h"
#include "frontend/attr.h"
#include "frontend/proto/tfjs_model.pb.h"
#include "frontend/tensor_proto.h"
#include "frontend/tfjs_weights.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/util/json_util.h"
#include "google/protobuf/util/type_resolver_util.h"

namespace tfjit::tf {
namespace {

namespace pb = google::protobuf;

// protobuf's JSON errors end with "\n<up to 40 chars of input>\n<spaces>^". Locates that
// snippet in `text` to turn it into "line L, column C (byte B)"; empty when not unique.
std::string JsonErrorPosition(const std::string& text, const std::string& message) {
  const size_t first = message.find('\n');
  const size_t last = message.rfind('\n');
  if (first == std::string::npos || first == last) return "";
  const std::string caret = message.substr(last + 1);
  const size_t column_in_snippet = caret.find('^');
  if (column_in_snippet == std::string::npos) return "";
  const std::string snippet = message.substr(first + 1, last - first - 1);
  size_t pos;
  if (snippet.empty()) {
    pos = text.size();
  } else {
    const size_t at = text.find(snippet);
    if (at == std::string::npos || text.find(snippet, at + 1) != std::string::npos) return "";
    pos = at + column_in_snippet;
  }
  int64_t line = 1;
  size_t line_start = 0;
  for (size_t i = 0; i < pos && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      line_start = i + 1;
    }
  }
  return absl::StrFormat("line %d, column %d (byte %d)", line,
                         static_cast<int64_t>(pos - line_start) + 1, static_cast<int64_t>(pos));
}

// Parses JSON `text` as message type `full_name` into protobuf binary.
absl::Status JsonToBinary(const std::string& text, const std::string& full_name,
                          std::string* binary) {
  static pb::util::TypeResolver* resolver = pb::util::NewTypeResolverForDescriptorPool(
      "type.googleapis.com", pb::DescriptorPool::generated_pool());
  pb::util::JsonParseOptions options;
  options.ignore_unknown_fields = true;  // converter extras, layers-model keys, new fields
  const auto status = pb::util::JsonToBinaryString(
      resolver, absl::StrCat("type.googleapis.com/", full_name), text, binary, options);
  if (status.ok()) return absl::OkStatus();
  return absl::Status(absl::StatusCode::kInvalidArgument, std::string(status.message()));
}

struct ParsedJson {
  tfjs::ModelJson model;
  tfjs::ModelJsonKeyOrder order;
};

absl::StatusOr<ParsedJson> ParseModelJson(const std::string& text, const std::string& path) {
  std::string binary;
  absl::Status status = JsonToBinary(text, tfjs::ModelJson::descriptor()->full_name(), &binary);
  if (!status.ok()) {
    std::string message(status.message());
    const std::string where = JsonErrorPosition(text, message);
    // One line: protobuf's message, then its snippet with "-->" where its caret pointed.
    const size_t first = message.find('\n');
    const size_t last = message.rfind('\n');
    if (first != std::string::npos && first != last) {
      std::string snippet = message.substr(first + 1, last - first - 1);
      const size_t caret = message.find('^', last);
      if (caret != std::string::npos && caret - last - 1 <= snippet.size()) {
        snippet.insert(caret - last - 1, "-->");
      }
      for (char& c : snippet) {
        if (c == '\n' || c == '\r') c = ' ';
      }
      const std::string head = message.substr(0, first);
      message = snippet == "-->" ? absl::StrCat(head, " (at the end of the file)")
                                 : absl::StrCat(head, " Near: '", snippet, "'");
    }
    if (where.empty()) {
      return InvalidArgument("TF.js model '%s': not a valid TF.js model.json: %s", path, message);
    }
    return InvalidArgument("TF.js model '%s': not valid JSON at %s: %s", path, where, message);
  }
  ParsedJson parsed;
  if (!parsed.model.ParseFromString(binary) || !parsed.order.ParseFromString(binary)) {
    return Internal("TF.js model '%s': the JSON parser's output did not parse back", path);
  }
  parsed.order.DiscardUnknownFields();
  return parsed;
}

const tfjs::StructInOrder* FieldStruct(const tfjs::StructInOrder& s, absl::string_view key) {
  for (const tfjs::FieldInOrder& f : s.fields()) {
    if (f.key() == key) return &f.value().struct_value();
  }
  return nullptr;
}

// The keys of map `field` of a SignatureDef in JSON order (map keys the order view missed,
// which cannot happen for well-formed input, go last, sorted).
std::vector<std::string> KeysInOrder(const pb::Map<std::string, tfjs::TensorInfo>& map,
                                     const tfjs::StructInOrder* order, absl::string_view field) {
  std::vector<std::string> keys;
  std::set<std::string> seen;
  if (const tfjs::StructInOrder* s = order ? FieldStruct(*order, field) : nullptr) {
    for (const tfjs::FieldInOrder& f : s->fields()) {
      if (map.contains(f.key()) && seen.insert(f.key()).second) keys.push_back(f.key());
    }
  }
  std::set<std::string> rest;
  for (const auto& [key, info] : map) {
    if (!seen.count(key)) rest.insert(key);
  }
  keys.insert(keys.end(), rest.begin(), rest.end());
  return keys;
}

absl::StatusOr<TensorSpec> SpecFromInfo(const std::string& key, const tfjs::TensorInfo& info,
                                        const Graph& graph) {
  if (info.name().empty()) return InvalidArgument("signature entry '%s' has no 'name'", key);
  TFJIT_ASSIGN_OR_RETURN(const TensorName name, ParseTensorName(info.name()));
  TensorSpec spec;
  spec.key = key;
  spec.tensor = absl::StrCat(name.node, ":", name.index);
  if (std::optional<DType> d = DTypeFromTfEnum(info.dtype()); d && info.dtype() != 0) {
    spec.dtype = *d;
  } else if (absl::StatusOr<Output> out = graph.FindOutput(spec.tensor); out.ok()) {
    spec.dtype = out->node->output_types()[out->index];
  }
  if (info.has_tensor_shape()) {
    TFJIT_ASSIGN_OR_RETURN(spec.shape, PartialShapeFromProto(info.tensor_shape()));
  } else {
    spec.shape.unknown_rank = true;
  }
  return spec;
}

// TF.js's inputs without a signature: every node whose op starts with "Placeholder".
std::vector<TensorSpec> InferInputs(const Graph& graph) {
  std::vector<TensorSpec> specs;
  for (const auto& node : graph.nodes()) {
    if (!absl::StartsWith(node->op(), "Placeholder") || node->num_outputs() == 0) continue;
    TensorSpec spec;
    spec.key = node->name();
    spec.tensor = absl::StrCat(node->name(), ":0");
    spec.dtype = node->output_types()[0];
    absl::StatusOr<PartialShape> shape = GetShapeAttr(*node, "shape");
    if (shape.ok()) {
      spec.shape = *shape;
    } else {
      spec.shape.unknown_rank = true;
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

// TF.js's outputs without a signature: nodes nothing consumes (control edges count as
// consumers there too), output 0. Nodes without outputs (NoOp sinks) cannot be fetched.
std::vector<TensorSpec> InferOutputs(const Graph& graph) {
  std::vector<TensorSpec> specs;
  for (const auto& node : graph.nodes()) {
    if (!node->data_consumers().empty() || !node->control_consumers().empty()) continue;
    if (node->num_outputs() == 0) continue;
    TensorSpec spec;
    spec.key = node->name();
    spec.tensor = absl::StrCat(node->name(), ":0");
    spec.dtype = node->output_types()[0];
    spec.shape.unknown_rank = true;
    specs.push_back(std::move(spec));
  }
  return specs;
}

// Converts a free-form signature Struct (and its key order) into a Signature over `graph`.
// Entries naming nodes the graph lacks are dropped, as TF.js does. Returns nullopt when the
// signature names neither inputs nor outputs.
absl::StatusOr<std::optional<Signature>> BuildSignature(const pb::Struct& json,
                                                        const tfjs::StructInOrder* order,
                                                        const Graph& graph, const std::string& path,
                                                        absl::string_view where) {
  std::string text;
  std::string binary;
  tfjs::SignatureDef def;
  absl::Status status = absl::OkStatus();
  if (!pb::util::MessageToJsonString(json, &text).ok()) {
    status = Internal("cannot re-serialize the signature");
  } else {
    status = JsonToBinary(text, tfjs::SignatureDef::descriptor()->full_name(), &binary);
  }
  if (status.ok() && !def.ParseFromString(binary)) status = Internal("unparsable signature");
  if (!status.ok()) {
    return InvalidArgument("TF.js model '%s': %s is not a SignatureDef: %s", path, where,
                           status.message());
  }
  Signature sig;
  sig.name = "serving_default";
  sig.method_name = def.method_name();
  for (const bool input : {true, false}) {
    const auto& map = input ? def.inputs() : def.outputs();
    for (const std::string& key : KeysInOrder(map, order, input ? "inputs" : "outputs")) {
      absl::StatusOr<TensorSpec> spec = SpecFromInfo(key, map.at(key), graph);
      if (!spec.ok()) {
        return WithContext(spec.status(), absl::StrFormat("TF.js model '%s': %s", path, where));
      }
      if (graph.FindNode(ParseTensorName(spec->tensor)->node) == nullptr) {
        Log(LogLevel::kWarning,
            "TF.js model '%s': %s %s '%s' names tensor '%s', which the graph does not have; "
            "ignoring it (as TF.js does)",
            path, where, input ? "input" : "output", key, spec->tensor);
        continue;
      }
      (input ? sig.inputs : sig.outputs).push_back(std::move(*spec));
    }
  }
  if (def.inputs().empty() && def.outputs().empty()) return std::optional<Signature>();
  if (sig.inputs.empty()) sig.inputs = InferInputs(graph);
  if (sig.outputs.empty()) sig.outputs = InferOutputs(graph);
  return std::optional<Signature>(std::move(sig));
}

bool HasInlineValue(const tensorflow::TensorProto& t) {
  return !t.tensor_content().empty() || t.float_val_size() || t.double_val_size() ||
         t.int_val_size() || t.string_val_size() || t.scomplex_val_size() || t.int64_val_size() ||
         t.bool_val_size() || t.dcomplex_val_size() || t.half_val_size() ||
         t.resource_handle_val_size() || t.variant_val_size() || t.uint32_val_size() ||
         t.uint64_val_size() || !t.float8_val().empty();
}

bool HasZeroElements(const tensorflow::TensorProto& t) {
  for (const auto& d : t.tensor_shape().dim()) {
    if (d.size() == 0) return true;
  }
  return false;
}

// Puts each weight into the `value` attr of the Const it names: top-level nodes, then nodes
// of library functions (the converter renames their Consts "<function>/<name>").
absl::Status FillConstValues(tensorflow::GraphDef* graph_def,
                             const std::vector<TfjsWeight>& weights, const std::string& path) {
  std::vector<tensorflow::NodeDef*> order;  // graph order, so errors are deterministic
  absl::flat_hash_map<std::string, tensorflow::NodeDef*> nodes;
  auto add = [&](tensorflow::NodeDef& node) {
    if (nodes.emplace(node.name(), &node).second) order.push_back(&node);
  };
  for (tensorflow::NodeDef& node : *graph_def->mutable_node()) add(node);
  for (tensorflow::FunctionDef& fn : *graph_def->mutable_library()->mutable_function()) {
    for (tensorflow::NodeDef& node : *fn.mutable_node_def()) add(node);
  }
  absl::flat_hash_map<std::string, const TfjsWeight*> by_name;
  for (const TfjsWeight& w : weights) by_name[w.name] = &w;  // the last one wins, as in TF.js
  for (tensorflow::NodeDef* node : order) {
    if (node->op() != "Const") continue;
    const std::string& name = node->name();
    tensorflow::AttrValue& value = (*node->mutable_attr())["value"];
    auto it = by_name.find(name);
    if (it == by_name.end()) {
      if (HasInlineValue(value.tensor()) || HasZeroElements(value.tensor())) continue;
      return AttachNode(
          InvalidArgument("TF.js model '%s': Const node '%s' has no value: no weight of the "
                          "weightsManifest has that name and the node carries no inline value; "
                          "the weight files do not belong to this model.json",
                          path, name),
          name, "Const");
    }
    tensorflow::DataType target = value.tensor().dtype();
    if (auto dt = node->attr().find("dtype"); dt != node->attr().end() && dt->second.type()) {
      target = dt->second.type();
    }
    absl::StatusOr<tensorflow::TensorProto> proto = TfjsWeightToTensorProto(
        *it->second, target,
        value.tensor().has_tensor_shape() ? &value.tensor().tensor_shape() : nullptr);
    if (!proto.ok()) {
      return AttachNode(WithContext(proto.status(), absl::StrCat("TF.js model '", path, "'")), name,
                        "Const");
    }
    *value.mutable_tensor() = std::move(*proto);
  }
  for (const TfjsWeight& w : weights) {
    auto it = nodes.find(w.name);
    if (it != nodes.end() && it->second->op() != "Const") {
      return AttachNode(InvalidArgument("TF.js model '%s': weight '%s' names node '%s', which "
                                        "is a %s, not a Const",
                                        path, w.name, w.name, it->second->op()),
                        w.name, it->second->op());
    }
  }
  return absl::OkStatus();
}

// With ignore_unknown_fields, protobuf's JSON parser also turns an unknown enum name
// ("DT_BOGUS") into DT_INVALID silently; name the node and attr here instead of letting a
// confusing type error surface later.
absl::Status CheckDtypeAttrs(const tensorflow::NodeDef& node, const std::string& path) {
  for (const auto& [name, value] : node.attr()) {
    bool invalid = value.value_case() == tensorflow::AttrValue::kType &&
                   value.type() == tensorflow::DT_INVALID;
    for (int t : value.list().type()) invalid |= t == tensorflow::DT_INVALID;
    if (invalid) {
      return AttachNode(InvalidArgument("TF.js model '%s': node '%s' (%s): attr '%s' names a "
                                        "dtype that is not a TensorFlow DataType (or is "
                                        "DT_INVALID)",
                                        path, node.name(), node.op(), name),
                        node.name(), node.op());
    }
  }
  return absl::OkStatus();
}

std::string DirOf(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

}  // namespace

absl::StatusOr<LoadedModel> LoadTfjsModel(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return NotFound("TF.js model '%s': cannot open the file", path);
  std::ostringstream buffer;
  buffer << in.rdbuf();
  const std::string text = std::move(buffer).str();

  TFJIT_ASSIGN_OR_RETURN(ParsedJson parsed, ParseModelJson(text, path));
  tfjs::ModelJson& json = parsed.model;
  if (!json.format().empty() && json.format() != "graph-model") {
    return Unimplemented(
        "TF.js model '%s' is a '%s'; tfjit loads TF.js graph models only "
        "(convert the original model with tensorflowjs_converter "
        "--output_format=tfjs_graph_model)",
        path, json.format());
  }
  if (json.model_topology().node_size() == 0) {
    return InvalidArgument(
        "TF.js model '%s': modelTopology has no nodes; it is not a TF.js "
        "graph model (a Keras layers model has a Keras config there)",
        path);
  }
  if (json.model_initializer().node_size() > 0) {
    return Unimplemented(
        "TF.js model '%s' has a modelInitializer graph (hash-table "
        "initialization); tfjit does not run TF.js initializer graphs yet",
        path);
  }

  for (const tensorflow::NodeDef& node : json.model_topology().node()) {
    TFJIT_RETURN_IF_ERROR(CheckDtypeAttrs(node, path));
  }
  for (const tensorflow::FunctionDef& fn : json.model_topology().library().function()) {
    for (const tensorflow::NodeDef& node : fn.node_def()) {
      TFJIT_RETURN_IF_ERROR(CheckDtypeAttrs(node, path));
    }
  }

  TFJIT_ASSIGN_OR_RETURN(std::vector<TfjsWeight> weights,
                         ReadTfjsWeights(json.weights_manifest(), DirOf(path), path));
  tensorflow::GraphDef* graph_def = json.mutable_model_topology();
  TFJIT_RETURN_IF_ERROR(FillConstValues(graph_def, weights, path));
  weights.clear();
  // TF.js ignores `device`. What a converted graph carries is where the converter's grappler
  // pass ran ("/device:CPU:0" on every _FusedConv2D of nsfwjs' MobileNet), not a placement
  // its author chose: honoring it put 35 of that model's convolutions on CPU:0 under
  // --device gpu:0. The session's device places the whole graph, as in TF.js.
  for (tensorflow::NodeDef& node : *graph_def->mutable_node()) node.clear_device();
  for (tensorflow::FunctionDef& fn : *graph_def->mutable_library()->mutable_function()) {
    for (tensorflow::NodeDef& node : *fn.mutable_node_def()) node.clear_device();
  }

  LoadedModel model;
  model.format = "tfjs";
  model.path = path;
  TFJIT_ASSIGN_OR_RETURN(model.graph, Graph::Build(*graph_def, path));

  // TF.js's GraphModel: userDefinedMetadata.signature, when present, replaces the top level.
  const pb::Struct* sig_json = nullptr;
  const tfjs::StructInOrder* sig_order = nullptr;
  std::string where = "signature";
  if (auto it = json.user_defined_metadata().fields().find("signature");
      it != json.user_defined_metadata().fields().end() && it->second.has_struct_value()) {
    sig_json = &it->second.struct_value();
    sig_order = FieldStruct(parsed.order.user_defined_metadata(), "signature");
    where = "userDefinedMetadata.signature";
  } else if (json.has_signature()) {
    sig_json = &json.signature();
    sig_order = &parsed.order.signature();
  }
  if (sig_json != nullptr) {
    TFJIT_ASSIGN_OR_RETURN(std::optional<Signature> sig,
                           BuildSignature(*sig_json, sig_order, *model.graph, path, where));
    if (sig.has_value()) model.signatures.push_back(std::move(*sig));
  }
  if (model.signatures.empty()) {
    // No signature: TF.js still names the model's inputs and outputs (Placeholders, and
    // output 0 of the nodes nothing consumes); the session uses them as its defaults.
    Signature inferred;
    inferred.name = "serving_default";
    inferred.inputs = InferInputs(*model.graph);
    inferred.outputs = InferOutputs(*model.graph);
    model.signatures.push_back(std::move(inferred));
  }
  return model;
}

}  // namespace tfjit::tf
