// EmulateGpuProgram: the GPU executable's Run on host memory.
#include "tests/unit/backends/gpu_program_emulator.h"

#include <cstring>
#include <functional>
#include <optional>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "backends/gemm_match.h"
#include "compiler/evaluator/evaluator.h"
#include "core/conv2d.h"
#include "core/status.h"

namespace tfjit::gpu {
namespace {

// cublas{S,D}gemmStridedBatched with alpha 1 and beta 0, column-major, as cuBLAS documents it.
template <typename T>
void ReferenceGemm(const CublasGemmArgs& g, const T* a, const T* b, T* c) {
  for (int batch = 0; batch < g.batch; ++batch) {
    const T* ab = a + batch * g.stride_a;
    const T* bb = b + batch * g.stride_b;
    T* cb = c + batch * g.stride_c;
    for (int j = 0; j < g.n; ++j) {
      for (int i = 0; i < g.m; ++i) {
        double sum = 0;
        for (int l = 0; l < g.k; ++l) {
          const T x = g.transa ? ab[l + static_cast<int64_t>(i) * g.lda]
                               : ab[i + static_cast<int64_t>(l) * g.lda];
          const T y = g.transb ? bb[j + static_cast<int64_t>(l) * g.ldb]
                               : bb[l + static_cast<int64_t>(j) * g.ldb];
          sum += static_cast<double>(x) * static_cast<double>(y);
        }
        cb[i + static_cast<int64_t>(j) * g.ldc] = static_cast<T>(sum);
      }
    }
  }
}

// The patch matrix [pixels, k_h * k_w * in_c] of convolution `p` from its NHWC input.
template <typename T>
void Patches(const conv::Conv2DParams& p, const T* in, T* out) {
  const int64_t taps = p.k_h * p.k_w * p.in_c;
  for (int64_t n = 0; n < p.batch; ++n) {
    for (int64_t oh = 0; oh < p.out_h; ++oh) {
      for (int64_t ow = 0; ow < p.out_w; ++ow) {
        T* row = out + ((n * p.out_h + oh) * p.out_w + ow) * taps;
        for (int64_t kh = 0; kh < p.k_h; ++kh) {
          const int64_t ih = conv::TapSource(oh, kh, p.stride_h, p.rhs_dilate_h, p.pad_top,
                                             p.lhs_dilate_h, p.in_h);
          for (int64_t kw = 0; kw < p.k_w; ++kw) {
            const int64_t iw = conv::TapSource(ow, kw, p.stride_w, p.rhs_dilate_w, p.pad_left,
                                               p.lhs_dilate_w, p.in_w);
            for (int64_t c = 0; c < p.in_c; ++c) {
              row[(kh * p.k_w + kw) * p.in_c + c] =
                  ih < 0 || iw < 0 ? T(0) : in[((n * p.in_h + ih) * p.in_w + iw) * p.in_c + c];
            }
          }
        }
      }
    }
  }
}

}  // namespace

absl::StatusOr<std::vector<Tensor>> EmulateGpuProgram(const GpuProgram& program,
                                                      const std::vector<Tensor>& args,
                                                      const hlo::Module* specialized) {
  absl::flat_hash_map<std::string, const hlo::Instruction*> by_name;
  if (specialized != nullptr) {
    for (const hlo::Computation* c : specialized->computations()) {
      for (const hlo::Instruction* inst : c->instructions()) by_name[inst->name()] = inst;
    }
  }
  // A step's instruction: its own, or the specialized module's of the same name.
  auto inst_of = [&](const GpuStep& step) -> absl::StatusOr<const hlo::Instruction*> {
    if (specialized == nullptr) return step.inst;
    auto it = by_name.find(step.inst->name());
    if (it == by_name.end()) {
      return Internal("the specialized module has no '%s'", step.inst->name());
    }
    return it->second;
  };
  std::vector<uint8_t> arena(static_cast<size_t>(program.arena_bytes) + 1);
  std::vector<uint8_t> constants(static_cast<size_t>(program.constant_bytes) + 1);
  // What each slot's producer wrote, to check reads against.
  std::vector<std::optional<std::vector<uint8_t>>> written(program.slots.size());
  auto bytes_of = [&](int slot) -> uint8_t* {
    const GpuSlot& s = program.slots[static_cast<size_t>(slot)];
    return (s.kind == GpuSlot::Kind::kConstant ? constants.data() : arena.data()) + s.offset;
  };
  auto write = [&](int slot, const void* data) {
    const size_t n = static_cast<size_t>(program.slots[static_cast<size_t>(slot)].bytes);
    if (n > 0) std::memcpy(bytes_of(slot), data, n);
    written[static_cast<size_t>(slot)] = std::vector<uint8_t>(bytes_of(slot), bytes_of(slot) + n);
  };
  auto read = [&](int slot, const std::string& reader) -> absl::StatusOr<const uint8_t*> {
    const auto& expected = written[static_cast<size_t>(slot)];
    if (!expected.has_value()) {
      return Internal("step '%s' reads buffer s%d before anything wrote it", reader, slot);
    }
    if (!expected->empty() && std::memcmp(bytes_of(slot), expected->data(), expected->size())) {
      return Internal("step '%s' reads buffer s%d, which another buffer overwrote", reader, slot);
    }
    return bytes_of(slot);
  };
  for (size_t i = 0; i < program.slots.size(); ++i) {
    const GpuSlot& s = program.slots[i];
    const int64_t end =
        s.kind == GpuSlot::Kind::kConstant ? program.constant_bytes : program.arena_bytes;
    if (s.offset < 0 || s.bytes < 0 || s.offset + s.bytes > end) {
      return Internal("buffer s%d (%d bytes at %d) is outside its %d-byte region", i, s.bytes,
                      s.offset, end);
    }
  }
  for (size_t i = 0; i < program.slots.size(); ++i) {
    const GpuSlot& s = program.slots[i];
    if (s.kind == GpuSlot::Kind::kConstant) {
      write(static_cast<int>(i), s.constant->literal().tensor().raw_data());
    }
  }
  for (size_t i = 0; i < args.size(); ++i) write(program.parameter_slots[i], args[i].raw_data());
  std::function<absl::Status(const std::vector<GpuStep>&)> run =
      [&](const std::vector<GpuStep>& steps) -> absl::Status {
    for (const GpuStep& step : steps) {
      const std::string& name = step.inst->name();
      TFJIT_ASSIGN_OR_RETURN(const hlo::Instruction* inst, inst_of(step));
      if (step.kind == GpuStep::Kind::kWhile || step.kind == GpuStep::Kind::kConditional) {
        auto scalar = [&]() -> absl::StatusOr<int64_t> {
          TFJIT_ASSIGN_OR_RETURN(const uint8_t* p, read(step.predicate, name));
          if (program.slots[static_cast<size_t>(step.predicate)].bytes == 1) return int64_t{*p};
          int32_t v = 0;
          std::memcpy(&v, p, 4);
          return int64_t{v};
        };
        if (step.kind == GpuStep::Kind::kWhile) {
          for (int iteration = 0;; ++iteration) {
            if (iteration > 100000) return Internal("while '%s' does not end", name);
            TFJIT_RETURN_IF_ERROR(run(step.nested[0]));
            TFJIT_ASSIGN_OR_RETURN(int64_t go, scalar());
            if (go == 0) break;
            TFJIT_RETURN_IF_ERROR(run(step.nested[1]));
          }
        } else {
          TFJIT_ASSIGN_OR_RETURN(int64_t index, scalar());
          const int64_t n = static_cast<int64_t>(step.nested.size());
          const bool pred = program.slots[static_cast<size_t>(step.predicate)].bytes == 1;
          const int64_t branch = pred                      ? (index != 0 ? 0 : 1)
                                 : index < 0 || index >= n ? n - 1
                                                           : index;
          TFJIT_RETURN_IF_ERROR(run(step.nested[static_cast<size_t>(branch)]));
        }
        continue;
      }
      if (step.kind == GpuStep::Kind::kHost) {
        std::vector<hlo::Literal> operands;
        for (size_t k = 0; k < step.operands.size(); ++k) {
          TFJIT_ASSIGN_OR_RETURN(const uint8_t* p, read(step.operands[k], name));
          const hlo::Shape& shape = inst->operand(static_cast<int>(k))->shape();
          Tensor t = Tensor::Uninitialized(shape.element_type(), shape.dims());
          if (t.byte_size() > 0) std::memcpy(t.raw_data(), p, t.byte_size());
          operands.push_back(hlo::Literal::FromTensor(t));
        }
        TFJIT_ASSIGN_OR_RETURN(hlo::Literal value, hlo::EvaluateInstruction(*inst, operands));
        if (value.shape().IsTuple()) {
          for (size_t k = 0; k < step.results.size(); ++k) {
            write(step.results[k], value.elements()[k].tensor().raw_data());
          }
        } else {
          write(step.results[0], value.tensor().raw_data());
        }
        continue;
      }
      std::vector<const uint8_t*> in;
      for (int slot : step.operands) {
        TFJIT_ASSIGN_OR_RETURN(const uint8_t* p, read(slot, name));
        in.push_back(p);
      }
      const size_t out_bytes =
          static_cast<size_t>(program.slots[static_cast<size_t>(step.output)].bytes);
      std::vector<uint8_t> out(out_bytes + 1);
      if (step.kind == GpuStep::Kind::kCopy) {
        if (out_bytes > 0) std::memcpy(out.data(), in[0], out_bytes);
      } else if (step.kind == GpuStep::Kind::kGemm) {
        const CublasGemmArgs g = CublasArgsFor(step.gemm);
        if (static_cast<size_t>(step.gemm.batch * step.gemm.m * step.gemm.n) *
                DTypeSize(step.type) !=
            out_bytes) {
          return Internal("the GEMM of '%s' writes %d x %d x %d elements into a %d-byte buffer",
                          name, step.gemm.batch, step.gemm.m, step.gemm.n, out_bytes);
        }
        // cuBLAS's A is the rhs, B the lhs.
        if (step.type == DType::kFloat32) {
          ReferenceGemm(g, reinterpret_cast<const float*>(in[1]),
                        reinterpret_cast<const float*>(in[0]),
                        reinterpret_cast<float*>(out.data()));
          if (step.bias >= 0) {
            // cuBLASLt's bias epilogue: bias[i] added to row i of the column-major result.
            TFJIT_ASSIGN_OR_RETURN(const uint8_t* b, read(step.bias, name));
            float* c = reinterpret_cast<float*>(out.data());
            const float* bias = reinterpret_cast<const float*>(b);
            for (int j = 0; j < g.n; ++j) {
              for (int i = 0; i < g.m; ++i) c[i + static_cast<int64_t>(j) * g.ldc] += bias[i];
            }
          }
        } else {
          ReferenceGemm(g, reinterpret_cast<const double*>(in[1]),
                        reinterpret_cast<const double*>(in[0]),
                        reinterpret_cast<double*>(out.data()));
        }
      } else if (step.patches) {
        std::optional<conv::Conv2DParams> p = backends::MatchConv2D(*inst);
        if (!p.has_value()) return Internal("patches step of a non-convolution '%s'", name);
        if (step.elements != p->batch * p->out_h * p->out_w * p->k_h * p->k_w * p->in_c) {
          return Internal("the patches of '%s' have %d elements, not %d", name, step.elements,
                          p->batch * p->out_h * p->out_w * p->k_h * p->k_w * p->in_c);
        }
        if (static_cast<size_t>(step.elements) * DTypeSize(step.type) != out_bytes) {
          return Internal("the patches of '%s' do not fill their %d-byte buffer", name, out_bytes);
        }
        if (step.type == DType::kFloat32) {
          Patches(*p, reinterpret_cast<const float*>(in[0]), reinterpret_cast<float*>(out.data()));
        } else {
          Patches(*p, reinterpret_cast<const double*>(in[0]),
                  reinterpret_cast<double*>(out.data()));
        }
      } else {
        const int64_t elements =
            step.in_place ? inst->operand(1)->shape().num_elements() : inst->shape().num_elements();
        if (step.elements != elements) {
          return Internal("the kernel of '%s' runs over %d elements, not %d", name, step.elements,
                          elements);
        }
        std::vector<hlo::Literal> operands;
        for (size_t k = 0; k < in.size(); ++k) {
          const hlo::Shape& shape = inst->operand(static_cast<int>(k))->shape();
          Tensor t = Tensor::Uninitialized(shape.element_type(), shape.dims());
          if (t.byte_size() > 0) std::memcpy(t.raw_data(), in[k], t.byte_size());
          operands.push_back(hlo::Literal::FromTensor(t));
        }
        TFJIT_ASSIGN_OR_RETURN(hlo::Literal value, hlo::EvaluateInstruction(*inst, operands));
        if (value.tensor().byte_size() != out_bytes) {
          return Internal("step '%s' produced %d bytes for a %d-byte buffer", name,
                          value.tensor().byte_size(), out_bytes);
        }
        if (out_bytes > 0) std::memcpy(out.data(), value.tensor().raw_data(), out_bytes);
      }
      write(step.output, out.data());
    }
    return absl::OkStatus();
  };
  TFJIT_RETURN_IF_ERROR(run(program.steps));
  std::vector<Tensor> outputs;
  for (size_t k = 0; k < program.output_slots.size(); ++k) {
    const hlo::Shape& shape = program.output_shapes[k];
    Tensor t = Tensor::Uninitialized(shape.element_type(), shape.dims());
    TFJIT_ASSIGN_OR_RETURN(const uint8_t* p, read(program.output_slots[k], "the outputs"));
    if (t.byte_size() > 0) std::memcpy(t.raw_data(), p, t.byte_size());
    outputs.push_back(std::move(t));
  }
  return outputs;
}

}  // namespace tfjit::gpu
