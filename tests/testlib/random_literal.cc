// Deterministic random literals: a splitmix64 stream, mapped to values by hand (the standard
// distributions differ between standard libraries).
#include "tests/testlib/random_literal.h"

#include <cmath>
#include <limits>

#include "core/dtype.h"

namespace tfjit::testlib {
namespace {

class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  double Uniform() { return static_cast<double>(Next() >> 11) * 0x1.0p-53; }  // [0, 1)

 private:
  uint64_t state_;
};

template <typename T>
T FloatEdge(uint64_t pick) {
  using L = std::numeric_limits<float>;
  constexpr float kValues[] = {0.0f,           -0.0f,    L::infinity(), -L::infinity(),
                               L::quiet_NaN(), L::max(), L::lowest(),   L::denorm_min()};
  if constexpr (std::is_same_v<T, double>) {
    using D = std::numeric_limits<double>;
    constexpr double kD[] = {0.0,      -0.0,        D::infinity(),  -D::infinity(), D::quiet_NaN(),
                             D::max(), D::lowest(), D::denorm_min()};
    return kD[pick % 8];
  } else {
    // max/lowest/denorm of f32 become inf/0 in f16/bf16; still edge values there.
    return static_cast<T>(kValues[pick % 8]);
  }
}

template <typename T>
T IntEdge(uint64_t pick) {
  using L = std::numeric_limits<T>;
  const T values[] = {T(0), static_cast<T>(-1), L::min(), L::max()};
  return values[pick % 4];
}

template <typename T>
T RandomValue(SplitMix64& rng, bool edge_values) {
  const bool edge = edge_values && rng.Next() % 8 == 0;
  if constexpr (std::is_same_v<T, bool>) {
    return rng.Next() & 1;
  } else if constexpr (std::is_floating_point_v<T> || std::is_same_v<T, half> ||
                       std::is_same_v<T, bfloat16>) {
    if (edge) return FloatEdge<T>(rng.Next());
    return static_cast<T>(static_cast<float>(rng.Uniform() * 4.0 - 2.0));
  } else {
    if (edge) return IntEdge<T>(rng.Next());
    if constexpr (std::is_signed_v<T>)
      return static_cast<T>(static_cast<int64_t>(rng.Next() % 21) - 10);
    else
      return static_cast<T>(rng.Next() % 21);
  }
}

}  // namespace

hlo::Literal RandomLiteral(const hlo::Shape& shape, uint64_t seed, bool edge_values) {
  if (shape.IsTuple()) {
    std::vector<hlo::Literal> elements;
    for (size_t i = 0; i < shape.tuple_shapes().size(); ++i) {
      elements.push_back(RandomLiteral(shape.tuple_shapes()[i], seed * 31 + i + 1, edge_values));
    }
    return hlo::Literal::MakeTuple(std::move(elements));
  }
  hlo::Literal literal(shape);
  SplitMix64 rng(seed);
  const int64_t n = shape.num_elements();
  DispatchNumeric(shape.element_type(), [&](auto tag) {
    using T = decltype(tag);
    T* data = literal.data<T>();
    for (int64_t i = 0; i < n; ++i) data[i] = RandomValue<T>(rng, edge_values);
  });
  return literal;
}

std::vector<hlo::Literal> RandomArgs(const hlo::Module& module, uint64_t seed, bool edge_values) {
  std::vector<hlo::Literal> args;
  if (module.entry() == nullptr) return args;
  for (const hlo::Instruction* p : module.entry()->parameters()) {
    const uint64_t s = seed * 1000003ull + static_cast<uint64_t>(p->parameter_number());
    args.push_back(RandomLiteral(p->shape(), s, edge_values));
  }
  return args;
}

}  // namespace tfjit::testlib
