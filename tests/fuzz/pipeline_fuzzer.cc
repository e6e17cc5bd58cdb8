// Fuzz target: the whole pipeline. A text GraphDef is loaded by tfjit::Session with jit=auto
// (clustering, lowering to HLO, passes, LLVM compilation) and run once on small inputs seeded
// from the fuzz input, one per Placeholder. Time and memory are bounded by the session's own
// limits (a run deadline and a memory cap), and feeds over kMaxFeedElements are not built.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "core/dtype.h"
#include "tests/fuzz/fuzz_frontend.h"
#include "tests/fuzz/fuzz_util.h"
#include "tfjit/session.h"

[[maybe_unused]] static const bool kLimits = tfjit::fuzz::LowerLoaderLimits();

namespace {

constexpr int64_t kMaxFeedElements = 4096;
constexpr size_t kMaxFetches = 16;

// splitmix64: the feed values and unknown dims come from the input's hash, so a crash input
// replays the same run.
uint64_t Next(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Small values in [-4, 4) (halves for floats), so arithmetic stays in range and indices are
// sometimes valid and sometimes not.
void FillFeed(tfjit::Tensor& t, uint64_t& state) {
  const int64_t n = t.num_elements();
  tfjit::DispatchNumeric(t.dtype(), [&](auto zero) {
    using T = decltype(zero);
    T* out = t.data<T>();
    for (int64_t i = 0; i < n; ++i) {
      const int v = static_cast<int>(Next(state) % 8) - 4;
      if constexpr (std::is_same_v<T, bool>) {
        out[i] = (v & 1) != 0;
      } else if constexpr (std::is_integral_v<T>) {
        out[i] = static_cast<T>(std::is_unsigned_v<T> ? v + 4 : v);
      } else {
        out[i] = static_cast<T>(static_cast<float>(v) * 0.5f);
      }
    }
  });
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static tfjit::fuzz::ScratchDir dir("pipeline");
  dir.Reset();
  if (!dir.Write("model.pbtxt", std::string_view(reinterpret_cast<const char*>(data), size))) {
    return 0;
  }
  tfjit::SessionOptions options;
  options.jit = tfjit::JitMode::kAuto;
  options.inter_op_threads = 1;
  options.intra_op_threads = 1;
  options.memory_limit_bytes = int64_t{256} << 20;
  options.run_timeout_ms = 2000;
  absl::StatusOr<std::unique_ptr<tfjit::Session>> session =
      tfjit::Session::Load((dir.path() / "model.pbtxt").string(), options);
  if (!session.ok()) return 0;

  uint64_t state = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < size; ++i) state = (state ^ data[i]) * 0x100000001b3ull;
  std::vector<std::pair<std::string, tfjit::Tensor>> feeds;
  for (const tfjit::InputInfo& input : (*session)->Inputs()) {
    std::vector<int64_t> dims;
    if (input.unknown_rank) {
      dims.resize(Next(state) % 3);
    } else {
      dims = input.dims;
    }
    int64_t n = 1;
    for (int64_t& d : dims) {
      if (d < 0) d = static_cast<int64_t>(Next(state) % 4);
      if (d > kMaxFeedElements || (d > 0 && n > kMaxFeedElements / d)) return 0;
      n *= d;
    }
    if (n > kMaxFeedElements) return 0;
    if (!tfjit::IsNumericDType(input.dtype)) return 0;  // string/resource: nothing to feed
    tfjit::Tensor t(input.dtype, dims);
    FillFeed(t, state);
    feeds.emplace_back(input.name, std::move(t));
  }
  std::vector<std::string> fetches = (*session)->DefaultFetches();
  if (fetches.size() > kMaxFetches) fetches.resize(kMaxFetches);
  (void)(*session)->Run(feeds, fetches);
  return 0;
}
