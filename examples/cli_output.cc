// Tensor descriptions, output files and random inputs for the tfjit CLI.
#include "examples/cli_output.h"

#include <cstdio>
#include <filesystem>
#include <fstream>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "core/dtype.h"
#include "core/file_system.h"
#include "core/status.h"
#include "runtime/io/npy.h"

namespace tfjit::cli {

std::string DescribeTensor(const std::string& name, const Tensor& t) {
  std::string out = absl::StrCat(name, " ", t.ShapeString());
  const int64_t n = t.num_elements();
  if (IsComplexDType(t.dtype())) {  // "(re,im)" values; the sum of each part
    complex128 sum = 0;
    for (int64_t i = 0; i < n; ++i) sum += ElementAsComplex(t, i);
    absl::StrAppend(&out, " [");
    for (int64_t i = 0; i < std::min<int64_t>(n, 6); ++i) {
      const complex128 c = ElementAsComplex(t, i);
      absl::StrAppend(&out, i > 0 ? ", " : "", absl::StrFormat("(%.6g,%.6g)", c.real(), c.imag()));
    }
    absl::StrAppend(&out, n > 6 ? ", ...]" : "]",
                    absl::StrFormat(" sum=(%.9g,%.9g)", sum.real(), sum.imag()));
    return out;
  }
  if (!IsNumericDType(t.dtype())) return out;
  const bool is_float = IsFloatingDType(t.dtype());
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += ElementAsDouble(t, i);
  absl::StrAppend(&out, " [");
  for (int64_t i = 0; i < std::min<int64_t>(n, 6); ++i) {
    if (i > 0) absl::StrAppend(&out, ", ");
    if (is_float) {
      absl::StrAppend(&out, absl::StrFormat("%.6g", ElementAsDouble(t, i)));
    } else {
      absl::StrAppend(&out, ElementAsInt64(t, i));
    }
  }
  absl::StrAppend(&out, n > 6 ? ", ...]" : "]", absl::StrFormat(" sum=%.9g", sum));
  return out;
}

std::string OutputFileName(const std::string& name) {
  return absl::StrCat(absl::StrReplaceAll(name, {{"/", "_"}, {":", "_"}}), ".npy");
}

absl::Status WriteOutputs(const std::string& dir, const std::vector<std::string>& names,
                          const std::vector<Tensor>& tensors) {
  if (absl::Status made = Files().CreateDirectories(dir); !made.ok()) {
    return InvalidArgument("cannot create output directory '%s': %s", dir, made.message());
  }
  std::string manifest = "[\n";
  // Distinct fetches never share a file: "X:1" and a node named "X_1" both map to X_1.npy, so
  // the second becomes X_1.2.npy (the manifest names each file).
  absl::flat_hash_set<std::string> used;
  for (size_t i = 0; i < tensors.size(); ++i) {
    const std::string base = OutputFileName(names[i]);
    std::string file = base;
    for (int k = 2; used.contains(file); ++k) {
      file = absl::StrCat(base.substr(0, base.size() - 4), ".", k, ".npy");
    }
    used.insert(file);
    // .npy has no bfloat16: such outputs are widened to float32, which holds every bfloat16
    // value exactly; the manifest says so ("stored_as").
    const Tensor& t = tensors[i];
    std::string stored_as;
    if (t.dtype() == DType::kBFloat16) {
      Tensor wide(DType::kFloat32, t.dims());
      for (int64_t k = 0; k < t.num_elements(); ++k) {
        wide.data<float>()[k] = static_cast<float>(ElementAsDouble(t, k));
      }
      TFJIT_RETURN_IF_ERROR(runtime::WriteNpy(dir + "/" + file, wide));
      stored_as = ", \"stored_as\": \"float32\"";
    } else {
      TFJIT_RETURN_IF_ERROR(runtime::WriteNpy(dir + "/" + file, t));
    }
    absl::StrAppend(&manifest, "  {\"name\": \"", names[i], "\", \"dtype\": \"",
                    DTypeName(t.dtype()), "\"", stored_as, ", \"shape\": [",
                    absl::StrJoin(t.dims(), ", "), "], \"file\": \"", file, "\"}",
                    i + 1 < tensors.size() ? ",\n" : "\n");
  }
  absl::StrAppend(&manifest, "]\n");
  absl::StatusOr<Published> written = WriteFileAtomically(dir + "/manifest.json", manifest);
  if (!written.ok()) {
    return InvalidArgument("cannot write '%s/manifest.json': %s", dir, written.status().message());
  }
  return absl::OkStatus();
}

Tensor RandomTensor(DType dtype, const std::vector<int64_t>& dims, uint64_t seed) {
  Tensor t(dtype, dims);
  uint64_t state = seed * 0x9E3779B97F4A7C15ull + 1;
  auto next = [&state] {  // splitmix64
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  };
  DispatchNumeric(dtype, [&](auto tag) {
    using T = decltype(tag);
    T* data = t.data<T>();
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      const uint64_t r = next();
      if constexpr (std::is_same_v<T, bool>) {
        data[i] = (r & 1) != 0;
      } else if constexpr (std::is_integral_v<T>) {
        data[i] = static_cast<T>(r % 10);
      } else {
        data[i] = static_cast<T>(static_cast<float>((r >> 40) * (1.0 / (1ull << 24)) * 2.0 - 1.0));
      }
    }
  });
  // Complex: both parts uniform in [-1, 1), as for the floats.
  DispatchComplex(dtype, [&](auto tag) {
    using C = decltype(tag);
    using R = typename C::value_type;
    C* data = t.data<C>();
    auto uniform = [&] {
      return static_cast<R>(static_cast<float>((next() >> 40) * (1.0 / (1ull << 24)) * 2.0 - 1.0));
    };
    for (int64_t i = 0; i < t.num_elements(); ++i) {
      const R re = uniform();
      data[i] = C(re, uniform());
    }
  });
  return t;
}

}  // namespace tfjit::cli
