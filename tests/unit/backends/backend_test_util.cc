// RunAndCompare for the CPU backend: evaluator vs JIT on the same seeded arguments.
#include "tests/unit/backends/backend_test_util.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "compiler/evaluator/evaluator.h"
#include "compiler/hlo/parser.h"
#include "tests/testlib/random_literal.h"

namespace tfjit::testing_util {

absl::StatusOr<std::unique_ptr<backends::Executable>> CompileCpu(
    const std::string& hlo, const cpu::CpuBackendOptions& options) {
  auto module = hlo::ParseAndVerifyModule(hlo);
  if (!module.ok()) return module.status();
  return cpu::CreateCpuBackend(options)->Compile(std::move(*module));
}

absl::StatusOr<hlo::Literal> RunOnLiterals(const backends::Executable& exe,
                                           const std::vector<hlo::Literal>& args, ThreadPool* pool,
                                           bool tuple_root) {
  std::vector<Tensor> tensors;
  for (const hlo::Literal& a : args) tensors.push_back(a.tensor());
  auto outputs = exe.Run(tensors, pool);
  if (!outputs.ok()) return outputs.status();
  if (!tuple_root && outputs->size() == 1) return hlo::Literal::FromTensor((*outputs)[0]);
  std::vector<hlo::Literal> elements;
  for (const Tensor& t : *outputs) elements.push_back(hlo::Literal::FromTensor(t));
  return hlo::Literal::MakeTuple(std::move(elements));
}

std::string ShapeStr(const std::string& type, const std::vector<int64_t>& dims) {
  return absl::StrCat(type, "[", absl::StrJoin(dims, ","), "]");
}

::testing::AssertionResult RunAndCompare(const std::string& hlo, const std::vector<uint64_t>& seeds,
                                         testlib::ErrorSpec spec, bool edge_values,
                                         const cpu::CpuBackendOptions& options, ThreadPool* pool) {
  return RunAndCompareOn(*cpu::CreateCpuBackend(options), hlo, seeds, spec, edge_values, pool);
}

::testing::AssertionResult RunAndCompareOn(const backends::Backend& backend, const std::string& hlo,
                                           const std::vector<uint64_t>& seeds,
                                           testlib::ErrorSpec spec, bool edge_values,
                                           ThreadPool* pool) {
  uint64_t seed = 0;
  auto context = [&]() {
    return absl::StrCat("\nbackend=", backend.name(), " seed=", seed, " edge_values=", edge_values,
                        "\nmodule:\n", hlo);
  };
  auto module = hlo::ParseAndVerifyModule(hlo);
  if (!module.ok()) {
    return ::testing::AssertionFailure() << "parse: " << module.status() << context();
  }
  std::unique_ptr<hlo::Module> reference = (*module)->Clone();
  auto exe = backend.Compile(std::move(*module));
  if (!exe.ok()) return ::testing::AssertionFailure() << "compile: " << exe.status() << context();
  for (uint64_t s : seeds) {
    seed = s;
    std::vector<hlo::Literal> args = testlib::RandomArgs(*reference, seed, edge_values);
    auto expected = hlo::Evaluate(*reference, args);
    if (!expected.ok()) {
      return ::testing::AssertionFailure() << "evaluator: " << expected.status() << context();
    }
    auto actual = RunOnLiterals(**exe, args, pool, expected->shape().IsTuple());
    if (!actual.ok()) {
      return ::testing::AssertionFailure() << "run: " << actual.status() << context();
    }
    ::testing::AssertionResult near = testlib::LiteralsNear(*expected, *actual, spec);
    if (!near) return near << context();
  }
  return ::testing::AssertionSuccess();
}

testlib::ErrorSpec SpecOf(const testlib::ValueBound& b) {
  if (b.exact) return {0, 0};
  return {2 * b.abs_err, 2 * b.rel_err};
}

::testing::AssertionResult CompareOutputs(const backends::Backend& backend, const std::string& text,
                                          uint64_t args_seed, bool edge_values,
                                          const std::vector<testlib::ErrorSpec>& specs) {
  auto parsed = hlo::ParseAndVerifyModule(text);
  if (!parsed.ok()) return ::testing::AssertionFailure() << "parse: " << parsed.status();
  std::unique_ptr<hlo::Module> reference = (*parsed)->Clone();
  std::vector<hlo::Literal> args = testlib::RandomArgs(*reference, args_seed, edge_values);
  auto expected = hlo::Evaluate(*reference, args);
  if (!expected.ok()) return ::testing::AssertionFailure() << "evaluator: " << expected.status();
  auto exe = backend.Compile(std::move(*parsed));
  if (!exe.ok()) return ::testing::AssertionFailure() << "compile: " << exe.status();
  const bool tuple = expected->shape().IsTuple();
  auto actual = RunOnLiterals(**exe, args, nullptr, tuple);
  if (!actual.ok()) return ::testing::AssertionFailure() << "run: " << actual.status();
  const size_t n = tuple ? expected->elements().size() : 1;
  for (size_t i = 0; i < n; ++i) {
    const hlo::Literal& e = tuple ? expected->elements()[i] : *expected;
    const hlo::Literal& a = tuple ? actual->elements()[i] : *actual;
    const testlib::ErrorSpec spec =
        specs.empty() ? testlib::ErrorSpec{0, 0} : specs[std::min(i, specs.size() - 1)];
    ::testing::AssertionResult near = testlib::LiteralsNear(e, a, spec);
    if (!near) {
      return ::testing::AssertionFailure() << "output " << i << " (abs " << spec.abs << ", rel "
                                           << spec.rel << "): " << near.message();
    }
  }
  return ::testing::AssertionSuccess();
}

namespace {

int64_t OutSize(int64_t in, const Win& w) {
  const int64_t dilated = in == 0 ? 0 : (in - 1) * w.lhs + 1;
  const int64_t padded = dilated + w.lo + w.hi;
  const int64_t window = (w.size - 1) * w.rhs + 1;
  return padded < window ? 0 : (padded - window) / w.stride + 1;
}

std::string WindowText(const std::vector<Win>& ws) {
  auto join = [&](auto f) {
    return absl::StrJoin(ws, "x", [&](std::string* o, const Win& w) { absl::StrAppend(o, f(w)); });
  };
  return absl::StrCat("{size=", join([](const Win& w) { return absl::StrCat(w.size); }),
                      " stride=", join([](const Win& w) { return absl::StrCat(w.stride); }),
                      " pad=", join([](const Win& w) { return absl::StrCat(w.lo, "_", w.hi); }),
                      " lhs_dilate=", join([](const Win& w) { return absl::StrCat(w.lhs); }),
                      " rhs_dilate=", join([](const Win& w) { return absl::StrCat(w.rhs); }), "}");
}

}  // namespace

std::string Conv2DModule(const std::string& type, int64_t n, int64_t h, int64_t w, int64_t c,
                         const Win& wh, const Win& ww, int64_t out_c, int64_t groups) {
  const std::vector<int64_t> x = {n, h, w, c};
  const std::vector<int64_t> k = {wh.size, ww.size, c / groups, out_c};
  const std::vector<int64_t> y = {n, OutSize(h, wh), OutSize(w, ww), out_c};
  const std::string xs = ShapeStr(type, x), ks = ShapeStr(type, k), ys = ShapeStr(type, y);
  return absl::StrCat("HloModule conv\n\nENTRY %main (x: ", xs, ", k: ", ks, ") -> ", ys,
                      " {\n  %x = ", xs, " parameter(0)\n  %k = ", ks, " parameter(1)\n",
                      "  ROOT %c = ", ys, " convolution(%x, %k), window=", WindowText({wh, ww}),
                      ", dim_labels=b01f_01io->b01f",
                      groups == 1 ? "" : absl::StrCat(", feature_group_count=", groups), "\n}\n");
}

std::string ScatterModule(const std::string& combiner, bool computed_operand) {
  return absl::StrCat(
      "HloModule scatter\n\n%combine (a: f32[], b: f32[]) -> f32[] {\n"
      "  %a = f32[] parameter(0)\n  %b = f32[] parameter(1)\n",
      combiner,
      "}\n\nENTRY %main (x: f32[6,3], i: s32[5], u: f32[5,3]) -> f32[6,3] {\n"
      "  %x = f32[6,3] parameter(0)\n  %i = s32[5] parameter(1)\n  %u = f32[5,3] parameter(2)\n",
      computed_operand ? "  %base = f32[6,3] negate(%x)\n" : "", "  ROOT %s = f32[6,3] scatter(",
      computed_operand ? "%base" : "%x",
      ", %i, %u), update_window_dims={1}, inserted_window_dims={0}, "
      "scatter_dims_to_operand_dims={0}, index_vector_dim=1, to_apply=%combine\n}\n");
}

}  // namespace tfjit::testing_util
