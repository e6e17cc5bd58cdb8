// The `tfjit` Python module (pybind11): load a TF model, run it on NumPy arrays, read its
// signatures and inputs, explain its clusters. Errors are raised as tfjit.Error, whose `code`
// is the status code's name ("INVALID_ARGUMENT", ...) and whose message is tfjit's.
//
//   import tfjit, numpy as np
//   model = tfjit.load("model.json", jit="auto", device="cpu:0", autofix=False)
//   outputs = model.run({"x": np.ones((1, 224, 224, 3), np.float32)})  # {name: ndarray}
//
// TF_XLA_FLAGS and XLA_FLAGS apply as in the CLI; load's arguments override them.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <unistd.h>

#include <cstring>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tfjit/session.h"

namespace py = pybind11;

namespace tfjit {
namespace {

// tfjit.Error, created at import.
PyObject* error_type = nullptr;

const char* CodeName(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kInvalidArgument:
      return "INVALID_ARGUMENT";
    case absl::StatusCode::kNotFound:
      return "NOT_FOUND";
    case absl::StatusCode::kFailedPrecondition:
      return "FAILED_PRECONDITION";
    case absl::StatusCode::kUnimplemented:
      return "UNIMPLEMENTED";
    case absl::StatusCode::kResourceExhausted:
      return "RESOURCE_EXHAUSTED";
    case absl::StatusCode::kDeadlineExceeded:
      return "DEADLINE_EXCEEDED";
    case absl::StatusCode::kCancelled:
      return "CANCELLED";
    case absl::StatusCode::kInternal:
      return "INTERNAL";
    case absl::StatusCode::kOutOfRange:
      return "OUT_OF_RANGE";
    case absl::StatusCode::kDataLoss:
      return "DATA_LOSS";
    case absl::StatusCode::kAlreadyExists:
      return "ALREADY_EXISTS";
    case absl::StatusCode::kPermissionDenied:
      return "PERMISSION_DENIED";
    case absl::StatusCode::kAborted:
      return "ABORTED";
    case absl::StatusCode::kUnavailable:
      return "UNAVAILABLE";
    default:
      return "UNKNOWN";
  }
}

// Raises tfjit.Error(message) with .code set.
[[noreturn]] void Raise(const absl::Status& status) {
  py::object error = py::reinterpret_borrow<py::object>(error_type)(std::string(status.message()));
  error.attr("code") = CodeName(status.code());
  PyErr_SetObject(error_type, error.ptr());
  throw py::error_already_set();
}

template <typename T>
T Check(StatusOr<T> value) {
  if (!value.ok()) Raise(value.status());
  return std::move(*value);
}

// NumPy dtype <-> tfjit DType (bfloat16 has no NumPy type).
DType DTypeOf(const py::dtype& d) {
  const char kind = d.kind();
  const size_t size = d.itemsize();
  if (kind == 'f')
    return size == 2   ? DType::kFloat16
           : size == 4 ? DType::kFloat32
           : size == 8 ? DType::kFloat64
                       : DType::kInvalid;
  if (kind == 'i') {
    return size == 1   ? DType::kInt8
           : size == 2 ? DType::kInt16
           : size == 4 ? DType::kInt32
           : size == 8 ? DType::kInt64
                       : DType::kInvalid;
  }
  if (kind == 'u') {
    return size == 1   ? DType::kUInt8
           : size == 2 ? DType::kUInt16
           : size == 4 ? DType::kUInt32
           : size == 8 ? DType::kUInt64
                       : DType::kInvalid;
  }
  if (kind == 'b') return DType::kBool;
  if (kind == 'c')
    return size == 8 ? DType::kComplex64 : size == 16 ? DType::kComplex128 : DType::kInvalid;
  return DType::kInvalid;
}

py::dtype NumpyDType(DType t) {
  switch (t) {
    case DType::kBool:
      return py::dtype("bool");
    case DType::kInt8:
      return py::dtype("int8");
    case DType::kInt16:
      return py::dtype("int16");
    case DType::kInt32:
      return py::dtype("int32");
    case DType::kInt64:
      return py::dtype("int64");
    case DType::kUInt8:
      return py::dtype("uint8");
    case DType::kUInt16:
      return py::dtype("uint16");
    case DType::kUInt32:
      return py::dtype("uint32");
    case DType::kUInt64:
      return py::dtype("uint64");
    case DType::kFloat16:
      return py::dtype("float16");
    case DType::kFloat32:
      return py::dtype("float32");
    case DType::kFloat64:
      return py::dtype("float64");
    case DType::kComplex64:
      return py::dtype("complex64");
    case DType::kComplex128:
      return py::dtype("complex128");
    default:
      break;
  }
  Raise(absl::UnimplementedError(
      "an output's dtype has no NumPy equivalent (bfloat16, string or a handle)"));
}

// A copy of `a` (any layout) as a tfjit tensor of its own dtype: feeds keep their dtype, so a
// wrong one is the session's INVALID_ARGUMENT, never a silent conversion.
Tensor ToTensor(const std::string& name, const py::array& a) {
  const DType t = DTypeOf(a.dtype());
  if (t == DType::kInvalid) {
    Raise(absl::InvalidArgumentError("feed '" + name + "': NumPy dtype '" +
                                     std::string(py::str(a.dtype())) +
                                     "' has no tfjit equivalent; use a numeric array"));
  }
  std::vector<int64_t> dims(a.shape(), a.shape() + a.ndim());
  py::array contiguous = py::array::ensure(a, py::array::c_style);
  Tensor tensor(t, dims);
  if (tensor.byte_size() > 0) std::memcpy(tensor.raw_data(), contiguous.data(), tensor.byte_size());
  return tensor;
}

py::array ToArray(const Tensor& t) {
  py::array a(NumpyDType(t.dtype()), std::vector<py::ssize_t>(t.dims().begin(), t.dims().end()));
  if (t.byte_size() > 0) std::memcpy(a.mutable_data(), t.raw_data(), t.byte_size());
  return a;
}

class Model {
 public:
  explicit Model(std::unique_ptr<Session> session) : session_(std::move(session)) {}

  // {fetch: array} for `feeds`; fetches default to the signature's outputs (or the graph's
  // sinks) unless targets are given; targets are run for their effect (a TF1 train op).
  py::dict Run(const py::dict& feeds, std::optional<std::vector<std::string>> fetches,
               std::optional<std::vector<std::string>> targets) {
    std::vector<std::pair<std::string, Tensor>> inputs;
    for (const auto& [key, value] : feeds) {
      const std::string name = py::str(key);
      inputs.emplace_back(name, ToTensor(name, py::array::ensure(value)));
    }
    const std::vector<std::string> run_targets = targets.value_or(std::vector<std::string>{});
    const std::vector<std::string> names = fetches.value_or(
        run_targets.empty() ? session_->DefaultFetches() : std::vector<std::string>{});
    std::vector<Tensor> outputs;
    {
      py::gil_scoped_release release;  // other Python threads run while tfjit computes
      StatusOr<std::vector<Tensor>> out = session_->Run(inputs, names, run_targets);
      if (!out.ok()) {
        py::gil_scoped_acquire acquire;
        Raise(out.status());
      }
      outputs = std::move(*out);
    }
    py::dict result;
    for (size_t i = 0; i < names.size(); ++i) result[py::str(names[i])] = ToArray(outputs[i]);
    return result;
  }

  // [(name, dtype, shape)], -1 for dims of any size.
  std::vector<py::tuple> Inputs() const {
    std::vector<py::tuple> out;
    for (const InputInfo& in : session_->Inputs()) {
      py::object dtype = in.dtype == DType::kBFloat16 ? py::object(py::str("bfloat16"))
                         : in.dtype == DType::kString ? py::object(py::str("string"))
                                                      : py::object(NumpyDType(in.dtype));
      out.push_back(py::make_tuple(in.name, dtype,
                                   in.unknown_rank ? py::object(py::none()) : py::cast(in.dims)));
    }
    return out;
  }

  std::vector<std::string> Signatures() const { return session_->SignatureNames(); }
  std::string Signature() const { return session_->SignatureName(); }
  std::vector<std::string> Outputs() const { return session_->DefaultFetches(); }

  void SaveVariables(const std::string& prefix) {
    absl::Status s;
    {
      py::gil_scoped_release release;
      s = session_->SaveVariables(prefix);
    }
    if (!s.ok()) Raise(s);
  }

  std::string Explain(std::optional<std::vector<std::string>> fetches) const {
    return Check(session_->Explain(fetches.value_or(session_->DefaultFetches())));
  }

 private:
  std::unique_ptr<Session> session_;
};

std::unique_ptr<Model> Load(const std::string& path, std::optional<std::string> jit,
                            std::optional<std::string> device, std::optional<bool> autofix,
                            std::optional<std::string> signature, std::optional<int> threads,
                            std::optional<std::string> shapes, std::optional<std::string> backend,
                            std::optional<std::vector<int64_t>> batch_buckets) {
  SessionOptions options = Check(SessionOptionsFromEnvironment());
  options.show_compile_progress = isatty(STDERR_FILENO) != 0;
  if (jit.has_value()) options.jit = Check(ParseJitMode(*jit));
  if (device.has_value()) options.device = *device;
  if (autofix.has_value()) options.autofix = *autofix;
  if (signature.has_value()) options.signature = *signature;
  if (threads.has_value()) options.intra_op_threads = options.inter_op_threads = *threads;
  if (shapes.has_value()) options.shapes = Check(ParseShapeMode(*shapes));
  if (batch_buckets.has_value()) options.batch_buckets = *batch_buckets;
  if (backend.has_value()) options.backend = *backend;
  std::unique_ptr<Session> session;
  {
    py::gil_scoped_release release;
    StatusOr<std::unique_ptr<Session>> loaded = Session::Load(path, options);
    if (!loaded.ok()) {
      py::gil_scoped_acquire acquire;
      Raise(loaded.status());
    }
    session = std::move(*loaded);
  }
  return std::make_unique<Model>(std::move(session));
}

}  // namespace
}  // namespace tfjit

PYBIND11_MODULE(tfjit, m) {
  using tfjit::Model;
  m.doc() =
      "tfjit: a JIT compiler and runtime for TensorFlow graphs (GraphDef, SavedModel, "
      "TF.js).";
  tfjit::error_type = PyErr_NewExceptionWithDoc(
      "tfjit.Error", "A tfjit failure: .code is the status code's name, str() the message.",
      PyExc_RuntimeError, nullptr);
  m.attr("Error") = py::handle(tfjit::error_type);
  m.def("load", &tfjit::Load, py::arg("path"), py::arg("jit") = py::none(),
        py::arg("device") = py::none(), py::arg("autofix") = py::none(),
        py::arg("signature") = py::none(), py::arg("threads") = py::none(),
        py::arg("shapes") = py::none(), py::arg("backend") = py::none(),
        py::arg("batch_buckets") = py::none(),
        "Loads a model: a GraphDef (.pb/.pbtxt), a SavedModel directory or a TF.js "
        "model.json. jit: 'none', 'off', 'auto' (default) or 'all'; device: 'cpu:0', "
        "'gpu:0', ...; autofix: the beyond-TF fixes of the known XLA issues; shapes: "
        "'static', 'auto' (default) or 'symbolic', how compiled clusters cover varying batch "
        "sizes; backend: 'cpu' (default) or 'interpreter'; batch_buckets: batch sizes a "
        "cluster whose rows are independent may run padded to. TF_XLA_FLAGS / XLA_FLAGS apply; "
        "these arguments override them.");
  py::class_<Model>(m, "Model")
      .def("run", &Model::Run, py::arg("feeds"), py::arg("fetches") = py::none(),
           py::arg("targets") = py::none(),
           "Runs the model on {input name: array}; returns {output name: array}. targets: "
           "nodes run for their effect (a TF1 train op); variables persist across runs.")
      .def("save_variables", &Model::SaveVariables, py::arg("prefix"),
           "Writes a SavedModel's current variables as a TF checkpoint at prefix (.index, "
           ".data-00000-of-00001).")
      .def_property_readonly("inputs", &Model::Inputs, "[(name, dtype, shape)], -1 = any size")
      .def_property_readonly("outputs", &Model::Outputs, "the default fetches")
      .def_property_readonly("signatures", &Model::Signatures)
      .def_property_readonly("signature", &Model::Signature)
      .def("explain", &Model::Explain, py::arg("fetches") = py::none(),
           "The clusters and why nodes stay out of them, as text.");
}
