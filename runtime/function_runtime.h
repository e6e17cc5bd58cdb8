// FunctionRuntime: runs call nodes (PartitionedCall, StatefulPartitionedCall, direct calls) by
// instantiating the function body once per (function, attrs, jit mode) and running its Plan.
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
  FunctionRuntime(const tf::Graph& graph, cluster::JitMode mode, std::string device);

  // Runs `node`'s function on `inputs` (one per flat input), filling one output per flat
  // output. The body runs inline (ctx.inter_op is not used). Statistics of the body's run are
  // added to *stats. Errors from the body end with "in function 'f' called by node 'n'".
  absl::Status Call(const tf::Node& node, const std::vector<Tensor>& inputs,
                    const ExecContext& ctx, std::vector<Tensor>* outputs, RunStats* stats);

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
  absl::StatusOr<std::shared_ptr<const Instance>> GetInstance(const tf::FunctionCall& call,
                                                              cluster::JitMode mode,
                                                              bool must_compile);

  const tf::Graph& graph_;
  const cluster::JitMode mode_;
  const std::string device_;
  mutable std::mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<const Instance>> instances_;
};

}  // namespace tfjit::runtime

#endif  // TFJIT_RUNTIME_FUNCTION_RUNTIME_H_
