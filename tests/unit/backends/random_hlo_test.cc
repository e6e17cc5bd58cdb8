// Random differential testing: random valid HLO modules (tests/testlib/random_hlo.h), compiled by
// the CPU backend (standard pipeline + fusion, as users get it) and compared with the evaluator
// on seeded inputs (NaN/Inf/extremes for about a quarter of the seeds). Integers and pred must
// match exactly; floats within the bound the generator derived from HLO.md for each output.
//
// TFJIT_RANDOM_HLO_SEEDS=N (default 300) and TFJIT_RANDOM_HLO_FIRST_SEED=S choose the seeds,
// split over 10 test cases so ctest runs blocks in parallel. A mismatch prints the seed and
// writes the module, its inputs and bounds to $TFJIT_RANDOM_HLO_OUT/seed_<n>.hlo (default
// folder: random-hlo-failures in the working directory); a minimized copy under
// tests/hlo/random/ becomes a
// regression case checked by RandomHloRegression.Files. TFJIT_RANDOM_HLO_DUMP=1 writes every
// module there (to inspect what the generator covers).
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "backends/cpu/cpu_backend.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "compiler/hlo/printer.h"
#include "gtest/gtest.h"
#include "tests/testlib/hlo_test_util.h"
#include "tests/testlib/random_hlo.h"
#include "tests/testlib/random_literal.h"
#include "tests/unit/backends/backend_test_util.h"

namespace tfjit {
namespace {

using testlib::ErrorSpec;
using testlib::ValueBound;

constexpr int kBlocks = 10;

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* v = std::getenv(name);
  int64_t n = 0;
  return v != nullptr && absl::SimpleAtoi(v, &n) ? n : fallback;
}

std::string SourceDir() {
  const char* env = std::getenv("TFJIT_SOURCE_DIR");
  return env != nullptr ? env : TFJIT_SOURCE_DIR;
}

using testing_util::SpecOf;

// Compiles `text` on the CPU backend and compares it with the evaluator.
::testing::AssertionResult CheckModule(const std::string& text, uint64_t args_seed,
                                       bool edge_values, const std::vector<ErrorSpec>& specs) {
  return testing_util::CompareOutputs(*cpu::CreateCpuBackend(), text, args_seed, edge_values,
                                      specs);
}

// The header the regression test reads back: "// random-hlo: args_seed=N edge_values=B
// abs=X rel=Y" (the loosest output spec).
std::string Header(uint64_t seed, const testlib::RandomHloModule& m, const std::string& why) {
  ErrorSpec loosest{0, 0};
  for (const ValueBound& b : m.output_bounds) {
    loosest.abs = std::max(loosest.abs, SpecOf(b).abs);
    loosest.rel = std::max(loosest.rel, SpecOf(b).rel);
  }
  std::string first_line = why.substr(0, why.find('\n'));
  std::string out = absl::StrCat(
      "// Random HLO seed ", seed, ": ", first_line, "\n", "// RUN: tfjit-opt %s > /dev/null\n",
      "// random-hlo: args_seed=", m.args_seed, " edge_values=", m.edge_values ? 1 : 0,
      " abs=", loosest.abs, " rel=", loosest.rel, "\n");
  for (size_t i = 0; i < m.output_bounds.size(); ++i) {
    absl::StrAppend(&out, "// output ", i, ": ", m.output_bounds[i].ToString(), "\n");
  }
  std::vector<hlo::Literal> args = testlib::RandomArgs(*m.module, m.args_seed, m.edge_values);
  for (size_t i = 0; i < args.size(); ++i) {
    absl::StrAppend(&out, "// input ", i, ": ", args[i].shape().ToString(), " ",
                    args[i].shape().num_elements() <= 64 ? args[i].ValueToString() : "(RandomArgs)",
                    "\n");
  }
  return out;
}

std::string WriteFailure(uint64_t seed, const std::string& text) {
  const char* env = std::getenv("TFJIT_RANDOM_HLO_OUT");
  // Default: next to where the test runs (ctest runs it inside the build tree).
  const std::string dir = env != nullptr ? env : "random-hlo-failures";
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  const std::string path = absl::StrCat(dir, "/seed_", seed, ".hlo");
  std::ofstream(path) << text;
  return path;
}

// Totals over the process, printed at exit (the long local run reads them).
struct Totals {
  std::mutex mu;
  int64_t modules = 0, instructions = 0, failures = 0, edge = 0;
  double seconds = 0;
  std::map<std::string, int64_t> opcodes;
};
Totals& GetTotals() {
  static Totals* t = new Totals;
  return *t;
}

class PrintTotals : public ::testing::Environment {
 public:
  void TearDown() override {
    Totals& t = GetTotals();
    if (t.modules == 0) return;
    std::cout << "random-hlo: " << t.modules << " modules (" << t.edge << " with edge inputs), "
              << t.instructions << " instructions, " << t.failures << " failures, " << t.seconds
              << " s\nrandom-hlo opcodes:";
    for (const auto& [name, n] : t.opcodes) std::cout << " " << name << "=" << n;
    std::cout << "\n";
  }
};
const auto* const kPrintTotals = ::testing::AddGlobalTestEnvironment(new PrintTotals);

class RandomHloTest : public ::testing::TestWithParam<int> {};

TEST_P(RandomHloTest, EvaluatorMatchesCpu) {
  const int64_t total = EnvInt("TFJIT_RANDOM_HLO_SEEDS", 300);
  const int64_t first = EnvInt("TFJIT_RANDOM_HLO_FIRST_SEED", 1);
  const int64_t per_block = (total + kBlocks - 1) / kBlocks;
  const int64_t begin = first + GetParam() * per_block;
  const int64_t end = std::min(begin + per_block, first + total);
  for (int64_t seed = begin; seed < end; ++seed) {
    const auto start = std::chrono::steady_clock::now();
    auto m = testlib::GenerateRandomHlo(static_cast<uint64_t>(seed));
    ASSERT_TRUE(m.ok()) << "seed " << seed << ": generator bug: " << m.status();
    const std::string text = hlo::PrintModule(*m->module);
    std::vector<ErrorSpec> specs;
    for (const ValueBound& b : m->output_bounds) specs.push_back(SpecOf(b));
    ::testing::AssertionResult r = CheckModule(text, m->args_seed, m->edge_values, specs);
    Totals& t = GetTotals();
    {
      std::lock_guard<std::mutex> lock(t.mu);
      ++t.modules;
      t.edge += m->edge_values ? 1 : 0;
      for (const hlo::Computation* c : m->module->computations()) {
        for (const hlo::Instruction* i : c->instructions()) {
          ++t.instructions;
          ++t.opcodes[std::string(hlo::OpcodeName(i->opcode()))];
        }
      }
      t.failures += r ? 0 : 1;
      t.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
    if (EnvInt("TFJIT_RANDOM_HLO_DUMP", 0) != 0) {  // every module, for inspecting coverage
      WriteFailure(static_cast<uint64_t>(seed),
                   Header(static_cast<uint64_t>(seed), *m, r ? "passed" : r.message()) + text);
    }
    if (!r) {
      const std::string path = WriteFailure(
          static_cast<uint64_t>(seed), Header(static_cast<uint64_t>(seed), *m, r.message()) + text);
      ADD_FAILURE() << "random HLO seed " << seed << " (module written to " << path
                    << "; rerun with TFJIT_RANDOM_HLO_FIRST_SEED=" << seed
                    << " TFJIT_RANDOM_HLO_SEEDS=1): " << r.message();
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Blocks, RandomHloTest, ::testing::Range(0, kBlocks));

// Parses "// random-hlo: args_seed=N edge_values=B abs=X rel=Y".
bool ParseHeader(const std::string& text, uint64_t* seed, bool* edge, ErrorSpec* spec) {
  const size_t at = text.find("// random-hlo:");
  if (at == std::string::npos) return false;
  const std::string line = text.substr(at, text.find('\n', at) - at);
  bool have_seed = false;
  for (absl::string_view field : absl::StrSplit(line, ' ')) {
    std::vector<std::string> kv = absl::StrSplit(field, absl::MaxSplits('=', 1));
    if (kv.size() != 2) continue;
    if (kv[0] == "args_seed") have_seed = absl::SimpleAtoi(kv[1], seed);
    if (kv[0] == "edge_values") *edge = kv[1] == "1";
    if (kv[0] == "abs") (void)absl::SimpleAtod(kv[1], &spec->abs);
    if (kv[0] == "rel") (void)absl::SimpleAtod(kv[1], &spec->rel);
  }
  return have_seed;
}

// Every minimized module found by the random runs: evaluator vs CPU on its recorded inputs.
TEST(RandomHloRegression, Files) {
  const std::filesystem::path dir = std::filesystem::path(SourceDir()) / "tests/hlo/random";
  ASSERT_TRUE(std::filesystem::is_directory(dir)) << dir;
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    if (e.path().extension() == ".hlo") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  EXPECT_FALSE(files.empty()) << "no regression modules in " << dir;
  for (const auto& path : files) {
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    uint64_t seed = 0;
    bool edge = false;
    ErrorSpec spec{0, 0};
    ASSERT_TRUE(ParseHeader(ss.str(), &seed, &edge, &spec)) << path << ": no random-hlo header";
    EXPECT_TRUE(CheckModule(ss.str(), seed, edge, {spec})) << path;
  }
}

}  // namespace
}  // namespace tfjit
