// Session: loads a model, validates feeds, caches one Plan per (feeds, fetches) signature and
// runs it. Implements include/tfjit/session.h.
#include "tfjit/session.h"

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <map>
#include <mutex>
#include <numeric>
#include <regex>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/gpu/gpu_backend.h"
#include "backends/interpreter/interpreter_backend.h"
#include "compiler/cluster/clustering.h"
#include "compiler/rules/rule.h"
#include "core/dtype.h"
#include "core/run_control.h"
#include "core/status.h"
#include "core/string_tensor.h"
#include "frontend/attr.h"
#include "frontend/function.h"
#include "frontend/functionalize.h"
#include "frontend/model.h"
#include "frontend/tensor_bundle.h"
#include "runtime/compilation_cache.h"
#include "runtime/device.h"
#include "runtime/executor.h"
#include "runtime/function_runtime.h"
#include "runtime/kernels/kernel.h"

namespace tfjit {
namespace {

// One entry per key(entry), later entries added into the first with add(first, later),
// slowest first.
template <typename Entry, typename KeyFn, typename AddFn>
void MergeSlowestFirst(std::vector<Entry>& entries, KeyFn key, AddFn add) {
  absl::flat_hash_map<decltype(key(entries[0])), size_t> index;
  std::vector<Entry> merged;
  for (Entry& e : entries) {
    auto [it, inserted] = index.emplace(key(e), merged.size());
    if (inserted) {
      merged.push_back(std::move(e));
    } else {
      Entry& m = merged[it->second];
      m.calls += e.calls;
      m.ms += e.ms;
      add(m, e);
    }
  }
  std::stable_sort(merged.begin(), merged.end(),
                   [](const Entry& a, const Entry& b) { return a.ms > b.ms; });
  entries = std::move(merged);
}

// One entry per unit (name and kind), and per kernel name inside a unit: calls and totals
// summed, slowest first.
void MergeProfile(std::vector<UnitProfile>& profile) {
  MergeSlowestFirst(
      profile, [](const UnitProfile& p) { return std::make_pair(p.name, p.kind); },
      [](UnitProfile& m, UnitProfile& p) {
        m.input_bytes += p.input_bytes;
        m.output_bytes += p.output_bytes;
        for (KernelProfile& k : p.kernels) m.kernels.push_back(std::move(k));
      });
  for (UnitProfile& m : profile) {
    MergeSlowestFirst(
        m.kernels, [](const KernelProfile& k) { return k.name; },
        [](KernelProfile& m, const KernelProfile& k) {
          m.bytes += k.bytes;
          m.flops += k.flops;
        });
  }
}

cluster::JitMode ToClusterMode(JitMode mode) {
  switch (mode) {
    case JitMode::kNone:
      return cluster::JitMode::kNone;
    case JitMode::kOff:
      return cluster::JitMode::kOff;
    case JitMode::kAuto:
      return cluster::JitMode::kAuto;
    case JitMode::kAll:
      return cluster::JitMode::kAll;
  }
  return cluster::JitMode::kAuto;
}

JitMode FromClusterMode(cluster::JitMode mode) {
  switch (mode) {
    case cluster::JitMode::kNone:
      return JitMode::kNone;
    case cluster::JitMode::kOff:
      return JitMode::kOff;
    case cluster::JitMode::kAuto:
      return JitMode::kAuto;
    case cluster::JitMode::kAll:
      return JitMode::kAll;
  }
  return JitMode::kAuto;
}

// Nodes a loader added (frontend/model.h): not user inputs or outputs.
bool IsLoaderNode(const tf::Node& node) {
  return absl::StrContains(node.name(), tf::kLoaderNodeSuffix);
}

std::string DimsString(const std::vector<int64_t>& dims) {
  std::vector<std::string> parts;
  for (int64_t d : dims) parts.push_back(d < 0 ? "?" : absl::StrCat(d));
  return absl::StrCat("[", absl::StrJoin(parts, ","), "]");
}

}  // namespace

// One spelling of the modes: the clustering pass's, which its messages and cache keys use.
const char* JitModeName(JitMode mode) { return cluster::JitModeName(ToClusterMode(mode)); }

StatusOr<JitMode> ParseJitMode(const std::string& text) {
  TFJIT_ASSIGN_OR_RETURN(cluster::JitMode mode, cluster::ParseJitMode(text));
  return FromClusterMode(mode);
}

const char* ShapeModeName(ShapeMode mode) {
  switch (mode) {
    case ShapeMode::kStatic:
      return "static";
    case ShapeMode::kAuto:
      return "auto";
    case ShapeMode::kSymbolic:
      return "symbolic";
  }
  return "?";
}

StatusOr<ShapeMode> ParseShapeMode(const std::string& text) {
  for (ShapeMode m : {ShapeMode::kStatic, ShapeMode::kAuto, ShapeMode::kSymbolic}) {
    if (text == ShapeModeName(m)) return m;
  }
  return InvalidArgument("unknown shapes mode '%s'; use static, auto or symbolic", text);
}

// What explain plans: the fetches and targets, every Placeholder as a feed, the session's jit
// mode.
struct ExplainInputs {
  std::vector<tf::Output> fetches;
  std::vector<const tf::Node*> targets;
  std::vector<tf::Output> feeds;
  cluster::JitMode mode;
};

namespace {

// The options' ranges and the paths and patterns they name, before anything is loaded.
absl::Status CheckSessionOptions(const SessionOptions& options) {
  if (options.logical_cpus < 1) {
    return InvalidArgument("logical_cpus must be >= 1, got %d", options.logical_cpus);
  }
  for (int64_t bucket : options.batch_buckets) {
    if (bucket < 2) {
      return InvalidArgument(
          "batch_buckets must hold batch sizes >= 2 (smaller ones never run padded), got %d",
          bucket);
    }
  }
  if (options.min_cluster_size < 1 || options.max_cluster_size < 0) {
    return InvalidArgument(
        "min_cluster_size must be >= 1 and max_cluster_size >= 0 (0 = no "
        "limit), got %d and %d",
        options.min_cluster_size, options.max_cluster_size);
  }
  if (!options.dump_dir.empty()) {
    std::error_code error;
    std::filesystem::create_directories(options.dump_dir, error);
    if (error) {
      return InvalidArgument("dump_dir '%s' cannot be created: %s", options.dump_dir,
                             error.message());
    }
  }
  if (!options.dump_hlo_pass_regex.empty()) {
    try {
      std::regex check(options.dump_hlo_pass_regex, std::regex::ECMAScript);
    } catch (const std::regex_error& e) {
      return InvalidArgument("dump_hlo_pass_regex '%s' is not a valid regular expression: %s",
                             options.dump_hlo_pass_regex, e.what());
    }
  }
  if (options.backend_optimization_level < 0 || options.backend_optimization_level > 3) {
    return InvalidArgument(
        "backend_optimization_level must be 0, 1, 2 or 3 (LLVM's -O level), "
        "got %d",
        options.backend_optimization_level);
  }
  if (options.memory_limit_bytes < 0 || options.run_timeout_ms < 0) {
    return InvalidArgument(
        "memory_limit_bytes and run_timeout_ms must be >= 0 (0 = no limit), "
        "got %d and %d",
        options.memory_limit_bytes, options.run_timeout_ms);
  }
  return absl::OkStatus();
}

}  // namespace

struct Session::Impl {
  SessionOptions options;
  runtime::DeviceName device;
  std::unique_ptr<tf::Graph> graph;
  std::vector<tf::Signature> signatures;     // all of the model's
  const tf::Signature* signature = nullptr;  // the one names resolve against, or none
  runtime::KernelRegistry kernels;
  std::unique_ptr<backends::Backend> backend;
  std::vector<std::unique_ptr<backends::Backend>> gpu_backends;  // per GPU the driver reports
  runtime::CompilationCache cache;
  runtime::KernelStateStore kernel_state;
  runtime::ResourceMgrSet resources;  // variables, per device; persist across runs
  std::unique_ptr<ThreadPool> inter_op;
  std::unique_ptr<ThreadPool> intra_op;
  std::unique_ptr<runtime::FunctionRuntime> functions;  // bodies of called functions
  std::mutex plans_mu;
  // Per feed/fetch/target key: the plan and the learned-exclusions generation it was built at.
  absl::flat_hash_map<std::string, std::pair<std::shared_ptr<runtime::Plan>, int>> plans;
  // Nodes whose auto cluster failed to compile (runtime::LearnedExclusions).
  std::shared_ptr<runtime::LearnedExclusions> learned =
      std::make_shared<runtime::LearnedExclusions>();
  // SessionOptions::memory_limit_bytes; null without a cap. Shared with the deleters of the
  // tensors it was charged for, which may outlive the session.
  std::shared_ptr<MemoryBudget> memory;
  // TF1 loops and conditionals turned into While and If nodes (auto and all modes), and what
  // was left as it was, with why (explain prints them).
  int functionalized_loops = 0;
  int functionalized_conds = 0;
  int functionalized_tensor_arrays = 0;
  std::vector<std::pair<std::string, std::string>> loops_left;
  // A SavedModel's checkpoint: keys and the tensors reading the variables (SaveVariables).
  tf::CheckpointVariables checkpoint;

  // Auto and all modes compile TF1 loops as XLA does: each frame becomes a functional While
  // (frontend/functionalize.h) before clustering. Frames that cannot be functionalized, and
  // --jit none/off, keep the frame executor. A graph the rewrite would break keeps its frames.
  // The session's backend (options.backend) and one per visible GPU: clusters placed on a
  // GPU compile for it (the interpreter backend keeps them on the host); a GPU tfjit cannot
  // compile for gets no backend, and no node is placed on it.
  absl::Status CreateBackends(const SessionOptions& options) {
    if (options.backend == "cpu") {
      cpu::CpuBackendOptions cpu_options;
      cpu_options.opt_level = options.backend_optimization_level;
      cpu_options.cache_dir = options.compile_cache_dir;
      if (cpu_options.cache_dir.empty()) {
        const char* env = std::getenv("TFJIT_CACHE_DIR");
        if (env != nullptr) cpu_options.cache_dir = env;
      }
      cpu_options.cache_max_bytes = options.compile_cache_max_bytes;
      cpu_options.dump_dir = options.dump_dir;
      cpu_options.dump_pass_regex = options.dump_hlo_pass_regex;
      backend = cpu::CreateCpuBackend(cpu_options);
    } else if (options.backend == "interpreter") {
      backend = interpreter::CreateInterpreterBackend();
    } else {
      return InvalidArgument("unknown backend '%s'; expected 'cpu' or 'interpreter'",
                             options.backend);
    }
    for (int i = 0; i < gpu::VisibleGpuCount(); ++i) {
      if (!gpu::CheckGpu(i).ok()) {
        gpu_backends.push_back(nullptr);
      } else if (options.backend == "cpu") {
        gpu::GpuBackendOptions gpu_options;
        gpu_options.device_ordinal = i;
        gpu_options.dump_dir = options.dump_dir;
        gpu_options.dump_pass_regex = options.dump_hlo_pass_regex;
        TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<backends::Backend> b,
                               gpu::CreateGpuBackend(gpu_options));
        gpu_backends.push_back(std::move(b));
      } else {
        gpu_backends.push_back(interpreter::CreateInterpreterBackend());
      }
    }
    return absl::OkStatus();
  }

  absl::Status FunctionalizeTf1Loops() {
    bool has_tf1 = false;
    for (const auto& node : graph->nodes()) {
      has_tf1 = has_tf1 || node->op() == "Enter" || node->op() == "RefEnter" ||
                node->op() == "Switch" || node->op() == "RefSwitch" ||
                node->op() == "TensorArrayV3";
    }
    if (!has_tf1) return absl::OkStatus();
    tensorflow::GraphDef def;
    for (const auto& node : graph->nodes()) *def.add_node() = node->def();
    *def.mutable_library() = graph->library();
    *def.mutable_versions() = graph->versions();
    tf::FunctionalizeOptions functionalize;
    // Auto too: an If a cluster cannot compile (branches of different shapes) fails its
    // cluster once and is then left to the runtime (runtime::LearnedExclusions).
    functionalize.conditionals_outside_loops = true;
    TFJIT_ASSIGN_OR_RETURN(tf::FunctionalizeResult result,
                           tf::FunctionalizeLoops(&def, functionalize));
    loops_left = result.left;
    if (result.loops == 0 && result.conds == 0 && result.tensor_arrays == 0) {
      return absl::OkStatus();
    }
    absl::StatusOr<std::unique_ptr<tf::Graph>> rewritten = tf::Graph::Build(def, graph->source());
    if (!rewritten.ok()) {
      loops_left.push_back({"graph", absl::StrCat("the functionalized graph did not build (",
                                                  rewritten.status().message(), ")")});
      return absl::OkStatus();
    }
    graph = std::move(*rewritten);
    functionalized_loops = result.loops;
    functionalized_conds = result.conds;
    functionalized_tensor_arrays = result.tensor_arrays;
    return absl::OkStatus();
  }

  runtime::ExecContext Context() const {
    runtime::ExecContext ctx;
    ctx.kernels = &kernels;
    ctx.backend = backend.get();
    for (const auto& b : gpu_backends) ctx.gpu_backends.push_back(b.get());
    ctx.cache = const_cast<runtime::CompilationCache*>(&cache);
    ctx.inter_op = inter_op.get();
    ctx.intra_op = intra_op.get();
    ctx.dump_dir = options.dump_dir;
    ctx.kernel_state = const_cast<runtime::KernelStateStore*>(&kernel_state);
    ctx.functions = functions.get();
    ctx.resources = const_cast<runtime::ResourceMgrSet*>(&resources);
    ctx.autofix = options.autofix;
    ctx.shapes = options.shapes;
    if (!options.batch_buckets.empty()) ctx.batch_buckets = &options.batch_buckets;
    ctx.show_compile_progress = options.show_compile_progress;
    return ctx;
  }

  // ", e.g. 'a', 'b'": the signatures whose inputs are all numeric.
  std::string OtherSignaturesHint() const {
    std::vector<std::string> names;
    for (const tf::Signature& s : signatures) {
      bool numeric = true;
      for (const tf::TensorSpec& in : s.inputs) numeric = numeric && in.dtype != DType::kString;
      if (numeric && !s.name.starts_with("__")) names.push_back(s.name);
    }
    if (names.empty()) return "";
    return absl::StrCat(", e.g. '", absl::StrJoin(names, "', '"), "'");
  }

  // A signature key names the tensor behind it; any other name is a tensor name.
  std::string TensorNameOf(const std::string& name, bool input, bool graph_names) const {
    if (signature == nullptr || graph_names) return name;
    for (const tf::TensorSpec& spec : input ? signature->inputs : signature->outputs) {
      if (spec.key == name) return spec.tensor;
    }
    return name;
  }

  absl::StatusOr<std::vector<tf::Output>> ResolveAll(const std::vector<std::string>& names,
                                                     const char* what,
                                                     bool graph_names = false) const {
    std::vector<tf::Output> out;
    const bool input = std::string(what) == "feed";
    for (const std::string& name : names) {
      absl::StatusOr<tf::Output> o = graph->FindOutput(TensorNameOf(name, input, graph_names));
      if (!o.ok()) return WithContext(o.status(), absl::StrCat(what, " '", name, "'"));
      out.push_back(*o);
    }
    return out;
  }

  absl::Status CheckFeed(const tf::Output& out, const std::string& name, const Tensor& value) {
    const DType expected = out.node->output_types()[out.index];
    if (expected == DType::kString) {
      // A string value (a checkpoint path for a Saver's save/Const) feeds the kernels that
      // read strings; a numeric one cannot stand in for it.
      if (value.valid() && value.dtype() == DType::kString && StringValues(value) != nullptr) {
        return absl::OkStatus();
      }
      const std::string sig = signature == nullptr
                                  ? std::string()
                                  : absl::StrCat(" of signature '", signature->name, "'");
      return AttachNode(
          InvalidArgument("feed '%s'%s is a string tensor (e.g. serialized "
                          "tf.Example protos, a checkpoint path), got %s: feed a "
                          "string tensor (tfjit::MakeStringTensor)%s",
                          name, sig, value.valid() ? value.ShapeString() : "an empty tensor",
                          OtherSignaturesHint()),
          out.node->name(), out.node->op());
    }
    if (!value.valid() || value.dtype() != expected) {
      return AttachNode(InvalidArgument("feed '%s': expected dtype %s, got %s; convert the "
                                        "input to %s",
                                        name, DTypeName(expected),
                                        value.valid() ? value.ShapeString() : "an empty tensor",
                                        DTypeName(expected)),
                        out.node->name(), out.node->op());
    }
    for (int64_t d : value.dims()) {
      if (d < 0) {
        return AttachNode(InvalidArgument("feed '%s': shape %s has a negative dimension; a fed "
                                          "tensor needs concrete sizes (-1 is only meaningful "
                                          "in a placeholder's declared shape)",
                                          name, value.ShapeString()),
                          out.node->name(), out.node->op());
      }
    }
    if (out.node->op() != "Placeholder") return absl::OkStatus();
    absl::StatusOr<tf::PartialShape> shape = tf::GetShapeAttr(*out.node, "shape");
    if (!shape.ok() || shape->unknown_rank) return absl::OkStatus();
    bool ok = shape->dims.size() == value.dims().size();
    for (size_t i = 0; ok && i < shape->dims.size(); ++i) {
      ok = shape->dims[i] < 0 || shape->dims[i] == value.dims()[i];
    }
    if (!ok) {
      return AttachNode(InvalidArgument("feed '%s': placeholder shape is %s, got %s; feed a "
                                        "tensor of shape %s",
                                        name, DimsString(shape->dims), value.ShapeString(),
                                        DimsString(shape->dims)),
                        out.node->name(), out.node->op());
    }
    return absl::OkStatus();
  }

  absl::StatusOr<ExplainInputs> ForExplain(const std::vector<std::string>& fetch_names) const {
    ExplainInputs in;
    std::vector<std::string> fetches, targets;
    for (const std::string& name : fetch_names) {
      (name.size() > 1 && name[0] == '^' ? targets : fetches).push_back(name);
    }
    TFJIT_ASSIGN_OR_RETURN(in.fetches, ResolveAll(fetches, "fetch"));
    TFJIT_ASSIGN_OR_RETURN(in.targets, ResolveTargets(targets));
    for (const auto& node : graph->nodes()) {
      if (node->op() == "Placeholder") in.feeds.push_back({node.get(), 0});
    }
    in.mode = ToClusterMode(options.jit);
    return in;
  }

  runtime::Placement placement() const {
    runtime::Placement p(device.FullName(), options.logical_cpus);
    p.autofix = options.autofix;
    p.min_cluster_size = options.min_cluster_size;
    p.max_cluster_size = options.max_cluster_size;
    p.learned = learned;
    return p;
  }

  absl::StatusOr<std::vector<const tf::Node*>> ResolveTargets(
      const std::vector<std::string>& names) const {
    std::vector<const tf::Node*> out;
    for (const std::string& name : names) {
      const tf::Node* node = graph->FindNode(name[0] == '^' ? name.substr(1) : name);
      if (node == nullptr) {
        return NotFound("target '%s': no node of that name in the graph", name);
      }
      out.push_back(node);
    }
    return out;
  }

  absl::StatusOr<std::shared_ptr<runtime::Plan>> GetPlan(
      const std::vector<tf::Output>& feeds, const std::vector<std::string>& feed_names,
      const std::vector<tf::Output>& fetches, const std::vector<std::string>& fetch_names,
      const std::vector<const tf::Node*>& targets, const std::vector<std::string>& target_names) {
    std::string key =
        absl::StrCat(absl::StrJoin(feed_names, ","), "->", absl::StrJoin(fetch_names, ","), "^",
                     absl::StrJoin(target_names, ","));
    std::lock_guard<std::mutex> lock(plans_mu);
    // A plan built before a cluster failed to compile is rebuilt without the failing node.
    const int generation = learned->generation();
    auto it = plans.find(key);
    if (it != plans.end() && it->second.second == generation) return it->second.first;
    TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Plan> plan,
                           runtime::Plan::Build(*graph, feeds, fetches, ToClusterMode(options.jit),
                                                placement(), targets));
    std::shared_ptr<runtime::Plan> shared = std::move(plan);
    plans[key] = {shared, generation};
    return shared;
  }

  // graph_names: feeds and fetches are graph tensor names, never signature keys (init runs).
  // run_options: null for init runs (no deadline; the memory cap still applies).
  absl::StatusOr<std::vector<Tensor>> Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                          const std::vector<std::string>& fetches,
                                          const std::vector<std::string>& targets, RunStats* stats,
                                          bool graph_names,
                                          const RunOptions* run_options = nullptr);
};

Session::Session(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
Session::~Session() = default;

const SessionOptions& Session::options() const { return impl_->options; }

StatusOr<std::unique_ptr<Session>> Session::Load(const std::string& model_path,
                                                 const SessionOptions& options) {
  auto impl = std::make_unique<Impl>();
  impl->options = options;
  std::sort(impl->options.batch_buckets.begin(), impl->options.batch_buckets.end());
  impl->options.batch_buckets.erase(
      std::unique(impl->options.batch_buckets.begin(), impl->options.batch_buckets.end()),
      impl->options.batch_buckets.end());
  TFJIT_RETURN_IF_ERROR(CheckSessionOptions(options));
  if (options.memory_limit_bytes > 0) {
    impl->memory = std::make_shared<MemoryBudget>(options.memory_limit_bytes);
  }
  TFJIT_ASSIGN_OR_RETURN(impl->device, runtime::ParseDeviceName(options.device));
  TFJIT_RETURN_IF_ERROR(runtime::DeviceSet(options.logical_cpus).Check(impl->device));
  tf::ModelLoadOptions load_options;
  load_options.tags = options.tags;
  TFJIT_ASSIGN_OR_RETURN(tf::LoadedModel model, tf::LoadModel(model_path, load_options));
  impl->graph = std::move(model.graph);
  impl->signatures = std::move(model.signatures);
  impl->checkpoint = std::move(model.checkpoint);
  if (options.jit == JitMode::kAuto || options.jit == JitMode::kAll) {
    TFJIT_RETURN_IF_ERROR(impl->FunctionalizeTf1Loops());
  }
  {
    tf::LoadedModel view;  // SelectSignature only reads the signatures and the path
    view.path = model_path;
    view.signatures = impl->signatures;
    TFJIT_ASSIGN_OR_RETURN(const tf::Signature* chosen,
                           tf::SelectSignature(view, options.signature));
    if (chosen != nullptr) {
      for (const tf::Signature& s : impl->signatures) {
        if (s.name == chosen->name) impl->signature = &s;
      }
    }
  }
  impl->functions = std::make_unique<runtime::FunctionRuntime>(
      *impl->graph, ToClusterMode(options.jit), impl->device.FullName(), options.logical_cpus,
      options.autofix);
  impl->functions->SetClusterSizes(options.min_cluster_size, options.max_cluster_size);
  runtime::RegisterAllKernels(impl->kernels);
  TFJIT_RETURN_IF_ERROR(impl->CreateBackends(options));
  impl->inter_op = std::make_unique<ThreadPool>(options.inter_op_threads);
  impl->intra_op = std::make_unique<ThreadPool>(options.intra_op_threads);
  std::unique_ptr<Session> session(new Session(std::move(impl)));
  // Restore variables and run init ops, as TF's LoadSavedModel does before returning.
  for (const tf::InitRun& init : model.init) {
    absl::StatusOr<std::vector<Tensor>> done =
        session->impl_->Run(init.feeds, {}, init.targets, nullptr, /*graph_names=*/true);
    if (!done.ok()) return WithContext(done.status(), init.what);
  }
  return session;
}

StatusOr<std::vector<Tensor>> Session::Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                           const std::vector<std::string>& fetches,
                                           RunStats* stats) {
  return Run(feeds, fetches, {}, stats);
}

StatusOr<std::vector<Tensor>> Session::Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                           const std::vector<std::string>& fetches,
                                           const std::vector<std::string>& targets,
                                           RunStats* stats) {
  return impl_->Run(feeds, fetches, targets, stats, /*graph_names=*/false);
}

StatusOr<std::vector<Tensor>> Session::Run(const RunOptions& run_options,
                                           const std::vector<std::pair<std::string, Tensor>>& feeds,
                                           const std::vector<std::string>& fetches,
                                           const std::vector<std::string>& targets,
                                           RunStats* stats) {
  return impl_->Run(feeds, fetches, targets, stats, /*graph_names=*/false, &run_options);
}

int64_t Session::MemoryInUse() const {
  return impl_->memory != nullptr ? impl_->memory->in_use() : 0;
}

namespace {
// A feed's or a fetch's name.
const std::string& NameOf(const std::pair<std::string, Tensor>& feed) { return feed.first; }
const std::string& NameOf(const std::string& fetch) { return fetch; }
}  // namespace

StatusOr<std::vector<Tensor>> Session::Impl::Run(
    const std::vector<std::pair<std::string, Tensor>>& feeds,
    const std::vector<std::string>& fetches, const std::vector<std::string>& targets,
    RunStats* stats, bool graph_names, const RunOptions* run_options) {
  // The deadline counts from here: planning and compiling are part of the run's time.
  int64_t timeout_ms = 0;
  std::shared_ptr<const CancellationToken> cancel;
  if (run_options != nullptr) {
    timeout_ms = run_options->timeout_ms != 0 ? run_options->timeout_ms : options.run_timeout_ms;
    cancel = run_options->cancel;
  } else if (!graph_names) {
    timeout_ms = options.run_timeout_ms;
  }
  const RunControl control(timeout_ms, std::move(cancel), memory);
  if (memory != nullptr) memory->ResetPeak();
  if (fetches.empty() && targets.empty()) {
    return InvalidArgument(
        "no fetches and no targets: name at least one tensor to compute or "
        "node to run");
  }
  // Feeds and fetches are taken in the order of their graph tensor names, so that one run
  // asked with its names in another order (a gRPC request's map, a server's warm-up) finds the
  // same plan and the executables it compiled; results go back in the order asked.
  auto by_tensor = [&](const auto& names, bool input) {
    std::vector<size_t> order(names.size());
    std::iota(order.begin(), order.end(), size_t{0});
    std::vector<std::string> tensors;
    for (const auto& n : names) tensors.push_back(TensorNameOf(NameOf(n), input, graph_names));
    std::stable_sort(order.begin(), order.end(),
                     [&](size_t a, size_t b) { return tensors[a] < tensors[b]; });
    return order;
  };
  const std::vector<size_t> feed_order = by_tensor(feeds, /*input=*/true);
  const std::vector<size_t> fetch_order = by_tensor(fetches, /*input=*/false);
  std::vector<std::string> feed_names, feed_tensors, fetch_names, fetch_tensors;
  std::vector<Tensor> feed_values;
  for (size_t i : feed_order) {
    feed_names.push_back(feeds[i].first);
    feed_tensors.push_back(TensorNameOf(feeds[i].first, /*input=*/true, graph_names));
    feed_values.push_back(feeds[i].second);
  }
  for (size_t i : fetch_order) {
    fetch_names.push_back(fetches[i]);
    fetch_tensors.push_back(TensorNameOf(fetches[i], /*input=*/false, graph_names));
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<tf::Output> feed_outs,
                         ResolveAll(feed_names, "feed", graph_names));
  TFJIT_ASSIGN_OR_RETURN(std::vector<tf::Output> fetch_outs,
                         ResolveAll(fetch_names, "fetch", graph_names));
  for (size_t i = 0; i < feed_outs.size(); ++i) {
    TFJIT_RETURN_IF_ERROR(CheckFeed(feed_outs[i], feed_names[i], feed_values[i]));
  }
  TFJIT_ASSIGN_OR_RETURN(std::vector<const tf::Node*> target_nodes, ResolveTargets(targets));
  // Plans are keyed by graph tensor names: a signature key and its tensor share one plan.
  TFJIT_ASSIGN_OR_RETURN(
      std::shared_ptr<runtime::Plan> plan,
      GetPlan(feed_outs, feed_tensors, fetch_outs, fetch_tensors, target_nodes, targets));
  runtime::ExecContext ctx = Context();
  ctx.control = &control;
  ctx.profile = run_options != nullptr && run_options->profile && stats != nullptr;
  absl::StatusOr<std::vector<Tensor>> results = plan->Run(feed_values, ctx, stats);
  // A failed run puts back the variables it assigned: all of a step's updates land, or none.
  if (!results.ok()) control.undo()->Rollback();
  if (stats != nullptr && memory != nullptr) stats->peak_memory_bytes = memory->peak();
  if (ctx.profile) MergeProfile(stats->profile);
  if (!results.ok()) return results;
  std::vector<Tensor> in_order(results->size());
  for (size_t k = 0; k < fetch_order.size() && k < results->size(); ++k) {
    in_order[fetch_order[k]] = std::move((*results)[k]);
  }
  return in_order;
}

std::string Session::SignatureName() const {
  return impl_->signature == nullptr ? "" : impl_->signature->name;
}

std::vector<std::string> Session::SignatureNames() const {
  std::vector<std::string> names;
  for (const tf::Signature& s : impl_->signatures) names.push_back(s.name);
  return names;
}

std::vector<InputInfo> Session::Inputs() const {
  std::vector<InputInfo> inputs;
  if (impl_->signature != nullptr) {
    for (const tf::TensorSpec& spec : impl_->signature->inputs) {
      InputInfo info;
      info.name = spec.key;
      info.tensor = spec.tensor;
      info.dtype = spec.dtype;
      info.dims = spec.shape.dims;
      info.unknown_rank = spec.shape.unknown_rank;
      // The graph's placeholder is the authority on dtype and, when the file omits it, shape.
      if (absl::StatusOr<tf::Output> o = impl_->graph->FindOutput(spec.tensor); o.ok()) {
        info.dtype = o->node->output_types()[o->index];
        absl::StatusOr<tf::PartialShape> shape = tf::GetShapeAttr(*o->node, "shape");
        if (info.unknown_rank && shape.ok() && o->node->op() == "Placeholder") {
          info.dims = shape->dims;
          info.unknown_rank = shape->unknown_rank;
        }
      }
      inputs.push_back(std::move(info));
    }
    return inputs;
  }
  for (const auto& node : impl_->graph->nodes()) {
    if (node->op() != "Placeholder" || IsLoaderNode(*node)) continue;
    InputInfo info;
    info.name = node->name();
    info.tensor = absl::StrCat(node->name(), ":0");
    info.dtype = node->output_types()[0];
    absl::StatusOr<tf::PartialShape> shape = tf::GetShapeAttr(*node, "shape");
    if (shape.ok()) {
      info.dims = shape->dims;
      info.unknown_rank = shape->unknown_rank;
    } else {
      info.unknown_rank = true;
    }
    inputs.push_back(std::move(info));
  }
  return inputs;
}

Status Session::SaveVariables(const std::string& prefix) {
  const tf::CheckpointVariables& ckpt = impl_->checkpoint;
  if (ckpt.keys_and_tensors.empty()) {
    return FailedPrecondition(
        "SaveVariables: this model has no SavedModel variables to save "
        "(a GraphDef saves through its own Saver ops: SaveV2)");
  }
  std::vector<std::string> tensors;
  for (const auto& [key, tensor] : ckpt.keys_and_tensors) tensors.push_back(tensor);
  TFJIT_ASSIGN_OR_RETURN(std::vector<Tensor> values, Run({}, tensors));
  tf::BundleWriter writer(prefix);
  absl::flat_hash_set<std::string> written;
  for (size_t k = 0; k < values.size(); ++k) {
    const std::string& key = ckpt.keys_and_tensors[k].first;
    TFJIT_RETURN_IF_ERROR(writer.Add(key, values[k]));
    written.insert(key);
  }
  // Everything else the loaded checkpoint held (the object graph, counters, optimizer state
  // no graph node reads), unchanged.
  TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<tf::BundleReader> original,
                         tf::BundleReader::Open(ckpt.prefix));
  for (const std::string& key : original->ListKeys()) {
    if (written.contains(key)) continue;
    TFJIT_ASSIGN_OR_RETURN(Tensor value, original->LookupAny(key));
    TFJIT_RETURN_IF_ERROR(writer.Add(key, value));
  }
  return writer.Finish();
}

std::vector<std::string> Session::DefaultFetches() const {
  std::vector<std::string> out;
  if (impl_->signature != nullptr) {
    for (const tf::TensorSpec& spec : impl_->signature->outputs) out.push_back(spec.key);
    return out;
  }
  for (const auto& node : impl_->graph->nodes()) {
    if (node->num_outputs() == 0 || !node->data_consumers().empty()) continue;
    if (IsLoaderNode(*node)) continue;
    if (node->op() == "Placeholder" || node->op() == "Const") continue;
    for (int k = 0; k < node->num_outputs(); ++k) {
      out.push_back(k == 0 ? node->name() : absl::StrCat(node->name(), ":", k));
    }
  }
  return out;
}

namespace {

// Appends the clustering of `graph` for these feeds/fetches, then, indented, that of every
// function body a call node in it runs (with the body's own jit mode and device).
// "rules that fired:" and, per known-issue rule that kept nodes out of clusters, its letter,
// name, node count and first node (compiler/rules); nothing when none did.
void AppendRulesThatFired(const tf::Graph& graph, const cluster::ClusteringResult& r,
                          const std::string& indent, std::string* out) {
  std::map<rules::RuleId, std::vector<int>> fired;
  for (const auto& [id, rule] : r.rule_of) fired[rule].push_back(id);
  if (fired.empty()) return;
  absl::StrAppend(out, indent, "rules that fired:\n");
  for (const auto& [rule, ids] : fired) {
    const rules::RuleInfo& info = rules::Info(rule);
    absl::StrAppend(out, indent, "  ", info.letter, " ", info.name, ": ", ids.size(),
                    " node(s), e.g. ", graph.node(ids.front())->DebugName(), " (", info.summary,
                    "; --autofix: ", info.autofix, ")\n");
  }
}

void ExplainPlan(const tf::Graph& graph, const std::vector<tf::Output>& feeds,
                 const std::vector<tf::Output>& fetches, cluster::JitMode session_mode,
                 cluster::JitMode mode, bool caller_must_compile,
                 const runtime::Placement& placement, const std::string& indent, int depth,
                 std::string* out, const std::vector<const tf::Node*>& targets = {}) {
  absl::StatusOr<std::unique_ptr<runtime::Plan>> plan =
      runtime::Plan::Build(graph, feeds, fetches, mode, placement, targets);
  if (!plan.ok()) {
    absl::StrAppend(out, indent, "does not compile: ", StatusToString(plan.status()), "\n");
    return;
  }
  const cluster::ClusteringResult& r = (*plan)->clustering();
  absl::StrAppend(out, indent, "jit mode: ", cluster::JitModeName(mode), ", ", r.clusters.size(),
                  " cluster(s), ", (*plan)->num_nodes(), " node(s) needed\n");
  for (const cluster::Cluster& c : r.clusters) {
    absl::StrAppend(out, indent, c.spec.name, ": ", c.spec.nodes.size(), " nodes, ",
                    c.spec.inputs.size(), " inputs, ", c.spec.outputs.size(), " outputs, on ",
                    c.device, "\n");
    for (const tf::Node* n : c.spec.nodes) absl::StrAppend(out, indent, "  ", n->DebugName(), "\n");
  }
  absl::StrAppend(out, indent, "not compiled:\n");
  for (const auto& [id, why] : r.why_not) {
    absl::StrAppend(out, indent, "  ", graph.node(id)->DebugName(), ": ", why, "\n");
  }
  AppendRulesThatFired(graph, r, indent, out);
  if (depth >= 8) return;
  for (const auto& [id, why] : r.why_not) {
    const tf::Node& node = *graph.node(id);
    if (node.called_function() == nullptr) continue;
    absl::StatusOr<tf::FunctionCall> call = tf::GetFunctionCall(node);
    if (!call.ok()) continue;
    const std::string& name = call->function->signature().name();
    const cluster::JitMode body_mode =
        runtime::FunctionBodyMode(session_mode, tf::CallMustCompileAttr(node), caller_must_compile);
    // As FunctionRuntime instantiates it: calls inlined in all and auto modes (auto keeps
    // calls to must-compile functions).
    absl::StatusOr<tf::FunctionBody> body = tf::InstantiateFunction(
        graph.library(), graph.versions(), name, call->attrs,
        body_mode == cluster::JitMode::kAll || body_mode == cluster::JitMode::kAuto,
        body_mode == cluster::JitMode::kAuto);
    if (!body.ok()) continue;
    std::vector<tf::Output> body_feeds, body_fetches;
    for (const std::string& in : body->inputs) {
      if (auto o = body->graph->FindOutput(in); o.ok()) body_feeds.push_back(*o);
    }
    std::vector<std::string> outs = body->outputs;
    if (!body->control_sink.empty()) outs.push_back(body->control_sink);
    for (const std::string& o_name : outs) {
      if (auto o = body->graph->FindOutput(o_name); o.ok()) body_fetches.push_back(*o);
    }
    runtime::Placement body_placement = placement;
    body_placement.default_device = (*plan)->device_of(node);
    absl::StrAppend(out, indent, "function '", name, "' called by ", node.DebugName(), " on ",
                    body_placement.default_device, ":\n");
    ExplainPlan(*body->graph, body_feeds, body_fetches, session_mode, body_mode,
                body_mode == cluster::JitMode::kAll, body_placement, indent + "    ", depth + 1,
                out);
  }
}

// A DOT string literal of `text`: quotes and backslashes escaped, line breaks as DOT's \n.
std::string DotQuote(absl::string_view text) {
  std::string out = "\"";
  for (char c : text) {
    if (c == '\n') {
      out += "\\n";
      continue;
    }
    if (c == '"' || c == '\\') out.push_back('\\');
    out.push_back(c);
  }
  return out + "\"";
}

// The last two '/'-separated parts of a node name, at most 36 characters: Keras and
// tf.function names repeat long scopes (the full name is the node's tooltip).
std::string ShortName(const std::string& name) {
  size_t cut = name.rfind('/');
  if (cut != std::string::npos && cut > 0) cut = name.rfind('/', cut - 1);
  std::string tail = cut == std::string::npos ? name : name.substr(cut + 1);
  if (tail.size() > 36) tail = "..." + tail.substr(tail.size() - 33);
  return tail;
}

// `text` broken into lines of at most `width` characters at spaces.
std::string Wrap(absl::string_view text, size_t width) {
  std::string out, line;
  for (absl::string_view word : absl::StrSplit(text, ' ', absl::SkipEmpty())) {
    if (!line.empty() && line.size() + 1 + word.size() > width) {
      absl::StrAppend(&out, out.empty() ? "" : "\n", line);
      line.clear();
    }
    absl::StrAppend(&line, line.empty() ? "" : " ", word);
  }
  if (!line.empty()) absl::StrAppend(&out, out.empty() ? "" : "\n", line);
  return out;
}

// The graph's inputs (fed placeholders) that `drawn` nodes read, as ellipses, then the data
// and (dashed) control edges between what is drawn.
void AppendDotInputsAndEdges(const tf::Graph& graph,
                             const std::function<bool(const tf::Node&)>& drawn, std::string& out) {
  auto node_id = [](const tf::Node& n) { return absl::StrCat("n", n.id()); };
  absl::flat_hash_set<const tf::Node*> placeholders;
  for (const auto& node : graph.nodes()) {
    if (!drawn(*node)) continue;
    for (const tf::Output& in : node->inputs()) {
      if (!drawn(*in.node) && in.node->op() == "Placeholder" &&
          placeholders.insert(in.node).second) {
        absl::StrAppend(&out, "  ", node_id(*in.node),
                        " [shape=ellipse, label=", DotQuote(ShortName(in.node->name())),
                        ", tooltip=", DotQuote(in.node->name()), ", fillcolor=\"white\"];\n");
      }
    }
  }
  for (const auto& node : graph.nodes()) {
    if (!drawn(*node)) continue;
    for (const tf::Output& in : node->inputs()) {
      if (drawn(*in.node) || placeholders.contains(in.node)) {
        absl::StrAppend(&out, "  ", node_id(*in.node), " -> ", node_id(*node), ";\n");
      }
    }
    for (const tf::Node* c : node->control_inputs()) {
      if (drawn(*c))
        absl::StrAppend(&out, "  ", node_id(*c), " -> ", node_id(*node), " [style=dashed];\n");
    }
  }
}

}  // namespace

StatusOr<std::string> Session::ExplainDot(const std::vector<std::string>& fetches) const {
  TFJIT_ASSIGN_OR_RETURN(ExplainInputs in, impl_->ForExplain(fetches));
  const cluster::JitMode mode = in.mode;
  TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<runtime::Plan> plan,
                         runtime::Plan::Build(*impl_->graph, in.feeds, in.fetches, mode,
                                              impl_->placement(), in.targets));
  const cluster::ClusteringResult& r = plan->clustering();
  const tf::Graph& graph = *impl_->graph;
  // Pastel fills and darker borders, cycled over the clusters.
  static constexpr const char* kFill[] = {"#cfe2f3", "#d9ead3", "#fff2cc", "#f4cccc",
                                          "#d9d2e9", "#fce5cd", "#d0e0e3", "#ead1dc"};
  static constexpr const char* kLine[] = {"#3d85c6", "#6aa84f", "#bf9000", "#cc0000",
                                          "#674ea7", "#e69138", "#45818e", "#a64d79"};
  std::string out = absl::StrCat(
      "digraph ", DotQuote(graph.source()), " {\n  rankdir=TB;\n", "  label=",
      DotQuote(absl::StrCat("tfjit explain: jit mode ", cluster::JitModeName(mode), ", ",
                            r.clusters.size(), " cluster(s)")),
      "; labelloc=t; fontname=\"Helvetica\";\n",
      "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\", fontsize=10];\n",
      "  edge [color=\"#666666\", arrowsize=0.6];\n");
  auto node_id = [](const tf::Node& n) { return absl::StrCat("n", n.id()); };
  // Constants (weights) are not drawn: they would outnumber the operations.
  auto hidden = [](const tf::Node& n) { return n.op() == "Const"; };
  int constants = 0;
  for (size_t i = 0; i < r.clusters.size(); ++i) {
    const cluster::Cluster& c = r.clusters[i];
    const size_t k = i % (sizeof(kFill) / sizeof(kFill[0]));
    absl::StrAppend(&out, "  subgraph cluster_", i, " {\n    label=",
                    DotQuote(absl::StrCat(c.spec.name, ": ", c.spec.nodes.size(), " nodes on ",
                                          c.device.substr(c.device.rfind('/') + 1))),
                    "; style=\"rounded,filled\"; fillcolor=\"", kFill[k], "40\"; color=\"",
                    kLine[k], "\";\n");
    for (const tf::Node* n : c.spec.nodes) {
      if (hidden(*n)) {
        ++constants;
        continue;
      }
      absl::StrAppend(&out, "    ", node_id(*n),
                      " [label=", DotQuote(absl::StrCat(n->op(), "\n", ShortName(n->name()))),
                      ", tooltip=", DotQuote(n->name()), ", fillcolor=\"", kFill[k], "\", color=\"",
                      kLine[k], "\"];\n");
    }
    absl::StrAppend(&out, "  }\n");
  }
  for (const auto& [id, why] : r.why_not) {
    const tf::Node& n = *graph.node(id);
    if (hidden(n)) {
      ++constants;
      continue;
    }
    absl::StrAppend(
        &out, "  ", node_id(n), " [label=",
        DotQuote(absl::StrCat(n.op(), "\n", ShortName(n.name()), "\n(", Wrap(why, 40), ")")),
        ", tooltip=", DotQuote(n.name()),
        ", fillcolor=\"white\", color=\"#999999\", fontcolor=\"#555555\"];\n");
  }
  auto drawn = [&](const tf::Node& n) {
    return !hidden(n) &&
           (r.why_not.contains(n.id()) ||
            (static_cast<size_t>(n.id()) < r.cluster_of.size() && r.cluster_of[n.id()] >= 0));
  };
  AppendDotInputsAndEdges(graph, drawn, out);
  absl::StrAppend(&out, "  legend [shape=plaintext, style=\"\", label=",
                  DotQuote(absl::StrCat("coloured boxes: compiled clusters; white boxes: left "
                                        "out, with the reason; ellipses: inputs; dashed: "
                                        "control edges; ",
                                        constants, " constant(s) not drawn")),
                  "];\n}\n");
  return out;
}

StatusOr<std::string> Session::Explain(const std::vector<std::string>& fetches) const {
  TFJIT_ASSIGN_OR_RETURN(ExplainInputs in, impl_->ForExplain(fetches));
  std::string loops;
  if (impl_->functionalized_loops > 0) {
    absl::StrAppend(&loops, "TF1 loops turned into While nodes: ", impl_->functionalized_loops,
                    "\n");
  }
  if (impl_->functionalized_tensor_arrays > 0) {
    absl::StrAppend(&loops, "TF1 TensorArrays turned into TensorLists: ",
                    impl_->functionalized_tensor_arrays, "\n");
  }
  if (impl_->functionalized_conds > 0) {
    absl::StrAppend(&loops, "TF1 conditionals turned into If nodes: ", impl_->functionalized_conds,
                    "\n");
  }
  for (const auto& [what, why] : impl_->loops_left) {
    absl::StrAppend(&loops, "TF1 ", what, " stays in the runtime: ", why, "\n");
  }
  // The top level keeps its own errors (an all-mode graph that cannot compile).
  TFJIT_RETURN_IF_ERROR(runtime::Plan::Build(*impl_->graph, in.feeds, in.fetches, in.mode,
                                             impl_->placement(), in.targets)
                            .status());
  std::string out = loops;
  ExplainPlan(*impl_->graph, in.feeds, in.fetches, in.mode, in.mode,
              in.mode == cluster::JitMode::kAll, impl_->placement(), "", 0, &out, in.targets);
  return out;
}

}  // namespace tfjit
