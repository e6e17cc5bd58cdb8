// Printing and writing of fetched tensors for the tfjit CLI (summary lines, .npy + manifest).
#ifndef TFJIT_EXAMPLES_CLI_OUTPUT_H_
#define TFJIT_EXAMPLES_CLI_OUTPUT_H_

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "tfjit/tensor.h"

namespace tfjit::cli {

// "name dtype[dims] first values ... sum=<checksum>".
std::string DescribeTensor(const std::string& name, const Tensor& t);
// `name` with '/' and ':' replaced by '_', plus ".npy".
std::string OutputFileName(const std::string& name);
// Writes each tensor as .npy into `dir` plus manifest.json (name, dtype, shape, file).
absl::Status WriteOutputs(const std::string& dir, const std::vector<std::string>& names,
                          const std::vector<Tensor>& tensors);
// Deterministic pseudo-random tensor (floats in [-1, 1), ints in [0, 10), bools).
Tensor RandomTensor(DType dtype, const std::vector<int64_t>& dims, uint64_t seed);

}  // namespace tfjit::cli

#endif  // TFJIT_EXAMPLES_CLI_OUTPUT_H_
