// ListOps / DescribeOp (include/tfjit/ops.h): the op catalog joined with the fallback kernels
// and the lowering table.
#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "compiler/tf2hlo/op_lowerings.h"
#include "core/dtype.h"
#include "core/status.h"
#include "frontend/op_catalog.h"
#include "frontend/tensor_proto.h"
#include "runtime/kernels/kernel.h"
#include "tfjit/ops.h"

namespace tfjit {
namespace {

const runtime::KernelRegistry& Kernels() {
  static const runtime::KernelRegistry* registry = [] {
    auto* r = new runtime::KernelRegistry();
    runtime::RegisterAllKernels(*r);
    return r;
  }();
  return *registry;
}

std::string ArgText(const tf::ArgDef& arg) {
  std::string type;
  if (!arg.type_list_attr.empty()) {
    type = absl::StrCat("[", arg.type_list_attr, "]");
  } else {
    type = arg.type_attr.empty() ? std::string(DTypeName(arg.fixed_type)) : arg.type_attr;
    if (!arg.number_attr.empty()) type = absl::StrCat(arg.number_attr, " * ", type);
  }
  return absl::StrCat(arg.name, ": ", type);
}

std::string AttrText(const tensorflow::AttrValue& v) {
  switch (v.value_case()) {
    case tensorflow::AttrValue::kB:
      return v.b() ? "true" : "false";
    case tensorflow::AttrValue::kI:
      return absl::StrCat(v.i());
    case tensorflow::AttrValue::kF:
      return absl::StrCat(v.f());
    case tensorflow::AttrValue::kS:
      return absl::StrCat("\"", v.s(), "\"");
    case tensorflow::AttrValue::kType:
      return tf::TfDataTypeName(v.type());
    case tensorflow::AttrValue::kShape:
      return v.shape().unknown_rank() ? "<unknown rank>" : "<shape>";
    case tensorflow::AttrValue::kList: {
      std::vector<std::string> items;
      for (int64_t i : v.list().i()) items.push_back(absl::StrCat(i));
      for (const std::string& s : v.list().s()) items.push_back(absl::StrCat("\"", s, "\""));
      return absl::StrCat("[", absl::StrJoin(items, ", "), "]");
    }
    default:
      return "<none>";
  }
}

// TF1 frame ops: the executor runs them itself (runtime/frame_executor.cc), with no kernel.
bool RunByTheExecutor(const std::string& op) {
  return op == "Enter" || op == "Exit" || op == "NextIteration" || op == "Merge" ||
         op == "Switch" || op == "LoopCond";
}

OpSupport Describe(const tf::OpDef& def) {
  OpSupport op;
  op.name = def.name;
  op.family = def.family;
  op.kernel = Kernels().Find(def.name) != nullptr || RunByTheExecutor(def.name);
  const tf2hlo::OpLowering* lowering = tf2hlo::FindOpLowering(def.name);
  // An entry that only keeps the op in the runtime, with a reason for `explain`, is no lowering.
  if (lowering != nullptr && lowering->fn == &tf2hlo::KernelOnlyLowering) lowering = nullptr;
  const tf2hlo::OpLowering* complex = tf2hlo::FindComplexLowering(def.name);
  op.cpu = lowering != nullptr || complex != nullptr;
  op.gpu = op.cpu;
  std::vector<std::string> notes;
  if (lowering != nullptr) {
    if (lowering->float_only) notes.push_back("float types only");
    if (lowering->can_lower != nullptr) notes.push_back("some attribute values stay uncompiled");
  }
  if (complex != nullptr && lowering != nullptr) {
    notes.push_back("complex64/complex128 compile too");
  } else if (lowering != nullptr) {
    bool takes_complex = false;
    for (const tf::TypeConstraint& c : def.type_constraints) {
      for (DType t : c.allowed) takes_complex |= IsComplexDType(t);
    }
    if (takes_complex) notes.push_back("complex64/complex128 run on the kernel");
  }
  op.compile_note = absl::StrJoin(notes, "; ");
  for (const tf::TypeConstraint& c : def.type_constraints) {
    std::vector<std::string> names;
    for (DType t : c.allowed) names.push_back(DTypeName(t));
    op.dtypes.push_back({c.attr, names});
  }
  for (const tf::RegistryTypes& r : tf::TfRegistryTypes()) {
    if (r.op != def.name) continue;
    bool constrained = false;
    for (const tf::TypeConstraint& c : def.type_constraints) constrained |= c.attr == r.attr;
    if (constrained) continue;
    std::vector<std::string> names;
    for (absl::string_view n : absl::StrSplit(r.allowed, ',')) {
      // TF's spelling, with tfjit's names for the float types.
      names.push_back(n == "*"        ? "any"
                      : n == "half"   ? "float16"
                      : n == "float"  ? "float32"
                      : n == "double" ? "float64"
                                      : std::string(n));
    }
    op.registry_dtypes.push_back({r.attr, names});
  }
  for (const tf::ArgDef& a : def.inputs) op.inputs.push_back(ArgText(a));
  for (const tf::ArgDef& a : def.outputs) op.outputs.push_back(ArgText(a));
  for (const tf::AttrDefault& a : def.attr_defaults) {
    op.attr_defaults.push_back({a.name, AttrText(a.value)});
  }
  for (int i : def.compile_time_const_inputs) {
    if (i >= 0 && i < static_cast<int>(def.inputs.size())) {
      op.constant_inputs.push_back(def.inputs[static_cast<size_t>(i)].name);
    }
  }
  for (int i : def.host_memory_inputs) {
    if (i >= 0 && i < static_cast<int>(def.inputs.size())) {
      op.host_memory.push_back(absl::StrCat("input ", def.inputs[static_cast<size_t>(i)].name));
    }
  }
  for (int i : def.host_memory_outputs) {
    if (i >= 0 && i < static_cast<int>(def.outputs.size())) {
      op.host_memory.push_back(absl::StrCat("output ", def.outputs[static_cast<size_t>(i)].name));
    }
  }
  op.stateful = def.is_stateful;
  return op;
}

// Case-insensitive edit distance, for "did you mean".
int Distance(const std::string& a, const std::string& b) {
  std::vector<int> row(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) row[j] = static_cast<int>(j);
  for (size_t i = 1; i <= a.size(); ++i) {
    int diag = row[0];
    row[0] = static_cast<int>(i);
    for (size_t j = 1; j <= b.size(); ++j) {
      const int up = row[j];
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (same ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::vector<OpSupport> ListOps() {
  std::vector<OpSupport> ops;
  for (const std::string& name : tf::KnownOps()) ops.push_back(Describe(*tf::LookupOpDef(name)));
  return ops;
}

StatusOr<OpSupport> DescribeOp(const std::string& name) {
  if (const tf::OpDef* def = tf::LookupOpDef(name)) return Describe(*def);
  std::vector<std::pair<int, std::string>> close;
  for (const std::string& known : tf::KnownOps()) {
    const int d = Distance(name, known);
    if (d <= std::max<int>(2, static_cast<int>(name.size()) / 4)) close.push_back({d, known});
  }
  std::sort(close.begin(), close.end());
  std::vector<std::string> names;
  for (size_t i = 0; i < close.size() && i < 5; ++i) names.push_back(close[i].second);
  return NotFound(
      "tfjit does not know the op '%s'%s; 'tfjit ops' lists every op it knows", name,
      names.empty() ? "" : absl::StrCat(" (did you mean ", absl::StrJoin(names, ", "), "?)"));
}

}  // namespace tfjit
