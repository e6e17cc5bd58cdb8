// The cluster kernel: what a compiled cluster's unit does when the executor runs it, as TF's
// compile-on-demand op does. Contract, per run of cluster `index`:
//   1. lock the variables the cluster writes (their read and write-back are one step for
//      concurrent runs) and read every variable it touches, checking TF's rule that a cluster
//      touches only variables on its own device (known issue A, or its autofix);
//   2. key the compilation cache by the cluster's signature, its device, the inputs' shapes
//      and the values of its must-be-constant inputs (known issue F), and compile on a miss
//      (tf2hlo lowering, then the device's backend);
//   3. run the executable with the stateful random nodes' Philox states appended (known issue
//      E), under the run's deadline, cancellation and memory budget;
//   4. act on the results: a failed run-time check fails the run before any state changes;
//      otherwise install variable updates and random states, trim padded outputs to their
//      real rows and view complex outputs as complex.
// An auto cluster that cannot read its variables or compile runs on the fallback kernels
// instead (and its failing nodes leave the session's next plans); a must-compile one fails.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <thread>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "compiler/hlo/printer.h"
#include "compiler/hlo/row_analysis.h"
#include "compiler/hlo/symbolic.h"
#include "compiler/passes/call_inliner.h"
#include "compiler/passes/standard_pipeline.h"
#include "compiler/rules/a_variable_device.h"
#include "compiler/rules/e_random_seeds.h"
#include "compiler/tf2hlo/lowering.h"
#include "core/dtype.h"
#include "core/logging.h"
#include "core/status.h"
#include "core/timing.h"
#include "frontend/attr.h"
#include "runtime/device.h"
#include "runtime/executor.h"
#include "runtime/kernels/random_kernels.h"
#include "runtime/shape_policy.h"

namespace tfjit::runtime {
namespace {

using OutputKey = std::pair<const tf::Node*, int>;
using VariableLocks = std::vector<std::unique_ptr<std::lock_guard<std::mutex>>>;

// A signature of a cluster that is stable for the life of the graph (node names are unique).
std::string ClusterSignature(const tf2hlo::ClusterSpec& spec) {
  auto out_name = [](std::string* s, const tf::Output& o) {
    absl::StrAppend(s, o.node->name(), ":", o.index);
  };
  return absl::StrCat(
      absl::StrJoin(spec.nodes, ",",
                    [](std::string* s, const tf::Node* n) { absl::StrAppend(s, n->name()); }),
      "|in=", absl::StrJoin(spec.inputs, ",", out_name),
      "|out=", absl::StrJoin(spec.outputs, ",", out_name));
}

// The first `rows` rows of `t` (a cluster output padded to its static size). Rows are
// contiguous from the buffer's start, so when at least a quarter of them are real the result
// is a view of the padded buffer (no copy; at most 4x its bytes held); fewer get a buffer of
// their own, so a large padded buffer is not kept alive for a few rows.
absl::StatusOr<Tensor> LeadingRows(const Tensor& t, int64_t rows) {
  if (rows < 0 || rows > t.dim(0)) {
    return Internal("a padded cluster output %s reports %d real rows", t.ShapeString(), rows);
  }
  std::vector<int64_t> dims = t.dims();
  dims[0] = rows;
  if (4 * rows >= t.dim(0)) return t.BitcastView(t.dtype(), std::move(dims));
  Tensor out = Tensor::Uninitialized(t.dtype(), std::move(dims));
  if (out.byte_size() > 0) std::memcpy(out.raw_data(), t.raw_data(), out.byte_size());
  return out;
}

// The backend that compiles clusters placed on `device` (a full TF name).
absl::StatusOr<const backends::Backend*> BackendFor(const ExecContext& ctx,
                                                    const std::string& device) {
  absl::StatusOr<DeviceName> name = ParseDeviceName(device);
  if (!name.ok() || name->type != "GPU") return ctx.backend;
  if (name->index < static_cast<int>(ctx.gpu_backends.size()) &&
      ctx.gpu_backends[static_cast<size_t>(name->index)] != nullptr) {
    return ctx.gpu_backends[static_cast<size_t>(name->index)];
  }
  return FailedPrecondition(
      "a cluster is placed on %s, and the session has no GPU backend for "
      "it",
      device);
}

// SessionOptions::show_compile_progress: a compile still running after a second says so on
// stderr ("tfjit: compiling cluster_0 (177 nodes)..."), and when it ends ("done in 1.4 s");
// shorter ones print nothing. TFJIT_PROGRESS_AFTER_MS changes the second (tests use 0).
class CompileProgress {
 public:
  CompileProgress(bool enabled, std::string name, int nodes) {
    if (!enabled) return;
    start_ = std::chrono::steady_clock::now();
    int after_ms = 1000;
    if (const char* env = std::getenv("TFJIT_PROGRESS_AFTER_MS"); env != nullptr) {
      after_ms = std::max(0, std::atoi(env));
    }
    if (after_ms == 0) {  // announced at once
      Announce(name, nodes);
      return;
    }
    watcher_ = std::thread([this, name = std::move(name), nodes, after_ms] {
      std::unique_lock<std::mutex> lock(mu_);
      if (!cv_.wait_for(lock, std::chrono::milliseconds(after_ms), [this] { return done_; })) {
        Announce(name, nodes);
      }
    });
  }
  ~CompileProgress() {
    if (watcher_.joinable()) {
      {
        std::lock_guard<std::mutex> lock(mu_);
        done_ = true;
      }
      cv_.notify_all();
      watcher_.join();
    }
    if (printed_) std::fprintf(stderr, "tfjit: ... done in %.1f s\n", MillisSince(start_) / 1000);
  }

 private:
  void Announce(const std::string& name, int nodes) {
    std::fprintf(stderr, "tfjit: compiling %s (%d nodes)...\n", name.c_str(), nodes);
    printed_ = true;
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool done_ = false;
  bool printed_ = false;  // written by the watcher before join, read after
  std::chrono::steady_clock::time_point start_;
  std::thread watcher_;
};

// Locks the variables behind `handles[i]` for each i in `updates`, in address order.
VariableLocks LockWrittenVariables(const std::vector<int>& updates,
                                   const std::vector<Tensor>& handles) {
  std::vector<Var*> written;
  for (int i : updates) {
    if (const ResourceHandle* h = handles[i].object_as<ResourceHandle>()) {
      written.push_back(h->var());
    }
    if (const VarRef* r = handles[i].object_as<VarRef>()) written.push_back(r->var());
  }
  std::sort(written.begin(), written.end());
  written.erase(std::unique(written.begin(), written.end()), written.end());
  VariableLocks locks;
  for (Var* v : written) {
    locks.push_back(std::make_unique<std::lock_guard<std::mutex>>(v->update_mu()));
  }
  return locks;
}

// The compilation cache key of a launch (step 2), completing `args` with the inputs' dtypes,
// dims and must-be-constant values.
std::string LaunchKey(const ExecContext& ctx, const std::string& signature,
                      const cluster::Cluster& cluster, const std::vector<Tensor>& inputs,
                      const std::vector<int>& const_inputs, std::vector<tf2hlo::ArgInfo>& args) {
  std::string key = absl::StrCat(ctx.key_prefix, signature, "@", cluster.device);
  for (size_t i = 0; i < inputs.size(); ++i) {
    args[i].dtype = inputs[i].dtype();
    args[i].dims = inputs[i].dims();
    absl::StrAppend(&key, "|", inputs[i].ShapeString(),
                    args[i].variable.has_value() && !args[i].variable->initialized ? "u" : "");
  }
  for (int i : const_inputs) {
    args[i].value = inputs[i];
    absl::StrAppend(&key, "|v", i, "=",
                    absl::BytesToHexString(absl::string_view(
                        static_cast<const char*>(inputs[i].raw_data()), inputs[i].byte_size())));
  }
  return key;
}

// The compilation cache key of a symbolic launch: LaunchKey's, with the inputs' shapes
// replaced by their class (ShapeChoice::class_key).
std::string SymbolicLaunchKey(const ExecContext& ctx, const std::string& signature,
                              const cluster::Cluster& cluster, const std::vector<Tensor>& inputs,
                              const std::vector<int>& const_inputs, const ShapeChoice& choice) {
  std::string key =
      absl::StrCat(ctx.key_prefix, signature, "@", cluster.device, "|symbolic", choice.class_key);
  for (size_t i = 0; i < inputs.size(); ++i)
    absl::StrAppend(&key, "|", DTypeName(inputs[i].dtype()));
  for (int i : const_inputs) {
    absl::StrAppend(&key, "|v", i, "=",
                    absl::BytesToHexString(absl::string_view(
                        static_cast<const char*>(inputs[i].raw_data()), inputs[i].byte_size())));
  }
  return key;
}

// After a compile (a cache miss) that began at `t0`: its time in `compile_ms`, the phases in
// the log, the optimized module dumped when asked (one file per cache key).
CompilationCache::ExecutablePtr FinishCompile(const cluster::Cluster& cluster,
                                              std::unique_ptr<backends::Executable> exe,
                                              const ExecContext& ctx, const std::string& key,
                                              std::chrono::steady_clock::time_point t0,
                                              double* compile_ms) {
  *compile_ms = MillisSince(t0);
  const backends::CompileStats& cs = exe->stats();
  const bool symbolic = exe->module().batch_representative() != 0;
  Log(LogLevel::kInfo,
      "compiled %s (%d nodes)%s in %.1f ms: lowering %.1f ms, HLO passes %.1f ms, %s %.1f "
      "ms, %d kernels, temporaries %.2f MB%s",
      cluster.spec.name, static_cast<int>(cluster.spec.nodes.size()),
      symbolic ? absl::StrCat(" for every batch size >= ", kMinSymbolicBatch) : "", *compile_ms,
      *compile_ms - cs.optimize_ms - cs.codegen_ms, cs.optimize_ms,
      cs.loaded_from_disk_cache ? "loaded from the disk cache in" : "codegen", cs.codegen_ms,
      cs.num_kernels, cs.temp_bytes / 1e6,
      symbolic ? absl::StrFormat(" + %.3f MB per batch row", cs.temp_bytes_per_row / 1e6)
               : absl::StrFormat(" (%.2f MB unshared)", cs.temp_bytes_unshared / 1e6));
  if (!ctx.dump_dir.empty()) {
    std::ofstream(absl::StrCat(ctx.dump_dir, "/", cluster.spec.name, symbolic ? "_symbolic_" : "_",
                               std::hash<std::string>()(key) % 1000000, ".hlo"))
        << hlo::PrintModule(exe->module());
  }
  return CompilationCache::ExecutablePtr(std::move(exe));
}

// Lowers the cluster at each of kBatchProbes (the batch inputs' dim 0 set to it) and compiles
// one symbolic executable from the modules. A probe that does not lower, or modules that do
// not make a symbolic one, are FAILED_PRECONDITION: the caller compiles statically instead.
absl::StatusOr<std::vector<backends::BatchProbeModule>> LowerProbes(
    const cluster::Cluster& cluster, const std::vector<tf2hlo::ArgInfo>& args,
    const ShapeChoice& choice, const ExecContext& ctx) {
  std::vector<backends::BatchProbeModule> probes;
  for (int64_t b : kBatchProbes) {
    std::vector<tf2hlo::ArgInfo> at = args;
    for (size_t i = 0; i < at.size(); ++i) {
      if (choice.batch_inputs[i]) at[i].dims[0] = b;
    }
    absl::StatusOr<std::unique_ptr<hlo::Module>> module =
        tf2hlo::LowerCluster(cluster.spec, at, ctx.autofix);
    if (!module.ok()) {
      if (IsRunStop(module.status())) return module.status();
      return FailedPrecondition("lowering it at batch size %d failed: %s", b,
                                module.status().message());
    }
    probes.push_back({b, std::move(*module)});
  }
  return probes;
}

absl::StatusOr<CompilationCache::ExecutablePtr> CompileSymbolicCluster(
    const cluster::Cluster& cluster, const std::vector<tf2hlo::ArgInfo>& args,
    const ShapeChoice& choice, const backends::Backend& backend, const ExecContext& ctx,
    const std::string& key, double* compile_ms) {
  const auto t0 = std::chrono::steady_clock::now();
  CompileProgress progress(ctx.show_compile_progress, cluster.spec.name,
                           static_cast<int>(cluster.spec.nodes.size()));
  TFJIT_ASSIGN_OR_RETURN(std::vector<backends::BatchProbeModule> probes,
                         LowerProbes(cluster, args, choice, ctx));
  TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<backends::Executable> exe,
                         backend.CompileSymbolic(std::move(probes)));
  return FinishCompile(cluster, std::move(exe), ctx, key, t0, compile_ms);
}

// Whether a symbolic class keeps batch rows apart, so that it may run padded to a bucket: its
// probes lowered, simplified (no fusion) and made one symbolic module, then hlo::AnalyzeRows. A
// class whose probes do not make a symbolic module is not independent (a constant may hold the
// batch size). Only a stopped run is an error.
absl::StatusOr<hlo::RowAnalysis> AnalyzeClassRows(const cluster::Cluster& cluster,
                                                  const std::vector<tf2hlo::ArgInfo>& args,
                                                  const ShapeChoice& choice,
                                                  const ExecContext& ctx) {
  absl::StatusOr<std::vector<backends::BatchProbeModule>> probes =
      LowerProbes(cluster, args, choice, ctx);
  hlo::RowAnalysis not_independent;
  if (!probes.ok()) {
    if (IsRunStop(probes.status())) return probes.status();
    not_independent.reason = std::string(probes.status().message());
    return not_independent;
  }
  // The backends' passes before fusion: folded shape chains (a Shape -> Pack constant that
  // only fed a reshape) go, as they go before a symbolic compile.
  std::vector<hlo::BatchProbe> views;
  for (const backends::BatchProbeModule& p : *probes) {
    passes::PassPipeline pipeline("rows");
    pipeline.AddPass<passes::CallInlinerPass>();
    passes::AddSimplificationPasses(pipeline);
    if (absl::Status ran = pipeline.Run(*p.module).status(); !ran.ok()) {
      if (IsRunStop(ran)) return ran;
      not_independent.reason = std::string(ran.message());
      return not_independent;
    }
    views.push_back({p.batch, p.module.get()});
  }
  absl::StatusOr<std::unique_ptr<hlo::Module>> symbolic = hlo::Symbolize(views);
  if (!symbolic.ok()) {
    not_independent.reason = std::string(symbolic.status().message());
    return not_independent;
  }
  return hlo::AnalyzeRows(**symbolic);
}

// Lowers and compiles the cluster (a cache miss); logs the phases and dumps the optimized
// module when asked. `compile_ms` gets the time taken.
absl::StatusOr<CompilationCache::ExecutablePtr> CompileCluster(
    const cluster::Cluster& cluster, const std::vector<tf2hlo::ArgInfo>& args,
    const backends::Backend& backend, const ExecContext& ctx, const std::string& key,
    double* compile_ms) {
  const auto t0 = std::chrono::steady_clock::now();
  CompileProgress progress(ctx.show_compile_progress, cluster.spec.name,
                           static_cast<int>(cluster.spec.nodes.size()));
  TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<hlo::Module> module,
                         tf2hlo::LowerCluster(cluster.spec, args, ctx.autofix));
  TFJIT_ASSIGN_OR_RETURN(std::unique_ptr<backends::Executable> exe,
                         backend.Compile(std::move(module)));
  return FinishCompile(cluster, std::move(exe), ctx, key, t0, compile_ms);
}

// An auto cluster failed to compile with `s`: the nodes the error names (each that failed on
// its own) stay out of the session's next plans, so the rest of the cluster compiles from the
// next run on.
void LearnFailingNodes(const cluster::Cluster& cluster, const absl::Status& s,
                       const tf::Graph* graph, LearnedExclusions* learned) {
  Log(LogLevel::kWarning, "%s falls back to CPU kernels: %s", cluster.spec.name, s.message());
  if (learned == nullptr) return;
  std::vector<std::string> failing = tf2hlo::ClusterNodesOfError(s);
  if (failing.size() > 16) failing.resize(16);  // the session learns at most 64 nodes
  for (const tf::Node* node : cluster.spec.nodes) {
    if (std::find(failing.begin(), failing.end(), node->name()) == failing.end()) continue;
    const std::string first_line =
        node->name() == failing.front()
            ? std::string(s.message().substr(0, s.message().find('\n')))
            : std::string("it failed to compile there as well as the first node named");
    if (learned->Add(graph, *node,
                     absl::StrCat("its cluster failed to compile, so it "
                                  "runs in the runtime: ",
                                  first_line))) {
      Log(LogLevel::kWarning,
          "%s stays out of clusters from the next run on; the rest "
          "of %s compiles then",
          node->DebugName(), cluster.spec.name);
    }
  }
}

// Step 3: runs `exe` on `inputs` (complex ones viewed as their real parts) under the run's
// control; `kernels` (when not null) gets the compiled kernels' timings.
absl::Status Execute(const backends::Executable& exe, std::vector<Tensor> inputs,
                     const cluster::Cluster& cluster, const ExecContext& ctx,
                     std::vector<Tensor>* outputs, std::vector<KernelProfile>* kernels) {
  // Outputs and arena charge the run's budget (checked by the executable before it
  // allocates); compiled loops poll the run's deadline and cancellation.
  ScopedRunControl scope(ctx.control, AllocationMode::kCharge);
  // A compile may have taken the run past its deadline: stop before launching.
  TFJIT_RETURN_IF_ERROR(RunCheckpoint(absl::StrCat("launching ", cluster.spec.name)));
  // Complex arguments are read as their real parts (tf2hlo::ParameterShape).
  for (Tensor& input : inputs) {
    if (!IsComplexDType(input.dtype())) continue;
    std::vector<int64_t> dims = input.dims();
    dims.push_back(2);
    input = input.BitcastView(ComplexPartDType(input.dtype()), std::move(dims));
  }
  std::vector<backends::KernelTiming> timings;
  absl::StatusOr<std::vector<Tensor>> ran = kernels != nullptr
                                                ? exe.RunProfiled(inputs, ctx.intra_op, &timings)
                                                : exe.Run(inputs, ctx.intra_op);
  if (kernels != nullptr) {
    for (backends::KernelTiming& t : timings) {
      KernelProfile k;
      k.name = std::move(t.name);
      k.ops = std::move(t.ops);
      k.calls = t.calls;
      k.ms = t.ms;
      k.bytes = t.bytes * t.calls;
      k.flops = t.flops * t.calls;
      kernels->push_back(std::move(k));
    }
  }
  if (!ran.ok()) {
    const absl::StatusCode code = ran.status().code();
    if (code != absl::StatusCode::kDeadlineExceeded && code != absl::StatusCode::kCancelled &&
        code != absl::StatusCode::kResourceExhausted) {
      return ran.status();
    }
    const tf::Node* first = cluster.spec.nodes.front();
    return AttachNode(
        AppendContext(ran.status(),
                      absl::StrCat("in ", cluster.spec.name, " (", cluster.spec.nodes.size(),
                                   " nodes, from ", first->DebugName(), ")")),
        first->name(), first->op());
  }
  *outputs = *std::move(ran);
  return absl::OkStatus();
}

// The failed run-time check among `results[first_check...]` (the last results), as the
// kernel's error; OK when every check passed. `batch`: the run's batch size when the module is
// symbolic (its messages' batch-sized numbers take their value there), else 0.
absl::Status FailedRuntimeCheck(const std::vector<hlo::RuntimeCheck>& checks,
                                const std::vector<Tensor>& results, size_t first_check,
                                const std::string& cluster_name, int64_t batch) {
  for (size_t c = 0; c < checks.size(); ++c) {
    const Tensor& r = results[first_check + c];
    if (r.dtype() != DType::kInt64 || r.num_elements() < 1) {
      return Internal("%s: run-time check %d returned %s", cluster_name, c, r.ShapeString());
    }
    const int64_t* v = r.data<int64_t>();
    if (v[0] < 0) continue;
    const hlo::RuntimeCheck& check = checks[c];
    const std::string message = check.Message(std::vector<int64_t>(v, v + r.num_elements()), batch);
    return AttachNode(InvalidArgument("node '%s' (%s): %s", check.tf_node, check.tf_op, message),
                      check.tf_node, check.tf_op);
  }
  return absl::OkStatus();
}

// The cluster outputs as the graph's tensors: padded ones (Where's rows) keep their real
// leading rows (`row_counted[k]`'s count at results[first_count + k]), complex ones come back
// from (real, imag) pairs in a last dim of 2. Drops the results after the outputs.
absl::Status RestoreOutputs(const cluster::Cluster& cluster,
                            const std::vector<int64_t>& row_counted, size_t first_count,
                            std::vector<Tensor>* outputs) {
  const size_t num_outputs = cluster.spec.outputs.size();
  for (size_t k = 0; k < row_counted.size(); ++k) {
    const Tensor& count = (*outputs)[first_count + k];
    const size_t o = static_cast<size_t>(row_counted[k]);
    if (o >= num_outputs || count.dtype() != DType::kInt64 || count.num_elements() != 1 ||
        (*outputs)[o].rank() == 0) {
      return Internal("%s: row count %d (output %d) came back as %s", cluster.spec.name, k, o,
                      count.ShapeString());
    }
    TFJIT_ASSIGN_OR_RETURN((*outputs)[o], LeadingRows((*outputs)[o], count.data<int64_t>()[0]));
  }
  outputs->resize(num_outputs);
  for (size_t i = 0; i < num_outputs; ++i) {
    const tf::Output& out = cluster.spec.outputs[i];
    const DType t = out.node->output_types()[static_cast<size_t>(out.index)];
    Tensor& r = (*outputs)[i];
    if (!IsComplexDType(t)) continue;
    if (r.rank() == 0 || r.dims().back() != 2 || r.dtype() != ComplexPartDType(t)) {
      return Internal("%s: complex output %d came back as %s", cluster.spec.name, i,
                      r.ShapeString());
    }
    std::vector<int64_t> dims = r.dims();
    dims.pop_back();
    r = r.BitcastView(t, std::move(dims));
  }
  return absl::OkStatus();
}

// Step 4. `outputs` holds the executable's results: the cluster outputs, the variables it
// assigned (`updates`: their inputs' indices), the random nodes' next states, the padded
// outputs' row counts and the run-time checks. A failed check installs no state, as the
// kernel's error would have stopped the graph before the writes; otherwise the variables and
// random states are installed and `outputs` becomes the cluster outputs. `batch`: the run's
// batch size on a symbolic executable, else 0.
absl::Status InstallResults(const cluster::Cluster& cluster, const backends::Executable& exe,
                            const std::vector<Tensor>& handles, const std::vector<int>& updates,
                            std::vector<CompiledRandomState>& rng, const ExecContext& ctx,
                            int64_t batch, std::vector<Tensor>* outputs) {
  const size_t num_outputs = cluster.spec.outputs.size();
  const std::vector<hlo::RuntimeCheck>& checks = exe.module().runtime_checks();
  const std::vector<int64_t>& row_counted = exe.module().row_counted_outputs();
  if (outputs->size() !=
      num_outputs + updates.size() + rng.size() + row_counted.size() + checks.size()) {
    return Internal(
        "%s returned %d results, expected %d outputs, %d variable updates, %d "
        "random states, %d row counts and %d run-time checks",
        cluster.spec.name, outputs->size(), num_outputs, updates.size(), rng.size(),
        row_counted.size(), checks.size());
  }
  const size_t first_count = num_outputs + updates.size() + rng.size();
  if (absl::Status failed = FailedRuntimeCheck(checks, *outputs, first_count + row_counted.size(),
                                               cluster.spec.name, batch);
      !failed.ok()) {
    outputs->clear();
    return failed;
  }
  for (size_t k = 0; k < updates.size(); ++k) {
    const Tensor& handle = handles[updates[k]];
    Var* var = handle.dtype() == DType::kResource ? handle.object_as<ResourceHandle>()->var()
                                                  : handle.object_as<VarRef>()->var();
    var->Set((*outputs)[num_outputs + k], ctx.control);
  }
  for (size_t k = 0; k < rng.size(); ++k) {
    rng[k].Commit((*outputs)[num_outputs + updates.size() + k]);
  }
  return RestoreOutputs(cluster, row_counted, first_count, outputs);
}

// Adds a compiled launch to the run's statistics (the caller holds their lock).
// `bucket`: the launch ran padded to that batch size (0: it did not).
void RecordLaunch(const cluster::Cluster& cluster, const backends::Executable& exe, bool hit,
                  double compile_ms, int64_t bucket, RunStats& stats) {
  const bool symbolic = exe.module().batch_representative() != 0;
  stats.clusters++;
  stats.nodes_compiled += static_cast<int>(cluster.spec.nodes.size());
  stats.compile_ms += compile_ms;
  stats.cache_hits += hit ? 1 : 0;
  if (!hit) {
    const backends::CompileStats& cs = exe.stats();
    if (cs.loaded_from_disk_cache) ++stats.disk_cache_hits;
    ClusterCompile c;
    c.cluster = cluster.spec.name;
    c.nodes = static_cast<int>(cluster.spec.nodes.size());
    c.compile_ms = compile_ms;
    c.passes_ms = cs.optimize_ms;
    c.codegen_ms = cs.codegen_ms;
    c.lowering_ms = std::max(0.0, compile_ms - cs.optimize_ms - cs.codegen_ms);
    c.kernels = cs.num_kernels;
    c.from_disk_cache = cs.loaded_from_disk_cache;
    if (symbolic) c.shape_class = absl::StrCat("symbolic (batch >= ", kMinSymbolicBatch, ")");
    if (bucket > 0) c.shape_class = absl::StrCat("bucket ", bucket);
    stats.compiles.push_back(std::move(c));
  }
  stats.flops += exe.stats().flops;
  stats.bytes_copied += exe.copied_output_bytes();
}

}  // namespace

void Plan::BuildClusterTables() {
  const size_t n = clustering_.clusters.size();
  const_inputs_.clear();
  cluster_keys_.clear();
  resource_updates_.clear();
  random_nodes_.clear();
  for (const cluster::Cluster& c : clustering_.clusters) {
    const_inputs_.push_back(tf2hlo::MustBeConstantInputs(c.spec));
    cluster_keys_.push_back(ClusterSignature(c.spec));
    resource_updates_.push_back(tf2hlo::ResourceUpdateInputs(c.spec));
    // Instantiates the bodies of the cluster's While/If nodes: once per plan, not per run.
    random_nodes_.push_back(tf2hlo::StatefulRandomNodes(c.spec));
  }
  autofix_logged_.reset(new std::atomic<bool>[n]());
  shapes_.reset(new ClusterShapes[n]);
}

absl::Status Plan::RunFrameCluster(int index, const std::vector<Tensor>& inputs,
                                   const ExecContext& ctx, std::vector<Tensor>* outputs,
                                   RunStats* stats) const {
  RunState state;
  TFJIT_RETURN_IF_ERROR(RunCluster(index, inputs, ctx, outputs, state));
  AddNestedStats(state.stats, stats);
  return absl::OkStatus();
}

absl::Status Plan::RunClusterWithKernels(int index, const std::vector<Tensor>& inputs,
                                         const ExecContext& ctx,
                                         std::vector<Tensor>* outputs) const {
  const tf2hlo::ClusterSpec& spec = clustering_.clusters[index].spec;
  absl::flat_hash_map<OutputKey, Tensor> values;
  for (size_t i = 0; i < inputs.size(); ++i) {
    values[{spec.inputs[i].node, spec.inputs[i].index}] = inputs[i];
  }
  for (const tf::Node* node : spec.nodes) {
    std::vector<Tensor> ins, outs;
    for (const tf::Output& in : node->inputs()) ins.push_back(values.at({in.node, in.index}));
    TFJIT_RETURN_IF_ERROR(RunKernel(*node, ins, ctx, &outs, nullptr));
    for (size_t k = 0; k < outs.size(); ++k) values[{node, static_cast<int>(k)}] = outs[k];
  }
  for (const tf::Output& o : spec.outputs) outputs->push_back(values.at({o.node, o.index}));
  return absl::OkStatus();
}

absl::Status Plan::ReadClusterVariables(int index, std::vector<Tensor>& inputs,
                                        std::vector<tf2hlo::ArgInfo>& args,
                                        const ExecContext& ctx) const {
  const cluster::Cluster& cluster = clustering_.clusters[index];
  absl::flat_hash_map<const Var*, int> seen;
  const std::vector<int>& updates = resource_updates_[index];
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (inputs[i].dtype() != DType::kResource) {
      const VarRef* ref = inputs[i].object_as<VarRef>();
      if (ref != nullptr &&
          std::find(updates.begin(), updates.end(), static_cast<int>(i)) != updates.end()) {
        // A TF1 variable the cluster updates (--autofix): passed like a resource variable.
        // Uninitialized (an init op's Assign): a dummy of dims [0], as for resources; a read
        // before the cluster assigns it fails with TF's message (tf2hlo).
        Tensor value = ref->var()->Get();
        const bool initialized = value.valid();
        if (!initialized) value = Tensor(ref->var()->dtype(), {0});
        if (!seen.insert({ref->var(), static_cast<int>(i)}).second) {
          return Unimplemented(
              "Duplicate variable passed to XLA cluster: '%s' enters %s "
              "through two references (inputs %d and %d)",
              ref->name(), cluster.spec.name, seen[ref->var()], i);
        }
        args[i].variable = tf2hlo::VariableInfo{ref->name(), "", initialized, /*ref=*/true};
        inputs[i] = value;
        continue;
      }
      TFJIT_ASSIGN_OR_RETURN(inputs[i], Deref(inputs[i]));  // a TF1 variable's value
      continue;
    }
    const tf::Output& in = cluster.spec.inputs[i];
    const tf::Node* user = in.node;
    for (const tf::Node* n : cluster.spec.nodes) {
      if (n->num_inputs() > 0 && n->input(0) == in) {
        user = n;
        break;
      }
    }
    TFJIT_ASSIGN_OR_RETURN(
        const ResourceHandle* h,
        GetResourceHandle(inputs[i], absl::StrCat(cluster.spec.name, " input ", i)));
    if (h->device() != cluster.device) {
      if (!ctx.autofix) {
        return rules::VariableOnOtherDeviceError(h->name(), h->device(), cluster.device, *user,
                                                 h->creator(), cluster.spec.name);
      }
      if (!autofix_logged_[index].exchange(true)) {  // once per cluster and plan
        Log(LogLevel::kWarning,
            "autofix A: %s copies variable '%s' from %s to %s for each run and writes it back "
            "(node %s)",
            cluster.spec.name, h->name(), h->device(), cluster.device, user->DebugName());
      }
    }
    if (!seen.insert({h->var(), static_cast<int>(i)}).second) {
      return AttachNode(Unimplemented("Duplicate variable passed to XLA cluster: '%s' enters %s "
                                      "through two handles (inputs %d and %d)",
                                      h->name(), cluster.spec.name, seen[h->var()], i),
                        user->name(), user->op());
    }
    Tensor value = h->var()->Get();
    tf2hlo::VariableInfo info{h->name(), h->container(), value.valid()};
    if (!value.valid()) value = Tensor(h->var()->dtype(), {0});
    if (value.dtype() != h->var()->dtype()) {
      return Internal("variable '%s' holds %s, declared %s", h->name(), value.ShapeString(),
                      DTypeName(h->var()->dtype()));
    }
    inputs[i] = value;
    args[i].variable = info;
  }
  return absl::OkStatus();
}

namespace {

// Whether cluster input `i` comes straight from a Placeholder whose declared shape fixes its dim
// 0: such an input (a filter fed at run time) never carries the batch, even when its dim 0
// happens to equal the batch size of the launch that makes a symbolic class.
bool DeclaredDim0(const cluster::Cluster& cluster, size_t i) {
  if (i >= cluster.spec.inputs.size()) return false;
  const tf::Node* node = cluster.spec.inputs[i].node;
  if (node == nullptr || node->op() != "Placeholder") return false;
  absl::StatusOr<tf::PartialShape> shape = tf::GetShapeAttr(*node, "shape");
  return shape.ok() && !shape->unknown_rank && !shape->dims.empty() && shape->dims[0] >= 0;
}

}  // namespace

absl::Status Plan::RunCluster(int index, const std::vector<Tensor>& handles, const ExecContext& ctx,
                              std::vector<Tensor>* outputs, RunState& state,
                              std::vector<KernelProfile>* kernels) const {
  const cluster::Cluster& cluster = clustering_.clusters[index];
  auto run_on_kernels = [&](VariableLocks& locks) {
    locks.clear();  // the kernels lock the variables themselves
    {
      std::lock_guard<std::mutex> lock(state.mu);
      state.stats.fallbacks++;
    }
    return RunClusterWithKernels(index, handles, ctx, outputs);
  };
  // Step 1. Variables the cluster writes stay locked from their read to their write-back, so
  // a concurrent run's update cannot be lost between the two.
  VariableLocks locks = LockWrittenVariables(resource_updates_[index], handles);
  std::vector<Tensor> inputs = handles;
  std::vector<tf2hlo::ArgInfo> args(inputs.size());
  absl::Status read = ReadClusterVariables(index, inputs, args, ctx);
  if (!read.ok()) {
    // Auto clusters never fail for what TF's auto-clustering would have kept out (e.g. a
    // variable of another device reached through a function argument): they run on kernels.
    if (cluster.must_compile || read.code() == absl::StatusCode::kInternal) return read;
    Log(LogLevel::kInfo, "%s runs on CPU kernels: %s", cluster.spec.name, read.message());
    return run_on_kernels(locks);
  }
  // Step 2.
  std::string key =
      LaunchKey(ctx, cluster_keys_[index], cluster, inputs, const_inputs_[index], args);
  TFJIT_ASSIGN_OR_RETURN(const backends::Backend* backend, BackendFor(ctx, cluster.device));
  // Which executable serves these shapes (shape_policy.h): a symbolic one that could not be
  // made leaves the launch to a static compile.
  std::vector<std::vector<int64_t>> dims;
  std::vector<bool> eligible;
  for (size_t i = 0; ctx.shapes != ShapeMode::kStatic && i < inputs.size(); ++i) {
    dims.push_back(inputs[i].dims());
    eligible.push_back(inputs[i].rank() >= 1 && !args[i].variable.has_value() &&
                       std::find(const_inputs_[index].begin(), const_inputs_[index].end(),
                                 static_cast<int>(i)) == const_inputs_[index].end() &&
                       !DeclaredDim0(cluster, i));
  }
  ShapeChoice choice = shapes_[index].Choose(ctx.shapes, dims, eligible);
  if (choice.kind == ShapeChoice::Kind::kSymbolic && !backend->compiles_symbolic()) {
    shapes_[index].MarkFailed(
        choice.class_key,
        absl::StrCat("the ", backend->name(), " backend compiles a cluster per batch size"));
    choice = ShapeChoice{};  // static
  }
  // Buckets (SessionOptions::batch_buckets): a class whose rows are independent runs a batch
  // size a bucket holds on that bucket's static executable, its batch inputs padded.
  int64_t bucket = 0;
  std::shared_ptr<const hlo::RowAnalysis> rows;
  if (choice.kind == ShapeChoice::Kind::kSymbolic && ctx.batch_buckets != nullptr &&
      random_nodes_[index].empty()) {
    bucket = BucketFor(*ctx.batch_buckets, choice.batch);
    for (size_t i = 0; bucket > 0 && i < inputs.size(); ++i) {
      if (choice.batch_inputs[i] && !IsNumericDType(inputs[i].dtype())) bucket = 0;
    }
    if (bucket > 0) {
      rows = shapes_[index].RowsOf(choice.class_key);
      if (rows == nullptr) {
        ScopedRunControl scope(ctx.control, AllocationMode::kUncharged);
        TFJIT_ASSIGN_OR_RETURN(hlo::RowAnalysis analysis,
                               AnalyzeClassRows(cluster, args, choice, ctx));
        if (!analysis.independent) {
          Log(LogLevel::kInfo, "%s does not run padded to buckets: %s", cluster.spec.name,
              analysis.reason);
        }
        shapes_[index].SetRows(choice.class_key, std::move(analysis));
        rows = shapes_[index].RowsOf(choice.class_key);
      }
      if (rows == nullptr || !rows->independent) bucket = 0;
    }
  }
  const ShapeChoice served = choice;  // the class, for the bookkeeping after the run
  if (bucket > 0) {
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (!choice.batch_inputs[i]) continue;
      if (bucket != choice.batch) inputs[i] = PadRows(inputs[i], bucket);
      args[i].dims[0] = bucket;
    }
    key = LaunchKey(ctx, cluster_keys_[index], cluster, inputs, const_inputs_[index], args);
    choice = ShapeChoice{};  // the bucket's static executable
  }
  if (choice.kind == ShapeChoice::Kind::kTooMany && !cluster.must_compile) {
    Log(LogLevel::kInfo,
        "%s has compiled for %d shapes and none serves these; it runs on kernels for new "
        "shapes (--shapes static lifts the cap)",
        cluster.spec.name, kMaxStaticShapes);
    return run_on_kernels(locks);
  }
  double compile_ms = 0;
  bool hit = false;
  absl::StatusOr<CompilationCache::ExecutablePtr> exe;
  {
    // Compiling honours the run's deadline and cancellation at every stage (and waiting for
    // another run's compile of the same key does too); what it allocates is not the run's.
    ScopedRunControl scope(ctx.control, AllocationMode::kUncharged);
    bool compile_static = choice.kind != ShapeChoice::Kind::kSymbolic;
    if (choice.kind == ShapeChoice::Kind::kSymbolic) {
      const std::string sym_key = SymbolicLaunchKey(ctx, cluster_keys_[index], cluster, inputs,
                                                    const_inputs_[index], choice);
      exe = ctx.cache->GetOrCompile(
          sym_key,
          [&] {
            return CompileSymbolicCluster(cluster, args, choice, *backend, ctx, sym_key,
                                          &compile_ms);
          },
          &hit);
      if (!exe.ok() && (exe.status().code() == absl::StatusCode::kFailedPrecondition ||
                        exe.status().code() == absl::StatusCode::kUnimplemented)) {
        if (shapes_[index].MarkFailed(choice.class_key, std::string(exe.status().message()))) {
          Log(LogLevel::kInfo, "%s compiles per batch size: %s", cluster.spec.name,
              exe.status().message());
        }
        compile_static = true;
      }
    }
    if (compile_static) {
      exe = ctx.cache->GetOrCompile(
          key, [&] { return CompileCluster(cluster, args, *backend, ctx, key, &compile_ms); },
          &hit);
    }
  }
  if (!exe.ok() && IsRunStop(exe.status())) {
    return AppendContext(exe.status(), absl::StrCat("while compiling ", cluster.spec.name));
  }
  if (!exe.ok()) {
    const absl::Status& s = exe.status();
    // An auto cluster that cannot compile runs on kernels, whatever the reason (a user
    // error the compiler sees, e.g. an unbounded list, is raised again by the kernels if
    // the runtime has it too); only our own bugs (INTERNAL) surface.
    if (cluster.must_compile || s.code() == absl::StatusCode::kInternal) {
      return AppendContext(s, absl::StrCat("while compiling ", cluster.spec.name, " (",
                                           cluster.spec.nodes.size(), " nodes)"));
    }
    if (!hit) LearnFailingNodes(cluster, s, graph_, learned_.get());
    return run_on_kernels(locks);
  }
  // Step 3. Known issue E: each stateful random node gets its Philox state as an extra
  // parameter (random_kernels.h: XLA's unseeded stream, or with --autofix the kernel's own,
  // locked until the advanced state the cluster returns is installed).
  std::vector<CompiledRandomState> rng;
  for (const tf::Node* node : random_nodes_[index]) {
    // A While/If drawing in its bodies has no kernel stream to continue: XLA's unseeded one.
    const bool honour_seeds = ctx.autofix && rules::IsStatefulRandomOp(node->op());
    TFJIT_ASSIGN_OR_RETURN(CompiledRandomState s,
                           AcquireCompiledRandomState(ctx.kernel_state, *node, honour_seeds));
    inputs.push_back(s.state());
    rng.push_back(std::move(s));
  }
  TFJIT_RETURN_IF_ERROR(Execute(**exe, std::move(inputs), cluster, ctx, outputs, kernels));
  if (bucket > 0 && bucket != served.batch) {
    // The padding rows' results go; results that are not along the batch stay as they are.
    if (rows->batch_results.size() != outputs->size()) {
      return Internal("%s returned %d results for a bucket, its row analysis has %d",
                      cluster.spec.name, outputs->size(), rows->batch_results.size());
    }
    for (size_t k = 0; k < outputs->size(); ++k) {
      if (rows->batch_results[k]) (*outputs)[k] = FirstRows((*outputs)[k], served.batch);
    }
  }
  if (bucket > 0) {
    shapes_[index].MarkServed(served.class_key, bucket);
  } else if ((*exe)->module().batch_representative() != 0) {
    shapes_[index].MarkServed(served.class_key, 0);
  }
  // Step 4.
  TFJIT_RETURN_IF_ERROR(
      InstallResults(cluster, **exe, handles, resource_updates_[index], rng, ctx,
                     (*exe)->module().batch_representative() != 0 ? served.batch : 0, outputs));
  std::lock_guard<std::mutex> lock(state.mu);
  RecordLaunch(cluster, **exe, hit, compile_ms, bucket, state.stats);
  return absl::OkStatus();
}

}  // namespace tfjit::runtime
