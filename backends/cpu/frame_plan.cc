// The CPU's frame planning: the shared FrameAssignment over BufferPlan's slots.
#include "backends/cpu/frame_plan.h"

#include "absl/strings/str_cat.h"

namespace tfjit::cpu {
namespace {

// BufferPlan as the shared assignment's buffer table.
class PlanSource : public passes::BufferSource {
 public:
  explicit PlanSource(BufferPlan& plan) : plan_(plan) {}
  int NewBuffer(const hlo::Instruction& value, const hlo::Shape& leaf) override {
    return plan_.AddBuffer(leaf.byte_size(), absl::StrCat("%", value.name()));
  }
  void DropBuffer(int id) override { plan_.DropBuffer(id); }
  bool MayWrite(int id) const override { return !plan_.IsParameterSlot(id); }

 private:
  BufferPlan& plan_;
};

}  // namespace

passes::BufferPolicy CpuBufferPolicy() {
  passes::BufferPolicy policy;
  policy.reshape_aliases = true;   // row-major: the same bytes
  policy.scatter_in_place = true;  // the scatter loops read each update once
  return policy;
}

absl::StatusOr<FramePlan> PlanFrame(const hlo::Computation& computation, std::vector<Leaves> params,
                                    bool params_writable, BufferPlan& buffers) {
  PlanSource source(buffers);
  return FramePlan::Build(computation, std::move(params), params_writable, CpuBufferPolicy(),
                          source);
}

}  // namespace tfjit::cpu
