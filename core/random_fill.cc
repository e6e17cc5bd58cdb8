// FillRandom: TF's FillPhiloxRandom for uniform, normal and truncated-normal floats, per
// element, plus the custom-call target names that reach it from compiled code.
#include "core/random_fill.h"

#include <type_traits>

#include "core/dtype.h"

namespace tfjit::random {
namespace {

// Element i of TF's FillPhiloxRandom for fixed-sample distributions: group i / per_block uses
// block i / per_block (TF skips the generator one block per group), whatever the sharding.
class BlockCursor {
 public:
  explicit BlockCursor(const PhiloxState& s) : state_(s) {}
  const PhiloxCounter& At(int64_t block) {
    if (block != current_) {
      words_ = state_.Block(static_cast<uint64_t>(block));
      current_ = block;
    }
    return words_;
  }

 private:
  const PhiloxState& state_;
  int64_t current_ = -1;
  PhiloxCounter words_{};
};

template <typename T>
void FillUniform(const PhiloxState& s, T* out, int64_t begin, int64_t end) {
  BlockCursor cursor(s);
  for (int64_t i = begin; i < end; ++i) {
    if constexpr (std::is_same_v<T, double>) {
      const PhiloxCounter& w = cursor.At(i / 2);
      const size_t j = static_cast<size_t>(i % 2) * 2;
      out[i] = Uint64ToDouble(w[j], w[j + 1]);
    } else {
      const uint32_t x = cursor.At(i / 4)[static_cast<size_t>(i % 4)];
      if constexpr (std::is_same_v<T, float>) {
        out[i] = Uint32ToFloat(x);
      } else if constexpr (std::is_same_v<T, half>) {
        out[i] = half(Uint32ToHalfValue(x));
      } else {
        out[i] = bfloat16(Uint32ToBfloat16Value(x));
      }
    }
  }
}

// Box-Muller pairs: words (0,1) and (2,3) of a block give outputs (0,1) and (2,3) for 32-bit
// types; a double block gives two outputs.
template <typename T>
void FillNormal(const PhiloxState& s, T* out, int64_t begin, int64_t end) {
  BlockCursor cursor(s);
  if constexpr (std::is_same_v<T, double>) {
    int64_t cached = -1;
    double d[2] = {0, 0};
    for (int64_t i = begin; i < end; ++i) {
      if (i / 2 != cached) {
        const PhiloxCounter& w = cursor.At(i / 2);
        BoxMullerDouble(w[0], w[1], w[2], w[3], &d[0], &d[1]);
        cached = i / 2;
      }
      out[i] = d[i % 2];
    }
  } else {
    int64_t cached = -1;
    float f[2] = {0, 0};
    for (int64_t i = begin; i < end; ++i) {
      if (i / 2 != cached) {
        const PhiloxCounter& w = cursor.At(i / 4);
        const size_t p = static_cast<size_t>(i % 4) & ~size_t{1};
        BoxMullerFloat(w[p], w[p + 1], &f[0], &f[1]);
        cached = i / 2;
      }
      out[i] = static_cast<T>(f[i % 2]);  // TF rounds the float result for half/bfloat16
    }
  }
}

template <typename T>
void FillTruncatedNormal(const PhiloxState& s, T* out, int64_t begin, int64_t end) {
  constexpr bool kDouble = std::is_same_v<T, double>;
  constexpr int kGroup = kDouble ? kTruncatedDoubleGroup : kTruncatedFloatGroup;
  int64_t cached = -1;
  std::conditional_t<kDouble, double, float> g[kGroup] = {};
  for (int64_t i = begin; i < end; ++i) {
    if (i / kGroup != cached) {
      cached = i / kGroup;
      if constexpr (kDouble) {
        TruncatedNormalDoubleGroup(s, static_cast<uint64_t>(cached), g);
      } else {
        TruncatedNormalFloatGroup(s, static_cast<uint64_t>(cached), g);
      }
    }
    out[i] = static_cast<T>(g[i % kGroup]);
  }
}

template <typename T>
void FillTyped(RandomDistribution dist, const PhiloxState& s, void* out, int64_t begin,
               int64_t end) {
  T* data = static_cast<T*>(out);
  switch (dist) {
    case RandomDistribution::kUniform:
      FillUniform<T>(s, data, begin, end);
      break;
    case RandomDistribution::kNormal:
      FillNormal<T>(s, data, begin, end);
      break;
    case RandomDistribution::kTruncatedNormal:
      FillTruncatedNormal<T>(s, data, begin, end);
      break;
  }
}

}  // namespace

bool IsRandomFillDType(DType dtype) {
  return dtype == DType::kFloat16 || dtype == DType::kBFloat16 || dtype == DType::kFloat32 ||
         dtype == DType::kFloat64;
}

void FillRandom(RandomDistribution dist, DType dtype, const PhiloxState& state, void* out,
                int64_t begin, int64_t end) {
  switch (dtype) {
    case DType::kFloat16:
      FillTyped<half>(dist, state, out, begin, end);
      break;
    case DType::kBFloat16:
      FillTyped<bfloat16>(dist, state, out, begin, end);
      break;
    case DType::kFloat32:
      FillTyped<float>(dist, state, out, begin, end);
      break;
    case DType::kFloat64:
      FillTyped<double>(dist, state, out, begin, end);
      break;
    default:
      break;
  }
}

int64_t RandomFillCostPerElement(RandomDistribution dist) {
  switch (dist) {
    case RandomDistribution::kUniform:
      return 20;
    case RandomDistribution::kNormal:
      return 80;
    case RandomDistribution::kTruncatedNormal:
      return 120;
  }
  return 100;
}

std::optional<RandomDistribution> RandomDistributionOfTarget(absl::string_view target) {
  if (target == kPhiloxUniformTarget) return RandomDistribution::kUniform;
  if (target == kPhiloxNormalTarget) return RandomDistribution::kNormal;
  if (target == kPhiloxTruncatedNormalTarget) return RandomDistribution::kTruncatedNormal;
  return std::nullopt;
}

const char* RandomFillTarget(RandomDistribution dist) {
  switch (dist) {
    case RandomDistribution::kUniform:
      return kPhiloxUniformTarget;
    case RandomDistribution::kNormal:
      return kPhiloxNormalTarget;
    case RandomDistribution::kTruncatedNormal:
      return kPhiloxTruncatedNormalTarget;
  }
  return "";
}

PhiloxState StateFromU64x3(const uint64_t words[3]) {
  return StateFromKeyCounter(words[0], words[1], words[2]);
}

void StateToU64x3(const PhiloxState& state, uint64_t words[3]) {
  words[0] = KeyAsU64(state.key);
  CounterAsU64(state.counter, words + 1);
}

}  // namespace tfjit::random
