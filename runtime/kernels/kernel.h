// Fallback kernel interface: one function per TF op, run by the executor on host tensors.
#ifndef TFJIT_RUNTIME_KERNELS_KERNEL_H_
#define TFJIT_RUNTIME_KERNELS_KERNEL_H_

#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "core/thread_pool.h"
#include "frontend/graph.h"
#include "tfjit/tensor.h"

namespace tfjit::runtime {

// What a kernel sees: its node (attrs), its input tensors and where its outputs go.
class KernelContext {
 public:
  KernelContext(const tf::Node& node, const std::vector<Tensor>& inputs, ThreadPool* pool)
      : node_(node), inputs_(inputs), pool_(pool), outputs_(node.num_outputs()) {}

  const tf::Node& node() const { return node_; }
  int num_inputs() const { return static_cast<int>(inputs_.size()); }
  const Tensor& input(int i) const { return inputs_[static_cast<size_t>(i)]; }
  void set_output(int i, Tensor t) { outputs_[static_cast<size_t>(i)] = std::move(t); }
  std::vector<Tensor>& outputs() { return outputs_; }
  // Intra-op pool; may be null (then run inline).
  ThreadPool* pool() const { return pool_; }

 private:
  const tf::Node& node_;
  const std::vector<Tensor>& inputs_;
  ThreadPool* pool_;
  std::vector<Tensor> outputs_;
};

// Computes outputs from inputs. Errors (bad shapes, bad attrs) are INVALID_ARGUMENT with the
// node's name and op, expected vs actual, and a fix.
using KernelFn = absl::Status (*)(KernelContext& ctx);

class KernelRegistry {
 public:
  void Register(std::string op, KernelFn fn) { kernels_[std::move(op)] = fn; }
  KernelFn Find(absl::string_view op) const {
    auto it = kernels_.find(op);
    return it == kernels_.end() ? nullptr : it->second;
  }

 private:
  absl::flat_hash_map<std::string, KernelFn> kernels_;
};

// Explicit registration (no static initialisers). Each family lives in its own file.
void RegisterMathKernels(KernelRegistry& registry);     // kernels/math_kernels.cc
void RegisterArrayKernels(KernelRegistry& registry);    // kernels/array_kernels.cc
void RegisterNnKernels(KernelRegistry& registry);       // kernels/nn_kernels.cc
void RegisterDebugKernels(KernelRegistry& registry);    // kernels/debug_kernels.cc
void RegisterAllKernels(KernelRegistry& registry);      // kernels/kernel_registry.cc

}  // namespace tfjit::runtime

#endif  // TFJIT_RUNTIME_KERNELS_KERNEL_H_
