// FramePlan: where every value of one emitted instance ("frame") of a computation lives on the
// CPU: the shared buffer assignment's FrameAssignment (compiler/passes/buffer_assignment.h)
// with the CPU's policy (a reshape is its operand's bytes; dynamic-update-slice and scatter
// write into their operand's buffer where its old value is dead) and BufferPlan as the buffer
// table.
#ifndef TFJIT_BACKENDS_CPU_FRAME_PLAN_H_
#define TFJIT_BACKENDS_CPU_FRAME_PLAN_H_

#include <vector>

#include "absl/status/statusor.h"
#include "backends/cpu/buffer_plan.h"
#include "compiler/hlo/computation.h"
#include "compiler/passes/buffer_assignment.h"

namespace tfjit::cpu {

using Leaves = passes::Leaves;
using FramePlan = passes::FrameAssignment;
using passes::LeafShapes;

// The CPU's sharing rules.
passes::BufferPolicy CpuBufferPolicy();

// Plans `computation` called with one value per parameter; new buffers go to `buffers`.
// `params_writable`: the frame may update its parameters' buffers in place (a while body);
// entry parameter slots are never written.
absl::StatusOr<FramePlan> PlanFrame(const hlo::Computation& computation, std::vector<Leaves> params,
                                    bool params_writable, BufferPlan& buffers);

}  // namespace tfjit::cpu

#endif  // TFJIT_BACKENDS_CPU_FRAME_PLAN_H_
