// The CPU buffer table layout: read-only parameter slots, then buffers placed in output tensors
// or in a 64-byte aligned arena allocated once per Run.
#include "backends/cpu/buffer_plan.h"

namespace tfjit::cpu {
namespace {

int64_t AlignUp(int64_t x) { return (x + 63) / 64 * 64; }

}  // namespace

BufferPlan::BufferPlan(int num_parameters, std::vector<hlo::Shape> output_shapes)
    : num_parameters_(num_parameters) {
  for (hlo::Shape& shape : output_shapes) {
    OutputSource source;
    source.shape = std::move(shape);
    outputs_.push_back(std::move(source));
  }
}

int BufferPlan::AddBuffer(int64_t bytes) {
  Buffer b;
  b.bytes = bytes;
  buffers_.push_back(b);
  return num_slots() - 1;
}

void BufferPlan::DropBuffer(int slot) { buffer(slot).bytes = 0; }

void BufferPlan::PlaceInOutput(int slot, int k) { buffer(slot).output = k; }

void BufferPlan::Finalize() {
  arena_bytes_ = 0;
  for (Buffer& b : buffers_) {
    b.offset = arena_bytes_;
    if (b.output < 0) arena_bytes_ += AlignUp(b.bytes);
  }
}

}  // namespace tfjit::cpu
