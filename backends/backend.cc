// Helpers shared by every backend's Executable.
#include "backends/backend.h"

#include <atomic>

#include "absl/strings/str_format.h"
#include "core/status.h"

namespace tfjit::backends {

absl::Status CheckArguments(const hlo::Module& module, const std::vector<Tensor>& args) {
  const hlo::Computation& entry = *module.entry();
  if (static_cast<int>(args.size()) != entry.num_parameters()) {
    return InvalidArgument("module '%s' takes %d arguments, got %d", module.name(),
                           entry.num_parameters(), static_cast<int>(args.size()));
  }
  for (int i = 0; i < entry.num_parameters(); ++i) {
    const hlo::Shape& shape = entry.parameter(i)->shape();
    const Tensor& t = args[static_cast<size_t>(i)];
    if (t.dtype() != shape.element_type() || t.dims() != shape.dims()) {
      return InvalidArgument("argument %d of module '%s' must be %s, got %s", i, module.name(),
                             shape.ToString(), t.valid() ? t.ShapeString() : "an invalid tensor");
    }
  }
  return absl::OkStatus();
}

std::string DumpPrefix(const hlo::Module& module) {
  static std::atomic<int> next{0};
  return absl::StrFormat("%s.%04d.", module.name(), next.fetch_add(1));
}

}  // namespace tfjit::backends
