// FunctionRuntime: instantiation cache (function + attrs + jit mode -> body and Plan), the
// body's jit mode, recursion guard, and inline execution of a body for a call node.
#include "runtime/function_runtime.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/dtype.h"
#include "core/status.h"

namespace tfjit::runtime {
namespace {

// Appends the call site, keeping the code, the payloads and the start of the message (TF
// users search for e.g. "Detected unsupported operations when trying to compile graph").
absl::Status InFunction(const absl::Status& status, const std::string& function,
                        const tf::Node& node) {
  absl::Status out(status.code(), absl::StrCat(status.message(), " (in function '", function,
                                               "' called by node '", node.name(), "')"));
  status.ForEachPayload(
      [&](absl::string_view url, const absl::Cord& payload) { out.SetPayload(url, payload); });
  return AttachNode(out, node.name(), node.op());
}

}  // namespace

cluster::JitMode FunctionBodyMode(cluster::JitMode session_mode, std::optional<bool> must_compile,
                                  bool caller_must_compile) {
  if (session_mode == cluster::JitMode::kNone) return cluster::JitMode::kNone;
  if (must_compile.has_value() && !*must_compile) return cluster::JitMode::kNone;
  if (must_compile.value_or(false) || caller_must_compile) return cluster::JitMode::kAll;
  return session_mode;
}

FunctionRuntime::FunctionRuntime(const tf::Graph& graph, cluster::JitMode mode, std::string device,
                                 int logical_cpus, bool autofix)
    : graph_(graph),
      mode_(mode),
      device_(std::move(device)),
      logical_cpus_(logical_cpus),
      autofix_(autofix) {}

Placement FunctionRuntime::BodyPlacement(const std::string& device) const {
  Placement placement(device, logical_cpus_);
  placement.autofix = autofix_;
  placement.min_cluster_size = min_cluster_size_;
  placement.max_cluster_size = max_cluster_size_;
  return placement;
}

size_t FunctionRuntime::num_instances() const {
  std::lock_guard<std::mutex> lock(mu_);
  return instances_.size();
}

absl::StatusOr<std::shared_ptr<const FunctionRuntime::Instance>> FunctionRuntime::GetInstance(
    const tf::FunctionCall& call, cluster::JitMode mode, bool must_compile,
    const std::string& device) {
  const std::string& name = call.function->signature().name();
  // The body runs on the call site's device: one instance (and Plan) per device.
  const std::string key = absl::StrCat(tf::FunctionInstanceKey(name, call.attrs),
                                       "|jit=", cluster::JitModeName(mode), "|on=", device);
  // One lock for lookup and instantiation: instantiating never runs a body, so it never
  // re-enters this runtime.
  std::lock_guard<std::mutex> lock(mu_);
  auto it = instances_.find(key);
  if (it != instances_.end()) return it->second;
  auto instance = std::make_shared<Instance>();
  instance->key = key;
  instance->must_compile = must_compile;
  // A body that must compile is one unit with the functions it calls (XLA inlines them), so
  // lists, resources and RNG state pass between them inside the compiled code. Auto mode
  // inlines plain calls too, as TF's function inlining does before auto-clustering (a
  // tf.function training step's forward, backward and update become one graph, clustered
  // together); calls to jit_compile functions stay calls, with their own semantics.
  TFJIT_ASSIGN_OR_RETURN(
      instance->body,
      tf::InstantiateFunction(graph_.library(), graph_.versions(), name, call.attrs,
                              mode == cluster::JitMode::kAll || mode == cluster::JitMode::kAuto,
                              mode == cluster::JitMode::kAuto));
  const tf::Graph& body = *instance->body.graph;
  std::vector<tf::Output> feeds, fetches;
  for (const std::string& in : instance->body.inputs) {
    TFJIT_ASSIGN_OR_RETURN(tf::Output o, body.FindOutput(in));
    feeds.push_back(o);
  }
  std::vector<std::string> fetch_names = instance->body.outputs;
  instance->num_outputs = fetch_names.size();
  if (!instance->body.control_sink.empty()) fetch_names.push_back(instance->body.control_sink);
  for (const std::string& out : fetch_names) {
    TFJIT_ASSIGN_OR_RETURN(tf::Output o, body.FindOutput(out));
    fetches.push_back(o);
  }
  // A function with no outputs and no control outputs (e.g. an empty cond branch) runs
  // nothing: its plan has no fetches.
  TFJIT_ASSIGN_OR_RETURN(instance->plan,
                         Plan::Build(body, feeds, fetches, mode, BodyPlacement(device)));
  instances_[key] = instance;
  return std::shared_ptr<const Instance>(instance);
}

absl::Status FunctionRuntime::Invoke(const tf::Node& node, const tf::FunctionCall& call,
                                     std::optional<bool> must_compile_attr,
                                     const std::vector<Tensor>& inputs, const ExecContext& ctx,
                                     std::vector<Tensor>* outputs, RunStats* stats,
                                     absl::string_view tin_hint) {
  const std::string& name = call.function->signature().name();
  std::vector<std::string> chain = {name};
  for (const CallFrame* f = ctx.call_stack; f != nullptr; f = f->caller) {
    chain.push_back(f->function);
    if (f->function == name) {
      std::reverse(chain.begin(), chain.end());
      return AttachNode(InvalidArgument("node %s: function '%s' calls itself (%s); recursive "
                                        "functions are not supported",
                                        node.DebugName(), name, absl::StrJoin(chain, " -> ")),
                        node.name(), node.op());
    }
  }
  const bool caller_must_compile = ctx.call_stack != nullptr && ctx.call_stack->must_compile;
  const cluster::JitMode mode = FunctionBodyMode(mode_, must_compile_attr, caller_must_compile);
  const bool must_compile = mode == cluster::JitMode::kAll;
  const std::string& device = ctx.device.empty() ? device_ : ctx.device;
  absl::StatusOr<std::shared_ptr<const Instance>> instance =
      GetInstance(call, mode, must_compile, device);
  if (!instance.ok()) return InFunction(instance.status(), name, node);
  const tf::FunctionBody& body = (*instance)->body;
  if (inputs.size() != body.inputs.size()) {
    return AttachNode(InvalidArgument("node %s passes %d input(s) to function '%s', which takes "
                                      "%d",
                                      node.DebugName(), inputs.size(), name, body.inputs.size()),
                      node.name(), node.op());
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const DType want = body.graph->FindNode(body.inputs[i].substr(0, body.inputs[i].rfind(':')))
                           ->output_types()[0];
    if (inputs[i].dtype() != want) {
      return AttachNode(InvalidArgument("node %s: input %d is %s, but function '%s' takes %s "
                                        "for it; %s",
                                        node.DebugName(), i, DTypeName(inputs[i].dtype()), name,
                                        DTypeName(want), tin_hint),
                        node.name(), node.op());
    }
  }
  CallFrame frame{name, must_compile, ctx.call_stack};
  ExecContext inner = ctx;
  inner.inter_op = nullptr;  // a body waiting on the pool from a pool thread could deadlock
  inner.call_stack = &frame;
  inner.key_prefix = absl::StrCat((*instance)->key, "|");
  RunStats body_stats;
  absl::StatusOr<std::vector<Tensor>> result = (*instance)->plan->Run(inputs, inner, &body_stats);
  if (!result.ok()) return InFunction(result.status(), name, node);
  outputs->assign(result->begin(), result->begin() + static_cast<long>((*instance)->num_outputs));
  if (stats != nullptr) *stats = body_stats;
  return absl::OkStatus();
}

absl::Status FunctionRuntime::Call(const tf::Node& node, const std::vector<Tensor>& inputs,
                                   const ExecContext& ctx, std::vector<Tensor>* outputs,
                                   RunStats* stats) {
  TFJIT_ASSIGN_OR_RETURN(tf::FunctionCall call, tf::GetFunctionCall(node));
  const std::string& name = call.function->signature().name();
  TFJIT_RETURN_IF_ERROR(Invoke(node, call, tf::CallMustCompileAttr(node), inputs, ctx, outputs,
                               stats, "fix attr Tin"));
  for (int k = 0; k < node.num_outputs(); ++k) {
    if (k >= static_cast<int>(outputs->size()) || (*outputs)[k].dtype() != node.output_types()[k]) {
      return AttachNode(
          InvalidArgument(
              "node %s: function '%s' returns %s for output %d, but "
              "the node declares %s (attr Tout)",
              node.DebugName(), name,
              k < static_cast<int>(outputs->size()) ? DTypeName((*outputs)[k].dtype()) : "nothing",
              k, DTypeName(node.output_types()[k])),
          node.name(), node.op());
    }
  }
  return absl::OkStatus();
}

absl::Status FunctionRuntime::CallFunction(const tf::Node& call_site, const std::string& fn_attr,
                                           const std::vector<Tensor>& inputs,
                                           const ExecContext& ctx, std::vector<Tensor>* outputs,
                                           RunStats* stats) {
  auto attr = call_site.def().attr().find(fn_attr);
  if (attr == call_site.def().attr().end() || !attr->second.has_func()) {
    return AttachNode(
        InvalidArgument("node %s has no function attr '%s'", call_site.DebugName(), fn_attr),
        call_site.name(), call_site.op());
  }
  const tensorflow::NameAttrList& func = attr->second.func();
  tf::FunctionCall call;
  call.function = graph_.FindFunction(func.name());
  if (call.function == nullptr) {
    return AttachNode(NotFound("node %s: function '%s' (attr '%s') is not in the graph's "
                               "function library",
                               call_site.DebugName(), func.name(), fn_attr),
                      call_site.name(), call_site.op());
  }
  call.attrs = func.attr();
  return Invoke(call_site, call, tf::MustCompileAttr(*call.function), inputs, ctx, outputs, stats,
                absl::StrCat("fix the node's input types or function '", func.name(), "'"));
}

}  // namespace tfjit::runtime
