// FunctionRuntime: runs call nodes (PartitionedCall, StatefulPartitionedCall, direct calls) and
// the functions of While/If nodes by instantiating each body once per (function, attrs, jit
// mode) and running its Plan.
#ifndef TFJIT_RUNTIME_FUNCTION_RUNTIME_H_
#define TFJIT_RUNTIME_FUNCTION_RUNTIME_H_

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "compiler/cluster/clustering.h"
#include "frontend/function.h"
#include "frontend/graph.h"
#include "runtime/executor.h"
#include "tfjit/session.h"

namespace tfjit::runtime {

// One active call, linked to its caller: detects recursion and passes must-compile down (a
// function called from a must-compile body compiles as part of it, as XLA inlines it).
struct CallFrame {
  std::string function;
  bool must_compile = false;
  const CallFrame* caller = nullptr;
};

// The jit mode a function body runs in: kNone when the session's mode is kNone or the
// function says `_XlaMustCompile: false`; kAll when it (or a caller) must compile; otherwise
// the session's mode.
cluster::JitMode FunctionBodyMode(cluster::JitMode session_mode, std::optional<bool> must_compile,
                                  bool caller_must_compile);

// Per session. Thread-safe.
class FunctionRuntime {
 public:
  // `device`: where bodies run when the call site has no device; `logical_cpus`: the CPU
  // devices that exist (a body node may ask for any of them).
  FunctionRuntime(const tf::Graph& graph, cluster::JitMode mode, std::string device,
                  int logical_cpus = 1, bool autofix = false);
  // Auto-clustering's size limits for function bodies (SessionOptions).
  void SetClusterSizes(int min_size, int max_size) {
    min_cluster_size_ = min_size;
    max_cluster_size_ = max_size;
  }

  // Runs `node`'s function on `inputs` (one per flat input), filling one output per flat
  // output. The body runs inline (ctx.inter_op is not used). Statistics of the body's run are
  // added to *stats. Errors from the body end with "in function 'f' called by node 'n'".
  absl::Status Call(const tf::Node& node, const std::vector<Tensor>& inputs, const ExecContext& ctx,
                    std::vector<Tensor>* outputs, RunStats* stats);

  // Runs the function named by func attr `fn_attr` of `call_site` ("cond", "body",
  // "then_branch", ...: a NameAttrList, instantiated with its own attrs) on `inputs`, filling
  // one output per flat output of the function. Same rules as Call (recursion guard, jit mode
  // of the body, statistics, error context); the caller checks the outputs' types.
  absl::Status CallFunction(const tf::Node& call_site, const std::string& fn_attr,
                            const std::vector<Tensor>& inputs, const ExecContext& ctx,
                            std::vector<Tensor>* outputs, RunStats* stats);

  // Instantiated bodies so far (each with its Plan).
  size_t num_instances() const;

 private:
  struct Instance {
    std::string key;
    tf::FunctionBody body;
    std::unique_ptr<Plan> plan;
    size_t num_outputs = 0;  // body.outputs; the control sink, if any, is fetched after them
    bool must_compile = false;
  };
  // Runs `call` for `node` (the call site named in errors); `tin_hint` ends the message for
  // an input of the wrong type.
  absl::Status Invoke(const tf::Node& node, const tf::FunctionCall& call,
                      std::optional<bool> must_compile_attr, const std::vector<Tensor>& inputs,
                      const ExecContext& ctx, std::vector<Tensor>* outputs, RunStats* stats,
                      absl::string_view tin_hint);
  absl::StatusOr<std::shared_ptr<const Instance>> GetInstance(const tf::FunctionCall& call,
                                                              cluster::JitMode mode,
                                                              bool must_compile,
                                                              const std::string& device);

  Placement BodyPlacement(const std::string& device) const;

  const tf::Graph& graph_;
  const cluster::JitMode mode_;
  const std::string device_;
  const int logical_cpus_;
  const bool autofix_;
  int min_cluster_size_ = 1;
  int max_cluster_size_ = 0;
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const Instance>> instances_;
};

}  // namespace tfjit::runtime

#endif  // TFJIT_RUNTIME_FUNCTION_RUNTIME_H_
