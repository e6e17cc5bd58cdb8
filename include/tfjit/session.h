// Public embedding API: load a TF model, run it with feeds and fetches, JIT-compiling what the
// jit mode allows.
#ifndef TFJIT_INCLUDE_TFJIT_SESSION_H_
#define TFJIT_INCLUDE_TFJIT_SESSION_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "tfjit/cancellation.h"
#include "tfjit/status.h"
#include "tfjit/tensor.h"

namespace tfjit {

enum class JitMode {
  kNone,  // nothing compiles, must-compile attrs ignored: the uncompiled reference run
  kOff,   // no auto-clustering; only must-compile functions compile (TF's default)
  kAuto,  // auto-clustering: compile what can be compiled, run the rest in the runtime
  kAll,   // the whole graph must compile as one unit, or Run fails
};

// The --jit spelling of a mode: "none", "off", "auto" or "all".
const char* JitModeName(JitMode mode);
// The mode a --jit spelling names; INVALID_ARGUMENT listing the four otherwise.
StatusOr<JitMode> ParseJitMode(const std::string& text);

// How a compiled cluster covers the input shapes it meets (--shapes).
enum class ShapeMode {
  kStatic,    // one executable per distinct input shape, as XLA compiles
  kAuto,      // static for the first shape; from the second batch size (dim 0 of the inputs
              // that carry it) one symbolic executable serves every batch size >= 2; at most
              // 8 static executables per cluster, new shapes past that run on kernels
  kSymbolic,  // the symbolic executable from the first launch on (batch sizes >= 2)
};
// The --shapes spelling of a mode: "static", "auto" or "symbolic".
const char* ShapeModeName(ShapeMode mode);
// The mode a --shapes spelling names; INVALID_ARGUMENT listing the three otherwise.
StatusOr<ShapeMode> ParseShapeMode(const std::string& text);

struct SessionOptions {
  JitMode jit = JitMode::kAuto;
  // How compiled clusters cover varying input shapes (batch sizes) without compiling again
  // for each (docs/USER_GUIDE.md, "Varying batch sizes").
  ShapeMode shapes = ShapeMode::kAuto;
  // Batch sizes (each >= 2) a cluster may run padded to, e.g. a server's allowed batch sizes:
  // a batch size that would run on a symbolic executable runs instead on the static executable
  // of the smallest bucket that holds it, its batch inputs padded with copies of their last
  // row and the padding rows' results dropped, when an analysis proves the cluster keeps
  // batch rows apart (no reduction, reshape, GEMM or gather mixes them). Larger sizes, and
  // clusters that mix rows, keep the symbolic executable. Empty: no buckets.
  std::vector<int64_t> batch_buckets;
  // Beyond-TF fixes for the known XLA interop issues (default off: TF's behaviour).
  bool autofix = false;
  // Auto-clustering's limits, in graph nodes (TF's --tf_xla_min_cluster_size and
  // --tf_xla_max_cluster_size): a cluster smaller than the minimum stays in the runtime;
  // merging stops before a cluster passes the maximum (0: no maximum).
  int min_cluster_size = 1;
  int max_cluster_size = 0;
  // Number of logical CPU devices (CPU:0 .. CPU:n-1).
  int logical_cpus = 1;
  // Default device for nodes without one: "cpu:0", "CPU:1", "/device:CPU:0", full TF names.
  std::string device = "cpu:0";
  // Threads that run independent nodes (inter-op) and split work inside kernels (intra-op);
  // 0 = one per core.
  int inter_op_threads = 0;
  int intra_op_threads = 0;
  // What compiled clusters run on: "cpu" (LLVM JIT for the host) or "interpreter" (the HLO
  // reference evaluator; slow, for debugging and differential tests).
  std::string backend = "cpu";
  // When set, compiled modules are written here: one .hlo per cluster and input signature (the
  // optimized module), and, for the modules whose passes match dump_hlo_pass_regex, the HLO
  // after each matching pass plus the LLVM IR (and PTX for a GPU) compiled.
  std::string dump_dir;
  // With dump_dir: a regular expression (RE2-like ECMAScript syntax) over pass names ("simplify",
  // "fusion", ...); the module is dumped after each pass whose name it matches. Empty: none.
  std::string dump_hlo_pass_regex;
  // Persistent cache of compiled code: clusters compiled by the "cpu" backend are stored in
  // this directory, and a later session (in this process or another) compiling the same
  // cluster on the same CPU with the same LLVM and tfjit build loads the code instead of
  // compiling it. Entries are checksummed; a damaged one is ignored and replaced. Empty: the
  // TFJIT_CACHE_DIR environment variable when set, else no disk cache.
  std::string compile_cache_dir;
  // The cache directory's size cap (least recently used entries are deleted past it).
  int64_t compile_cache_max_bytes = int64_t{1} << 30;
  // SavedModel / TF.js: the signature whose keys feeds and fetches may use. Empty: the
  // "serving_default" signature when the model has one, else its only signature, else none.
  std::string signature;
  // SavedModel: the MetaGraphDef whose tag set contains all of these.
  std::vector<std::string> tags = {"serve"};
  // Cap on the bytes of tensors that runs allocate and that are still alive (kernel outputs
  // and temporaries, compiled clusters' outputs and scratch arenas, TensorList/TensorArray
  // elements, variable values written by runs, outputs the caller still holds). A run that
  // would pass it fails RESOURCE_EXHAUSTED before allocating. 0 = no cap. Whatever the cap,
  // one tensor larger than the machine's memory (or 2^40 bytes) is always refused.
  int64_t memory_limit_bytes = 0;
  // A cluster whose compilation takes more than a second says so on stderr when it starts
  // and when it ends; shorter ones print nothing. The CLI and the Python module turn this on
  // when stderr is a terminal.
  bool show_compile_progress = false;
  // Default deadline of every Run in milliseconds (RunOptions::timeout_ms overrides it);
  // 0 = none. A run past it fails DEADLINE_EXCEEDED.
  int64_t run_timeout_ms = 0;
  // LLVM's optimisation level for clusters compiled by the "cpu" backend, 0..3 (XLA's
  // --xla_backend_optimization_level): 3 optimises fully; lower levels compile faster and run
  // slower, with the same results. GPU code is always optimised fully.
  int backend_optimization_level = 3;
};

// TensorFlow's environment switches, applied to `base` the way TF reads them (the CLI and the
// Python module start from this, so their explicit options override the environment; Session::
// Load itself never reads TF_XLA_FLAGS or XLA_FLAGS):
//   TF_XLA_FLAGS  --tf_xla_auto_jit=-1|0|1|2|single-gpu(N)  1 and 2: auto-clustering (jit
//                 kAuto); -1 and 0: off (kOff).
//                 --tf_xla_cpu_global_jit[=true|false]  true: auto-clustering (TF needs it with
//                 --tf_xla_auto_jit for the CPU; tfjit, whose first device is the CPU, takes
//                 either).
//                 --tf_xla_min_cluster_size=N, --tf_xla_max_cluster_size=N
//   XLA_FLAGS     --xla_dump_to=DIR  (dump_dir; with no pass regex, every pass is dumped)
//                 --xla_dump_hlo_pass_re=REGEX  (dump_hlo_pass_regex)
//                 --xla_backend_optimization_level=0..3  (backend_optimization_level)
// Other flags in those variables are ignored with a warning. INVALID_ARGUMENT naming the
// variable and the flag for a malformed one.
StatusOr<SessionOptions> SessionOptionsFromEnvironment(SessionOptions base = {});
// The same from the variables' values (empty: unset).
StatusOr<SessionOptions> ApplyTfFlags(SessionOptions base, const std::string& tf_xla_flags,
                                      const std::string& xla_flags);

// Per-run limits (Session::Run's RunOptions overload).
struct RunOptions {
  // Deadline in milliseconds: 0 = SessionOptions::run_timeout_ms; < 0 = no deadline.
  int64_t timeout_ms = 0;
  // Optional; shared so the canceller may outlive or predate the run.
  std::shared_ptr<const CancellationToken> cancel;
  // Time every unit of the run (each compiled cluster and each node run by a kernel), and
  // each kernel inside compiled clusters, into RunStats::profile. Costs two clock reads per
  // unit and per compiled kernel.
  bool profile = false;
};

// One kernel of a compiled cluster in a profiled run (UnitProfile::kernels): a loop nest or
// library call of the generated code, with what it fused.
struct KernelProfile {
  std::string name;   // the HLO instruction it computes ("fusion.12", "convolution.3")
  std::string ops;    // its HLO ops ("convolution+add+clamp")
  int64_t calls = 0;  // more than 1 inside compiled loops
  double ms = 0;      // wall time, summed over the calls
  int64_t bytes = 0;  // its operands and results, summed over the calls
  int64_t flops = 0;  // of its dots and convolutions (2 per multiply-add), summed over the calls
};

// One unit's share of a profiled run (RunOptions::profile).
struct UnitProfile {
  std::string name;  // the cluster ("cluster_0") or the node
  std::string kind;  // "cluster" or the node's op type
  bool compiled = false;
  int calls = 0;             // more than 1 inside loops
  double ms = 0;             // wall time, summed over the calls
  int64_t input_bytes = 0;   // bytes of the tensors it read
  int64_t output_bytes = 0;  // bytes of the tensors it wrote
  // A compiled cluster's kernels (CPU), slowest first; their times leave out what runs
  // between kernels (loop control, copies, the call's setup).
  std::vector<KernelProfile> kernels;
  // A compiled cluster's executables so far in this plan, by shape class, e.g. "static x1,
  // symbolic (batch >= 2) x1"; a class that could not be symbolic follows on a line of its
  // own with why.
  std::string shapes;
};

// A graph input (Placeholder): its tensor name, dtype and dims (-1 = any size).
struct InputInfo {
  std::string name;    // what to feed: the signature key, or the tensor name without a signature
  std::string tensor;  // the graph tensor behind it ("node:0")
  DType dtype = DType::kInvalid;
  std::vector<int64_t> dims;
  bool unknown_rank = false;
};

// What one Run did.
// One cluster compiled (or loaded from the disk cache) during a run.
struct ClusterCompile {
  std::string cluster;     // "cluster_0", ...
  int nodes = 0;           // graph nodes in it
  double compile_ms = 0;   // all of it: the three below
  double lowering_ms = 0;  // TF graph to HLO
  double passes_ms = 0;    // the backend's HLO passes (fusion included)
  double codegen_ms = 0;   // IR emission, LLVM and linking; or loading from the disk cache
  int kernels = 0;         // loops and library calls emitted
  bool from_disk_cache = false;
  // "static", or "symbolic (batch >= 2)" for one executable that serves every batch size.
  std::string shape_class = "static";
};

struct RunStats {
  int clusters = 0;        // compiled clusters executed
  int nodes_compiled = 0;  // graph nodes inside those clusters
  int nodes_total = 0;     // nodes the run needed
  double compile_ms = 0;   // compilation time spent in this run (0 on cache hits)
  double run_ms = 0;       // wall time of the run
  int cache_hits = 0;
  // Compilations this run loaded from SessionOptions::compile_cache_dir instead of compiling
  // (their time counts in compile_ms).
  int disk_cache_hits = 0;
  // Each cluster this run compiled, in the order they finished (empty when all were cached).
  std::vector<ClusterCompile> compiles;
  // Floating-point operations of the convolutions and dots in the compiled clusters this run
  // executed (2 per multiply-add; a loop body counts once). Kernels run outside clusters do
  // not count, so with --jit off this is 0.
  int64_t flops = 0;
  int fallbacks = 0;  // clusters that fell back to kernels (UNIMPLEMENTED lowering)
  // Bytes the compiled clusters copied into their results from their inputs or constants (a
  // value passed through unchanged). A variable update is written by the kernel that computes
  // it into the new value's buffer, which replaces the old one: a compiled training step
  // copies none of its variables (tfjit train --profile shows this per step).
  int64_t bytes_copied = 0;
  // With SessionOptions::memory_limit_bytes: the session's tensor bytes in use, at most, while
  // this run went (0 without a cap).
  int64_t peak_memory_bytes = 0;
  // With RunOptions::profile: every unit that ran, slowest first (function bodies' units
  // included, by their own names).
  std::vector<UnitProfile> profile;
};

// Thread safety: Run may be called concurrently from several threads.
class Session {
 public:
  // Loads a model: a GraphDef (.pb binary or .pbtxt text), a SavedModel directory, or a TF.js
  // graph model (model.json + shards). A SavedModel's variables are restored and its init op
  // run before Load returns. Errors: NOT_FOUND (no file, no such signature), INVALID_ARGUMENT
  // (malformed file or graph), DATA_LOSS (corrupt or truncated weights/checkpoint),
  // UNIMPLEMENTED (unknown ops, listed together), FAILED_PRECONDITION (device absent).
  static StatusOr<std::unique_ptr<Session>> Load(const std::string& model_path,
                                                 const SessionOptions& options = {});
  ~Session();

  // Feeds are (name, value): a key of the session's signature, or a tensor name "x" / "x:0".
  // Fetches are signature output keys or tensor names. Returns one tensor
  // per fetch. Errors name the node; a wrong feed dtype/shape is INVALID_ARGUMENT.
  StatusOr<std::vector<Tensor>> Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                    const std::vector<std::string>& fetches,
                                    RunStats* stats = nullptr);
  // As above, and also runs `targets`: nodes run for their effect (TF's target nodes), e.g.
  // an AssignVariableOp or an initializer NoOp. Variables persist across runs.
  StatusOr<std::vector<Tensor>> Run(const std::vector<std::pair<std::string, Tensor>>& feeds,
                                    const std::vector<std::string>& fetches,
                                    const std::vector<std::string>& targets,
                                    RunStats* stats = nullptr);
  // As above, with a deadline and/or a cancellation token. A run stops between nodes and at
  // every loop iteration (runtime loops, TF1 frames, and While loops compiled into clusters):
  // DEADLINE_EXCEEDED (elapsed time, limit, the node where it stopped) or CANCELLED. A run that
  // fails or stops, in any jit mode, puts back every variable it assigned: a training step's
  // updates land all together or not at all (TF keeps those of the nodes that ran). The
  // session stays usable. One kernel is not interrupted in the middle. `targets` has no default, so
  // that `Run({}, {}, {"init"})` stays the overload above.
  StatusOr<std::vector<Tensor>> Run(const RunOptions& run_options,
                                    const std::vector<std::pair<std::string, Tensor>>& feeds,
                                    const std::vector<std::string>& fetches,
                                    const std::vector<std::string>& targets,
                                    RunStats* stats = nullptr);

  // Writes the current values of a SavedModel's variables as a TF checkpoint at `prefix`
  // (`prefix.index`, `prefix.data-00000-of-00001`), under the keys of the checkpoint the model
  // was loaded from; every other entry of that checkpoint (its object graph, counters) is
  // copied unchanged. Written over `<dir>/variables/variables`, it makes the trained SavedModel,
  // which TF and tfjit load. FAILED_PRECONDITION for a model that is not a SavedModel with
  // variables; INVALID_ARGUMENT naming the path when it cannot be written (nothing is left
  // half-written).
  Status SaveVariables(const std::string& prefix);

  // With SessionOptions::memory_limit_bytes: bytes of tensors that this session's runs
  // allocated and that are still alive (see the option); 0 without a cap.
  int64_t MemoryInUse() const;

  // The signature's inputs when the session has one; otherwise the graph's Placeholders, in
  // graph order.
  std::vector<InputInfo> Inputs() const;
  // The signature's output keys when the session has one; otherwise the tensors no node
  // consumes (outputs 0.. of sink nodes).
  std::vector<std::string> DefaultFetches() const;
  // The name of the signature feeds and fetches resolve against ("" when none), and the
  // names of all signatures of the model.
  std::string SignatureName() const;
  std::vector<std::string> SignatureNames() const;
  // Human-readable clustering report for these fetches: each cluster with its nodes, and every
  // node left out with the reason. A fetch written "^node" is a target, run for its effect (a
  // training step's "train" op), as in Run's `targets`.
  StatusOr<std::string> Explain(const std::vector<std::string>& fetches) const;
  // The same as a Graphviz graph (DOT text): every node the fetches need, each cluster a
  // coloured box around its nodes, every node left out white with its reason, data edges
  // solid and control edges dashed. `dot -Tsvg` draws it (tfjit explain --format svg).
  StatusOr<std::string> ExplainDot(const std::vector<std::string>& fetches) const;

  const SessionOptions& options() const;

 private:
  struct Impl;
  explicit Session(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace tfjit

#endif  // TFJIT_INCLUDE_TFJIT_SESSION_H_
