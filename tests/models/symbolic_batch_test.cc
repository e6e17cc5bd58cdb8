// Varying batch sizes through the real models (issue 25): every corpus model whose inputs have
// a -1 batch dim (and no other unknown dim) runs batch sizes 1, 3, 2, 7, 33 and 5 in one
// session under --shapes auto. Each cluster compiles at most 3 times (batch 1 statically, one
// symbolic executable for the rest, and at most one more), and every batch's outputs equal
// the batch-1 executable's run row by row (the models' rows are independent), within the
// conformance tolerance (normErr 1e-3, the blazepose family 5e-3). A second session started
// from the first one's disk cache then compiles nothing for batch 1, 9 and 2.
//
// The models come from the conformance test's cache (TFJIT_MODEL_CACHE, default
// ~/.cache/tfjit/models), which that test fills first on a fresh machine.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "tfjit/session.h"

namespace tfjit {
namespace {

namespace fs = std::filesystem;

struct ModelCase {
  std::string id;
  std::string path;
  double tolerance = 1e-3;
};

std::string CacheDir() {
  if (const char* env = std::getenv("TFJIT_MODEL_CACHE"); env != nullptr && env[0] != '\0') {
    return env;
  }
  const char* home = std::getenv("HOME");
  return absl::StrCat(home != nullptr ? home : "/root", "/.cache/tfjit/models");
}

std::vector<ModelCase> Models() {
  std::vector<ModelCase> out;
  std::ifstream in(fs::path(TFJIT_SOURCE_DIR) / "tests" / "models" / "models.tsv");
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> f = absl::StrSplit(line, '\t');
    if (f.size() < 3) continue;
    out.push_back({f[0], (fs::path(CacheDir()) / "models" / f[1]).string(),
                   std::strtod(f[2].c_str(), nullptr)});
  }
  return out;
}

Tensor RandomInput(const std::vector<int64_t>& dims, uint32_t seed) {
  Tensor t(DType::kFloat32, dims);
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  for (int64_t i = 0; i < t.num_elements(); ++i) t.data<float>()[i] = u(rng);
  return t;
}

// Row r of `t` (its dim 0 dropped to 1).
Tensor Row(const Tensor& t, int64_t r) {
  std::vector<int64_t> dims = t.dims();
  const int64_t rows = dims[0];
  dims[0] = 1;
  Tensor out(t.dtype(), dims);
  const int64_t bytes = t.byte_size() / std::max<int64_t>(1, rows);
  std::memcpy(out.raw_data(), static_cast<const char*>(t.raw_data()) + r * bytes, bytes);
  return out;
}

TEST(SymbolicBatchModelsTest, FewCompilesAndRowByRowEqualOutputs) {
  const std::vector<ModelCase> models = Models();
  ASSERT_FALSE(models.empty());
  // Compiled code goes to a disk cache of this test's own, which a second session per model
  // then starts from.
  const std::string cache_dir =
      (fs::temp_directory_path() / absl::StrCat("tfjit_symbolic_batch_", getpid())).string();
  fs::remove_all(cache_dir);
  int tested = 0;
  std::string summary;
  for (const ModelCase& m : models) {
    if (!fs::exists(m.path)) continue;  // a corpus the conformance test did not fetch
    SessionOptions options;
    options.shapes = ShapeMode::kAuto;
    options.compile_cache_dir = cache_dir;
    auto session = Session::Load(m.path, options);
    if (!session.ok()) continue;  // the conformance test reports load failures
    std::vector<InputInfo> inputs = (*session)->Inputs();
    bool batch_only = !inputs.empty();
    for (const InputInfo& in : inputs) {
      batch_only = batch_only && in.dtype == DType::kFloat32 && !in.unknown_rank &&
                   !in.dims.empty() && in.dims[0] < 0 &&
                   std::all_of(in.dims.begin() + 1, in.dims.end(), [](int64_t d) { return d > 0; });
    }
    if (!batch_only) continue;
    SCOPED_TRACE(m.id);
    ++tested;
    const std::vector<std::string> fetches = (*session)->DefaultFetches();
    std::map<std::string, int> compiles;
    std::string classes;
    for (int64_t batch : {1, 3, 2, 7, 33, 5}) {
      std::vector<std::pair<std::string, Tensor>> feeds;
      for (size_t i = 0; i < inputs.size(); ++i) {
        std::vector<int64_t> dims = inputs[i].dims;
        dims[0] = batch;
        feeds.emplace_back(inputs[i].name,
                           RandomInput(dims, static_cast<uint32_t>(batch * 31 + i)));
      }
      RunStats stats;
      auto out = (*session)->Run(feeds, fetches, &stats);
      ASSERT_TRUE(out.ok()) << "batch " << batch << ": " << out.status();
      for (const ClusterCompile& c : stats.compiles) {
        ++compiles[c.cluster];
        absl::StrAppend(&classes, " b", batch, ":", c.cluster, "=", c.shape_class);
      }
      if (batch == 1) continue;
      // Row by row through the batch-1 executable.
      for (int64_t r = 0; r < batch; ++r) {
        std::vector<std::pair<std::string, Tensor>> row_feeds;
        for (const auto& [name, t] : feeds) row_feeds.emplace_back(name, Row(t, r));
        auto row = (*session)->Run(row_feeds, fetches);
        ASSERT_TRUE(row.ok()) << row.status();
        for (size_t k = 0; k < out->size(); ++k) {
          const Tensor& whole = (*out)[k];
          const Tensor& part = (*row)[k];
          ASSERT_EQ(whole.rank(), part.rank());
          ASSERT_EQ(whole.dim(0), batch) << "output " << fetches[k];
          const Tensor mine = Row(whole, r);
          ASSERT_EQ(mine.num_elements(), part.num_elements());
          if (part.dtype() != DType::kFloat32) {
            EXPECT_EQ(std::memcmp(mine.raw_data(), part.raw_data(), part.byte_size()), 0)
                << "batch " << batch << " row " << r << " output " << fetches[k];
            continue;
          }
          double max_ref = 0, max_err = 0;
          for (int64_t e = 0; e < part.num_elements(); ++e) {
            const double a = mine.data<float>()[e], b = part.data<float>()[e];
            max_ref = std::max(max_ref, std::fabs(b));
            max_err = std::max(max_err, std::fabs(a - b));
          }
          EXPECT_LE(max_err, m.tolerance * std::max(max_ref, 1e-6))
              << "batch " << batch << " row " << r << " output " << fetches[k];
        }
      }
    }
    // Models whose clusters cannot be symbolic yet, and why (their launches compile per
    // batch size; the list must stay current: a listed model that becomes symbolic fails).
    static const std::map<std::string, std::string> kPerShape = {
        {"facemesh-attention",
         "gathers along the batch dim, whose run-time index checks hold the batch size in "
         "their limits and messages (RuntimeCheck is static)"}};
    const bool per_shape = kPerShape.count(m.id) > 0;
    for (const auto& [cluster, n] : compiles) {
      if (per_shape) {
        EXPECT_EQ(n, 6) << cluster << ": listed as compiling per shape, compiled " << n
                        << " times:" << classes;
      } else {
        EXPECT_LE(n, 3) << cluster << " compiled " << n << " times:" << classes;
      }
    }
    absl::StrAppend(&summary, m.id, ":", classes, "\n");
    // A new session warm-started from the disk cache compiles nothing, the symbolic
    // executable included.
    auto warm = Session::Load(m.path, options);
    ASSERT_TRUE(warm.ok()) << warm.status();
    for (int64_t batch : {1, 9, 2}) {
      std::vector<std::pair<std::string, Tensor>> feeds;
      for (size_t i = 0; i < inputs.size(); ++i) {
        std::vector<int64_t> dims = inputs[i].dims;
        dims[0] = batch;
        feeds.emplace_back(inputs[i].name, RandomInput(dims, static_cast<uint32_t>(batch + i)));
      }
      RunStats stats;
      auto out = (*warm)->Run(feeds, fetches, &stats);
      ASSERT_TRUE(out.ok()) << "warm batch " << batch << ": " << out.status();
      for (const ClusterCompile& c : stats.compiles) {
        EXPECT_TRUE(c.from_disk_cache || per_shape)
            << "warm batch " << batch << ": " << c.cluster << " compiled (" << c.shape_class << ")";
      }
    }
  }
  fs::remove_all(cache_dir);
  EXPECT_GE(tested, 10) << "too few corpus models with a batch dim were found in " << CacheDir();
  std::printf("%s", summary.c_str());
}

}  // namespace
}  // namespace tfjit
