// PredictJson and PredictResponseJson (json_tensor.h) on RapidJSON's DOM.
#include "serving/json_tensor.h"

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/status.h"
#include "core/string_tensor.h"
#include "rapidjson/document.h"
#include "rapidjson/error/en.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace tfjit::serving {
namespace {

using rapidjson::Value;

// The deepest nesting a request may have: a tensor of rank 32 inside "inputs" and a named
// input's object, with room to spare.
constexpr int kMaxDepth = 64;

absl::Status CheckDepth(const Value& root) {
  std::vector<std::pair<const Value*, int>> stack = {{&root, 1}};
  while (!stack.empty()) {
    auto [v, depth] = stack.back();
    stack.pop_back();
    if (depth > kMaxDepth) {
      return InvalidArgument("JSON Parse error: the request nests lists or objects deeper than %d",
                             kMaxDepth);
    }
    if (v->IsArray()) {
      for (const Value& e : v->GetArray()) stack.push_back({&e, depth + 1});
    } else if (v->IsObject()) {
      for (const auto& m : v->GetObject()) stack.push_back({&m.value, depth + 1});
    }
  }
  return absl::OkStatus();
}

// A value as TF Serving quotes it in messages: re-serialised, cut at 256 bytes.
std::string Debug(const Value& v) {
  rapidjson::StringBuffer buffer;
  rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>, rapidjson::UTF8<>,
                    rapidjson::CrtAllocator, rapidjson::kWriteNanAndInfFlag>
      writer(buffer);
  v.Accept(writer);
  std::string s(buffer.GetString(), buffer.GetSize());
  if (s.size() > 256) s = s.substr(0, 256) + "...";
  return s;
}

const char* JsonTypeName(const Value& v) {
  switch (v.GetType()) {
    case rapidjson::kNullType:
      return "Null";
    case rapidjson::kFalseType:
      return "False";
    case rapidjson::kTrueType:
      return "True";
    case rapidjson::kObjectType:
      return "Object";
    case rapidjson::kArrayType:
      return "Array";
    case rapidjson::kStringType:
      return "String";
    case rapidjson::kNumberType:
      return "Number";
  }
  return "Unknown";
}

// TF's short dtype names, as TF Serving's messages use them.
std::string TypeName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float";
    case DType::kFloat64:
      return "double";
    case DType::kFloat16:
      return "half";
    case DType::kBFloat16:
      return "bfloat16";
    case DType::kString:
      return "string";
    default:
      return DTypeName(dtype);
  }
}

// {"b64": "<string>"}: TF Serving's binary string value.
bool IsB64(const Value& v) { return v.IsObject() && v.MemberCount() == 1 && v.HasMember("b64"); }
// An object of named inputs (a b64 object is a value).
bool IsNamedObject(const Value& v) { return v.IsObject() && !IsB64(v); }

std::string DimsString(const std::vector<int64_t>& dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

// The shape of a nested list, read from the first element at each depth.
std::vector<int64_t> ShapeOf(const Value& v) {
  std::vector<int64_t> dims;
  const Value* at = &v;
  while (at->IsArray()) {
    dims.push_back(static_cast<int64_t>(at->Size()));
    if (at->Empty()) break;
    at = &(*at)[0];
  }
  return dims;
}

// Appends the scalars of `v` (a nested list of shape dims[level:]) to `out`, checking that it
// is that shape.
absl::Status Flatten(const Value& v, const std::vector<int64_t>& dims, size_t level,
                     std::vector<const Value*>& out) {
  const size_t rank = dims.size();
  if (level == rank) {
    if (v.IsArray()) {
      return InvalidArgument("Encountered list at unexpected level: %d expected < %d", level, rank);
    }
    out.push_back(&v);
    return absl::OkStatus();
  }
  if (!v.IsArray()) {
    return InvalidArgument(
        "JSON Value: %s found at incorrect level: %d in the JSON DOM. Expected at level: %d",
        Debug(v), level + 1, rank);
  }
  if (static_cast<int64_t>(v.Size()) != dims[level]) {
    return InvalidArgument("Encountered list at unexpected size: %d at level: %d expected size: %d",
                           v.Size(), level, dims[level]);
  }
  for (const Value& e : v.GetArray()) TFJIT_RETURN_IF_ERROR(Flatten(e, dims, level + 1, out));
  return absl::OkStatus();
}

absl::Status TypeError(const Value& v, DType dtype) {
  return InvalidArgument("JSON Value: %s Type: %s is not of expected type: %s", Debug(v),
                         JsonTypeName(v), TypeName(dtype));
}

// A tensor of `dims` and `dtype` from `values` (row-major scalars).
absl::StatusOr<Tensor> MakeTensor(DType dtype, const std::vector<int64_t>& dims,
                                  const std::vector<const Value*>& values) {
  const size_t n = values.size();
  if (dtype == DType::kString) {
    std::vector<std::string> strings;
    for (const Value* v : values) {
      if (v->IsString()) {
        strings.emplace_back(v->GetString(), v->GetStringLength());
      } else if (IsB64(*v) && (*v)["b64"].IsString()) {
        std::string decoded;
        if (!absl::Base64Unescape(
                absl::string_view((*v)["b64"].GetString(), (*v)["b64"].GetStringLength()),
                &decoded)) {
          return InvalidArgument("Unable to base64 decode");
        }
        strings.push_back(std::move(decoded));
      } else if (v->IsObject()) {
        return InvalidArgument("JSON Value: %s not formatted correctly for base64 data", Debug(*v));
      } else {
        return TypeError(*v, dtype);
      }
    }
    return MakeStringTensor(dims, std::move(strings));
  }
  Tensor t(dtype, dims);
  for (size_t i = 0; i < n; ++i) {
    const Value& v = *values[i];
    switch (dtype) {
      case DType::kFloat32:
        if (!v.IsNumber()) return TypeError(v, dtype);
        t.data<float>()[i] = static_cast<float>(v.GetDouble());
        break;
      case DType::kFloat64:
        if (!v.IsNumber()) return TypeError(v, dtype);
        t.data<double>()[i] = v.GetDouble();
        break;
      case DType::kInt32:
        if (!v.IsInt()) return TypeError(v, dtype);
        t.data<int32_t>()[i] = v.GetInt();
        break;
      case DType::kInt16:
        if (!v.IsInt()) return TypeError(v, dtype);
        t.data<int16_t>()[i] = static_cast<int16_t>(v.GetInt());
        break;
      case DType::kInt8:
        if (!v.IsInt()) return TypeError(v, dtype);
        t.data<int8_t>()[i] = static_cast<int8_t>(v.GetInt());
        break;
      case DType::kUInt8:
        if (!v.IsInt()) return TypeError(v, dtype);
        t.data<uint8_t>()[i] = static_cast<uint8_t>(v.GetInt());
        break;
      case DType::kInt64:
        if (!v.IsInt64()) return TypeError(v, dtype);
        t.data<int64_t>()[i] = v.GetInt64();
        break;
      case DType::kUInt32:
        if (!v.IsUint()) return TypeError(v, dtype);
        t.data<uint32_t>()[i] = v.GetUint();
        break;
      case DType::kUInt64:
        if (!v.IsUint64()) return TypeError(v, dtype);
        t.data<uint64_t>()[i] = v.GetUint64();
        break;
      case DType::kBool:
        if (!v.IsBool()) return TypeError(v, dtype);
        t.data<bool>()[i] = v.GetBool();
        break;
      default:
        return Unimplemented("Conversion of JSON Value: %s to type: %s", Debug(v), TypeName(dtype));
    }
  }
  return t;
}

// The tensor one JSON value gives (a scalar, or a nested list).
absl::StatusOr<Tensor> FromValue(const Value& v, DType dtype) {
  const std::vector<int64_t> dims = ShapeOf(v);
  std::vector<const Value*> values;
  TFJIT_RETURN_IF_ERROR(Flatten(v, dims, 0, values));
  return MakeTensor(dtype, dims, values);
}

// The tensor rows `rows` give, one batch row each: all must have the shape of the first.
// The product of `dims`, saturating at INT64_MAX (sizes read from a request's first elements
// alone may be anything).
int64_t SaturatingProduct(const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d != 0 && n > INT64_MAX / d) return INT64_MAX;
    n *= d;
  }
  return n;
}

// The tensor rows `rows` give, one batch row each: all must have the shape of the first.
absl::StatusOr<Tensor> FromRows(const std::vector<const Value*>& rows, DType dtype) {
  const std::vector<int64_t> row_dims = ShapeOf(*rows[0]);
  const int64_t row_size = SaturatingProduct(row_dims);
  std::vector<const Value*> values;
  for (size_t i = 0; i < rows.size(); ++i) {
    const std::vector<int64_t> dims = ShapeOf(*rows[i]);
    const int64_t size = SaturatingProduct(dims);
    absl::Status s;
    if (size != row_size) {
      s = InvalidArgument("Expecting tensor size: %d but got: %d", row_size, size);
    } else if (dims != row_dims) {
      s = InvalidArgument("Expecting shape %s but got: %s", DimsString(row_dims), DimsString(dims));
    } else {
      // Checks every list's size, so the values counted are ones that exist.
      s = Flatten(*rows[i], row_dims, 0, values);
    }
    if (!s.ok()) {
      return InvalidArgument("Failed to process element: %d of 'instances' list. Error: %s", i,
                             s.ToString());
    }
  }
  std::vector<int64_t> dims = {static_cast<int64_t>(rows.size())};
  dims.insert(dims.end(), row_dims.begin(), row_dims.end());
  return MakeTensor(dtype, dims, values);
}

// Appends the JSON text of element `i` of `t` (named `key`, for the *_bytes rule).
absl::Status AppendScalar(const Tensor& t, int64_t i, const std::string& key, std::string& out) {
  switch (t.dtype()) {
    case DType::kFloat32:
      out += FormatFloat(t.data<float>()[i]);
      return absl::OkStatus();
    case DType::kFloat64:
      out += FormatDouble(t.data<double>()[i]);
      return absl::OkStatus();
    case DType::kInt8:
      absl::StrAppend(&out, t.data<int8_t>()[i]);
      return absl::OkStatus();
    case DType::kInt16:
      absl::StrAppend(&out, t.data<int16_t>()[i]);
      return absl::OkStatus();
    case DType::kInt32:
      absl::StrAppend(&out, t.data<int32_t>()[i]);
      return absl::OkStatus();
    case DType::kInt64:
      absl::StrAppend(&out, t.data<int64_t>()[i]);
      return absl::OkStatus();
    case DType::kUInt8:
      absl::StrAppend(&out, t.data<uint8_t>()[i]);
      return absl::OkStatus();
    case DType::kUInt16:
      absl::StrAppend(&out, t.data<uint16_t>()[i]);
      return absl::OkStatus();
    case DType::kUInt32:
      absl::StrAppend(&out, t.data<uint32_t>()[i]);
      return absl::OkStatus();
    case DType::kUInt64:
      absl::StrAppend(&out, t.data<uint64_t>()[i]);
      return absl::OkStatus();
    case DType::kBool:
      out += t.data<bool>()[i] ? "true" : "false";
      return absl::OkStatus();
    case DType::kString: {
      const std::vector<std::string>* values = StringValues(t);
      if (values == nullptr) return Internal("string tensor without strings");
      const std::string& s = (*values)[static_cast<size_t>(i)];
      if (absl::EndsWith(key, "_bytes")) {
        absl::StrAppend(&out, "{\"b64\": ", JsonString(absl::Base64Escape(s)), "}");
      } else {
        out += JsonString(s);
      }
      return absl::OkStatus();
    }
    default:
      return InvalidArgument("Failed to write JSON value for tensor type: %s", TypeName(t.dtype()));
  }
}

// Appends elements [first, first + prod(dims[level:])) of `t` as nested lists.
absl::Status AppendNested(const Tensor& t, size_t level, int64_t first, const std::string& key,
                          std::string& out) {
  const std::vector<int64_t>& dims = t.dims();
  if (level == dims.size()) return AppendScalar(t, first, key, out);
  int64_t inner = 1;
  for (size_t d = level + 1; d < dims.size(); ++d) inner *= dims[d];
  out += "[";
  for (int64_t k = 0; k < dims[level]; ++k) {
    if (k > 0) out += ", ";
    TFJIT_RETURN_IF_ERROR(AppendNested(t, level + 1, first + k * inner, key, out));
  }
  out += "]";
  return absl::OkStatus();
}

// Row `r` of `t` (rank >= 1).
absl::Status AppendRow(const Tensor& t, int64_t r, const std::string& key, std::string& out) {
  int64_t inner = 1;
  for (int d = 1; d < t.rank(); ++d) inner *= t.dim(d);
  return AppendNested(t, 1, r * inner, key, out);
}

template <typename T>
std::string FormatReal(T v, const char* wide, T (*parse)(const char*, char**)) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  std::string s = absl::StrCat(v);
  if (parse(s.c_str(), nullptr) != v) s = absl::StrFormat(wide, v);
  if (s.find_first_of(".e") == std::string::npos) s += ".0";
  return s;
}

float ParseFloat(const char* s, char** end) { return std::strtof(s, end); }
double ParseDouble(const char* s, char** end) { return std::strtod(s, end); }

// Parses a request body into `d` (JSON with TF Serving's NaN and Infinity tokens; a top-level
// object) and returns its "signature_name" ("" when absent), with TF Serving's messages.
absl::StatusOr<std::string> ParseRequest(const std::string& body, rapidjson::Document& d) {
  d.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseNanAndInfFlag |
          rapidjson::kParseStopWhenDoneFlag>(body.data(), body.size());
  if (d.HasParseError()) {
    if (d.GetParseError() == rapidjson::kParseErrorDocumentEmpty) {
      return InvalidArgument("JSON Parse error: The document is empty");
    }
    return InvalidArgument("JSON Parse error: %s at offset: %d",
                           rapidjson::GetParseError_En(d.GetParseError()), d.GetErrorOffset());
  }
  // Nested lists become recursion (in the tensors and in messages): a request nested deeper
  // than any tensor's rank could be is refused first, without recursing.
  TFJIT_RETURN_IF_ERROR(CheckDepth(d));
  if (!d.IsObject()) return InvalidArgument("JSON Value: %s Is not object", Debug(d));
  std::string signature_name;
  if (d.HasMember("signature_name")) {
    const Value& name = d["signature_name"];
    if (!name.IsString()) {
      return InvalidArgument(
          "JSON Value: %s not formatted correctly. 'signature_name' key must be a string value.",
          Debug(d));
    }
    signature_name.assign(name.GetString(), name.GetStringLength());
  }
  return signature_name;
}

// One feature of an example from its JSON value (ParseExamplesJson's rules).
absl::StatusOr<tensorflow::Feature> FeatureFromJson(const std::string& name, const Value& v) {
  tensorflow::Feature feature;
  std::vector<const Value*> elements;
  if (v.IsArray()) {
    for (const Value& e : v.GetArray()) elements.push_back(&e);
  } else {
    elements.push_back(&v);
  }
  enum class Kind { kNone, kInt64, kFloat, kBytes } kind = Kind::kNone;
  const char* kind_names[] = {"", "int64", "float", "bytes"};
  for (const Value* e : elements) {
    Kind k;
    if (e->IsString() || (IsB64(*e) && (*e)["b64"].IsString())) {
      k = Kind::kBytes;
    } else if (e->IsBool()) {
      k = Kind::kInt64;
    } else if (e->IsNumber()) {
      k = e->IsDouble() ? Kind::kFloat : Kind::kInt64;
      if (k == Kind::kInt64 && !e->IsInt64()) {
        return InvalidArgument("Feature: %s has uint64_t element. Only int64_t is supported.",
                               name);
      }
    } else {
      return InvalidArgument("Feature: %s has element with unexpected JSON type: %s", name,
                             JsonTypeName(*e));
    }
    if (kind == Kind::kNone) kind = k;
    if (k != kind) {
      return InvalidArgument("Unexpected element type in feature: %s expecting type: %s", name,
                             kind_names[static_cast<int>(kind)]);
    }
    switch (k) {
      case Kind::kBytes:
        if (e->IsString()) {
          feature.mutable_bytes_list()->add_value(e->GetString(), e->GetStringLength());
        } else {
          std::string decoded;
          const Value& b64 = (*e)["b64"];
          if (!absl::Base64Unescape(absl::string_view(b64.GetString(), b64.GetStringLength()),
                                    &decoded)) {
            return InvalidArgument("Unable to base64 decode");
          }
          feature.mutable_bytes_list()->add_value(std::move(decoded));
        }
        break;
      case Kind::kInt64:
        feature.mutable_int64_list()->add_value(e->IsBool() ? (e->GetBool() ? 1 : 0)
                                                            : e->GetInt64());
        break;
      default:
        feature.mutable_float_list()->add_value(static_cast<float>(e->GetDouble()));
    }
  }
  return feature;
}

// An example (or the context) from a JSON object of features.
absl::StatusOr<tensorflow::Example> ExampleFromJson(const Value& v) {
  if (!v.IsObject()) {
    return InvalidArgument("Example must be JSON object but got JSON %s", JsonTypeName(v));
  }
  tensorflow::Example example;
  auto& features = *example.mutable_features()->mutable_feature();
  for (const auto& m : v.GetObject()) {
    const std::string name(m.name.GetString(), m.name.GetStringLength());
    TFJIT_ASSIGN_OR_RETURN(features[name], FeatureFromJson(name, m.value));
  }
  return example;
}

}  // namespace

absl::StatusOr<ExamplesRequest> ParseExamplesJson(const std::string& body,
                                                  absl::string_view method) {
  rapidjson::Document d;
  ExamplesRequest out;
  TFJIT_ASSIGN_OR_RETURN(out.signature_name, ParseRequest(body, d));
  if (!d.HasMember("examples")) {
    return InvalidArgument(
        "JSON Value: %s When method is %s, key 'examples' is expected and was not found", Debug(d),
        method);
  }
  const Value& examples = d["examples"];
  if (!examples.IsArray()) {
    return InvalidArgument("JSON Value: %s Expecting 'examples' value to be an list/array",
                           Debug(d));
  }
  if (examples.Empty()) {
    return InvalidArgument("JSON Value: %s 'examples' value is an empty array", Debug(d));
  }
  google::protobuf::RepeatedPtrField<tensorflow::Example>* list;
  if (d.HasMember("context")) {
    auto* with_context = out.input.mutable_example_list_with_context();
    TFJIT_ASSIGN_OR_RETURN(*with_context->mutable_context(), ExampleFromJson(d["context"]));
    list = with_context->mutable_examples();
  } else {
    list = out.input.mutable_example_list()->mutable_examples();
  }
  for (const Value& e : examples.GetArray()) {
    TFJIT_ASSIGN_OR_RETURN(*list->Add(), ExampleFromJson(e));
  }
  return out;
}

absl::StatusOr<std::string> ClassificationJson(
    const tensorflow::serving::ClassificationResult& result) {
  if (result.classifications_size() == 0) {
    return InvalidArgument("Cannot convert empty ClassificationResults to JSON");
  }
  std::string out = "{\"results\": [";
  for (int i = 0; i < result.classifications_size(); ++i) {
    out += i > 0 ? ", [" : "[";
    const auto& classes = result.classifications(i).classes();
    for (int c = 0; c < classes.size(); ++c) {
      absl::StrAppend(&out, c > 0 ? ", [" : "[", JsonString(classes[c].label()), ", ",
                      FormatFloat(classes[c].score()), "]");
    }
    out += "]";
  }
  out += "]}";
  return out;
}

absl::StatusOr<std::string> RegressionJson(const tensorflow::serving::RegressionResult& result) {
  if (result.regressions_size() == 0) {
    return InvalidArgument("Cannot convert empty RegressionResults to JSON");
  }
  std::string out = "{\"results\": [";
  for (int i = 0; i < result.regressions_size(); ++i) {
    absl::StrAppend(&out, i > 0 ? ", " : "", FormatFloat(result.regressions(i).value()));
  }
  out += "]}";
  return out;
}

struct PredictJson::Doc {
  rapidjson::Document d;
};

PredictJson::PredictJson() : doc_(std::make_unique<Doc>()) {}
PredictJson::PredictJson(PredictJson&&) noexcept = default;
PredictJson& PredictJson::operator=(PredictJson&&) noexcept = default;
PredictJson::~PredictJson() = default;

absl::StatusOr<PredictJson> PredictJson::Parse(const std::string& body) {
  PredictJson out;
  rapidjson::Document& d = out.doc_->d;
  TFJIT_ASSIGN_OR_RETURN(out.signature_name_, ParseRequest(body, d));
  out.row_format_ = d.HasMember("instances");
  return out;
}

absl::StatusOr<NamedTensors> PredictJson::Inputs(const std::vector<TensorSpec>& inputs) const {
  const rapidjson::Document& d = doc_->d;
  const bool rows = d.HasMember("instances");
  const bool columns = d.HasMember("inputs");
  if (rows && columns) {
    return InvalidArgument(
        "JSON Value: %s Not formatted correctly expecting only one of 'inputs' or 'instances' "
        "keys to exist ",
        Debug(d));
  }
  if (!rows && !columns) return InvalidArgument("Missing 'inputs' or 'instances' key");
  NamedTensors out;
  if (columns) {
    const Value& in = d["inputs"];
    if (!IsNamedObject(in)) {
      if (inputs.size() != 1) {
        return InvalidArgument(
            "inputs is a plain value/list, but expecting an object as multiple input tensors "
            "required as per tensorinfo_map");
      }
      TFJIT_ASSIGN_OR_RETURN(Tensor t, FromValue(in, inputs[0].dtype));
      out.emplace_back(inputs[0].key, std::move(t));
      return out;
    }
    for (const TensorSpec& spec : inputs) {
      if (!in.HasMember(spec.key.c_str())) {
        return InvalidArgument("Missing named input: %s in 'inputs' object.", spec.key);
      }
      TFJIT_ASSIGN_OR_RETURN(Tensor t, FromValue(in[spec.key.c_str()], spec.dtype));
      out.emplace_back(spec.key, std::move(t));
    }
    return out;
  }
  const Value& instances = d["instances"];
  if (!instances.IsArray()) {
    return InvalidArgument("JSON Value: %s Expecting 'instances' to be an list/array",
                           Debug(instances));
  }
  if (instances.Empty()) {
    return InvalidArgument("JSON Value: %s No values in 'instances' array", Debug(instances));
  }
  const bool named = IsNamedObject(instances[0]);
  if (!named && inputs.size() != 1) {
    return InvalidArgument(
        "instances is a plain list, but expecting list of objects as multiple input tensors "
        "required as per tensorinfo_map");
  }
  std::set<std::string> keys;
  for (const TensorSpec& spec : inputs) keys.insert(spec.key);
  for (rapidjson::SizeType i = 0; i < instances.Size(); ++i) {
    const Value& e = instances[i];
    if (named != IsNamedObject(e)) {
      return InvalidArgument(named ? "Expecting object but got list at item %d of input list"
                                   : "Expecting value/list but got object at item %d of input list",
                             i);
    }
    if (!named) continue;
    for (const auto& m : e.GetObject()) {
      const std::string key(m.name.GetString(), m.name.GetStringLength());
      if (keys.count(key) == 0) {
        return InvalidArgument(
            "Failed to process element: %d key: %s of 'instances' list. Error: "
            "INVALID_ARGUMENT: JSON object: does not have named input: %s",
            i, key, key);
      }
    }
    bool all = true;
    for (const std::string& key : keys) all = all && e.HasMember(key.c_str());
    if (!all || e.MemberCount() != keys.size()) {
      return InvalidArgument(
          "Failed to process element: %d of 'instances' list. JSON object: %s keys must be "
          "equal to: %s",
          i, Debug(e), absl::StrJoin(keys, ","));
    }
  }
  for (const TensorSpec& spec : inputs) {
    std::vector<const Value*> rows_of;
    for (const Value& e : instances.GetArray()) {
      rows_of.push_back(named ? &e[spec.key.c_str()] : &e);
    }
    TFJIT_ASSIGN_OR_RETURN(Tensor t, FromRows(rows_of, spec.dtype));
    out.emplace_back(spec.key, std::move(t));
  }
  return out;
}

absl::StatusOr<std::string> PredictResponseJson(NamedTensors outputs, bool row_format) {
  if (outputs.empty()) return InvalidArgument("Cannot convert empty tensor map to JSON");
  std::sort(outputs.begin(), outputs.end(),
            [](const auto& a, const auto& b) { return a.first < b.first; });
  std::string out;
  if (!row_format) {
    out = "{\"outputs\": ";
    if (outputs.size() == 1) {
      TFJIT_RETURN_IF_ERROR(AppendNested(outputs[0].second, 0, 0, outputs[0].first, out));
    } else {
      out += "{";
      for (size_t k = 0; k < outputs.size(); ++k) {
        absl::StrAppend(&out, k > 0 ? ", " : "", JsonString(outputs[k].first), ": ");
        TFJIT_RETURN_IF_ERROR(AppendNested(outputs[k].second, 0, 0, outputs[k].first, out));
      }
      out += "}";
    }
    out += "}";
    return out;
  }
  int64_t batch = -1;
  for (const auto& [key, t] : outputs) {
    if (t.rank() < 1) return InvalidArgument("Tensor name: %s has no shape information ", key);
    if (batch >= 0 && t.dim(0) != batch) {
      return InvalidArgument("Tensor name: %s has inconsistent batch size: %d expecting: %d", key,
                             t.dim(0), batch);
    }
    batch = t.dim(0);
  }
  out = "{\"predictions\": [";
  for (int64_t r = 0; r < batch; ++r) {
    if (r > 0) out += ", ";
    if (outputs.size() == 1) {
      TFJIT_RETURN_IF_ERROR(AppendRow(outputs[0].second, r, outputs[0].first, out));
      continue;
    }
    out += "{";
    for (size_t k = 0; k < outputs.size(); ++k) {
      absl::StrAppend(&out, k > 0 ? ", " : "", JsonString(outputs[k].first), ": ");
      TFJIT_RETURN_IF_ERROR(AppendRow(outputs[k].second, r, outputs[k].first, out));
    }
    out += "}";
  }
  out += "]}";
  return out;
}

std::string FormatFloat(float v) { return FormatReal<float>(v, "%.9g", ParseFloat); }
std::string FormatDouble(double v) { return FormatReal<double>(v, "%.17g", ParseDouble); }

std::string JsonString(const std::string& s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default:
        if (c < 0x20) {
          out += absl::StrFormat("\\u%04x", c);
        } else {
          out += static_cast<char>(c);
        }
    }
  }
  out += "\"";
  return out;
}

std::string ErrorJson(const std::string& message) {
  return absl::StrCat("{\"error\": ", JsonString(message), "}");
}

}  // namespace tfjit::serving
