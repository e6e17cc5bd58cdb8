// Fallback kernel interface: one function per TF op, run by the executor on host tensors.
#ifndef TFJIT_RUNTIME_KERNELS_KERNEL_H_
#define TFJIT_RUNTIME_KERNELS_KERNEL_H_

#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/thread_pool.h"
#include "frontend/graph.h"
#include "runtime/resource_mgr.h"
#include "tfjit/tensor.h"

namespace tfjit::runtime {

// Mutable per-node state of stateful kernels (TF keeps it in the per-session OpKernel object;
// tfjit kernels are plain functions): e.g. the Philox generator of RandomUniform, which
// advances across runs. Entries live as long as the store; thread-safe.
class KernelState {
 public:
  virtual ~KernelState() = default;
};
class KernelStateStore {
 public:
  // The node's state, created by `make()` on first use. Callers synchronise access to the
  // state's own fields themselves (the store only guards the map).
  template <typename S, typename Make>
  S* GetOrCreate(const tf::Node* node, Make make) {
    std::lock_guard<std::mutex> lock(mu_);
    std::unique_ptr<KernelState>& slot = states_[node];
    if (slot == nullptr) slot = make();
    return static_cast<S*>(slot.get());
  }

 private:
  std::mutex mu_;
  absl::flat_hash_map<const tf::Node*, std::unique_ptr<KernelState>> states_;
};

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
  // Per-session store for stateful kernels; null when the runner provides none (then
  // stateful kernels fall back to a process-wide store keyed by node address).
  KernelStateStore* state_store() const { return state_store_; }
  void set_state_store(KernelStateStore* store) { state_store_ = store; }
  // The device the node runs on (full TF name) and that device's variables. Resource kernels
  // fail FAILED_PRECONDITION when the runner provides no ResourceMgr.
  const std::string& device() const { return device_; }
  ResourceMgr* resources() const { return resources_; }
  void set_device(std::string device, ResourceMgr* resources) {
    device_ = std::move(device);
    resources_ = resources;
  }

 private:
  const tf::Node& node_;
  const std::vector<Tensor>& inputs_;
  ThreadPool* pool_;
  std::vector<Tensor> outputs_;
  KernelStateStore* state_store_ = nullptr;
  std::string device_ = "/job:localhost/replica:0/task:0/device:CPU:0";
  ResourceMgr* resources_ = nullptr;
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
void RegisterMathKernels(KernelRegistry& registry);         // kernels/math_kernels.cc
void RegisterArrayKernels(KernelRegistry& registry);        // kernels/array_kernels.cc
void RegisterNnKernels(KernelRegistry& registry);           // kernels/nn_kernels.cc
void RegisterDebugKernels(KernelRegistry& registry);        // kernels/graph_debug_kernels.cc
void RegisterRandomKernels(KernelRegistry& registry);       // kernels/random_kernels.cc
void RegisterVariableKernels(KernelRegistry& registry);     // kernels/state_variable_kernels.cc
void RegisterListKernels(KernelRegistry& registry);         // kernels/state_list_kernels.cc
void RegisterTensorArrayKernels(KernelRegistry& registry);  // kernels/state_tensor_array_kernels.cc
void RegisterAllKernels(KernelRegistry& registry);
// Whether `input` of `node` receives a TF1 variable reference itself (Assign's ref) rather
// than the variable's value; the executor dereferences every other input.
bool TakesVariableRef(const tf::Node& node, int input);  // kernels/kernel_registry.cc

}  // namespace tfjit::runtime

#endif  // TFJIT_RUNTIME_KERNELS_KERNEL_H_
