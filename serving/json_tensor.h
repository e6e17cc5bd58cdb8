// TF Serving's REST JSON for tensors (shared/docs/shapes-and-serving.md; TF Serving's
// api_rest.md): a predict request's "instances" (row format: one element per batch row, a
// value or an object of named inputs) or "inputs" (columnar: one value, or an object of named
// inputs), and the "predictions" / "outputs" it answers with. Parsing takes TF Serving's
// extensions to JSON (bare NaN, Infinity and -Infinity tokens; {"b64": ...} strings), and every
// error is INVALID_ARGUMENT with TF Serving's own wording, so clients that match on it keep
// working. Floats print as TF Serving prints them: the shortest of 6 significant digits that
// reads back as the same value (else 9 for float32, 17 for float64), with ".0" added to a
// whole number.
#ifndef TFJIT_SERVING_JSON_TENSOR_H_
#define TFJIT_SERVING_JSON_TENSOR_H_

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "serving/proto/serving.pb.h"
#include "tfjit/tensor.h"

namespace tfjit::serving {

// One input or output of a signature: its key and dtype.
struct TensorSpec {
  std::string key;
  DType dtype = DType::kInvalid;
};

using NamedTensors = std::vector<std::pair<std::string, Tensor>>;

// A parsed predict request body; its tensors are made once the signature (and so the inputs'
// dtypes) is known.
class PredictJson {
 public:
  // Parses `body`: JSON (with TF Serving's tokens), a top-level object, a string
  // "signature_name" if any. INVALID_ARGUMENT otherwise ("JSON Parse error: ...").
  static absl::StatusOr<PredictJson> Parse(const std::string& body);

  PredictJson(PredictJson&&) noexcept;
  PredictJson& operator=(PredictJson&&) noexcept;
  ~PredictJson();

  // "" when the request names none.
  const std::string& signature_name() const { return signature_name_; }
  // Whether the request used "instances" (so the answer is "predictions").
  bool row_format() const { return row_format_; }

  // The request's tensors for a signature with `inputs`, keyed by the signature's keys.
  absl::StatusOr<NamedTensors> Inputs(const std::vector<TensorSpec>& inputs) const;

 private:
  struct Doc;
  PredictJson();
  std::unique_ptr<Doc> doc_;
  std::string signature_name_;
  bool row_format_ = false;
};

// The answer's body for `outputs` (a signature's outputs by key, any order: they are written
// sorted by key): {"predictions": ...} for a row-format request, {"outputs": ...} otherwise.
// INVALID_ARGUMENT as TF Serving for outputs a row format cannot hold (a scalar, or outputs
// whose dim 0 differs).
absl::StatusOr<std::string> PredictResponseJson(NamedTensors outputs, bool row_format);

// A classify or regress request body (TF Serving's api_rest.md): "signature_name" (optional),
// "context" (optional: features every example shares) and "examples" (a list of objects of
// features). A feature is a value or a flat list of them; its first element decides its list:
// a string or {"b64": ...} bytes, true/false and integers int64, numbers with a point or an
// exponent float. Errors are INVALID_ARGUMENT in TF Serving's words. `method` ("classify" or
// "regress") names the API in messages.
struct ExamplesRequest {
  std::string signature_name;
  tensorflow::serving::Input input;
};
absl::StatusOr<ExamplesRequest> ParseExamplesJson(const std::string& body,
                                                  absl::string_view method);

// {"results": [[["label", score], ...], ...]} (one list of classes per example) and
// {"results": [value, ...]}; INVALID_ARGUMENT for an empty result, as TF Serving.
absl::StatusOr<std::string> ClassificationJson(
    const tensorflow::serving::ClassificationResult& result);
absl::StatusOr<std::string> RegressionJson(const tensorflow::serving::RegressionResult& result);

// A float or double as TF Serving's REST API prints it (see above); NaN and infinities as
// the bare tokens NaN, Infinity, -Infinity.
std::string FormatFloat(float v);
std::string FormatDouble(double v);

// {"error": "<message>"} with the message JSON-escaped.
std::string ErrorJson(const std::string& message);

// `s` as a JSON string literal (quotes included).
std::string JsonString(const std::string& s);

}  // namespace tfjit::serving

#endif  // TFJIT_SERVING_JSON_TENSOR_H_
