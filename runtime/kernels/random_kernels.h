// The Philox state of stateful random nodes (RandomUniform, ...) for compiled clusters (known
// issue E): what the executor passes a cluster for each such node, and how it advances.
#ifndef TFJIT_RUNTIME_KERNELS_RANDOM_KERNELS_H_
#define TFJIT_RUNTIME_KERNELS_RANDOM_KERNELS_H_

#include <memory>
#include <mutex>

#include "absl/status/statusor.h"
#include "core/philox.h"
#include "frontend/graph.h"
#include "runtime/kernels/kernel.h"
#include "tfjit/tensor.h"

namespace tfjit::runtime {

struct StatefulGenerator;

// One compiled run's state for one stateful random node: the u64[3] [key, counter_lo,
// counter_hi] the compiled op starts from. Movable; not thread-safe.
class CompiledRandomState {
 public:
  CompiledRandomState() = default;
  CompiledRandomState(CompiledRandomState&&) noexcept;
  CompiledRandomState& operator=(CompiledRandomState&&) noexcept;
  ~CompiledRandomState();

  const Tensor& state() const { return state_; }
  // Installs `next` (the u64[3] the compiled code returns for this node) as the node's
  // generator state when seeds are honoured, and releases the generator. Without honoured
  // seeds it only releases. Call after a successful run; without it the state is unchanged.
  void Commit(const Tensor& next);

 private:
  friend absl::StatusOr<CompiledRandomState> AcquireCompiledRandomState(KernelStateStore* store,
                                                                        const tf::Node& node,
                                                                        bool honour_seeds);
  StatefulGenerator* generator_ = nullptr;
  // Held from acquisition to Commit (honoured seeds).
  std::unique_ptr<std::lock_guard<std::mutex>> lock_;
  Tensor state_;
};

// The state a compiled run of `node` starts from, from the node's per-session generator in
// `store` (null: the process-wide store the kernels also fall back to).
// - honour_seeds (SessionOptions::autofix): the kernel's own stream, seeded by the node's
//   seed/seed2 attrs as the kernel seeds it. The generator stays locked until Commit, so
//   concurrent runs (and the kernel) see the advanced state, as they do for the kernel.
// - otherwise (XLA's behaviour): seeds are ignored; run k of the node in this session (k = 0,
//   1, ...) uses the stateless scramble of (k, FNV-1a of the node name), so every run draws a
//   new stream and the first run of a session (and of a process) always gives the same bits.
absl::StatusOr<CompiledRandomState> AcquireCompiledRandomState(KernelStateStore* store,
                                                               const tf::Node& node,
                                                               bool honour_seeds);

// Input readers and the stateful generator, shared with random_more_kernels.cc.
// The shape input `i` (int32/int64 vector, no negative dimension).
absl::Status ReadRandomShape(const KernelContext& ctx, int i, std::vector<int64_t>* dims);
// The v1 seed input `i` (int32/int64 [2]) scrambled as TF's GenerateKey.
absl::Status ReadStatelessSeed(const KernelContext& ctx, int i, random::PhiloxState* state);
// The V2 key/counter/alg inputs starting at `key_i`.
absl::Status ReadStatelessKeyCounterAlg(const KernelContext& ctx, int key_i,
                                        random::PhiloxState* state);
// The node's stateful generator (seed/seed2 attrs) advanced by `blocks` Philox blocks; returns
// the state before the advance (TF's GuardedPhiloxRandom::ReserveSamples128).
absl::StatusOr<random::PhiloxState> ReserveRandomBlocks(KernelContext& ctx, uint64_t blocks);

}  // namespace tfjit::runtime

#endif  // TFJIT_RUNTIME_KERNELS_RANDOM_KERNELS_H_
