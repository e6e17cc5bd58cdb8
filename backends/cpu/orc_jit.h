// OrcJit: a thin wrapper over LLVM's LLJIT for one compiled executable. Design choice: one
// LLJIT per executable (not one per process), so an executable's code and memory are freed
// with it and executables never share mutable JIT state; creating an LLJIT costs well under a
// millisecond next to O3. Runtime symbols (runtime_abi.h) are defined as absolute symbols and
// everything else (libm, memcpy) resolves against the process.
#ifndef TFJIT_BACKENDS_CPU_ORC_JIT_H_
#define TFJIT_BACKENDS_CPU_ORC_JIT_H_

#include <memory>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace llvm {
namespace orc {
class LLJIT;
}  // namespace orc
}  // namespace llvm

namespace tfjit::cpu {

// Thread safety: AddObject/Lookup may be called from any thread (LLJIT locks internally);
// looked-up code may run concurrently.
class OrcJit {
 public:
  // A JIT for the host CPU; opt_level >= 2 selects CodeGenOptLevel::Aggressive.
  static absl::StatusOr<std::unique_ptr<OrcJit>> Create(int opt_level);
  ~OrcJit();

  // Links a relocatable object file for the host (llvm_ir::EmitObjectFile, or one loaded
  // from the disk cache) into the JIT; its symbols resolve on the first Lookup.
  absl::Status AddObject(absl::string_view object);
  // Address of a defined function; links on first lookup. INTERNAL if missing.
  absl::StatusOr<void*> Lookup(absl::string_view name);

 private:
  explicit OrcJit(std::unique_ptr<llvm::orc::LLJIT> jit);
  std::unique_ptr<llvm::orc::LLJIT> jit_;
};

}  // namespace tfjit::cpu

#endif  // TFJIT_BACKENDS_CPU_ORC_JIT_H_
