// Loop analysis for the auto-fixes of known issues C, D and F: proves the trip count of a
// functional While (and the values its control variables take) by running its loop control on
// the host. The control variables are the loop variables the condition depends on, closed
// under the body's dependencies; the analysis succeeds only when they are scalars with values
// known at compile time, computed by ops this file can evaluate exactly.
#ifndef TFJIT_COMPILER_TF2HLO_LOOP_ANALYSIS_H_
#define TFJIT_COMPILER_TF2HLO_LOOP_ANALYSIS_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "frontend/function.h"
#include "frontend/graph.h"

namespace tfjit::tf2hlo {

// Loops longer than this are not traced (the trace would cost more than it proves).
inline constexpr int64_t kMaxTracedTripCount = 1 << 20;
// The auto-fix of known issue F unrolls loops of at most this many iterations (each copy of
// the body is lowered and compiled separately, so compile time grows with it).
inline constexpr int64_t kMaxUnrolledIterations = 64;

struct LoopTrace {
  int64_t trip_count = 0;
  // Control variables (loop-variable indices, ascending) and, per variable, its value at the
  // start of each iteration (trip_count entries; bool: 0/1).
  std::vector<int> control_vars;
  std::vector<std::vector<double>> values;
  // The values of control variable `var` across iterations, or nullptr when it is not one.
  const std::vector<double>* ValuesOf(int var) const;
};

// Traces `while_node` (While/StatelessWhile). `initial` holds the value of each loop variable
// on entry when known at compile time (scalars matter; others may be nullopt). nullopt with
// `*why` set when the trip count cannot be proven.
std::optional<LoopTrace> TraceLoop(const tf::Node& while_node,
                                   const std::vector<std::optional<double>>& initial,
                                   std::string* why);

// The compile-time value of a scalar tensor in the graph: Const nodes and exact scalar
// arithmetic on them (the ops TraceLoop evaluates); nullopt otherwise.
std::optional<double> ScalarConstantValue(const tf::Output& output);

// The functional While that consumes `list` as a loop variable (directly or through
// Identity), with the loop-variable index; nullptr when there is none.
const tf::Node* ConsumingWhile(const tf::Output& list, int* var_index);

// How many elements a loop adds to its list loop variable `var` per iteration, when the
// body's path from that input to that output is a chain of PushBack/SetItem/Identity nodes
// (PushBack adds one); nullopt for any other structure (e.g. pushes inside an If).
std::optional<int> PushesPerIteration(const tf::FunctionBody& body, int var);

// The body's nodes on the path from list loop variable `var`'s input to its output when that
// path is a chain of PushBack/SetItem/identities (output side first); empty otherwise.
std::vector<const tf::Node*> ListChain(const tf::FunctionBody& body, int var);

// For a list loop variable `var` written by TensorListSetItem in the body: the loop
// variable that is its index (through Identity), or -1.
int SetItemIndexVar(const tf::FunctionBody& body, int var);

}  // namespace tfjit::tf2hlo

#endif  // TFJIT_COMPILER_TF2HLO_LOOP_ANALYSIS_H_
