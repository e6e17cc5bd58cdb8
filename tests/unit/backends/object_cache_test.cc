// The CPU backend's disk cache (backends/cpu/object_cache.h): a second backend instance loads
// what the first compiled and gives the same bits; any change to the module or the options is
// a miss; damaged entries are misses that get replaced; the size cap evicts the least
// recently used entries. The generated GEMM kernels are cached the same way. Injected disk
// faults (a failed store, an entry changed while read) never give a wrong answer or leave a
// damaged entry.
#include "backends/cpu/object_cache.h"

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "backends/cpu/cpu_backend.h"
#include "backends/cpu/gemm_kernels.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "gtest/gtest.h"
#include "tests/testlib/faulty_file_system.h"
#include "tests/testlib/random_floats.h"
#include "tests/testlib/random_literal.h"
#include "tests/testlib/temp_file.h"
#include "tests/unit/backends/backend_test_util.h"

namespace tfjit::cpu {
namespace {

namespace fs = std::filesystem;
using testing_util::RunOnLiterals;

// Constants large enough for constant slots (a 600-element bias, a 600x8 weight matrix), one
// of them also an output (copied by Run from the plan), an output fusion, a while loop.
std::string Module(float scale) {
  std::vector<std::string> bias, weights;
  for (int i = 0; i < 600; ++i) bias.push_back(absl::StrCat(scale * (i % 7) - 3));
  for (int r = 0; r < 600; ++r) {
    std::vector<std::string> row;
    for (int c = 0; c < 8; ++c) row.push_back(absl::StrCat(((r * 8 + c) * 13 % 17) * 0.01f));
    weights.push_back(absl::StrCat("{", absl::StrJoin(row, ", "), "}"));
  }
  return absl::StrCat(R"(HloModule cached

%cond (cs: (s32[], f32[4,8])) -> pred[] {
  %cs = (s32[], f32[4,8]) parameter(0)
  %ci = s32[] get-tuple-element(%cs), index=0
  %n = s32[] constant(3)
  ROOT %lt = pred[] compare(%ci, %n), direction=LT
}

%body (bs: (s32[], f32[4,8])) -> (s32[], f32[4,8]) {
  %bs = (s32[], f32[4,8]) parameter(0)
  %bi = s32[] get-tuple-element(%bs), index=0
  %bv = f32[4,8] get-tuple-element(%bs), index=1
  %one = s32[] constant(1)
  %bi1 = s32[] add(%bi, %one)
  %half = f32[] constant(0.5)
  %hb = f32[4,8] broadcast(%half), dimensions={}
  %bv1 = f32[4,8] multiply(%bv, %hb)
  ROOT %bt = (s32[], f32[4,8]) tuple(%bi1, %bv1)
}

ENTRY %main (x: f32[4,600]) -> (f32[4,600], f32[600], f32[4,8]) {
  %x = f32[4,600] parameter(0)
  %w = f32[600] constant({)",
                      absl::StrJoin(bias, ", "), R"(})
  %wb = f32[4,600] broadcast(%w), dimensions={1}
  %s = f32[4,600] add(%x, %wb)
  %m = f32[600,8] constant({)",
                      absl::StrJoin(weights, ", "), R"(})
  %d = f32[4,8] dot(%s, %m), lhs_contracting_dims={1}, rhs_contracting_dims={0}
  %t = f32[4,8] tanh(%d)
  %zero = s32[] constant(0)
  %init = (s32[], f32[4,8]) tuple(%zero, %t)
  %loop = (s32[], f32[4,8]) while(%init), condition=%cond, body=%body
  %out = f32[4,8] get-tuple-element(%loop), index=1
  ROOT %r = (f32[4,600], f32[600], f32[4,8]) tuple(%s, %w, %out)
}
)");
}

struct Compiled {
  std::unique_ptr<backends::Executable> exe;
  hlo::Literal result;
};

// Compiles `text` on a fresh backend using `dir` and runs it on seeded inputs.
Compiled CompileAndRun(const std::string& text, const std::string& dir, int opt_level = 3,
                       int64_t max_bytes = int64_t{1} << 30, int compile_threads = 0) {
  // The GEMM micro-kernels are generated once per process and stored in the cache of the
  // first compile that needs them (on an AVX2-only CPU this module's dot does): generate them
  // first without a cache, so that every entry the tests count is a module's.
  static const bool kernels_ready = [&] {
    CpuBackendOptions plain;
    auto module = hlo::ParseAndVerifyModule(text);
    if (module.ok()) (void)CreateCpuBackend(plain)->Compile(std::move(*module));
    return true;
  }();
  (void)kernels_ready;
  CpuBackendOptions options;
  options.compile_threads = compile_threads;
  options.cache_dir = dir;
  options.cache_max_bytes = max_bytes;
  options.opt_level = opt_level;
  auto module = hlo::ParseAndVerifyModule(text);
  EXPECT_TRUE(module.ok()) << module.status();
  const std::vector<hlo::Literal> args = testlib::RandomArgs(**module, 11);
  auto exe = CreateCpuBackend(options)->Compile(std::move(*module));
  EXPECT_TRUE(exe.ok()) << exe.status();
  Compiled out{std::move(*exe), hlo::Literal()};
  auto result = RunOnLiterals(*out.exe, args, nullptr, /*tuple_root=*/true);
  EXPECT_TRUE(result.ok()) << result.status();
  out.result = std::move(*result);
  return out;
}

std::vector<fs::path> Entries(const std::string& dir) {
  std::vector<fs::path> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".tfjit-obj") out.push_back(e.path());
  }
  return out;
}

std::string FreshDir(const std::string& name) {
  const std::string dir = absl::StrCat(testing::TestTempDir(), "/", name);
  fs::remove_all(dir);
  return dir;
}

TEST(ObjectCacheTest, SecondBackendLoadsWhatTheFirstCompiled) {
  const std::string dir = FreshDir("cache_hit");
  const std::string text = Module(1.0f);
  Compiled first = CompileAndRun(text, dir);
  EXPECT_FALSE(first.exe->stats().loaded_from_disk_cache);
  ASSERT_EQ(Entries(dir).size(), 1u);
  Compiled second = CompileAndRun(text, dir);
  EXPECT_TRUE(second.exe->stats().loaded_from_disk_cache);
  EXPECT_EQ(Entries(dir).size(), 1u);
  EXPECT_TRUE(second.result.BitwiseEquals(first.result));
  EXPECT_EQ(second.exe->stats().num_kernels, first.exe->stats().num_kernels);
  EXPECT_EQ(second.exe->stats().flops, first.exe->stats().flops);
  EXPECT_EQ(second.exe->stats().temp_bytes, first.exe->stats().temp_bytes);
  // Its profile names the same kernels, with the same counts (the units travel in the entry).
  auto module = hlo::ParseAndVerifyModule(text);
  ASSERT_TRUE(module.ok());
  std::vector<Tensor> args;
  for (const hlo::Literal& l : testlib::RandomArgs(**module, 11)) args.push_back(l.tensor());
  std::vector<backends::KernelTiming> compiled, loaded;
  ASSERT_TRUE(first.exe->RunProfiled(args, nullptr, &compiled).ok());
  ASSERT_TRUE(second.exe->RunProfiled(args, nullptr, &loaded).ok());
  ASSERT_FALSE(compiled.empty());
  ASSERT_EQ(loaded.size(), compiled.size());
  for (size_t i = 0; i < compiled.size(); ++i) {
    EXPECT_EQ(loaded[i].name, compiled[i].name);
    EXPECT_EQ(loaded[i].ops, compiled[i].ops);
    EXPECT_EQ(loaded[i].calls, compiled[i].calls);
    EXPECT_EQ(loaded[i].flops, compiled[i].flops);
  }
  // The loaded code is also right, not only equal: the evaluator agrees.
  module = hlo::ParseAndVerifyModule(text);
  ASSERT_TRUE(module.ok());
  auto expected = hlo::Evaluate(**module, testlib::RandomArgs(**module, 11));
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_TRUE(testlib::LiteralsNear(*expected, second.result, testlib::ErrorSpec{1e-4, 1e-4}));
}

// 24 outputs of different elementwise chains: 24 kernels, which a backend with 3 compile
// threads optimises and compiles as 3 modules on 3 threads (CompileForHostInParts) and
// stores as 3 objects. Same bits as one module compiled on one thread, as the evaluator's
// within rounding, and as what a second backend loads from the disk cache.
std::string ManyKernelsModule() {
  std::string body, shapes, roots;
  const char* ops[] = {"multiply", "add", "subtract", "maximum"};
  for (int i = 0; i < 24; ++i) {
    absl::StrAppend(&body, "  %c", i, " = f32[] constant(", 0.25 * (i + 1), ")\n", "  %b", i,
                    " = f32[257] broadcast(%c", i, "), dimensions={}\n", "  %e", i, " = f32[257] ",
                    ops[i % 4], "(%x, %b", i, ")\n", "  %y", i, " = f32[257] ",
                    i % 3 == 0 ? "tanh" : "exp", "(%e", i, ")\n");
    absl::StrAppend(&shapes, i > 0 ? ", " : "", "f32[257]");
    absl::StrAppend(&roots, i > 0 ? ", " : "", "%y", i);
  }
  return absl::StrCat("HloModule many\n\nENTRY %main (x: f32[257]) -> (", shapes, ") {\n",
                      "  %x = f32[257] parameter(0)\n", body, "  ROOT %r = (", shapes, ") tuple(",
                      roots, ")\n}\n");
}

TEST(ObjectCacheTest, ModuleCompiledInPartsMatchesOnePartAndCaches) {
  const std::string text = ManyKernelsModule();
  Compiled one = CompileAndRun(text, "", 3, int64_t{1} << 30, /*compile_threads=*/1);
  ASSERT_GE(one.exe->stats().num_kernels, 24);
  const std::string dir = FreshDir("cache_parts");
  Compiled parts = CompileAndRun(text, dir, 3, int64_t{1} << 30, /*compile_threads=*/3);
  EXPECT_FALSE(parts.exe->stats().loaded_from_disk_cache);
  EXPECT_TRUE(parts.result.BitwiseEquals(one.result));
  Compiled loaded = CompileAndRun(text, dir, 3, int64_t{1} << 30, /*compile_threads=*/3);
  EXPECT_TRUE(loaded.exe->stats().loaded_from_disk_cache);
  EXPECT_TRUE(loaded.result.BitwiseEquals(one.result));
  auto module = hlo::ParseAndVerifyModule(text);
  ASSERT_TRUE(module.ok());
  auto expected = hlo::Evaluate(**module, testlib::RandomArgs(**module, 11));
  ASSERT_TRUE(expected.ok()) << expected.status();
  EXPECT_TRUE(testlib::LiteralsNear(*expected, parts.result, testlib::ErrorSpec{1e-5, 1e-5}));
}

TEST(ObjectCacheTest, AnotherConstantOrOptionIsAMiss) {
  const std::string dir = FreshDir("cache_miss");
  Compiled a = CompileAndRun(Module(1.0f), dir);
  Compiled b = CompileAndRun(Module(2.0f), dir);  // same structure, other bias values
  EXPECT_FALSE(b.exe->stats().loaded_from_disk_cache);
  EXPECT_FALSE(b.result.BitwiseEquals(a.result));
  Compiled c = CompileAndRun(Module(1.0f), dir, /*opt_level=*/1);
  EXPECT_FALSE(c.exe->stats().loaded_from_disk_cache);
  EXPECT_EQ(Entries(dir).size(), 3u);
  EXPECT_TRUE(CompileAndRun(Module(2.0f), dir).exe->stats().loaded_from_disk_cache);
}

TEST(ObjectCacheTest, DamagedEntriesAreMissesAndGetReplaced) {
  const std::string dir = FreshDir("cache_damaged");
  const std::string text = Module(1.0f);
  Compiled first = CompileAndRun(text, dir);
  ASSERT_EQ(Entries(dir).size(), 1u);
  const fs::path entry = Entries(dir)[0];
  const auto size = fs::file_size(entry);
  for (const std::string damage : {"flip", "truncate", "garbage"}) {
    SCOPED_TRACE(damage);
    if (damage == "flip") {
      std::fstream f(entry, std::ios::in | std::ios::out | std::ios::binary);
      f.seekp(static_cast<std::streamoff>(size / 2));
      f.put('\x5a');
    } else if (damage == "truncate") {
      fs::resize_file(entry, size - 7);
    } else {
      std::ofstream(entry, std::ios::binary | std::ios::trunc) << "not an object";
    }
    Compiled again = CompileAndRun(text, dir);
    EXPECT_FALSE(again.exe->stats().loaded_from_disk_cache);
    EXPECT_TRUE(again.result.BitwiseEquals(first.result));
    EXPECT_EQ(fs::file_size(entry), size);  // replaced by a good entry
    EXPECT_TRUE(CompileAndRun(text, dir).exe->stats().loaded_from_disk_cache);
  }
}

TEST(ObjectCacheTest, SizeCapEvictsTheLeastRecentlyUsed) {
  const std::string dir = FreshDir("cache_evict");
  CompileAndRun(Module(1.0f), dir);
  ASSERT_EQ(Entries(dir).size(), 1u);
  const int64_t entry_bytes = static_cast<int64_t>(fs::file_size(Entries(dir)[0]));
  const int64_t cap = entry_bytes * 5 / 2;  // room for two entries
  CompileAndRun(Module(2.0f), dir, 3, cap);
  // Module(1) is used again: Module(2) becomes the least recently used.
  EXPECT_TRUE(CompileAndRun(Module(1.0f), dir, 3, cap).exe->stats().loaded_from_disk_cache);
  CompileAndRun(Module(3.0f), dir, 3, cap);
  EXPECT_EQ(Entries(dir).size(), 2u);
  EXPECT_TRUE(CompileAndRun(Module(1.0f), dir, 3, cap).exe->stats().loaded_from_disk_cache);
  EXPECT_TRUE(CompileAndRun(Module(3.0f), dir, 3, cap).exe->stats().loaded_from_disk_cache);
}

TEST(ObjectCacheTest, UnwritableDirectoryStillCompiles) {
  const std::string file = testing::WriteTempFile("not_a_dir", "x");
  Compiled c = CompileAndRun(Module(1.0f), file + "/cache");
  EXPECT_FALSE(c.exe->stats().loaded_from_disk_cache);
}

// c[20, 37] = a[20, 50] * b[50, 37] and one depthwise row (3x3, 24 channels) through `set`.
std::vector<float> RunGeneratedKernels(const gemm::MicroKernelSet* set) {
  const gemm::MicroKernelSet* previous = gemm::InstalledMicroKernels();
  gemm::InstallMicroKernels(set);
  gemm::SetIsaForTesting(gemm::Isa::kGenerated);
  const std::vector<float> a = tfjit::testing::RandomFloats(20 * 50, 1);
  const std::vector<float> b = tfjit::testing::RandomFloats(50 * 37, 2);
  std::vector<float> out(20 * 37 + 19 * 24);
  gemm::GemmF32(20, 37, 50, a.data(), 50, b.data(), 37, out.data(), 37);
  const std::vector<float> x = tfjit::testing::RandomFloats(3 * 21 * 24, 3);
  const std::vector<float> f = tfjit::testing::RandomFloats(9 * 24, 4);
  const float* rows[3] = {x.data(), x.data() + 21 * 24, x.data() + 42 * 24};
  gemm::DepthwiseRow row{rows, f.data(), out.data() + 20 * 37, 3, 3, 21, 19, 24, 1, 1, 0};
  gemm::DepthwiseRowF32(row);
  gemm::InstallMicroKernels(previous);
  gemm::SetIsaForTesting(gemm::Isa::kAuto);
  return out;
}

// The generated GEMM kernels and depthwise tiles: compiled once per machine, then loaded from
// the cache (same bits); a damaged entry is a miss that gets replaced.
TEST(ObjectCacheTest, GeneratedKernelsAreCompiledOnceThenLoaded) {
  if (!HostRuns(GemmIsa::kAvx2)) GTEST_SKIP() << "this CPU cannot run AVX2+FMA code";
  const std::string dir = FreshDir("cache_generated_kernels");
  const ObjectCache cache(dir, int64_t{1} << 30);
  absl::StatusOr<std::unique_ptr<GeneratedKernels>> first =
      CompileGeneratedKernels(GemmIsa::kAvx2, &cache);
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_FALSE((*first)->from_cache);
  ASSERT_EQ(Entries(dir).size(), 1u);
  const std::vector<float> want = RunGeneratedKernels(&(*first)->set);
  absl::StatusOr<std::unique_ptr<GeneratedKernels>> second =
      CompileGeneratedKernels(GemmIsa::kAvx2, &cache);
  ASSERT_TRUE(second.ok()) << second.status();
  EXPECT_TRUE((*second)->from_cache);
  const std::vector<float> got = RunGeneratedKernels(&(*second)->set);
  EXPECT_EQ(std::memcmp(got.data(), want.data(), got.size() * sizeof(float)), 0);
  // Another ISA's kernels are another entry.
  if (HostRuns(GemmIsa::kAvx512)) {
    absl::StatusOr<std::unique_ptr<GeneratedKernels>> wide =
        CompileGeneratedKernels(GemmIsa::kAvx512, &cache);
    ASSERT_TRUE(wide.ok()) << wide.status();
    EXPECT_FALSE((*wide)->from_cache);
    EXPECT_EQ(Entries(dir).size(), 2u);
    fs::remove_all(dir);  // (the AVX2 entry alone again, for the damage below)
    ASSERT_TRUE(CompileGeneratedKernels(GemmIsa::kAvx2, &cache).ok());
  }
  ASSERT_EQ(Entries(dir).size(), 1u);
  fs::resize_file(Entries(dir)[0], fs::file_size(Entries(dir)[0]) - 5);
  absl::StatusOr<std::unique_ptr<GeneratedKernels>> damaged =
      CompileGeneratedKernels(GemmIsa::kAvx2, &cache);
  ASSERT_TRUE(damaged.ok()) << damaged.status();
  EXPECT_FALSE((*damaged)->from_cache);
  absl::StatusOr<std::unique_ptr<GeneratedKernels>> again =
      CompileGeneratedKernels(GemmIsa::kAvx2, &cache);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_TRUE((*again)->from_cache);
  // An entry that reads well but does not link (its object is not ELF): removed, compiled
  // again, replaced by a good one; the kernels compute what the first ones did.
  const std::string key = Entries(dir)[0].stem().string();
  fs::remove(Entries(dir)[0]);
  ASSERT_TRUE(cache.StoreObjects(key, {"not an object file"}).ok());
  ASSERT_TRUE(cache.LoadObjects(key).has_value());
  absl::StatusOr<std::unique_ptr<GeneratedKernels>> relinked =
      CompileGeneratedKernels(GemmIsa::kAvx2, &cache);
  ASSERT_TRUE(relinked.ok()) << relinked.status();
  EXPECT_FALSE((*relinked)->from_cache);
  const std::vector<float> relinked_out = RunGeneratedKernels(&(*relinked)->set);
  EXPECT_EQ(std::memcmp(relinked_out.data(), want.data(), want.size() * sizeof(float)), 0);
  absl::StatusOr<std::unique_ptr<GeneratedKernels>> replaced =
      CompileGeneratedKernels(GemmIsa::kAvx2, &cache);
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  EXPECT_TRUE((*replaced)->from_cache);
}

// The faults a disk has, injected through core/file_system.h: a store that fails (a write
// cut short, a full disk, a failed rename, a read-only folder) still compiles, with the right
// answer, and leaves neither an entry nor a temporary file; the next store on a healthy disk
// works, and the entry after it loads.
TEST(ObjectCacheFaultTest, AFailedStoreLeavesNothingBehind) {
  const std::string text = Module(1.0f);
  const Compiled want = CompileAndRun(text, "");
  for (const std::string& fault : tfjit::testing::WriteFaults()) {
    SCOPED_TRACE(fault);
    const std::string dir = FreshDir(absl::StrCat("cache_fault_", fault));
    {
      tfjit::testing::ScopedFaultyFileSystem faulty;
      faulty->Inject(fault, 100, dir);
      const Compiled c = CompileAndRun(text, dir);
      EXPECT_FALSE(c.exe->stats().loaded_from_disk_cache);
      EXPECT_TRUE(c.result.BitwiseEquals(want.result));
      if (fault != "read_only") {
        EXPECT_GE(faulty->writes.load(), 1);
      }
    }
    EXPECT_TRUE(!fs::exists(dir) || fs::is_empty(dir)) << "a partial entry or temporary is left";
    EXPECT_FALSE(CompileAndRun(text, dir).exe->stats().loaded_from_disk_cache);
    const Compiled loaded = CompileAndRun(text, dir);
    EXPECT_TRUE(loaded.exe->stats().loaded_from_disk_cache);
    EXPECT_TRUE(loaded.result.BitwiseEquals(want.result));
  }
}

// An entry that changes while it is read (cut short, or replaced by another key's entry, as
// another process rewriting the folder would) is a miss that compiles, with the right answer;
// the entry it found is replaced, and the next compile loads that.
TEST(ObjectCacheFaultTest, AnEntryChangedWhileReadIsAMiss) {
  const std::string text = Module(1.0f);
  const std::string other_dir = FreshDir("cache_changed_other");
  CompileAndRun(Module(2.0f), other_dir);
  ASSERT_EQ(Entries(other_dir).size(), 1u);
  std::ifstream other_in(Entries(other_dir)[0], std::ios::binary);
  const std::string other((std::istreambuf_iterator<char>(other_in)),
                          std::istreambuf_iterator<char>());
  const std::string dir = FreshDir("cache_changed");
  const Compiled want = CompileAndRun(text, dir);
  ASSERT_EQ(Entries(dir).size(), 1u);
  for (const std::string change : {"cut_short", "replaced"}) {
    SCOPED_TRACE(change);
    {
      tfjit::testing::ScopedFaultyFileSystem faulty;
      faulty->OnRead([&](const std::string& path, std::string& data) {
        if (path.find(dir) != 0 || Entries(dir).empty() || path != Entries(dir)[0].string()) {
          return;
        }
        if (change == "cut_short") {
          data.resize(data.size() / 2);
        } else {
          data = other;
        }
      });
      const Compiled c = CompileAndRun(text, dir);
      EXPECT_FALSE(c.exe->stats().loaded_from_disk_cache);
      EXPECT_TRUE(c.result.BitwiseEquals(want.result));
      EXPECT_GE(faulty->reads.load(), 1);
    }
    const Compiled loaded = CompileAndRun(text, dir);
    EXPECT_TRUE(loaded.exe->stats().loaded_from_disk_cache);
    EXPECT_TRUE(loaded.result.BitwiseEquals(want.result));
    EXPECT_EQ(Entries(dir).size(), 1u);
  }
}

// Two compiles of one module publishing at once: the entry is published once (the second
// finds it there and leaves it), and it is valid.
TEST(ObjectCacheFaultTest, AnEntryIsPublishedOnce) {
  const std::string dir = FreshDir("cache_publish_once");
  ObjectCache cache(dir, int64_t{1} << 30);
  const std::string key = ObjectCache::ObjectsKey("publish once", "cpu", "features");
  ASSERT_TRUE(cache.StoreObjects(key, {"first"}).ok());
  ASSERT_TRUE(cache.StoreObjects(key, {"second"}).ok());
  const std::optional<std::vector<std::string>> objects = cache.LoadObjects(key);
  ASSERT_TRUE(objects.has_value());
  EXPECT_EQ(*objects, std::vector<std::string>{"first"});
  // A removed entry (e.g. one that did not link) makes room for the next store.
  cache.Remove(key);
  ASSERT_TRUE(cache.StoreObjects(key, {"third"}).ok());
  EXPECT_EQ(*cache.LoadObjects(key), std::vector<std::string>{"third"});
}

}  // namespace
}  // namespace tfjit::cpu
