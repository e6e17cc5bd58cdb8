// Classify and Regress (classify.h).
#include "serving/classify.h"

#include <set>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/status.h"
#include "core/string_tensor.h"
#include "frontend/proto/graph.pb.h"
#include "serving/predict.h"

namespace tfjit::serving {
namespace {

namespace ts = tensorflow::serving;

constexpr char kInputs[] = "inputs";
constexpr char kClasses[] = "classes";
constexpr char kScores[] = "scores";
constexpr char kOutputs[] = "outputs";

absl::StatusOr<const tensorflow::SignatureDef*> FindSignature(const ServedVersion& v,
                                                              const std::string& name) {
  const auto& defs = v.signatures.signature_def();
  auto it = defs.find(name);
  if (it == defs.end()) return InvalidArgument("No signature was found with the name: %s", name);
  return &it->second;
}

std::string ShapeText(const Tensor& t) { return DimsString(t.dims()); }

// TF's enum name of a dtype ("DT_FLOAT"), as TF Serving's messages print it.
std::string EnumName(DType dtype) {
  return tensorflow::DataType_Name(static_cast<tensorflow::DataType>(DTypeToTfEnum(dtype)));
}

}  // namespace

absl::StatusOr<Tensor> SerializedExamples(const ts::Input& input) {
  std::vector<std::string> records;
  if (input.kind_case() == ts::Input::kExampleList) {
    for (const tensorflow::Example& e : input.example_list().examples()) {
      records.push_back(e.SerializeAsString());
    }
  } else if (input.kind_case() == ts::Input::kExampleListWithContext) {
    const std::string context = input.example_list_with_context().context().SerializeAsString();
    for (const tensorflow::Example& e : input.example_list_with_context().examples()) {
      records.push_back(context + e.SerializeAsString());
    }
  }
  if (records.empty()) return InvalidArgument("Input is empty.");
  const int64_t n = static_cast<int64_t>(records.size());
  return MakeStringTensor({n}, std::move(records));
}

std::string ExampleForWarmUp(const tensorflow::GraphDef& graph) {
  tensorflow::Example example;
  auto& features = *example.mutable_features()->mutable_feature();
  auto scan = [&](const google::protobuf::RepeatedPtrField<tensorflow::NodeDef>& nodes) {
    absl::flat_hash_map<std::string, const tensorflow::NodeDef*> by_name;
    for (const tensorflow::NodeDef& n : nodes) by_name[n.name()] = &n;
    // The strings of the Const node an input names ("key", "key:0", "key:output:0").
    auto strings_of = [&](const std::string& input) -> std::vector<std::string> {
      auto it = by_name.find(input.substr(0, input.find(':')));
      if (it == by_name.end() || it->second->op() != "Const") return {};
      auto value = it->second->attr().find("value");
      if (value == it->second->attr().end()) return {};
      const auto& strings = value->second.tensor().string_val();
      return std::vector<std::string>(strings.begin(), strings.end());
    };
    for (const tensorflow::NodeDef& n : nodes) {
      const bool v2 = n.op() == "ParseExampleV2";
      if (n.op() != "ParseExample" && !v2) continue;
      auto attr = [&](const char* name) -> const tensorflow::AttrValue* {
        auto it = n.attr().find(name);
        return it == n.attr().end() ? nullptr : &it->second;
      };
      const tensorflow::AttrValue* types = attr("Tdense");
      const tensorflow::AttrValue* shapes = attr("dense_shapes");
      if (types == nullptr || shapes == nullptr) continue;
      std::vector<std::string> keys;
      if (v2) {
        if (n.input_size() > 3) keys = strings_of(n.input(3));
      } else {
        const tensorflow::AttrValue* nsparse = attr("Nsparse");
        const int first = 2 + static_cast<int>(nsparse == nullptr ? 0 : nsparse->i());
        for (int k = 0; k < types->list().type_size() && first + k < n.input_size(); ++k) {
          std::vector<std::string> key = strings_of(n.input(first + k));
          keys.push_back(key.size() == 1 ? key[0] : std::string());
        }
      }
      for (size_t k = 0; k < keys.size() && static_cast<int>(k) < types->list().type_size() &&
                         static_cast<int>(k) < shapes->list().shape_size();
           ++k) {
        if (keys[k].empty() || features.contains(keys[k])) continue;
        int64_t count = 1;
        for (const auto& dim : shapes->list().shape(static_cast<int>(k)).dim()) {
          count *= dim.size() < 0 ? 1 : dim.size();
        }
        if (count > (int64_t{1} << 20)) continue;  // not a feature a warm-up should send
        tensorflow::Feature& f = features[keys[k]];
        switch (types->list().type(static_cast<int>(k))) {
          case tensorflow::DT_FLOAT:
            f.mutable_float_list()->mutable_value()->Resize(static_cast<int>(count), 0.0f);
            break;
          case tensorflow::DT_INT64:
            f.mutable_int64_list()->mutable_value()->Resize(static_cast<int>(count), 0);
            break;
          default:
            for (int64_t i = 0; i < count; ++i) f.mutable_bytes_list()->add_value("");
        }
      }
    }
  };
  scan(graph.node());
  for (const tensorflow::FunctionDef& f : graph.library().function()) scan(f.node_def());
  return example.SerializeAsString();
}

absl::StatusOr<ts::ClassificationResult> Classify(const ServedVersion& v,
                                                  const std::string& signature,
                                                  const ts::Input& input, int64_t timeout_ms) {
  const std::string name = signature.empty() ? kDefaultSignature : signature;
  TFJIT_ASSIGN_OR_RETURN(const tensorflow::SignatureDef* def, FindSignature(v, name));
  if (def->inputs_size() != 1) return InvalidArgument("Expected one input Tensor.");
  if (def->outputs_size() != 1 && def->outputs_size() != 2) {
    return InvalidArgument("Expected one or two output Tensors, found %d", def->outputs_size());
  }
  if (!def->inputs().contains(kInputs)) {
    return InvalidArgument("No classification inputs found in SignatureDef: %s",
                           def->DebugString());
  }
  const bool has_classes = def->outputs().contains(kClasses);
  const bool has_scores = def->outputs().contains(kScores);
  if (!has_classes && !has_scores) {
    return InvalidArgument(
        "Expected classification signature outputs to contain at least one of \"classes\" or "
        "\"scores\". Signature was: %s",
        def->DebugString());
  }
  TFJIT_ASSIGN_OR_RETURN(Tensor examples, SerializedExamples(input));
  const int64_t batch = examples.dim(0);
  std::vector<std::string> keys;
  if (has_classes) keys.push_back(kClasses);
  if (has_scores) keys.push_back(kScores);
  TFJIT_ASSIGN_OR_RETURN(
      NamedTensors out,
      RunSignature(v, name, *def, {{kInputs, std::move(examples)}}, keys, timeout_ms));
  if (out.size() != keys.size()) {
    return InvalidArgument("Expected %d output tensor(s).  Got: %d", keys.size(), out.size());
  }
  const Tensor* classes = has_classes ? &out[0].second : nullptr;
  const Tensor* scores = has_scores ? &out[has_classes ? 1 : 0].second : nullptr;
  for (const Tensor* t : {classes, scores}) {
    if (t == nullptr) continue;
    if (t->rank() != 2) {
      return InvalidArgument("Expected Tensor shape: [batch_size num_classes] but got %s",
                             ShapeText(*t));
    }
  }
  if (classes != nullptr) {
    if (classes->dtype() != DType::kString || StringValues(*classes) == nullptr) {
      return InvalidArgument("Expected classes Tensor of DT_STRING. Got: %s",
                             EnumName(classes->dtype()));
    }
    if (classes->dim(0) != batch) {
      return InvalidArgument("Expected classes output batch size of %d. Got: %d", batch,
                             classes->dim(0));
    }
  }
  if (scores != nullptr) {
    if (scores->dtype() != DType::kFloat32) {
      return InvalidArgument("Expected scores Tensor of DT_FLOAT. Got: %s",
                             EnumName(scores->dtype()));
    }
    if (scores->dim(0) != batch) {
      return InvalidArgument("Expected scores output batch size of %d. Got: %d", batch,
                             scores->dim(0));
    }
  }
  if (classes != nullptr && scores != nullptr && classes->dim(1) != scores->dim(1)) {
    return InvalidArgument("Tensors class and score should match in dim_size(1). Got %d vs. %d",
                           classes->dim(1), scores->dim(1));
  }
  const int64_t num_classes = classes != nullptr ? classes->dim(1) : scores->dim(1);
  ts::ClassificationResult result;
  for (int64_t i = 0; i < batch; ++i) {
    ts::Classifications* row = result.add_classifications();
    for (int64_t c = 0; c < num_classes; ++c) {
      ts::Class* cls = row->add_classes();
      const int64_t k = i * num_classes + c;
      if (classes != nullptr) cls->set_label((*StringValues(*classes))[static_cast<size_t>(k)]);
      if (scores != nullptr) cls->set_score(scores->data<float>()[k]);
    }
  }
  return result;
}

absl::StatusOr<ts::RegressionResult> Regress(const ServedVersion& v, const std::string& signature,
                                             const ts::Input& input, int64_t timeout_ms) {
  const std::string name = signature.empty() ? kDefaultSignature : signature;
  TFJIT_ASSIGN_OR_RETURN(const tensorflow::SignatureDef* def, FindSignature(v, name));
  if (def->inputs_size() != 1) return InvalidArgument("Expected one input Tensor.");
  if (def->outputs_size() != 1) return InvalidArgument("Expected one output Tensor.");
  if (!def->inputs().contains(kInputs)) {
    return InvalidArgument("No regression inputs found in SignatureDef: %s", def->DebugString());
  }
  if (!def->outputs().contains(kOutputs)) {
    return InvalidArgument("No regression outputs found in SignatureDef: %s", def->DebugString());
  }
  TFJIT_ASSIGN_OR_RETURN(Tensor examples, SerializedExamples(input));
  const int64_t batch = examples.dim(0);
  TFJIT_ASSIGN_OR_RETURN(
      NamedTensors out,
      RunSignature(v, name, *def, {{kInputs, std::move(examples)}}, {kOutputs}, timeout_ms));
  const Tensor& t = out.at(0).second;
  if (!(t.rank() == 1 || (t.rank() == 2 && t.dim(1) == 1))) {
    return InvalidArgument(
        "Expected output Tensor shape to be either [batch_size] or [batch_size, 1] but got %s",
        ShapeText(t));
  }
  if (t.dim(0) != batch) {
    return InvalidArgument("Input batch size did not match output batch size: %d vs. %d", batch,
                           t.dim(0));
  }
  if (t.dtype() != DType::kFloat32) {
    return InvalidArgument("Expected output Tensor of DT_FLOAT.  Got: %s", EnumName(t.dtype()));
  }
  if (t.num_elements() != batch) {
    return InvalidArgument("Expected output batch size to be %d.  Got: %d", batch,
                           t.num_elements());
  }
  ts::RegressionResult result;
  for (int64_t i = 0; i < batch; ++i) result.add_regressions()->set_value(t.data<float>()[i]);
  return result;
}

absl::StatusOr<ts::MultiInferenceResponse> MultiInference(const ServedVersion& v,
                                                          const ts::MultiInferenceRequest& request,
                                                          int64_t timeout_ms) {
  constexpr char kClassifyMethod[] = "tensorflow/serving/classify";
  constexpr char kRegressMethod[] = "tensorflow/serving/regress";
  std::string model, input_tensor;
  std::set<std::string> signatures;
  for (const ts::InferenceTask& task : request.tasks()) {
    if (task.model_spec().name().empty()) {
      return InvalidArgument("Found ModelSpec with an empty model name.");
    }
    if (model.empty()) {
      model = task.model_spec().name();
    } else if (model != task.model_spec().name()) {
      return InvalidArgument(
          "All ModelSpecs in a MultiInferenceRequest must access the same model name.");
    }
    const std::string name = task.model_spec().signature_name().empty()
                                 ? kDefaultSignature
                                 : task.model_spec().signature_name();
    if (!signatures.insert(name).second) {
      return InvalidArgument("Duplicate evaluation of signature: %s", name);
    }
    auto def = v.signatures.signature_def().find(name);
    if (def == v.signatures.signature_def().end()) {
      return InvalidArgument("Requested signature not found in model graph: %s", name);
    }
    if (task.method_name() != kClassifyMethod && task.method_name() != kRegressMethod) {
      return Unimplemented("Unsupported signature method_name: %s", task.method_name());
    }
    auto input = def->second.inputs().find(kInputs);
    const std::string tensor = input == def->second.inputs().end() ? "" : input->second.name();
    if (input_tensor.empty()) {
      input_tensor = tensor;
    } else if (tensor != input_tensor) {
      return InvalidArgument("Input tensor must be the same for all Signatures.");
    }
  }
  ts::MultiInferenceResponse response;
  for (const ts::InferenceTask& task : request.tasks()) {
    const std::string& name = task.model_spec().signature_name();
    ts::InferenceResult* result = response.add_results();
    if (task.method_name() == kClassifyMethod) {
      TFJIT_ASSIGN_OR_RETURN(*result->mutable_classification_result(),
                             Classify(v, name, request.input(), timeout_ms));
    } else {
      TFJIT_ASSIGN_OR_RETURN(*result->mutable_regression_result(),
                             Regress(v, name, request.input(), timeout_ms));
    }
    ts::ModelSpec* spec = result->mutable_model_spec();
    spec->set_name(model);
    spec->set_signature_name(name.empty() ? kDefaultSignature : name);
    spec->mutable_version()->set_value(v.version);
  }
  return response;
}

}  // namespace tfjit::serving
