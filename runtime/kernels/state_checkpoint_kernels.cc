// Fallback kernels of TF's checkpoint ops, as a tf.train.Saver (and TF2's checkpointing) runs
// them: SaveV2 writes a tensor bundle (frontend/tensor_bundle.h's BundleWriter: the format TF
// reads), RestoreV2 reads one back with the dtypes its attr names, MergeV2Checkpoints joins the
// bundles of a sharded save into one. Whole tensors only: a non-empty shape_and_slices
// (partitioned variables) is UNIMPLEMENTED, naming the tensor.
#include <cstdio>
#include <string>
#include <vector>

#include <unistd.h>

#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "core/status.h"
#include "core/string_tensor.h"
#include "frontend/attr.h"
#include "frontend/tensor_bundle.h"
#include "runtime/kernels/kernel.h"
#include "runtime/kernels/kernel_util.h"

namespace tfjit::runtime {
namespace {

// The string values of input `i`, which must be a string tensor of `want` elements (-1: any
// count; 0: a scalar).
absl::StatusOr<std::vector<std::string>> Strings(const KernelContext& ctx, int i, const char* what,
                                                 int64_t want) {
  const std::vector<std::string>* values = StringValues(ctx.input(i));
  if (values == nullptr) {
    return KernelError(ctx, "%s must be a string tensor, got %s", what, ctx.input(i).ShapeString());
  }
  if (want == 0 && ctx.input(i).rank() != 0) {
    return KernelError(ctx, "%s must be a scalar, got %d values", what, values->size());
  }
  if (want > 0 && static_cast<int64_t>(values->size()) != want) {
    return KernelError(ctx, "%s has %d values where %d are needed", what, values->size(), want);
  }
  return *values;
}

// tensor_names and shape_and_slices of SaveV2/RestoreV2 (inputs 1 and 2): equal counts, and
// every slice spec empty (the whole tensor).
absl::StatusOr<std::vector<std::string>> NamesOfWholeTensors(const KernelContext& ctx) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<std::string> names, Strings(ctx, 1, "tensor_names", -1));
  TFJIT_ASSIGN_OR_RETURN(std::vector<std::string> slices,
                         Strings(ctx, 2, "shape_and_slices", static_cast<int64_t>(names.size())));
  for (size_t k = 0; k < slices.size(); ++k) {
    if (!slices[k].empty()) {
      return Unimplemented(
          "node '%s' (%s): tensor '%s' has the slice spec '%s'; partitioned "
          "variables are not supported (save and restore whole tensors)",
          ctx.node().name(), ctx.node().op(), names[k], slices[k]);
    }
  }
  return names;
}

absl::Status WithNode(const KernelContext& ctx, absl::Status s) {
  if (s.ok()) return s;
  return AttachNode(
      AppendContext(s, absl::StrCat("in node '", ctx.node().name(), "' (", ctx.node().op(), ")")),
      ctx.node().name(), ctx.node().op());
}

absl::Status SaveV2(KernelContext& ctx) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<std::string> prefix, Strings(ctx, 0, "prefix", 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<std::string> names, NamesOfWholeTensors(ctx));
  if (ctx.num_inputs() - 3 != static_cast<int>(names.size())) {
    return KernelError(ctx, "%d tensor_names for %d tensors", names.size(), ctx.num_inputs() - 3);
  }
  tf::BundleWriter writer(prefix[0]);
  for (size_t k = 0; k < names.size(); ++k) {
    TFJIT_RETURN_IF_ERROR(WithNode(ctx, writer.Add(names[k], ctx.input(static_cast<int>(k) + 3))));
  }
  return WithNode(ctx, writer.Finish());
}

absl::Status RestoreV2(KernelContext& ctx) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<std::string> prefix, Strings(ctx, 0, "prefix", 0));
  TFJIT_ASSIGN_OR_RETURN(std::vector<std::string> names, NamesOfWholeTensors(ctx));
  TFJIT_ASSIGN_OR_RETURN(std::vector<DType> dtypes, tf::GetTypeListAttr(ctx.node(), "dtypes"));
  if (dtypes.size() != names.size()) {
    return KernelError(ctx, "%d tensor_names for %d dtypes", names.size(), dtypes.size());
  }
  absl::StatusOr<std::unique_ptr<tf::BundleReader>> reader = tf::BundleReader::Open(prefix[0]);
  if (!reader.ok()) return WithNode(ctx, reader.status());
  for (size_t k = 0; k < names.size(); ++k) {
    TFJIT_ASSIGN_OR_RETURN(const tensorflow::BundleEntryProto* entry, (*reader)->Entry(names[k]));
    const std::optional<DType> stored = DTypeFromTfEnum(entry->dtype());
    if (!stored.has_value() || *stored != dtypes[k]) {
      return KernelError(ctx,
                         "tensor_name = %s; expected dtype %s does not equal restored "
                         "dtype %s (checkpoint '%s')",
                         names[k], DTypeName(dtypes[k]), tf::TfDataTypeName(entry->dtype()),
                         (*reader)->index_path());
    }
    absl::StatusOr<Tensor> t = (*reader)->LookupAny(names[k]);
    if (!t.ok()) return WithNode(ctx, t.status());
    ctx.set_output(static_cast<int>(k), *std::move(t));
  }
  return absl::OkStatus();
}

// Every file of the bundle at `prefix`: its index and data shards.
std::vector<std::string> BundleFiles(const tf::BundleReader& reader) {
  std::vector<std::string> files = {reader.index_path()};
  for (int s = 0; s < reader.num_shards(); ++s) files.push_back(reader.DataPath(s));
  return files;
}

absl::Status MergeV2Checkpoints(KernelContext& ctx) {
  TFJIT_ASSIGN_OR_RETURN(std::vector<std::string> sources,
                         Strings(ctx, 0, "checkpoint_prefixes", -1));
  TFJIT_ASSIGN_OR_RETURN(std::vector<std::string> destination,
                         Strings(ctx, 1, "destination_prefix", 0));
  TFJIT_ASSIGN_OR_RETURN(bool delete_old_dirs,
                         tf::GetBoolAttrOr(ctx.node(), "delete_old_dirs", true));
  TFJIT_ASSIGN_OR_RETURN(bool allow_missing,
                         tf::GetBoolAttrOr(ctx.node(), "allow_missing_files", false));
  tf::BundleWriter writer(destination[0]);
  std::vector<std::string> merged_files;
  for (const std::string& source : sources) {
    absl::StatusOr<std::unique_ptr<tf::BundleReader>> reader = tf::BundleReader::Open(source);
    if (!reader.ok()) {
      if (allow_missing && absl::IsNotFound(reader.status())) continue;
      return WithNode(ctx, reader.status());
    }
    for (const std::string& key : (*reader)->ListKeys()) {
      absl::StatusOr<Tensor> t = (*reader)->LookupAny(key);
      if (!t.ok()) return WithNode(ctx, t.status());
      TFJIT_RETURN_IF_ERROR(WithNode(ctx, writer.Add(key, *t)));
    }
    for (const std::string& file : BundleFiles(**reader)) merged_files.push_back(file);
  }
  TFJIT_RETURN_IF_ERROR(WithNode(ctx, writer.Finish()));
  // TF removes the merged inputs, then (delete_old_dirs) their folders when empty.
  for (const std::string& file : merged_files) std::remove(file.c_str());
  if (delete_old_dirs) {
    for (const std::string& source : sources) {
      const size_t slash = source.rfind('/');
      if (slash != std::string::npos && slash > 0) rmdir(source.substr(0, slash).c_str());
    }
  }
  return absl::OkStatus();
}

}  // namespace

void RegisterCheckpointKernels(KernelRegistry& registry) {
  registry.Register("SaveV2", SaveV2);
  registry.Register("RestoreV2", RestoreV2);
  registry.Register("MergeV2Checkpoints", MergeV2Checkpoints);
}

}  // namespace tfjit::runtime
