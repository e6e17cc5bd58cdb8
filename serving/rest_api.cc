// RestApi (rest_api.h).
#include "serving/rest_api.h"

#include <algorithm>
#include <chrono>
#include <regex>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/status.h"
#include "google/protobuf/util/json_util.h"
#include "serving/classify.h"
#include "serving/json_tensor.h"
#include "serving/metrics.h"
#include "serving/predict.h"

namespace tfjit::serving {
namespace {

// %XX escapes decoded (TF Serving unescapes model names and labels).
std::string UrlDecode(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    int value = 0;
    if (s[i] == '%' && i + 2 < s.size() && absl::SimpleHexAtoi(s.substr(i + 1, 2), &value)) {
      out.push_back(static_cast<char>(value));
      i += 2;
      continue;
    }
    out.push_back(s[i]);
  }
  return out;
}

// A message as TF Serving's REST API prints it: proto field names, every field.
absl::StatusOr<std::string> ProtoJson(const google::protobuf::Message& m) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string out;
  const google::protobuf::util::Status s =
      google::protobuf::util::MessageToJsonString(m, &out, options);
  if (!s.ok()) return Internal("cannot print %s as JSON: %s", m.GetTypeName(), s.ToString());
  return out;
}

// The version a URL names: "" for none.
absl::StatusOr<std::optional<int64_t>> ParseVersion(const std::string& text) {
  if (text.empty()) return std::optional<int64_t>();
  int64_t v = 0;
  if (!absl::SimpleAtoi(text, &v)) {
    return InvalidArgument("Failed to convert version: %s to numeric.", text);
  }
  return std::optional<int64_t>(v);
}

}  // namespace

int HttpStatusOf(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk:
      return 200;
    case absl::StatusCode::kCancelled:
      return 499;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return 400;
    case absl::StatusCode::kDeadlineExceeded:
      return 504;
    case absl::StatusCode::kNotFound:
      return 404;
    case absl::StatusCode::kAlreadyExists:
    case absl::StatusCode::kAborted:
      return 409;
    case absl::StatusCode::kPermissionDenied:
      return 403;
    case absl::StatusCode::kResourceExhausted:
      return 429;
    case absl::StatusCode::kUnimplemented:
      return 501;
    case absl::StatusCode::kUnavailable:
      return 503;
    case absl::StatusCode::kUnauthenticated:
      return 401;
    default:
      return 500;
  }
}

RestResponse RestApi::Handle(const std::string& method, const std::string& path,
                             const std::string& body) const {
  static const std::regex kPost(
      R"(/v1/models/([^/:]+)(?:(?:/versions/(\d+))|(?:/labels/([^/:]+)))?:(classify|regress|predict))",
      std::regex::icase);
  static const std::regex kGet(
      R"(/v1/models(?:/([^/:]+))?(?:(?:/versions/(\d+))|(?:/labels/([^/:]+)))?(?:/(metadata))?)",
      std::regex::icase);
  const auto start = std::chrono::steady_clock::now();
  std::smatch match;
  std::string model, api;
  absl::StatusOr<std::string> answer = InvalidArgument("Malformed request: %s %s", method, path);
  if (method == "POST" && std::regex_match(path, match, kPost)) {
    const std::string verb = match[4];
    model = UrlDecode(match[1]);
    api = verb;
    if (verb == "predict") {
      answer = Predict(UrlDecode(match[1]), match[2], UrlDecode(match[3]), body);
    } else {
      answer = ClassifyOrRegress(UrlDecode(match[1]), match[2], UrlDecode(match[3]), body, verb);
    }
  } else if (method == "GET" && std::regex_match(path, match, kGet)) {
    if (match[1].matched) model = UrlDecode(match[1]);
    if (!match[1].matched) {
      answer = InvalidArgument("Missing model name in request.");
    } else if (match[4].matched) {
      answer = Metadata(UrlDecode(match[1]), match[2], UrlDecode(match[3]));
    } else {
      answer = Status(UrlDecode(match[1]), match[2], UrlDecode(match[3]));
    }
  }
  Metrics& metrics = ServingMetrics();
  metrics.Add(
      "/tensorflow/serving/request_count",
      {{"model_name", model}, {"status", absl::StatusCodeToString(answer.status().code())}});
  if (!answer.ok()) {
    return RestResponse{HttpStatusOf(answer.status().code()),
                        ErrorJson(std::string(answer.status().message()))};
  }
  metrics.Observe(
      "/tensorflow/serving/request_latency",
      {{"model_name", model}, {"API", api}, {"entrypoint", "REST"}},
      std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - start).count(),
      Metrics::LatencyBuckets());
  return RestResponse{200, *std::move(answer)};
}

absl::StatusOr<std::string> RestApi::Status(const std::string& model, const std::string& version,
                                            const std::string& label) const {
  (void)label;  // TF Serving's status answers every version for a label too
  TFJIT_ASSIGN_OR_RETURN(std::optional<int64_t> v, ParseVersion(version));
  TFJIT_ASSIGN_OR_RETURN(tensorflow::serving::GetModelStatusResponse status,
                         models_.Status(model, v));
  return ProtoJson(status);
}

absl::StatusOr<std::string> RestApi::Metadata(const std::string& model, const std::string& version,
                                              const std::string& label) const {
  TFJIT_ASSIGN_OR_RETURN(std::optional<int64_t> v, ParseVersion(version));
  TFJIT_ASSIGN_OR_RETURN(std::shared_ptr<const ServedVersion> served,
                         models_.Find(model, v, label));
  tensorflow::serving::ModelSpec spec;
  spec.set_name(model);
  spec.mutable_version()->set_value(served->version);
  TFJIT_ASSIGN_OR_RETURN(std::string spec_json, ProtoJson(spec));
  TFJIT_ASSIGN_OR_RETURN(std::string signatures, ProtoJson(served->signatures));
  // TF Serving assembles this by hand: the map is under "signature_def" twice.
  return absl::StrCat("{\n\"model_spec\":", spec_json,
                      ",\n\"metadata\": {\"signature_def\": ", signatures, "}\n}\n");
}

absl::StatusOr<std::string> RestApi::Predict(const std::string& model, const std::string& version,
                                             const std::string& label,
                                             const std::string& body) const {
  TFJIT_ASSIGN_OR_RETURN(PredictJson request, PredictJson::Parse(body));
  TFJIT_ASSIGN_OR_RETURN(std::optional<int64_t> v, ParseVersion(version));
  TFJIT_ASSIGN_OR_RETURN(std::shared_ptr<const ServedVersion> served,
                         models_.Find(model, v, label));
  const std::string name =
      request.signature_name().empty() ? kDefaultSignature : request.signature_name();
  const auto& defs = served->signatures.signature_def();
  auto def = defs.find(name);
  if (def == defs.end()) {
    return InvalidArgument("Serving signature name: \"%s\" not found in signature def", name);
  }
  if (def->second.inputs().empty()) {
    return InvalidArgument("Failed to get input map for signature: %s",
                           request.signature_name().empty() ? "DEFAULT" : name);
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<TensorSpec> specs, InputSpecs(def->second, name));
  TFJIT_ASSIGN_OR_RETURN(NamedTensors inputs, request.Inputs(specs));
  TFJIT_ASSIGN_OR_RETURN(NamedTensors outputs, RunSignature(*served, name, def->second,
                                                            std::move(inputs), {}, timeout_ms_));
  return PredictResponseJson(std::move(outputs), request.row_format());
}

absl::StatusOr<std::string> RestApi::ClassifyOrRegress(const std::string& model,
                                                       const std::string& version,
                                                       const std::string& label,
                                                       const std::string& body,
                                                       const std::string& verb) const {
  TFJIT_ASSIGN_OR_RETURN(ExamplesRequest request, ParseExamplesJson(body, verb));
  TFJIT_ASSIGN_OR_RETURN(std::optional<int64_t> v, ParseVersion(version));
  TFJIT_ASSIGN_OR_RETURN(std::shared_ptr<const ServedVersion> served,
                         models_.Find(model, v, label));
  if (verb == "classify") {
    TFJIT_ASSIGN_OR_RETURN(tensorflow::serving::ClassificationResult result,
                           Classify(*served, request.signature_name, request.input, timeout_ms_));
    return ClassificationJson(result);
  }
  TFJIT_ASSIGN_OR_RETURN(tensorflow::serving::RegressionResult result,
                         Regress(*served, request.signature_name, request.input, timeout_ms_));
  return RegressionJson(result);
}

}  // namespace tfjit::serving
