// Helpers shared by every backend's Executable.
#include "backends/backend.h"

#include <atomic>

#include "absl/strings/str_format.h"
#include "compiler/hlo/symbolic.h"
#include "core/status.h"

namespace tfjit::backends {

absl::StatusOr<std::unique_ptr<Executable>> Backend::CompileSymbolic(
    std::vector<BatchProbeModule> probes) const {
  return Unimplemented("the %s backend compiles a cluster per batch size only", name());
}

absl::StatusOr<std::unique_ptr<hlo::Module>> OptimizeAndSymbolize(
    std::vector<BatchProbeModule>& probes,
    const std::function<absl::Status(hlo::Module&)>& optimize) {
  std::vector<hlo::BatchProbe> views;
  for (BatchProbeModule& p : probes) {
    TFJIT_RETURN_IF_ERROR(optimize(*p.module));
    views.push_back({p.batch, p.module.get()});
  }
  return hlo::Symbolize(views);
}

absl::StatusOr<int64_t> ArgumentsBatch(const hlo::Module& module, const std::vector<Tensor>& args) {
  if (module.batch_representative() == 0) return 0;
  const hlo::Computation& entry = *module.entry();
  int64_t batch = -1;
  int from = -1;
  for (int i = 0; i < entry.num_parameters() && static_cast<size_t>(i) < args.size(); ++i) {
    const hlo::Shape& shape = entry.parameter(i)->shape();
    const Tensor& t = args[static_cast<size_t>(i)];
    if (!shape.has_symbolic_dim0() || t.rank() < 1) continue;
    const hlo::SymbolicExtent& e = shape.symbolic_dim0();
    const int64_t rows = t.dim(0) - e.c;
    if (rows < 0 || rows % e.k != 0) {
      return InvalidArgument(
          "argument %d of module '%s' must be %s for some batch size b, got %s (dim 0 %d is "
          "not %s)",
          i, module.name(), shape.ToString(), t.ShapeString(), t.dim(0), e.ToString());
    }
    const int64_t b = rows / e.k;
    if (batch >= 0 && b != batch) {
      return InvalidArgument(
          "the arguments of module '%s' disagree on the batch size: argument %d gives %d, "
          "argument %d gives %d",
          module.name(), from, batch, i, b);
    }
    batch = b;
    from = i;
  }
  if (batch < 0) {
    return InvalidArgument("module '%s' has symbolic shapes but no argument gives the batch size",
                           module.name());
  }
  return batch;
}

absl::Status CheckArguments(const hlo::Module& module, const std::vector<Tensor>& args,
                            int64_t* batch) {
  const hlo::Computation& entry = *module.entry();
  if (static_cast<int>(args.size()) != entry.num_parameters()) {
    return InvalidArgument("module '%s' takes %d arguments, got %d", module.name(),
                           entry.num_parameters(), static_cast<int>(args.size()));
  }
  TFJIT_ASSIGN_OR_RETURN(const int64_t b, ArgumentsBatch(module, args));
  if (batch != nullptr) *batch = b;
  for (int i = 0; i < entry.num_parameters(); ++i) {
    const hlo::Shape& declared = entry.parameter(i)->shape();
    const Tensor& t = args[static_cast<size_t>(i)];
    const hlo::Shape at_batch = declared.IsSymbolic() ? declared.AtBatch(b) : declared;
    if (t.dtype() != declared.element_type() || t.dims() != at_batch.dims()) {
      return InvalidArgument("argument %d of module '%s' must be %s, got %s", i, module.name(),
                             declared.ToString(),
                             t.valid() ? t.ShapeString() : "an invalid tensor");
    }
  }
  return absl::OkStatus();
}

std::string DumpPrefix(const hlo::Module& module) {
  static std::atomic<int> next{0};
  return absl::StrFormat("%s.%04d.", module.name(), next.fetch_add(1));
}

}  // namespace tfjit::backends
