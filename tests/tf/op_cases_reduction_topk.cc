// Op cases of TopKV2 (reduction_lowerings.cc: the custom-call tfjit.top_k of core/top_k.h). The
// reference is a naive stable sort of each row written here (NaN first, then larger values,
// equal values in column order), independent of core/top_k, which the fallback kernel, the
// evaluator and the CPU runtime share. Feeds with many ties, NaN, infinities and signed zeros
// check the order, not just the set; must-compile runs check TF's errors for a bad k.
#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/dtype.h"
#include "gtest/gtest.h"
#include "tests/testlib/temp_file.h"
#include "tests/tf/op_cases.h"
#include "tfjit/session.h"

namespace tfjit::optest {
namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Output `output` (0 values, 1 indices) of TopKV2 on in[0] with k, by sorting whole rows.
RefFn TopKRef(int64_t k, int output, DType index_type) {
  return [=](const std::vector<Tensor>& in) {
    const Tensor& x = in[0];
    const int64_t n = x.dims().back();
    Dims out_dims = x.dims();
    out_dims.back() = k;
    Tensor r(output == 0 ? x.dtype() : index_type, out_dims);
    const int64_t rows = n == 0 ? 0 : x.num_elements() / n;
    for (int64_t row = 0; row < rows; ++row) {
      std::vector<double> v(static_cast<size_t>(n));
      for (int64_t c = 0; c < n; ++c) v[static_cast<size_t>(c)] = ElementAsDouble(x, row * n + c);
      std::vector<int64_t> order(static_cast<size_t>(n));
      std::iota(order.begin(), order.end(), 0);
      std::stable_sort(order.begin(), order.end(), [&](int64_t a, int64_t b) {
        const double va = v[static_cast<size_t>(a)], vb = v[static_cast<size_t>(b)];
        if (std::isnan(va) || std::isnan(vb)) return std::isnan(va) && !std::isnan(vb);
        return va > vb;
      });
      for (int64_t j = 0; j < k; ++j) {
        const int64_t src = order[static_cast<size_t>(j)];
        SetFromDouble(r, row * k + j,
                      output == 0 ? v[static_cast<size_t>(src)] : static_cast<double>(src));
      }
    }
    return r;
  };
}

OpCase TopKCase(const std::string& name, DType t, const Dims& in, int64_t k, int output,
                DType index_type = DType::kInt32) {
  OpCase c{absl::StrCat("TopKV2_", name, output == 0 ? "_values" : "_indices"),
           "TopKV2",
           t,
           {in},
           {Ints({static_cast<int32_t>(k)}, /*scalar=*/true)}};
  c.attrs["Tk"] = TypeAttr(DType::kInt32);
  c.attrs["index_type"] = TypeAttr(index_type);
  c.output = output;
  c.reference = TopKRef(k, output, index_type);
  return c;
}

// Rows from {-1, 0, 1, 2} with NaN, +-inf and -0 mixed in: ties everywhere.
Tensor TiedValues(DType t, const Dims& dims, bool with_nan) {
  const std::vector<double> pool = {1, 0, 2, 1, -1, kInf, 0, 2, kNaN, -0.0, 1, -kInf, 2, kNaN};
  return Build(t, dims, [&](const Dims& i) {
    size_t at = 0;
    for (int64_t d : i) at = at * 7 + static_cast<size_t>(d);
    const double v = pool[at % pool.size()];
    if (!with_nan && (std::isnan(v) || std::isinf(v))) return 1.0;
    return v;
  });
}

}  // namespace

std::vector<OpCase> TopKCases() {
  std::vector<OpCase> cases;
  for (int output : {0, 1}) {
    // Ties, NaN and signed zeros: order must be TF's (lower index first among equals).
    OpCase ties = TopKCase("f32_ties", DType::kFloat32, {3, 8}, 3, output);
    ties.feed_values = {TiedValues(DType::kFloat32, {3, 8}, true)};
    cases.push_back(ties);
    OpCase all = TopKCase("f32_ties_k_eq_n", DType::kFloat32, {2, 9}, 9, output);
    all.feed_values = {TiedValues(DType::kFloat32, {2, 9}, true)};
    cases.push_back(all);
    OpCase ints = TopKCase("int32_ties_rank3", DType::kInt32, {2, 3, 12}, 4, output);
    ints.feed_values = {TiedValues(DType::kInt32, {2, 3, 12}, false)};
    cases.push_back(ints);
    OpCase half = TopKCase("f16_ties", DType::kFloat16, {2, 6}, 6, output);
    half.feed_values = {TiedValues(DType::kFloat16, {2, 6}, true)};
    cases.push_back(half);
    OpCase bf = TopKCase("bf16_k1", DType::kBFloat16, {5, 10}, 1, output);
    bf.feed_values = {TiedValues(DType::kBFloat16, {5, 10}, true)};
    cases.push_back(bf);
    // Random feeds: the heap path (4k <= n), nth_element, many rows across the pool.
    cases.push_back(TopKCase("f64_heap", DType::kFloat64, {4, 33}, 5, output));
    cases.push_back(TopKCase("f32_nth", DType::kFloat32, {3, 10}, 7, output));
    cases.push_back(TopKCase("f32_many_rows", DType::kFloat32, {64, 500}, 10, output));
    cases.push_back(TopKCase("int64_vector", DType::kInt64, {17}, 4, output));
    cases.push_back(TopKCase("f32_k0", DType::kFloat32, {3, 4}, 0, output));
    cases.push_back(TopKCase("f32_one_column", DType::kFloat32, {5, 1}, 1, output));
    OpCase unsorted = TopKCase("f32_sorted_false", DType::kFloat32, {4, 9}, 3, output);
    unsorted.attrs["sorted"] = BoolAttr(false);  // tfjit returns the sorted order anyway
    cases.push_back(unsorted);
  }
  OpCase wide = TopKCase("int64_index_type", DType::kFloat32, {3, 7}, 2, 1, DType::kInt64);
  wide.feed_values = {TiedValues(DType::kFloat32, {3, 7}, true)};
  cases.push_back(wide);
  return cases;
}

}  // namespace tfjit::optest

// TF's errors for a bad k in must-compile mode, naming the node; a fed k compiles per value.
namespace tfjit {
namespace {

using ::tfjit::testing::WriteTempFile;

std::string TopKGraph(const std::string& k_node) {
  return absl::StrCat(R"pb(
node { name: "x" op: "Placeholder" attr { key: "dtype" value { type: DT_FLOAT } } }
)pb",
                      k_node, R"pb(
node { name: "topk" op: "TopKV2" input: "x" input: "k" attr { key: "T" value { type: DT_FLOAT } }
       attr { key: "sorted" value { b: true } } }
)pb");
}

std::string ConstK(int k) {
  return absl::StrCat(
      "node { name: \"k\" op: \"Const\" attr { key: \"dtype\" value { type: DT_INT32 } }\n"
      "  attr { key: \"value\" value { tensor { dtype: DT_INT32 tensor_shape {} int_val: ",
      k, " } } } }\n");
}

StatusOr<std::vector<Tensor>> RunTopK(const std::string& graph, JitMode jit,
                                      std::vector<std::pair<std::string, Tensor>> feeds) {
  const std::string path = WriteTempFile("topk_errors.pbtxt", graph);
  SessionOptions options;
  options.jit = jit;
  options.backend = "interpreter";
  auto session = Session::Load(path, options);
  std::filesystem::remove(path);
  if (!session.ok()) return session.status();
  return (*session)->Run(feeds, {"topk", "topk:1"});
}

TEST(TopKLowering, BadConstantKFailsWithTfMessageNamingTheNode) {
  const Tensor x = Tensor::FromVector<float>(DType::kFloat32, {2, 3}, {1, 2, 3, 4, 5, 6});
  auto big = RunTopK(TopKGraph(ConstK(4)), JitMode::kAll, {{"x", x}});
  ASSERT_FALSE(big.ok());
  EXPECT_EQ(big.status().code(), absl::StatusCode::kInvalidArgument) << big.status();
  EXPECT_TRUE(absl::StrContains(big.status().message(),
                                "input must have at least k columns. Had 3, needed 4"))
      << big.status();
  EXPECT_TRUE(absl::StrContains(big.status().message(), "topk")) << big.status();
  auto neg = RunTopK(TopKGraph(ConstK(-1)), JitMode::kAll, {{"x", x}});
  ASSERT_FALSE(neg.ok());
  EXPECT_TRUE(absl::StrContains(neg.status().message(), "Need k >= 0, got -1")) << neg.status();
}

// A fed k is compiled like TF's compile-time-constant arguments: its value joins the cache key,
// so a second k in the same session compiles again instead of reusing the first.
TEST(TopKLowering, FedKIsSpecialisedPerValue) {
  const std::string path = WriteTempFile(
      "topk_fed_k.pbtxt",
      TopKGraph("node { name: \"k\" op: \"Placeholder\" attr { key: \"dtype\" value { type: "
                "DT_INT32 } } }\n"));
  const Tensor x = Tensor::FromVector<float>(DType::kFloat32, {1, 4}, {3, 7, 7, 1});
  for (JitMode jit : {JitMode::kAll, JitMode::kAuto}) {
    SessionOptions options;
    options.jit = jit;
    auto session = Session::Load(path, options);
    ASSERT_TRUE(session.ok()) << session.status();
    for (int32_t k : {2, 3}) {
      auto out = (*session)->Run(
          {{"x", x}, {"k", Tensor::FromVector<int32_t>(DType::kInt32, {}, {k})}}, {"topk:1"});
      ASSERT_TRUE(out.ok()) << out.status();
      ASSERT_EQ((*out)[0].ShapeString(), absl::StrCat("int32[1,", k, "]"));
      const std::vector<int32_t> want = {1, 2, 0};  // 7 at column 1 before the tied column 2
      for (int32_t j = 0; j < k; ++j) EXPECT_EQ((*out)[0].data<int32_t>()[j], want[j]);
    }
  }
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace tfjit
