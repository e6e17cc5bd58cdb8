// Fallback kernels of the parsing ops (docs/DESIGN.md, "Op families"): ParseExample and
// ParseExampleV2 read serialized tf.Example records (frontend/proto/example.proto) into dense,
// sparse and (V2) ragged tensors, with TF's semantics and error messages (TF's
// example_parsing_ops and example_proto_fast_parsing, read for facts):
//   - dense, fixed shape S: output [B] + S; a missing feature (or one with no value list) takes
//     the default, and an empty default makes the feature required;
//   - dense, variable first dim (S = [-1] + inner): output [B, max rows] + inner, each record's
//     rows followed by copies of the single-element default (the padding);
//   - sparse: indices int64 [n, 2] of (record, position), values [n], dense shape [B, max len];
//   - ragged (V2): values [n] and row splits [B + 1] from 0.
// V2 also takes a scalar `serialized` (one record, no batch dim: dense outputs are S, sparse
// indices [n, 1]). `names` only names records in messages. Strings never compile, so these run
// outside clusters; TF Serving's Classify and Regress feed them (serving/classify.h).
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/dtype.h"
#include "core/string_tensor.h"
#include "frontend/attr.h"
#include "frontend/proto/example.pb.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

// TF's names of the three value kinds in parsing messages.
const char* KindName(DType dtype) {
  switch (dtype) {
    case DType::kFloat32:
      return "float";
    case DType::kInt64:
      return "int64";
    default:
      return "bytes";
  }
}

// The dtype a feature's value list holds; kInvalid when no list is set.
DType FeatureDType(const tensorflow::Feature& f) {
  switch (f.kind_case()) {
    case tensorflow::Feature::kFloatList:
      return DType::kFloat32;
    case tensorflow::Feature::kInt64List:
      return DType::kInt64;
    case tensorflow::Feature::kBytesList:
      return DType::kString;
    default:
      return DType::kInvalid;
  }
}

int64_t FeatureSize(const tensorflow::Feature& f) {
  switch (f.kind_case()) {
    case tensorflow::Feature::kFloatList:
      return f.float_list().value_size();
    case tensorflow::Feature::kInt64List:
      return f.int64_list().value_size();
    case tensorflow::Feature::kBytesList:
      return f.bytes_list().value_size();
    default:
      return 0;
  }
}

// Values of one output, gathered record by record, in the output's dtype.
struct Values {
  DType dtype = DType::kInvalid;
  std::vector<float> floats;
  std::vector<int64_t> ints;
  std::vector<std::string> strings;

  int64_t size() const {
    return static_cast<int64_t>(dtype == DType::kFloat32 ? floats.size()
                                : dtype == DType::kInt64 ? ints.size()
                                                         : strings.size());
  }
  // Appends the feature's values (its dtype is the output's: checked by the caller).
  void Append(const tensorflow::Feature& f) {
    switch (dtype) {
      case DType::kFloat32:
        floats.insert(floats.end(), f.float_list().value().begin(), f.float_list().value().end());
        break;
      case DType::kInt64:
        ints.insert(ints.end(), f.int64_list().value().begin(), f.int64_list().value().end());
        break;
      default:
        strings.insert(strings.end(), f.bytes_list().value().begin(), f.bytes_list().value().end());
    }
  }
  // Appends elements [first, first + count) of `t` (a tensor of this dtype), or `count`
  // copies of its element `first` when `repeat`.
  void AppendTensor(const Tensor& t, int64_t first, int64_t count, bool repeat = false) {
    for (int64_t i = 0; i < count; ++i) {
      const int64_t k = repeat ? first : first + i;
      switch (dtype) {
        case DType::kFloat32:
          floats.push_back(t.data<float>()[k]);
          break;
        case DType::kInt64:
          ints.push_back(t.data<int64_t>()[k]);
          break;
        default:
          strings.push_back((*StringValues(t))[static_cast<size_t>(k)]);
      }
    }
  }
  Tensor Finish(std::vector<int64_t> dims) {
    switch (dtype) {
      case DType::kFloat32:
        return Tensor::FromVector<float>(dtype, std::move(dims), floats);
      case DType::kInt64:
        return Tensor::FromVector<int64_t>(dtype, std::move(dims), ints);
      default:
        return MakeStringTensor(std::move(dims), std::move(strings));
    }
  }
};

struct DenseSpec {
  std::string key;
  DType dtype = DType::kInvalid;
  std::vector<int64_t> shape;  // dim 0 may be -1 (variable length)
  bool variable = false;
  int64_t stride = 1;  // elements per row: the product of the dims after the first variable one
  Tensor default_value;
};

struct Spec {
  bool v2 = false;
  bool scalar = false;  // V2 with a scalar `serialized`
  std::vector<std::string> sparse_keys;
  std::vector<DType> sparse_types;
  std::vector<DenseSpec> dense;
  std::vector<std::string> ragged_keys;
  std::vector<DType> ragged_types;
  std::vector<DType> ragged_split_types;
};

absl::Status CheckValueDType(const KernelContext& ctx, DType dtype, absl::string_view what) {
  if (dtype == DType::kFloat32 || dtype == DType::kInt64 || dtype == DType::kString) {
    return absl::OkStatus();
  }
  return KernelError(ctx, "%s must be float, int64 or string, got %s", what, DTypeName(dtype));
}

// The keys of a string input: V1 takes one scalar per key, V2 one vector of them.
absl::StatusOr<std::vector<std::string>> KeysOf(const KernelContext& ctx, int first, int count,
                                                bool vector, absl::string_view what) {
  std::vector<std::string> keys;
  for (int i = first; i < first + count; ++i) {
    const std::vector<std::string>* values = StringValues(ctx.input(i));
    if (values == nullptr || (vector ? ctx.input(i).rank() > 1 : ctx.input(i).rank() != 0)) {
      return KernelError(ctx, "%s must be %s of strings, got %s", what,
                         vector ? "a vector" : "scalars", ctx.input(i).ShapeString());
    }
    keys.insert(keys.end(), values->begin(), values->end());
  }
  return keys;
}

absl::StatusOr<Spec> ReadSpec(const KernelContext& ctx) {
  const tf::Node& node = ctx.node();
  Spec spec;
  spec.v2 = node.op() == "ParseExampleV2";
  const Tensor& serialized = ctx.input(0);
  if (StringValues(serialized) == nullptr) {
    return KernelError(ctx, "serialized must be a string tensor, got %s", serialized.ShapeString());
  }
  if (spec.v2 ? serialized.rank() > 1 : serialized.rank() != 1) {
    return KernelError(ctx, "Expected serialized to be a %s, got shape: %s",
                       spec.v2 ? "scalar or vector" : "vector", DimsString(serialized.dims()));
  }
  spec.scalar = serialized.rank() == 0;
  const Tensor& names = ctx.input(1);
  if (StringValues(names) == nullptr) {
    return KernelError(ctx, "names must be a string tensor, got %s", names.ShapeString());
  }
  if (names.num_elements() > 0 && names.dims() != serialized.dims()) {
    return KernelError(ctx,
                       "Expected names have the same shape as serialized: name.shape=%s, "
                       "serialized.shape=%s",
                       DimsString(names.dims()), DimsString(serialized.dims()));
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<DType> tdense, tf::GetTypeListAttr(node, "Tdense"));
  TFJIT_ASSIGN_OR_RETURN(spec.sparse_types, tf::GetTypeListAttr(node, "sparse_types"));
  TFJIT_ASSIGN_OR_RETURN(std::vector<tf::PartialShape> shapes,
                         tf::GetShapeListAttr(node, "dense_shapes"));
  const int num_dense = static_cast<int>(tdense.size());
  const int num_sparse = static_cast<int>(spec.sparse_types.size());
  int defaults_at = 0;
  std::vector<std::string> dense_keys;
  if (spec.v2) {
    TFJIT_ASSIGN_OR_RETURN(spec.ragged_types, tf::GetTypeListAttr(node, "ragged_value_types"));
    TFJIT_ASSIGN_OR_RETURN(spec.ragged_split_types,
                           tf::GetTypeListAttr(node, "ragged_split_types"));
    TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 5 + num_dense));
    TFJIT_ASSIGN_OR_RETURN(spec.sparse_keys, KeysOf(ctx, 2, 1, true, "sparse_keys"));
    TFJIT_ASSIGN_OR_RETURN(dense_keys, KeysOf(ctx, 3, 1, true, "dense_keys"));
    TFJIT_ASSIGN_OR_RETURN(spec.ragged_keys, KeysOf(ctx, 4, 1, true, "ragged_keys"));
    defaults_at = 5;
    if (dense_keys.size() != tdense.size()) {
      return KernelError(ctx, "Expected len(dense_keys) == len(dense_types) but got: %d vs. %d",
                         dense_keys.size(), tdense.size());
    }
    if (static_cast<int>(spec.sparse_keys.size()) != num_sparse) {
      return KernelError(ctx, "Expected len(sparse_keys) == num_sparse but got: %d vs. %d",
                         spec.sparse_keys.size(), num_sparse);
    }
    if (spec.ragged_keys.size() != spec.ragged_types.size() ||
        spec.ragged_split_types.size() != spec.ragged_types.size()) {
      return KernelError(ctx,
                         "Expected len(ragged_keys) == len(ragged_value_types) == "
                         "len(ragged_split_types) but got: %d vs. %d vs. %d",
                         spec.ragged_keys.size(), spec.ragged_types.size(),
                         spec.ragged_split_types.size());
    }
    if (spec.scalar && !spec.ragged_keys.empty()) {
      return absl::UnimplementedError(absl::StrCat(
          "node '", node.name(), "' (", node.op(),
          "): ragged features of a scalar `serialized` are not supported by tfjit; feed a "
          "vector of one record"));
    }
  } else {
    TFJIT_ASSIGN_OR_RETURN(int64_t nsparse, tf::GetIntAttr(node, "Nsparse"));
    TFJIT_ASSIGN_OR_RETURN(int64_t ndense, tf::GetIntAttr(node, "Ndense"));
    if (nsparse != num_sparse || ndense != num_dense) {
      return KernelError(ctx,
                         "Nsparse (%d) and Ndense (%d) must equal len(sparse_types) (%d) and "
                         "len(Tdense) (%d)",
                         nsparse, ndense, num_sparse, num_dense);
    }
    TFJIT_RETURN_IF_ERROR(CheckNumInputs(ctx, 2 + num_sparse + 2 * num_dense));
    TFJIT_ASSIGN_OR_RETURN(spec.sparse_keys, KeysOf(ctx, 2, num_sparse, false, "sparse_keys"));
    TFJIT_ASSIGN_OR_RETURN(dense_keys, KeysOf(ctx, 2 + num_sparse, num_dense, false, "dense_keys"));
    defaults_at = 2 + num_sparse + num_dense;
  }
  if (static_cast<int>(shapes.size()) != num_dense) {
    return KernelError(ctx, "len(dense_shapes) != len(dense_keys): %d vs. %d", shapes.size(),
                       num_dense);
  }
  for (DType t : spec.sparse_types) TFJIT_RETURN_IF_ERROR(CheckValueDType(ctx, t, "sparse_types"));
  for (DType t : spec.ragged_types) {
    TFJIT_RETURN_IF_ERROR(CheckValueDType(ctx, t, "ragged_value_types"));
  }
  for (DType t : spec.ragged_split_types) {
    if (t != DType::kInt32 && t != DType::kInt64) {
      return KernelError(ctx, "ragged_split_types must be int32 or int64, got %s", DTypeName(t));
    }
  }
  for (int d = 0; d < num_dense; ++d) {
    TFJIT_RETURN_IF_ERROR(CheckValueDType(ctx, tdense[d], "Tdense"));
    DenseSpec dense;
    dense.key = dense_keys[d];
    dense.dtype = tdense[d];
    const tf::PartialShape& shape = shapes[d];
    bool unknown_inner = shape.unknown_rank;
    for (size_t k = 1; k < shape.dims.size(); ++k) unknown_inner |= shape.dims[k] < 0;
    if (unknown_inner) {
      return KernelError(ctx, "dense_shapes[%d] has unknown rank or unknown inner dimensions: %s",
                         d, shape.ToString());
    }
    dense.shape = shape.dims;
    dense.variable = !dense.shape.empty() && dense.shape[0] < 0;
    dense.stride = 1;
    for (size_t k = dense.variable ? 1 : 0; k < dense.shape.size(); ++k) {
      dense.stride *= dense.shape[k];
    }
    dense.default_value = ctx.input(defaults_at + d);
    const Tensor& def = dense.default_value;
    if (def.dtype() != dense.dtype) {
      return KernelError(ctx, "dense_defaults[%d].dtype() == %s != dense_types_[%d] == %s", d,
                         DTypeName(def.dtype()), d, DTypeName(dense.dtype));
    }
    if (dense.dtype == DType::kString && StringValues(def) == nullptr) {
      return KernelError(ctx, "dense_defaults[%d] must be a string tensor", d);
    }
    if (dense.variable) {
      if (def.num_elements() != 1) {
        return KernelError(ctx,
                           "dense_shape[%d] is a variable length shape: %s, therefore "
                           "def_value[%d] must contain a single element (the padding element).  "
                           "But its shape is: %s",
                           d, shape.ToString(), d, DimsString(def.dims()));
      }
    } else if (def.num_elements() > 0 && def.dims() != dense.shape) {
      return KernelError(
          ctx, "def_value[%d].shape() == %s is not compatible with dense_shapes_[%d] == %s", d,
          DimsString(def.dims()), d, shape.ToString());
    }
    spec.dense.push_back(std::move(dense));
  }
  return spec;
}

absl::Status ParseExampleKernel(KernelContext& ctx) {
  if (ctx.num_inputs() < 2) return CheckNumInputs(ctx, 2);
  TFJIT_ASSIGN_OR_RETURN(Spec spec, ReadSpec(ctx));
  const std::vector<std::string>& records = *StringValues(ctx.input(0));
  const std::vector<std::string>* names = StringValues(ctx.input(1));
  const int64_t batch = static_cast<int64_t>(records.size());
  auto name_of = [&](int64_t i) -> std::string {
    return names->empty() ? std::string("<unknown>") : (*names)[static_cast<size_t>(i)];
  };

  const size_t num_sparse = spec.sparse_keys.size();
  const size_t num_dense = spec.dense.size();
  const size_t num_ragged = spec.ragged_keys.size();
  std::vector<Values> sparse(num_sparse), dense(num_dense), ragged(num_ragged);
  std::vector<std::vector<int64_t>> sparse_indices(num_sparse), ragged_splits(num_ragged);
  std::vector<int64_t> sparse_max(num_sparse, 0);
  // Variable-length dense features: each record's rows, padded once the longest is known.
  std::vector<std::vector<Values>> variable_rows(num_dense);
  for (size_t k = 0; k < num_sparse; ++k) sparse[k].dtype = spec.sparse_types[k];
  for (size_t k = 0; k < num_dense; ++k) dense[k].dtype = spec.dense[k].dtype;
  for (size_t k = 0; k < num_ragged; ++k) {
    ragged[k].dtype = spec.ragged_types[k];
    ragged_splits[k].push_back(0);
  }

  tensorflow::Example example;
  for (int64_t i = 0; i < batch; ++i) {
    if (!example.ParseFromString(records[static_cast<size_t>(i)])) {
      return KernelError(ctx, "Could not parse example input, value: '%s'",
                         absl::CHexEscape(records[static_cast<size_t>(i)]));
    }
    const auto& features = example.features().feature();
    auto find = [&](const std::string& key) -> const tensorflow::Feature* {
      auto it = features.find(key);
      if (it == features.end() || it->second.kind_case() == tensorflow::Feature::KIND_NOT_SET) {
        return nullptr;
      }
      return &it->second;
    };
    for (size_t k = 0; k < num_dense; ++k) {
      const DenseSpec& d = spec.dense[k];
      const tensorflow::Feature* f = find(d.key);
      if (f != nullptr && FeatureDType(*f) != d.dtype) {
        if (d.variable) {
          return KernelError(ctx,
                             "Name: %s, Key: %s, Index: %d.  Data types don't match. "
                             "Expected type: %s",
                             name_of(i), d.key, i, KindName(d.dtype));
        }
        return KernelError(ctx,
                           "Name: %s, Key: %s, Index: %d.  Data types don't match. Data "
                           "type: %s but expected type: %s",
                           name_of(i), d.key, i, KindName(FeatureDType(*f)), KindName(d.dtype));
      }
      if (d.variable) {
        Values rows;
        rows.dtype = d.dtype;
        if (f != nullptr) {
          const int64_t n = FeatureSize(*f);
          if (d.stride == 0 ? n != 0 : n % d.stride != 0) {
            return KernelError(ctx,
                               "Name: %s, Key: %s, Index: %d.  Number of %s values is not a "
                               "multiple of stride length. Saw %d values but output shape is: %s",
                               name_of(i), d.key, i, KindName(d.dtype), n, DimsString(d.shape));
          }
          rows.Append(*f);
        }
        variable_rows[k].push_back(std::move(rows));
        continue;
      }
      if (f == nullptr) {
        if (d.default_value.num_elements() == 0 && d.stride > 0) {
          return KernelError(ctx,
                             "Name: %s, Feature: %s (data type: %s) is required but could "
                             "not be found.",
                             name_of(i), d.key, KindName(d.dtype));
        }
        dense[k].AppendTensor(d.default_value, 0, d.stride);
        continue;
      }
      if (FeatureSize(*f) != d.stride) {
        return KernelError(ctx,
                           "Name: %s, Key: %s, Index: %d.  Number of %s values != expected.  "
                           "Values size: %d but output shape: %s",
                           name_of(i), d.key, i, KindName(d.dtype), FeatureSize(*f),
                           DimsString(d.shape));
      }
      dense[k].Append(*f);
    }
    for (size_t k = 0; k < num_sparse; ++k) {
      const tensorflow::Feature* f = find(spec.sparse_keys[k]);
      if (f == nullptr) continue;
      if (FeatureDType(*f) != spec.sparse_types[k]) {
        return KernelError(ctx,
                           "Name: %s, Key: %s, Index: %d.  Data types don't match. Expected "
                           "type: %s, Actual type: %s",
                           name_of(i), spec.sparse_keys[k], i, KindName(spec.sparse_types[k]),
                           KindName(FeatureDType(*f)));
      }
      const int64_t n = FeatureSize(*f);
      for (int64_t j = 0; j < n; ++j) {
        if (!spec.scalar) sparse_indices[k].push_back(i);
        sparse_indices[k].push_back(j);
      }
      sparse_max[k] = std::max(sparse_max[k], n);
      sparse[k].Append(*f);
    }
    for (size_t k = 0; k < num_ragged; ++k) {
      const tensorflow::Feature* f = find(spec.ragged_keys[k]);
      if (f != nullptr && FeatureDType(*f) != spec.ragged_types[k]) {
        return KernelError(ctx,
                           "Name: %s, Key: %s, Index: %d.  Data types don't match. Expected "
                           "type: %s, Actual type: %s",
                           name_of(i), spec.ragged_keys[k], i, KindName(spec.ragged_types[k]),
                           KindName(FeatureDType(*f)));
      }
      if (f != nullptr) ragged[k].Append(*f);
      ragged_splits[k].push_back(ragged[k].size());
    }
  }

  // Outputs: sparse indices, values, shapes; dense values; (V2) ragged values, row splits.
  int out = 0;
  const int64_t index_width = spec.scalar ? 1 : 2;
  for (size_t k = 0; k < num_sparse; ++k) {
    const int64_t n = static_cast<int64_t>(sparse_indices[k].size()) / index_width;
    ctx.set_output(out++,
                   Tensor::FromVector<int64_t>(DType::kInt64, {n, index_width}, sparse_indices[k]));
  }
  for (size_t k = 0; k < num_sparse; ++k) {
    const int64_t n = sparse[k].size();
    ctx.set_output(out++, sparse[k].Finish({n}));
  }
  for (size_t k = 0; k < num_sparse; ++k) {
    std::vector<int64_t> shape = {batch, sparse_max[k]};
    if (spec.scalar) shape = {sparse_max[k]};
    ctx.set_output(out++, Tensor::FromVector<int64_t>(DType::kInt64,
                                                      {static_cast<int64_t>(shape.size())}, shape));
  }
  for (size_t k = 0; k < num_dense; ++k) {
    const DenseSpec& d = spec.dense[k];
    std::vector<int64_t> dims = d.shape;
    if (d.variable) {
      int64_t rows = 0;
      for (const Values& v : variable_rows[k]) {
        rows = std::max(rows, d.stride == 0 ? 0 : v.size() / d.stride);
      }
      dims[0] = rows;
      for (Values& v : variable_rows[k]) {
        const int64_t have = v.size();
        v.AppendTensor(d.default_value, 0, rows * d.stride - have, /*repeat=*/true);
        switch (d.dtype) {
          case DType::kFloat32:
            dense[k].floats.insert(dense[k].floats.end(), v.floats.begin(), v.floats.end());
            break;
          case DType::kInt64:
            dense[k].ints.insert(dense[k].ints.end(), v.ints.begin(), v.ints.end());
            break;
          default:
            dense[k].strings.insert(dense[k].strings.end(), v.strings.begin(), v.strings.end());
        }
      }
    }
    if (!spec.scalar) dims.insert(dims.begin(), batch);
    // Padding can make a dense output far larger than the records (one long record among many
    // empty ones): checked before it is built (a string counts as 8 bytes here, a lower bound).
    TFJIT_RETURN_IF_ERROR(CheckOutputShape(ctx, d.dtype == DType::kString ? DType::kInt64 : d.dtype,
                                           dims, "dense output"));
    ctx.set_output(out++, dense[k].Finish(std::move(dims)));
  }
  for (size_t k = 0; k < num_ragged; ++k) {
    const int64_t n = ragged[k].size();
    ctx.set_output(out++, ragged[k].Finish({n}));
  }
  for (size_t k = 0; k < num_ragged; ++k) {
    const int64_t n = static_cast<int64_t>(ragged_splits[k].size());
    if (spec.ragged_split_types[k] == DType::kInt32) {
      std::vector<int32_t> splits(ragged_splits[k].begin(), ragged_splits[k].end());
      ctx.set_output(out++, Tensor::FromVector<int32_t>(DType::kInt32, {n}, splits));
    } else {
      ctx.set_output(out++, Tensor::FromVector<int64_t>(DType::kInt64, {n}, ragged_splits[k]));
    }
  }
  if (out != ctx.node().num_outputs()) {
    return absl::InternalError(absl::StrCat("ParseExample kernel made ", out, " outputs, node '",
                                            ctx.node().name(), "' has ", ctx.node().num_outputs()));
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterParsingKernels(KernelRegistry& registry) {
  registry.Register("ParseExample", ParseExampleKernel);
  registry.Register("ParseExampleV2", ParseExampleKernel);
}

}  // namespace tfjit::runtime
