// What tfjit knows of each TF op: whether it has a fallback kernel, whether it compiles (CPU,
// GPU), its dtypes, attributes and compile-time-constant inputs. `tfjit ops` prints it.
#ifndef TFJIT_INCLUDE_TFJIT_OPS_H_
#define TFJIT_INCLUDE_TFJIT_OPS_H_

#include <string>
#include <utility>
#include <vector>

#include "tfjit/status.h"

namespace tfjit {

struct OpSupport {
  std::string name;
  // The op's family (docs/DESIGN.md, "Op families"), e.g. "nn", "linalg", "gradients".
  std::string family;
  // Runs outside compiled clusters (--jit none/off, and ops auto-clustering leaves out).
  bool kernel = false;
  // Compiles into a cluster for the CPU backend (--jit auto/all).
  bool cpu = false;
  // Compiles for GPU:N: the GPU backend runs every lowered op's HLO (library routines such as
  // top-k as host steps between device steps).
  bool gpu = false;
  // Why the compiled form is limited, when it is (e.g. "float types only").
  std::string compile_note;
  // The dtypes TF registers for each constrained type attr ("T": float16, bfloat16, ...).
  std::vector<std::pair<std::string, std::vector<std::string>>> dtypes;
  // For type attrs the catalog does not constrain: the dtypes TF 2.4's op registry allows
  // ("any" when it allows every type), as information (newer TF allows more for some ops). The
  // fallback kernels run each numeric one (tests/tf/op_dtype_sweep.cc).
  std::vector<std::pair<std::string, std::vector<std::string>>> registry_dtypes;
  // Signature, as in TF's REGISTER_OP: "features: T", "values: N * T", "shape: int32".
  std::vector<std::string> inputs;
  std::vector<std::string> outputs;
  // Attributes with defaults: name and value in text form.
  std::vector<std::pair<std::string, std::string>> attr_defaults;
  // Inputs that must be compile-time constants when the op compiles (known issue F), by name.
  std::vector<std::string> constant_inputs;
  // Inputs and outputs TF keeps in host memory on a GPU, by name.
  std::vector<std::string> host_memory;
  bool stateful = false;
};

// Every op in tfjit's catalog, sorted by name.
std::vector<OpSupport> ListOps();
// One op; NOT_FOUND (naming close matches) when tfjit does not know it.
StatusOr<OpSupport> DescribeOp(const std::string& name);

}  // namespace tfjit

#endif  // TFJIT_INCLUDE_TFJIT_OPS_H_
